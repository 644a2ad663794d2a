import Foundation
import Glibc
import InboxCore
import Testing

/// A private nats-server for one test: JetStream on, its store in a temporary directory, listening on 127.0.0.1 at a
/// port the kernel chose (`-p -1`, read back from its ports file), stopped by its PID at the end. Further arguments
/// (`--user`, `--tls`, ...) and a configuration file (`-c`) are the test's.
final class NatsServer: @unchecked Sendable {
    // @unchecked: each test owns its server and uses it from one task at a time.
    let root: URL
    /// `nats://127.0.0.1:PORT`.
    private(set) var url = ""
    /// The port it listens on.
    private(set) var port = 0
    private var process: Process?
    /// The arguments it was started with, for a start again on the same port and store.
    private var arguments: [String] = []

    static let executable = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let available = executable != nil
    static let required = ProcessInfo.processInfo.environment["CI"] == "true"
    static let missing = "no nats-server: apt-get install nats-server (scripts/setup)"

    /// Starts a server with `arguments` after its own, and `configuration` as its `-c` file when given.
    init(_ name: String = #function, arguments: [String] = [], configuration: String? = nil) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-nats-\(name.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("store"), withIntermediateDirectories: true)
        var all = ["-js", "-sd", root.appendingPathComponent("store").path, "-a", "127.0.0.1", "-p", "-1",
                   "--ports_file_dir", root.path, "-l", root.appendingPathComponent("server.log").path]
        if let configuration {
            let file = root.appendingPathComponent("server.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            all += ["-c", file.path]
        }
        try start(all + arguments)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    private func start(_ arguments: [String]) throws {
        self.arguments = arguments
        let server = Process()
        server.executableURL = URL(fileURLWithPath: try #require(Self.executable))
        server.arguments = arguments
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        server.standardInput = FileHandle.nullDevice
        try server.run()
        process = server
        // The ports file (nats-server_<pid>.ports, {"nats":["nats://127.0.0.1:PORT"]}) is written once it listens.
        let ports = root.appendingPathComponent("nats-server_\(server.processIdentifier).ports")
        try waitUntil("nats-server writes \(ports.path) (its log: \(log))", timeout: 10) {
            guard server.isRunning else { throw NatsServerError(what: "nats-server exited: \(log)") }
            guard let data = try? Data(contentsOf: ports),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let first = (json["nats"] as? [String])?.first else { return false }
            url = first
            port = Int(first.split(separator: ":").last ?? "") ?? 0
            return port > 0
        }
        try waitUntil("nats-server accepts connections on port \(port)", timeout: 10) { Self.accepts(port: port) }
    }

    /// What the server logged so far.
    var log: String { (try? String(contentsOf: root.appendingPathComponent("server.log"), encoding: .utf8)) ?? "" }

    /// `scheme://127.0.0.1:PORT`, for a `tls://` URL to the same server.
    func url(scheme: String) -> String { "\(scheme)://127.0.0.1:\(port)" }

    /// Stops the server this test started (by its PID), and waits for it.
    func stop() {
        guard let process else { return }
        // SIGKILL if SIGTERM has not ended it within 5 s; only ever this PID.
        stopStarted(process, grace: 5)
        self.process = nil
    }

    /// The server's PID while it runs.
    var pid: Int32? { process?.isRunning == true ? process?.processIdentifier : nil }

    /// SIGKILL: the server ends at once, as on a crash; its store stays for `restart`.
    func kill() {
        guard let process else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Starts the server again on the same port and store (after `kill` or `stop`).
    func restart() throws {
        precondition(process == nil, "restart a server that is stopped")
        var again = arguments
        if let index = again.firstIndex(of: "-p") { again[index + 1] = String(port) }
        try start(again)
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port of 127.0.0.1 nothing listens on: one the kernel gave a socket that is closed again.
    static func unusedPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct NatsServerError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// Certificates and keys made with openssl in a test's directory: a CA of its own, and server certificates it signed.
enum TestPKI {
    /// A self-signed CA: `ca.pem`, `ca.key`.
    static func makeCA(in directory: URL) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                     "-subj", "/CN=inboxd test CA", "-keyout", directory.appendingPathComponent("ca.key").path,
                     "-out", directory.appendingPathComponent("ca.pem").path])
    }

    /// `NAME.pem` and `NAME.key`: a server certificate for `alternativeNames` (`IP:127.0.0.1`, `DNS:localhost`),
    /// signed by the CA of `makeCA`.
    static func makeServerCertificate(_ name: String, in directory: URL, alternativeNames: String) throws {
        let key = directory.appendingPathComponent("\(name).key").path
        let request = directory.appendingPathComponent("\(name).csr").path
        let extensions = directory.appendingPathComponent("\(name).ext")
        try "subjectAltName=\(alternativeNames)\n".write(to: extensions, atomically: true, encoding: .utf8)
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=\(name)",
                     "-keyout", key, "-out", request])
        try openssl(["x509", "-req", "-in", request, "-CA", directory.appendingPathComponent("ca.pem").path,
                     "-CAkey", directory.appendingPathComponent("ca.key").path, "-CAcreateserial", "-days", "2",
                     "-extfile", extensions.path, "-out", directory.appendingPathComponent("\(name).pem").path])
    }

    static func openssl(_ arguments: [String]) throws {
        let result = try run("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw NatsServerError(what: "openssl \(arguments.first ?? ""): \(result.stderr)") }
    }

    /// An NKey user pair made from an Ed25519 key of openssl's: the public key (`U…`) and the seed (`SU…`), written
    /// by NKeys. The public key is openssl's, not NKeyPair's: tests compare the two.
    static func makeNKeyUser(in directory: URL, name: String) throws -> (publicKey: String, seed: String) {
        let pem = directory.appendingPathComponent("\(name).ed25519.pem").path
        try openssl(["genpkey", "-algorithm", "ed25519", "-out", pem])
        let privateDER = directory.appendingPathComponent("\(name).private.der").path
        let publicDER = directory.appendingPathComponent("\(name).public.der").path
        try openssl(["pkey", "-in", pem, "-outform", "DER", "-out", privateDER])
        try openssl(["pkey", "-in", pem, "-pubout", "-outform", "DER", "-out", publicDER])
        // Both DER forms end with the 32 raw bytes (RFC 8410): the private key's seed, the public key.
        let seed = try #require(NKeySeed(role: .user, bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: privateDER)).suffix(32))))
        let publicKey = try #require(NKeyPublicKey(role: .user,
                                                   bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: publicDER)).suffix(32))))
        return (publicKey.description, seed.text)
    }
}
