import Foundation
import Testing

/// Registrations written as Info.plists by a real tool (Python's plistlib), binary and XML, loaded by the real agent.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: Plistlib.available, Comment(rawValue: Plistlib.unavailableReason)))
struct InfoPlistTests {
    @Test func binaryAndXMLInfoPlistsRegisterHandlers() throws {
        let world = try AgentHarness()
        let binary = "test.binary-plist.\(world.tag)"
        let text = "test.xml-plist.\(world.tag)"
        let binaryPlist = infoPlist(world, binary, type: "com.example.binary-plist-\(world.tag)", extensions: ["bplisttest"])
        try Plistlib.write(binaryPlist, to: world.handlers.appendingPathComponent("\(binary).plist"), format: "binary")
        let textPlist = infoPlist(world, text, type: "com.example.xml-plist-\(world.tag)", extensions: ["xplisttest"])
        try Plistlib.write(textPlist, to: world.handlers.appendingPathComponent("\(text).plist"), format: "xml")
        var broken = infoPlist(world, "test.broken-plist.\(world.tag)", type: "com.example.broken", extensions: ["broken"])
        // Its one document type claims nothing usable: the registration opens nothing and is broken.
        broken["CFBundleDocumentTypes"] = [["LSItemContentTypes": [""], "LSHandlerRank": "Boss"]]
        let brokenURL = world.handlers.appendingPathComponent("broken.plist")
        try Plistlib.write(broken, to: brokenURL, format: "binary")
        try world.start()

        let loaded = try world.waitForRegistrationLoads(1)
        let handlers = loaded.first?[field: "INBOX_HANDLERS"]?.split(separator: " ").map(String.init) ?? []
        #expect(Set(handlers) == [binary, text])
        #expect(loaded.first?[field: "INBOX_REJECTED"] == brokenURL.path)
        // A binary file has no lines: the error names the key path.
        let errors = world.journal(["MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5b"])
        let messages = errors.compactMap { $0[field: "MESSAGE"] }
        #expect(messages.contains("\(brokenURL.path): CFBundleDocumentTypes[0].LSItemContentTypes[0]: warning: empty item: skipped"))
        #expect(messages.contains("\(brokenURL.path): CFBundleDocumentTypes: no usable document type: each of the 1 entries "
                                  + "was skipped"))

        try world.drop("one.bplisttest", contents: Array("binary".utf8))
        try world.drop("two.xplisttest", contents: Array("xml".utf8))
        let finished = try world.waitForEvents("finished", count: 2)
        let handledBy = Dictionary(uniqueKeysWithValues: finished.compactMap { entry -> (String, String)? in
            guard let file = entry[field: "INBOX_FILE"], let handler = entry[field: "INBOX_HANDLER"] else { return nil }
            return (URL(fileURLWithPath: file).lastPathComponent, handler)
        })
        #expect(handledBy == ["one.bplisttest": binary, "two.xplisttest": text])
        // The handlers ran with the Exec words and Environment the plists gave them.
        let records = world.recordings().values
        #expect(records.contains { $0.contains("[--type] [com.example.binary-plist-\(world.tag)]") })
        #expect(records.contains { $0.contains("INBOX_CONTENT_TYPE=com.example.xml-plist-\(world.tag)") })
    }

    /// An app bundle with an unchanged Info.plist (no command in it) and its program is a complete handler; a bundle
    /// whose program anyone may write is refused like any registration.
    @Test func aBundleRegistersWithItsProgram() throws {
        let world = try AgentHarness()
        let identifier = "test.bundle.\(world.tag)"
        let type = "com.example.bundle-\(world.tag)"
        var plist = infoPlist(world, identifier, type: type, extensions: ["bundletest"])
        plist["CFBundleExecutable"] = "Recorder"
        plist["InboxdHandler"] = ["Environment": ["OUTPUT_DIR=\(world.output.path)", "EXIT_CODE=0"],
                                  "ReadWritePaths": [world.output.path]] as [String: Any]
        let bundle = world.handlers.appendingPathComponent("Recorder.app")
        let programs = bundle.appendingPathComponent("Contents/MacOS")
        try FileManager.default.createDirectory(at: programs, withIntermediateDirectories: true)
        try Plistlib.write(plist, to: bundle.appendingPathComponent("Contents/Info.plist"), format: "binary")
        try FileManager.default.copyItem(at: world.recorderURL, to: programs.appendingPathComponent("Recorder"))
        // The same, with a program everyone may write.
        var open = infoPlist(world, "test.open-bundle.\(world.tag)", type: "com.example.open-\(world.tag)",
                             extensions: ["openbundle"])
        open["CFBundleExecutable"] = "Open"
        open["InboxdHandler"] = nil
        let openBundle = world.handlers.appendingPathComponent("Open.bundle")
        try FileManager.default.createDirectory(at: openBundle, withIntermediateDirectories: true)
        try Plistlib.write(open, to: openBundle.appendingPathComponent("Info.plist"), format: "xml")
        let openProgram = openBundle.appendingPathComponent("Open")
        try FileManager.default.copyItem(at: world.recorderURL, to: openProgram)
        chmod(openProgram.path, 0o777)
        try world.start()

        let loaded = try world.waitForRegistrationLoads(1)
        #expect(loaded.first?[field: "INBOX_HANDLERS"] == identifier)
        #expect(loaded.first?[field: "INBOX_REJECTED"] == openBundle.path)
        try world.drop("one.bundletest", contents: Array("bundle".utf8))
        let finished = try world.waitForEvents("finished", count: 1)
        #expect(finished.first?[field: "INBOX_HANDLER"] == identifier)
        // The program got the file's path, the %f appended to it.
        let records = world.recordings().values
        #expect(records.contains { $0.hasPrefix("argv: [") && $0.contains("/one.bundletest]\n") })
        // An edit inside the bundle reloads, as an edit in handlers.d does.
        plist["CFBundleName"] = "Edited"
        try Plistlib.write(plist, to: bundle.appendingPathComponent("Contents/Info.plist"), format: "binary")
        let reloaded = try world.waitForRegistrationLoads(2)
        #expect(reloaded.last?[field: "INBOX_HANDLERS"] == identifier)
    }

    /// A claim on an identifier nobody declares matches files that carry it: `handlers --type` and `send --type`
    /// know it, and a file sent with it reaches the handler.
    @Test func aClaimOnAnUndeclaredIdentifierIsHonoured() throws {
        let world = try AgentHarness()
        let identifier = "test.undeclared.\(world.tag)"
        let claim = "com.example.undeclared-\(world.tag)"
        var plist = infoPlist(world, identifier, type: claim, extensions: [])
        plist["UTExportedTypeDeclarations"] = nil
        try Plistlib.write(plist, to: world.handlers.appendingPathComponent("\(identifier).plist"), format: "xml")
        try world.start()
        _ = try world.waitForRegistrationLoads(1)
        let notices = world.journal(["MESSAGE_ID=3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5b", "PRIORITY=5"])
        #expect(notices.contains { ($0[field: "MESSAGE"] ?? "").contains("claims '\(claim)', which no type declares") })
        let handlers = try world.inboxctl("handlers", ["--type", claim])
        #expect(handlers.status == 0)
        #expect(handlers.stdout.contains("* 1  \(identifier)  Owner"))
        let sent = try world.inboxctl("send", ["--type", claim, "-"], input: Array("payload".utf8))
        #expect(sent.status == 0, "\(sent.stderr)")
        let finished = try world.waitForEvents("finished")
        #expect(finished.first?[field: "INBOX_HANDLER"] == identifier)
        #expect(finished.first?[field: "INBOX_CONTENT_TYPE"] == claim)
    }

    /// An Info.plist running the harness's recorder for one exported type.
    private func infoPlist(_ world: AgentHarness, _ identifier: String, type: String, extensions: [String]) -> [String: Any] {
        [
            "CFBundleIdentifier": identifier,
            "CFBundleName": "Info.plist test handler",
            "CFBundleVersion": "1.0",
            "InboxdHandler": [
                "Exec": [world.recorderURL.path, "--file", "%f", "--type", "%t", "--source", "%s"],
                "Environment": ["OUTPUT_DIR=\(world.output.path)", "EXIT_CODE=0"],
                "ReadWritePaths": [world.output.path],
                "TimeoutSec": 30,
            ] as [String: Any],
            "CFBundleDocumentTypes": [["CFBundleTypeName": "Test documents", "LSItemContentTypes": [type],
                                       "LSHandlerRank": "Owner", "CFBundleTypeRole": "Viewer"]],
            "UTExportedTypeDeclarations": [["UTTypeIdentifier": type, "UTTypeConformsTo": ["public.data"],
                                            "UTTypeTagSpecification": ["public.filename-extension": extensions]]],
        ]
    }
}

/// Python's plistlib, run through `/usr/bin/env python3`: the tool that writes the plists these tests read.
enum Plistlib {
    static let available: Bool = {
        (try? run("/usr/bin/env", ["python3", "-c", "import plistlib"]).status) == 0
    }()

    static let unavailableReason = "python3 with plistlib is not installed"

    /// Writes `value` (JSON-compatible) as a property list, `format` "binary" or "xml": whole, renamed over the old one,
    /// so that an agent watching the file never reads it half written.
    static func write(_ value: [String: Any], to url: URL, format: String) throws {
        let json = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).json")
        try JSONSerialization.data(withJSONObject: value).write(to: json)
        defer { try? FileManager.default.removeItem(at: json) }
        let script = """
            import json, os, plistlib, sys
            fmt = plistlib.FMT_BINARY if sys.argv[3] == "binary" else plistlib.FMT_XML
            with open(sys.argv[1]) as source, open(sys.argv[2] + ".part", "wb") as target:
                plistlib.dump(json.load(source), target, fmt=fmt)
            os.replace(sys.argv[2] + ".part", sys.argv[2])
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script, json.path, url.path, format])
        guard result.status == 0 else {
            Issue.record("plistlib failed: \(result.stderr)")
            throw POSIXError(.EIO)
        }
    }
}
