import Foundation
import InboxCore
import InboxSystem
import Testing

/// `[Inbox]` sections through the settings (which Inboxes are watched) and the handler catalog's cached decision,
/// which must agree with the rule itself for every name, binding and type.
struct InboxRoutingSettingsTests {
    static func scratch() throws -> URL {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-routing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("handlers.d"),
                                                withIntermediateDirectories: true)
        return directory
    }

    static func settings(_ config: String, inboxes: [String] = [], in directory: URL) throws -> AgentSettings {
        let file = directory.appendingPathComponent("inboxd.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        var overrides = SettingsOverrides()
        overrides.config = file.path
        overrides.inboxes = inboxes
        overrides.handlers = [directory.appendingPathComponent("handlers.d").path]
        overrides.defaults = directory.appendingPathComponent("defaults.conf").path
        return try SettingsResolver.resolve(overrides, environment: ["HOME": directory.path], isRoot: true).settings.get()
    }

    @Test(arguments: [
        // Only [Inbox] sections: only theirs, not the default Inbox.
        ("[Inbox]\nPath=/srv/a/\nHandler=h\n", [], ["/srv/a"]),
        // Inbox= first, then the sections; one named twice is watched once.
        ("[Agent]\nInbox=/srv/p\nInbox=/srv/a/\n[Inbox]\nPath=/srv/a\nHandler=h\n[Inbox]\nPath=/srv/b\n", [],
         ["/srv/p", "/srv/a", "/srv/b"]),
        // --inbox replaces Inbox= lines, not the sections.
        ("[Agent]\nInbox=/srv/p\n[Inbox]\nPath=/srv/a\nHandler=h\n", ["/x"], ["/x", "/srv/a"]),
        // Nothing configured: the default.
        ("", [], ["/var/spool/inboxd/Inbox"]),
    ] as [(String, [String], [String])])
    func watchedInboxes(config: String, inboxes: [String], expected: [String]) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try Self.settings(config, inboxes: inboxes, in: directory)
        #expect(settings.inboxes == expected)
    }

    /// [Cluster] Inboxes= against what the instance watches: the default drop Inbox of a file that names none counts,
    /// another path is an error at its line and no settings are made.
    @Test func clusterInboxesAreTheWatchedOnesTheDefaultIncluded() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = "[Cluster]\nName=office\nServers=nats://127.0.0.1\nInboxes="
        let settings = try Self.settings(cluster + "/var/spool/inboxd/Inbox\n", in: directory)
        #expect(settings.cluster?.inboxes == ["/var/spool/inboxd/Inbox"])
        let file = directory.appendingPathComponent("inboxd.conf")
        try (cluster + "/srv/elsewhere\n").write(to: file, atomically: true, encoding: .utf8)
        var overrides = SettingsOverrides()
        overrides.config = file.path
        let resolved = SettingsResolver.resolve(overrides, environment: ["HOME": directory.path], isRoot: true)
        #expect((try? resolved.settings.get()) == nil)
        #expect(resolved.diagnostics.map(\.description) == [
            "\(file.path):4: Inboxes= names /srv/elsewhere, which is not a drop Inbox of this host (Inbox= or an "
                + "[Inbox] section's Path=)"])
    }

    @Test func theCachedDecisionIsTheRulesForEveryNameAndBinding() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let handlers = directory.appendingPathComponent("handlers.d")
        let registrations = [
            ("pdf", "[DocumentType]\nContentTypes=com.adobe.pdf\nRank=Owner\n"),
            ("invoices", "[DocumentType]\nContentTypes=com.adobe.pdf\nNamePatterns=*.invoice.pdf\nRank=Alternate\n"),
            ("scans", "[DocumentType]\nNamePatterns=scan-*\n"),
            ("text", "[DocumentType]\nContentTypes=public.plain-text\n"),
        ]
        for (id, sections) in registrations {
            try "[Handler]\nIdentifier=\(id)\nExec=/bin/true %f\n\(sections)"
                .write(to: handlers.appendingPathComponent("\(id).handler"), atomically: true, encoding: .utf8)
        }
        let settings = try Self.settings("[Inbox]\nPath=/srv/scan\nHandler=invoices\n", in: directory)
        let catalog = HandlerCatalog.load(settings)
        #expect(catalog.hasNamePatterns && catalog.hasBindings)
        let binding = try #require(catalog.binding(forInbox: "/srv/scan/"))
        // Twice over, so that the second round is served from the cache the first one filled.
        for _ in 0..<2 {
            for type in ["com.adobe.pdf", "public.plain-text", "public.png"] {
                for name in ["a.invoice.pdf", "a.pdf", "scan-1.txt", "A.INVOICE.PDF", nil] as [String?] {
                    for bound in [nil, binding] as [Routing.Binding?] {
                        let subject = Routing.Subject(type: type, name: name, binding: bound)
                        let rule = Routing.decide(subject, request: nil, index: catalog.index, database: catalog.database,
                                                  preferences: catalog.preferences)
                        #expect(catalog.decision(for: subject, request: nil) == rule, "\(subject)")
                        if bound == nil && name == nil {
                            #expect(catalog.decision(for: type, request: nil) == rule, "\(type)")
                        }
                    }
                }
            }
        }
        #expect(catalog.decision(for: Routing.Subject(type: "com.adobe.pdf", name: "a.invoice.pdf"), request: nil)
                == .deliver(handler: "invoices", chosenBy: .namePattern))
        #expect(catalog.decision(for: Routing.Subject(type: "com.adobe.pdf", name: "a.pdf"), request: nil)
                == .deliver(handler: "pdf", chosenBy: .rank))
        #expect(catalog.decision(for: Routing.Subject(type: "com.adobe.pdf", name: "a.pdf", binding: binding), request: nil)
                == .park(requested: nil, because: "Inbox /srv/scan is bound to invoices, which does not open "
                         + "com.adobe.pdf by that name"))
    }
}
