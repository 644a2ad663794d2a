import Testing
@testable import InboxCore

/// A `[Cluster]` section read on its own: `lines` after the header, which is line 1 of file "c".
private func cluster(_ lines: [String]) -> (settings: ClusterSettings?, diagnostics: [String]) {
    let text = (["[Cluster]"] + lines).joined(separator: "\n")
    let document = INILexer.lex(Array(text.utf8), path: "c", maximumSize: ConfigurationParser.maximumSize)
    let (settings, diagnostics) = ClusterSettings.parse(document.sections[0], path: "c")
    return (settings, (document.diagnostics + diagnostics).map(\.description))
}

/// The lines of a section that is valid but for what a case adds.
private let base = ["Name=office", "Servers=nats://127.0.0.1"]

/// Lines in, diagnostics out.
struct ClusterCase: Sendable, CustomTestStringConvertible {
    let lines: [String]
    let expected: [String]
    init(_ lines: [String], _ expected: [String]) {
        self.lines = lines
        self.expected = expected
    }
    var testDescription: String { lines.last ?? "" }
}

@Suite("Cluster settings")
struct ClusterSettingsTests {
    @Test func everyKey() throws {
        let (settings, diagnostics) = cluster([
            "Servers=tls://nats-1.example.org tls://nats-2.example.org:4333",
            "Servers=tls://[2001:db8::7]:4222",
            "Name=Office",
            "NKeySeedFile=/etc/inboxd/cluster.nk",
            "TLSCAFile=/etc/inboxd/ca.pem",
            "TLSCertFile=/etc/inboxd/host.pem",
            "TLSKeyFile=/etc/inboxd/host.key",
            "Inboxes=/srv/drop/ \"/srv/scans in\"",
            "Work=no",
            "Insecure=no",
            "X-Site=ours",
        ])
        #expect(diagnostics == [])
        let names = try #require(ClusterNames(name: "office"))
        let at = { SourceLocation(file: "c", line: $0) }
        #expect(settings == ClusterSettings(
            servers: [.init(scheme: .tls, host: "nats-1.example.org", location: at(2)),
                      .init(scheme: .tls, host: "nats-2.example.org", port: 4333, location: at(2)),
                      .init(scheme: .tls, host: "2001:db8::7", location: at(3))],
            names: names, nkeySeedFile: "/etc/inboxd/cluster.nk", tlsCAFile: "/etc/inboxd/ca.pem",
            tlsCertFile: "/etc/inboxd/host.pem", tlsKeyFile: "/etc/inboxd/host.key",
            inboxes: ["/srv/drop", "/srv/scans in"], inboxLocations: ["/srv/drop": at(9), "/srv/scans in": at(9)],
            work: false, insecure: false, location: at(1)))
        #expect(settings?.servers.map(\.description)
            == ["tls://nats-1.example.org:4222", "tls://nats-2.example.org:4333", "tls://[2001:db8::7]:4222"])
        #expect(settings?.usesTLS == true)
    }

    @Test func defaults() throws {
        let settings = try #require(cluster(base + ["Credentials=/etc/inboxd/office.creds"]).settings)
        #expect(settings.work)
        #expect(!settings.insecure)
        #expect(!settings.usesTLS)
        #expect(settings.inboxes == [])
        #expect(settings.credentials == "/etc/inboxd/office.creds")
        #expect(settings.servers == [.init(scheme: .nats, host: "127.0.0.1", port: 4222,
                                           location: SourceLocation(file: "c", line: 3))])
    }

    @Test func listsAddAndAnEmptyValueClears() throws {
        let settings = try #require(cluster([
            "Name=office", "Servers=nats://10.0.0.1", "Servers=", "Servers=nats://localhost nats://localhost:4222",
            "Inboxes=/a", "Inboxes=", "Inboxes=/b /c /b/", "Credentials=/x.creds", "Credentials=", "Work=no", "Work=",
        ]).settings)
        #expect(settings.servers.map(\.description) == ["nats://localhost:4222"])
        #expect(settings.inboxes == ["/b", "/c"])
        #expect(settings.credentials == nil)
        #expect(settings.work)
    }

    @Test(arguments: [
        // Servers=
        (["Name=office"], ["c:1: [Cluster] without Servers=: name the NATS servers, as nats://HOST[:PORT] or tls://HOST[:PORT]"]),
        (["Servers=nats://127.0.0.1", "Servers=", "Name=office"],
         ["c:1: [Cluster] without Servers=: name the NATS servers, as nats://HOST[:PORT] or tls://HOST[:PORT]"]),
        (["Servers=http://127.0.0.1", "Name=office"], ["c:2: invalid Servers=: 'http://127.0.0.1' has the scheme 'http': a server is nats:// or tls://"]),
        (["Servers=ws://h", "Name=office"], ["c:2: invalid Servers=: 'ws://h' has the scheme 'ws': a server is nats:// or tls://"]),
        (["Servers=127.0.0.1:4222", "Name=office"], ["c:2: invalid Servers=: '127.0.0.1:4222' is not a URL: write nats://HOST[:PORT] or tls://HOST[:PORT]"]),
        (["Servers=nats://", "Name=office"], ["c:2: invalid Servers=: 'nats://' has no host"]),
        (["Servers=nats://:4222", "Name=office"], ["c:2: invalid Servers=: 'nats://:4222' has no host"]),
        (["Servers=nats://[]:4222", "Name=office"], ["c:2: invalid Servers=: 'nats://[]:4222' has '' in brackets, not an IPv6 address"]),
        (["Servers=nats://localhost:0", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost:0' has the port '0': a port is a number from 1 to 65535"]),
        (["Servers=nats://localhost:65536", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost:65536' has the port '65536': a port is a number from 1 to 65535"]),
        (["Servers=nats://localhost:", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost:' has the port '': a port is a number from 1 to 65535"]),
        (["Servers=nats://localhost:42a", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost:42a' has the port '42a': a port is a number from 1 to 65535"]),
        (["Servers=nats://localhost:+42", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost:+42' has the port '+42': a port is a number from 1 to 65535"]),
        (["Servers=nats://[::1]:99999", "Name=office"], ["c:2: invalid Servers=: 'nats://[::1]:99999' has the port '99999': a port is a number from 1 to 65535"]),
        (["Servers=nats://alice:secret@127.0.0.1", "Name=office"], ["c:2: invalid Servers=: a nats:// URL carries a user or password: name a file with Credentials= (or NKeySeedFile=) instead"]),
        (["Servers=tls://token@nats.example.org", "Name=office"], ["c:2: invalid Servers=: a tls:// URL carries a user or password: name a file with Credentials= (or NKeySeedFile=) instead"]),
        (["Servers=nats://localhost/inboxd", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost/inboxd' has a path, query or fragment: a server is nats://HOST[:PORT]"]),
        (["Servers=nats://localhost?x=1", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost?x=1' has a path, query or fragment: a server is nats://HOST[:PORT]"]),
        (["Servers=nats://localhost#x", "Name=office"], ["c:2: invalid Servers=: 'nats://localhost#x' has a path, query or fragment: a server is nats://HOST[:PORT]"]),
        (["Servers=nats://::1:4222", "Name=office"], ["c:2: invalid Servers=: 'nats://::1:4222' has an IPv6 address without brackets: write nats://[ADDRESS]:PORT"]),
        (["Servers=nats://[::1", "Name=office"], ["c:2: invalid Servers=: 'nats://[::1' has an unclosed '[' before its IPv6 address"]),
        (["Servers=nats://[::1]4222", "Name=office"], ["c:2: invalid Servers=: 'nats://[::1]4222' has '4222' after its IPv6 address"]),
        (["Servers=nats://[1:2:3]", "Name=office"], ["c:2: invalid Servers=: 'nats://[1:2:3]' has '1:2:3' in brackets, not an IPv6 address"]),
        (["Servers=nats://[fe80::1%eth0]", "Name=office"], ["c:2: invalid Servers=: 'nats://[fe80::1%eth0]' has 'fe80::1%eth0' in brackets, not an IPv6 address"]),
        (["Servers=nats://[1::2::3]", "Name=office"], ["c:2: invalid Servers=: 'nats://[1::2::3]' has '1::2::3' in brackets, not an IPv6 address"]),
        (["Servers=nats://[12345::]", "Name=office"], ["c:2: invalid Servers=: 'nats://[12345::]' has '12345::' in brackets, not an IPv6 address"]),
        (["Servers=nats://256.0.0.1", "Name=office"], ["c:2: invalid Servers=: 'nats://256.0.0.1' has '256.0.0.1', not an IPv4 address"]),
        (["Servers=nats://127.1", "Name=office"], ["c:2: invalid Servers=: 'nats://127.1' has '127.1', not an IPv4 address"]),
        (["Servers=nats://127.0.0.01", "Name=office"], ["c:2: invalid Servers=: 'nats://127.0.0.01' has '127.0.0.01', not an IPv4 address"]),
        (["Servers=nats://nats..example", "Name=office"], ["c:2: invalid Servers=: 'nats://nats..example' has the host 'nats..example': a host name has dot-separated labels of letters, digits, '-' and '_'"]),
        (["Servers=nats://nats!", "Name=office"], ["c:2: invalid Servers=: 'nats://nats!' has the host 'nats!': a host name has dot-separated labels of letters, digits, '-' and '_'"]),
        (["Servers=\"nats://localhost", "Name=office"], ["c:2: invalid Servers=: unterminated \" quote"]),
        // Name=
        (["Servers=nats://localhost"], ["c:1: [Cluster] without Name=: the cluster's name names its stream, subjects and buckets"]),
        (["Servers=nats://localhost", "Name=my.office"], ["c:3: invalid Name= 'my.office': a cluster's name has 1 to 32 letters, digits, '-' and '_'"]),
        (["Servers=nats://localhost", "Name=" + String(repeating: "n", count: 33)], ["c:3: invalid Name= 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn': a cluster's name has 1 to 32 letters, digits, '-' and '_'"]),
        // Credentials=, NKeySeedFile=
        (base + ["Credentials=office.creds"], ["c:4: Credentials= must be an absolute path, got 'office.creds'"]),
        (base + ["Credentials=/etc/inboxd/office.nk"], ["c:4: Credentials= names a .creds file (a user's JWT and NKey seed), got '/etc/inboxd/office.nk'; a bare NKey seed is NKeySeedFile="]),
        (base + ["NKeySeedFile=seed"], ["c:4: NKeySeedFile= must be an absolute path, got 'seed'"]),
        (base + ["NKeySeedFile=/s.nk", "Credentials=/u.creds"], ["c:5: Credentials= and NKeySeedFile= exclude each other (the other is at line 4): a .creds file carries its own NKey seed"]),
        (base + ["Credentials=/u.creds", "NKeySeedFile=/s.nk"], ["c:5: Credentials= and NKeySeedFile= exclude each other (the other is at line 4): a .creds file carries its own NKey seed"]),
        (base + ["Credentials=/u.creds", "NKeySeedFile=/s.nk", "NKeySeedFile="], []),
        // TLS files
        (base + ["TLSCAFile=ca.pem"], ["c:4: TLSCAFile= must be an absolute path, got 'ca.pem'"]),
        (base + ["TLSCertFile=/h.pem"], ["c:4: TLSCertFile= without TLSKeyFile=: a client certificate is presented with its key"]),
        (base + ["TLSKeyFile=/h.key"], ["c:4: TLSKeyFile= without TLSCertFile=: a client certificate is presented with its key"]),
        (base + ["TLSKeyFile=/h.key", "TLSCertFile=h.pem"], ["c:4: TLSKeyFile= without TLSCertFile=: a client certificate is presented with its key", "c:5: TLSCertFile= must be an absolute path, got 'h.pem'"]),
        (base + ["TLSKeyFile=/h.key", "TLSCertFile=/h.pem"], []),
        // Inboxes=, Work=, Insecure=
        (base + ["Inboxes=/srv/drop srv/scans"], ["c:4: Inboxes= must name absolute paths, got 'srv/scans'"]),
        (base + ["Inboxes='/srv/drop"], ["c:4: invalid Inboxes=: unterminated ' quote"]),
        (base + ["Work=maybe"], ["c:4: invalid Work= 'maybe': expected yes or no"]),
        (base + ["Insecure=please"], ["c:4: invalid Insecure= 'please': expected yes or no"]),
        (base + ["Work=no"], ["c:1: warning: Work=no and no Inboxes=: this host neither feeds the cluster nor works for it"]),
        (base + ["Work=no", "Inboxes=/srv/drop"], []),
        // Unknown keys
        (base + ["Server=nats://localhost"], ["c:4: warning: unknown key 'Server' in section [Cluster], ignored; did you mean 'Servers='?"]),
        (base + ["Inbox=/srv/drop"], ["c:4: warning: unknown key 'Inbox' in section [Cluster], ignored; did you mean 'Inboxes='?"]),
        (base + ["TLSCAfile=/ca.pem"], ["c:4: warning: unknown key 'TLSCAfile' in section [Cluster], ignored; did you mean 'TLSCAFile='?"]),
        (base + ["Mirrors=3"], ["c:4: warning: unknown key 'Mirrors' in section [Cluster], ignored"]),
        (base + ["X-Mirrors=3"], []),
    ].map(ClusterCase.init))
    func diagnostics(_ testCase: ClusterCase) {
        let (settings, diagnostics) = cluster(testCase.lines)
        #expect(diagnostics == testCase.expected)
        #expect((settings == nil) == diagnostics.contains { !$0.contains("warning:") })
    }

    /// `nats://` in clear only to this host, unless TLS is configured or Insecure=yes says so.
    @Test(arguments: [
        (["Servers=nats://127.0.0.1"], []),
        (["Servers=nats://127.8.9.10:4300"], []),
        (["Servers=nats://localhost"], []),
        (["Servers=nats://LocalHost"], []),
        (["Servers=NATS://localhost"], []),
        (["Servers=nats://[::1]"], []),
        (["Servers=nats://[0:0:0:0:0:0:0:1]"], []),
        (["Servers=nats://[::ffff:127.0.0.1]"], []),
        (["Servers=nats://nats.example.org"], ["c:3: nats://nats.example.org:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://128.0.0.1:4300"], ["c:3: nats://128.0.0.1:4300 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://[::2]"], ["c:3: nats://[::2]:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://[::ffff:10.0.0.1]"], ["c:3: nats://[::ffff:10.0.0.1]:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://localhost.example.org"], ["c:3: nats://localhost.example.org:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://localhost nats://10.1.1.1", "Servers=nats://10.1.1.2"], [
            "c:3: nats://10.1.1.1:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear",
            "c:4: nats://10.1.1.2:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear",
        ]),
        (["Servers=nats://nats.example.org", "Insecure=yes"], []),
        (["Servers=nats://nats.example.org", "TLSCAFile=/etc/inboxd/ca.pem"], []),
        (["Servers=nats://nats-1.example.org tls://nats-2.example.org"], []),
        (["Servers=nats://nats.example.org", "TLSCertFile=/h.pem", "TLSKeyFile=/h.key"], ["c:3: nats://nats.example.org:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=nats://nats.example.org", "Insecure=yes", "Insecure="], ["c:3: nats://nats.example.org:4222 is not this host and nothing encrypts the connection: use tls://, set TLSCAFile=, or set Insecure=yes to send in clear"]),
        (["Servers=tls://nats.example.org/"], []),
        (["Servers=tls://nats_1.internal:443"], []),
    ].map { ClusterCase(["Name=office"] + $0.0, $0.1) })
    func clearText(_ testCase: ClusterCase) {
        let (settings, diagnostics) = cluster(testCase.lines)
        #expect(diagnostics == testCase.expected)
        #expect((settings == nil) == !testCase.expected.isEmpty)
    }

    @Test(arguments: [
        ("localhost", true), ("LOCALHOST", true), ("127.0.0.1", true), ("127.255.255.254", true), ("::1", true),
        ("0::1", true), ("::ffff:127.1.2.3", true), ("::ffff:7f00:1", true),
        ("126.0.0.1", false), ("128.0.0.1", false), ("0.0.0.0", false), ("::", false), ("::2", false),
        ("1::1", false), ("::ffff:10.0.0.1", false), ("::127.0.0.1", false), ("localhost.", false),
        ("my-localhost", false), ("nats.example.org", false), ("fe80::1", false),
    ])
    func loopback(_ host: String, loopback: Bool) {
        #expect(ServerURL.isLoopback(host) == loopback)
    }

    @Test(arguments: [
        ("::", [0, 0, 0, 0, 0, 0, 0, 0]), ("::1", [0, 0, 0, 0, 0, 0, 0, 1]), ("1::", [1, 0, 0, 0, 0, 0, 0, 0]),
        ("2001:db8::7", [0x2001, 0xDB8, 0, 0, 0, 0, 0, 7]), ("1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]),
        ("1:2:3:4:5:6::8", [1, 2, 3, 4, 5, 6, 0, 8]), ("::ffff:1.2.3.4", [0, 0, 0, 0, 0, 0xFFFF, 0x102, 0x304]),
        ("1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x102, 0x304]), ("ABCD::Ef", [0xABCD, 0, 0, 0, 0, 0, 0, 0xEF]),
        ("", nil), (":", nil), (":::", nil), ("1:2:3:4:5:6:7", nil), ("1:2:3:4:5:6:7:8:9", nil), ("1::2::3", nil),
        ("1:2:3:4:5:6:7::8", nil), ("::1.2.3.4:5", nil), ("1.2.3.4::", nil), ("g::", nil), ("12345::", nil),
        ("+1::", nil), (":1::", nil), ("1:::2", nil), ("::1%lo", nil), ("1:2:3:4:5:6:7:", nil),
    ] as [(String, [UInt16]?)])
    func ipv6(_ text: String, groups: [UInt16]?) {
        #expect(IPv6.parse(Substring(text)) == groups)
    }

    @Test func unconfiguredInboxes() throws {
        let settings = try #require(cluster(base + ["Inboxes=/srv/drop /srv/scans/", "Inboxes=/srv/drops"]).settings)
        #expect(settings.unconfiguredInboxes(configured: ["/srv/drop", "/srv/scans"]).map(\.description)
            == ["c:5: Inboxes= names /srv/drops, which is not a drop Inbox of this host (Inbox= or an [Inbox] "
                + "section's Path=); did you mean '/srv/drop'?"])
        #expect(settings.unconfiguredInboxes(configured: ["/srv/drop/", "/srv/scans", "/srv/drops"]) == [])
        #expect(settings.unconfiguredInboxes(configured: ["/var/spool/inboxd/Inbox"]).map(\.description) == [
            "c:4: Inboxes= names /srv/drop, which is not a drop Inbox of this host (Inbox= or an [Inbox] section's Path=)",
            "c:4: Inboxes= names /srv/scans, which is not a drop Inbox of this host (Inbox= or an [Inbox] section's Path=)",
            "c:5: Inboxes= names /srv/drops, which is not a drop Inbox of this host (Inbox= or an [Inbox] section's Path=)",
        ])
    }

    /// inboxd.conf reads its [Cluster] section: one, its Inboxes= among this host's drop Inboxes.
    @Test func readFromInboxdConf() {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(lines(
            "[Agent]", "Inbox=/srv/drop", "[Cluster]", "Name=office", "Servers=nats://127.0.0.1:4333",
            "Inboxes=/srv/drop", "AckWaitSec=1min", "Replicas=3", "Host=gateway-1"), path: "c")
        #expect(diagnostics.isEmpty)
        #expect(configuration.cluster?.names.name == "office")
        #expect(configuration.cluster?.inboxes == ["/srv/drop"])
        #expect(configuration.cluster?.ackWait == .seconds(60))
        #expect(configuration.cluster?.replicas == 3)
        #expect(configuration.cluster?.host == "gateway-1")
        #expect(configuration.cluster?.servers.map(\.description) == ["nats://127.0.0.1:4333"])
    }

    @Test(arguments: [
        (["[Agent]", "Inbox=/srv/drop", "[Cluster]", "Name=office", "Servers=nats://localhost", "Inboxes=/srv/drops"],
         ["c:6: Inboxes= names /srv/drops, which is not a drop Inbox of this host (Inbox= or an [Inbox] section's Path=); did you mean '/srv/drop'?"]),
        (["[Inbox]", "Path=/srv/scans", "[Cluster]", "Name=office", "Servers=nats://localhost", "Inboxes=/srv/scans",
          "[Cluster]", "Name=other"],
         ["c:7: a second [Cluster] section (the first is at line 3): a host takes part in one cluster"]),
        (["[Cluster]", "Name=office", "Servers=nats://localhost", "Replicas=7"],
         ["c:4: invalid Replicas= '7': expected a number from 1 to 5"]),
        (["[Cluster]", "Name=office", "Servers=nats://localhost", "Host=a b"],
         ["c:4: invalid Host= 'a b': 1 to 253 letters, digits, '.', '-' and '_'"]),
        (["[Cluster]", "Name=office", "Servers=nats://localhost", "AckWaitSec=0"],
         ["c:4: invalid AckWaitSec= '0': expected a time span from 1s to 1h"]),
        (["[Cluster]", "Name=office", "Servers=nats://localhost", "AckWaitSec=infinity"],
         ["c:4: invalid AckWaitSec= 'infinity': expected a time span from 1s to 1h"]),
    ])
    func inboxdConfErrors(_ text: [String], _ expected: [String]) {
        let (configuration, diagnostics) = ConfigurationParser.parseAgent(Array(text.joined(separator: "\n").utf8),
                                                                          path: "c")
        #expect(diagnostics.map(\.description) == expected)
        #expect(configuration.cluster == nil)
    }
}
