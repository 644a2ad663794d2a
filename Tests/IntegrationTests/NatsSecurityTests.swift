import Foundation
import InboxCore
import InboxCluster
import Testing

/// Who may connect to a real nats-server (NatsServer): an NKey user from its seed file alone, and TLS with a private
/// CA where the server verifies the client's certificate. Each refusal is a `NatsError` of the kind a caller acts on,
/// with the server's or OpenSSL's words.
@Suite(.serialized, .enabled(if: NatsServer.available || NatsServer.required, Comment(rawValue: NatsServer.missing)))
struct NatsSecurityTests {
    init() throws {
        try #require(NatsServer.available, "CI=true: nats-server must be installed (\(NatsServer.missing))")
    }

    /// A temporary directory of the test's, removed by `defer` in the test.
    static func directory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inboxd-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new user seed of random bytes, written to `NAME.nk` in `directory` (mode 0600); its pair.
    static func makeUser(_ name: String, in directory: URL) throws -> (seedFile: String, pair: NKeyPair) {
        var generator = SystemRandomNumberGenerator()
        let seed = try #require(NKeySeed(role: .user, bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        let file = directory.appendingPathComponent("\(name).nk").path
        try #require(FileManager.default.createFile(atPath: file, contents: Data((seed.text + "\n").utf8),
                                                    attributes: [.posixPermissions: 0o600]))
        return (file, try #require(NKeyPair(seed: seed)))
    }

    func connect(_ url: String, credentials: NatsCredentials? = nil, tls: NatsTLS? = nil) throws(NatsError) -> NatsConnection {
        try NatsConnection.connect(NatsSettings(servers: [url], name: "inboxd security test", connectTimeout: .seconds(2),
                                                requestTimeout: .seconds(5), credentials: credentials, tls: tls))
    }

    /// The error `body` throws; an issue recorded (and nil) when it throws none.
    func refusal(_ what: String, _ body: () throws(NatsError) -> Void) -> NatsError? {
        do {
            try body()
            Issue.record("\(what) was accepted")
            return nil
        } catch {
            return error
        }
    }

    // MARK: NKeys

    @Test func anNKeyUserConnectsWithItsSeedFileAloneAndAnotherSeedIsRefused() throws {
        let keys = try Self.directory("nkey")
        defer { try? FileManager.default.removeItem(at: keys) }
        let user = try Self.makeUser("user", in: keys), other = try Self.makeUser("other", in: keys)
        #expect(user.pair.publicKey.description.hasPrefix("U") && user.pair.publicKey.description.count == 56)
        let server = try NatsServer(configuration: "authorization {\n  users = [ { nkey: \(user.pair.publicKey) } ]\n}\n")

        let connection = try connect(server.url, credentials: .nkey(seedFile: user.seedFile))
        try connection.flush(timeout: .seconds(2))
        #expect(connection.connectedURL == server.url)

        let refused = refusal("another user's seed") { () throws(NatsError) in
            _ = try connect(server.url, credentials: .nkey(seedFile: other.seedFile))
        }
        #expect(refused?.kind == .authorization, "\(String(describing: refused))")
        #expect(refused?.description == "connect to \(server.url): Authorization Violation", "\(String(describing: refused))")
    }

    /// Seed files that give no user key: each an error naming the file that never quotes what it holds.
    @Test func seedFilesWithoutAUserSeedAreRefusedBeforeConnecting() throws {
        let keys = try Self.directory("nkey-files")
        defer { try? FileManager.default.removeItem(at: keys) }
        let account = try #require(NKeySeed(role: .account, bytes: Array(0..<32)))
        var user = try #require(NKeySeed(role: .user, bytes: Array(0..<32))).text
        user.removeLast()
        user.append("A")
        let files: [(String, String?, String)] = [
            ("missing.nk", nil, "cannot open: No such file or directory"),
            ("public.nk", "UAB2CB576PHBBPQ5ODORRZ2LYCMWPZGWGCN2KDK7DXOIMZASKUY3RLKK\n", "it holds no NKey seed"),
            ("account.nk", account.text + "\n", "it holds the seed of a key whose role is account, not user"),
            ("changed.nk", user + "\n", "it is not an NKey (its checksum does not match)"),
            ("large.nk", String(repeating: "S", count: NKeyPair.seedFileLimit + 1), "file too large"),
        ]
        for (name, content, words) in files {
            let path = keys.appendingPathComponent(name).path
            if let content { try content.write(toFile: path, atomically: true, encoding: .utf8) }
            let refused = refusal(name) { () throws(NatsError) in _ = try NatsCredentials.nkey(seedFile: path) }
            #expect(refused?.kind == .invalidSetting, "\(name): \(String(describing: refused))")
            #expect(refused?.description.hasPrefix("read NKey seed file \(path): \(words)") == true,
                    "\(name): \(String(describing: refused))")
            #expect(refused?.description.contains("SA") == false && refused?.description.contains("SUA") == false)
        }
    }

    // MARK: TLS with client certificates

    @Test func tlsWithAVerifiedClientCertificate() throws {
        let pki = try Self.directory("mtls")
        defer { try? FileManager.default.removeItem(at: pki) }
        func path(_ name: String) -> String { pki.appendingPathComponent(name).path }
        try TestPKI.makeCA(in: pki)
        try TestPKI.makeServerCertificate("server", in: pki, alternativeNames: "IP:127.0.0.1,DNS:localhost")
        try TestPKI.makeServerCertificate("client", in: pki, alternativeNames: "DNS:inboxd-client")
        // Another CA, in a directory of its own, that signed nothing the server shows.
        let otherPKI = pki.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: otherPKI, withIntermediateDirectories: true)
        try TestPKI.makeCA(in: otherPKI)
        let server = try NatsServer(configuration: """
            tls {
              cert_file: "\(path("server.pem"))"
              key_file: "\(path("server.key"))"
              ca_file: "\(path("ca.pem"))"
              verify: true
            }

            """)
        let url = server.url(scheme: "tls")
        let client = NatsTLS(caFile: path("ca.pem"), certificateFile: path("client.pem"), keyFile: path("client.key"))

        let connection = try connect(url, tls: client)
        try connection.flush(timeout: .seconds(2))
        #expect(connection.connectedURL == url)

        var wrongCA = client
        wrongCA.caFile = otherPKI.appendingPathComponent("ca.pem").path
        let untrusted = refusal("the server's certificate under another CA") { () throws(NatsError) in
            _ = try connect(url, tls: wrongCA)
        }
        #expect(untrusted?.kind == .tls, "\(String(describing: untrusted))")
        #expect(untrusted?.description.contains("SSL handshake error") == true, "\(String(describing: untrusted))")

        let anonymous = refusal("a client without a certificate") { () throws(NatsError) in
            _ = try connect(url, tls: NatsTLS(caFile: path("ca.pem")))
        }
        // With TLS 1.3 the client finishes its handshake before the server checks the certificate; the server then
        // closes the connection, which libnats 3.4 reports as the PONG it did not get (kind .other).
        #expect(anonymous?.description.hasPrefix("connect to \(url): ") == true, "\(String(describing: anonymous))")
        #expect(anonymous?.kind != .authorization)
    }
}
