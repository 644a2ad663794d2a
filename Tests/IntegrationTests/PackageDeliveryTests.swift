import Foundation
import InboxSystem
import Testing

/// Package documents through the real agent: a directory of a package type renamed into the Inbox whole reaches the
/// handler registered for its type as one document, read-and-delete-only for the whole tree, and is gone once the
/// handler succeeds. Root: the handler's copy is root's and its group's, as in a system instance.
@Suite(.serialized, .enabled(if: Journal.available, Comment(rawValue: Journal.unavailableReason)),
       .enabled(if: getuid() == 0, "a package handed over to a handler's own identity needs root"))
struct PackageDeliveryTests {
    static let landlockAvailable = LandlockRuleset.abi() > 0

    /// What every whole delivery shows: the handler got the directory's path in INBOX_FILE, %f, %u and its stdin
    /// document, INBOX_PACKAGE=1, the tree entry for entry with the copy's modes, and kept a copy in Documents that is
    /// the package byte for byte; after exit 0 nothing is left of it anywhere.
    private func expectDeliveredWhole(_ world: AgentHarness, handler: String, name: String, files: [String: [UInt8]],
                                      type: String) throws {
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_EXIT_STATUS"] == "0")
        #expect(finished.first?[field: "INBOX_CONTENT_TYPE"] == type)
        let path = world.containerInbox(handler).appendingPathComponent(name).path
        #expect(finished.first?[field: "INBOX_FILE"] == path)
        let recording = try #require(world.recording(named: name))
        #expect(recording.contains("argv: [--file] [\(path)] [--url] [file://"), "\(recording)")
        #expect(recording.contains("\nINBOX_FILE=\(path)\n"))
        #expect(recording.contains("\nINBOX_PACKAGE=1\n"))
        #expect(recording.contains("\nINBOX_CONTENT_TYPE=\(type)\n"))
        #expect(recording.contains(#""file":"\#(path)""#))
        #expect(recording.contains(#""url":"file://"#))
        #expect(recording.contains(#""package":true"#))
        #expect(SamplePackages.recordedTree(recording) == SamplePackages.treeLines(files))
        #expect(recording.contains("\nroot 770\n"))
        #expect(recording.contains("\ncopied\n"))
        let kept = world.state.appendingPathComponent("containers/\(handler)/Documents/\(name)")
        var expected: [String: String] = [:]
        let reference = try world.makePackage(".reference-\(name)", files)
        expected = TreeSnapshot.of(reference)
        #expect(TreeSnapshot.of(kept) == expected)
        try waitUntil("the package is removed from the container Inbox") { world.containerEntries(handler).isEmpty }
        #expect(world.allEntries(of: world.inbox).isEmpty)
        #expect(world.allEntries(of: world.state.appendingPathComponent("intake")).isEmpty)
        #expect(world.visibleEntries(of: world.failedDirectory).isEmpty)
        #expect(world.events("violation").isEmpty)
    }

    @Test func anRTFDReachesItsHandlerWholeWithItsMetadataAndIsGoneAfterExitZero() throws {
        let world = try AgentHarness()
        let handler = "test.rtfd.\(world.tag)"
        let exec = "\(try world.packageRecorder().path) --file %f --url %u"
        try world.register(handler, exec: exec, contentTypes: "com.apple.rtfd")
        // Any package: chosen only for one that is no RTFD after all (no TXT.rtf in it).
        try world.register("test.package.\(world.tag)", exec: exec, contentTypes: "com.apple.package", rank: "Alternate")
        try world.start()
        let package = try world.makePackage("Report.rtfd", SamplePackages.rtfd)
        try setAttribute("user.inbox.source-app", "com.apple.TextEdit", on: package)
        try world.dropPackage(package)
        try expectDeliveredWhole(world, handler: handler, name: "Report.rtfd", files: SamplePackages.rtfd,
                                 type: "com.apple.rtfd")
        let recording = try #require(world.recording(named: "Report.rtfd"))
        #expect(recording.contains("\nINBOX_SOURCE_APP=com.apple.TextEdit\n"))
        #expect(world.outcomeEntries(naming: "Report.rtfd").count == 1)

        // Named as an RTFD but without its text: a mismatch, typed com.apple.package alone, and so the other handler's.
        let pictures = ["image.png": pngBytes(width: 1, height: 1)]
        try world.dropPackage(try world.makePackage("Pictures.rtfd", pictures))
        try expectDeliveredWhole(world, handler: "test.package.\(world.tag)", name: "Pictures.rtfd", files: pictures,
                                 type: "com.apple.package")
    }

    @Test func aPagesPackageReachesItsHandlerWhole() throws {
        let world = try AgentHarness()
        let handler = "test.pages.\(world.tag)"
        try world.register(handler, exec: "\(try world.packageRecorder().path) --file %f --url %u",
                           contentTypes: "com.apple.iwork.pages.pages")
        try world.start()
        try world.dropPackage(try world.makePackage("Minutes.pages", SamplePackages.pages))
        try expectDeliveredWhole(world, handler: handler, name: "Minutes.pages", files: SamplePackages.pages,
                                 type: "com.apple.iwork.pages.pages")
    }

    /// A type is a package because a registration says so: an exported type conforming to com.apple.package.
    @Test func aPackageTypeExportedByARegistrationIsDeliveredWhole() throws {
        let world = try AgentHarness()
        let handler = "test.sketch.\(world.tag)"
        let type = "com.example.sketch-\(world.tag)"
        try world.register(handler, exec: "\(try world.packageRecorder().path) --file %f --url %u", contentTypes: type,
                           rank: "Owner", extraSections: """
                               [ExportedType]
                               Identifier=\(type)
                               Description=Sketch
                               ConformsTo=com.apple.package public.composite-content
                               Extensions=sketchpkg
                               """)
        try world.start()
        let files: [String: [UInt8]] = ["Contents/sketch.json": Array(#"{"strokes":3}"#.utf8),
                                        "Contents/Resources/brush.png": pngBytes(width: 2, height: 1)]
        try world.dropPackage(try world.makePackage("Doodle.sketchpkg", files))
        try expectDeliveredWhole(world, handler: handler, name: "Doodle.sketchpkg", files: files, type: type)
    }

    /// And because an Info.plist's document type says `LSTypeIsPackage`: its type conforms to nothing that makes it
    /// one otherwise.
    @Test(.enabled(if: Plistlib.available, Comment(rawValue: Plistlib.unavailableReason)))
    func aDocumentTypeWithLSTypeIsPackageIsDeliveredWhole() throws {
        let world = try AgentHarness()
        let handler = "test.album.\(world.tag)"
        let type = "com.example.album-\(world.tag)"
        let recorder = try world.packageRecorder()
        let plist: [String: Any] = [
            "CFBundleIdentifier": handler,
            "CFBundleName": "Album",
            "CFBundleVersion": "1.0",
            "InboxdHandler": [
                "Exec": [recorder.path, "--file", "%f", "--url", "%u"],
                "Environment": ["OUTPUT_DIR=\(world.output.path)"],
                "ReadWritePaths": [world.output.path],
            ] as [String: Any],
            "CFBundleDocumentTypes": [["CFBundleTypeName": "Album", "LSItemContentTypes": [type], "LSHandlerRank": "Owner",
                                       "CFBundleTypeRole": "Viewer", "LSTypeIsPackage": true] as [String: Any]],
            "UTExportedTypeDeclarations": [["UTTypeIdentifier": type, "UTTypeConformsTo": ["public.composite-content"],
                                            "UTTypeTagSpecification": ["public.filename-extension": ["album"]]]],
        ]
        try Plistlib.write(plist, to: world.handlers.appendingPathComponent("\(handler).plist"), format: "xml")
        try world.start()
        let files: [String: [UInt8]] = ["index.json": Array(#"{"photos":["a.png"]}"#.utf8),
                                        "photos/a.png": pngBytes(width: 3, height: 3)]
        try world.dropPackage(try world.makePackage("Summer.album", files))
        try expectDeliveredWhole(world, handler: handler, name: "Summer.album", files: files, type: type)
    }

    /// Right at the bounds (32 levels of directories with a file in the deepest, exactly 10,000 entries, exactly
    /// MaxPackageSize= bytes) is a package like any other: the bounds refuse only what is beyond them
    /// (PackageHostileTests has one more of each).
    @Test func aPackageRightAtTheBoundsIsDelivered() throws {
        let world = try AgentHarness()
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, contentTypes: "com.apple.rtfd")
        try world.start(config: HostileShape.config)
        var files = SamplePackages.rtfd
        let deep = (["Data"] + (2...32).map { "level\($0)" }).joined(separator: "/") + "/bottom.txt"
        files[deep] = Array("in the 32nd level\n".utf8)
        // TXT.rtf, image.png, Data and its 31 levels, bottom.txt, Data/many and what brings the count to 10,000.
        let counted = 2 + 32 + 1 + 1
        for index in 0..<(10_000 - counted) { files["Data/many/\(index)"] = [] }
        let used = files.values.reduce(0) { $0 + $1.count }
        files["Data/many/0"] = [UInt8](repeating: 0x41, count: HostileShape.sizeLimit - used)
        try world.dropPackage(try world.makePackage("Bounds.rtfd", files))
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"], timeout: 60)
        #expect(finished.first?[field: "INBOX_EXIT_STATUS"] == "0")
        #expect(world.events("rejected").isEmpty)
        try waitUntil("the package is removed from the container Inbox") { world.containerEntries(handler).isEmpty }
    }

    /// A handler under Landlock may read and list the whole tree, copy it into Documents and remove entries; the
    /// kernel refuses everything else it tries inside (it reports each on stdout, so in the journal), the package is
    /// unchanged by it, and the delivery ends as the handler's exit says, with no violation.
    @Test(.enabled(if: PackageDeliveryTests.landlockAvailable, "the kernel has no Landlock"))
    func aHandlerMayReadAndRemoveInsideItsPackageButTheKernelRefusesEverythingElse() throws {
        let world = try AgentHarness()
        let handler = "test.probe.\(world.tag)"
        #if arch(x86_64)
        let renameat2 = 316
        #else
        let renameat2 = 276
        #endif
        let probe = try world.script("probe", """
            P="$INBOX_FILE"
            out="$OUTPUT_DIR/$INBOX_DELIVERY_ID.probe"
            try() { if (eval "$2") 2>/dev/null; then echo "$1 allowed"; else echo "$1 denied"; fi; }
            {
              try list 'ls -R "$P" >/dev/null'
              try read 'cat "$P/TXT.rtf" "$P/Data/note.txt" >/dev/null'
              try write 'echo x >> "$P/TXT.rtf"'
              try write-nested 'echo x >> "$P/Data/note.txt"'
              try truncate 'perl -e "truncate(q($P/TXT.rtf), 0) or exit 1"'
              try create 'echo x > "$P/new.txt"'
              try create-nested 'echo x > "$P/Data/new.txt"'
              try mkdir 'mkdir "$P/Folder"'
              try symlink 'ln -s /etc/passwd "$P/Data/link"'
              try hardlink 'ln "$P/TXT.rtf" "$P/Data/hard"'
              try rename-inside 'perl -e "rename(q($P/image.png), q($P/moved.png)) or exit 1"'
              try rename-directory 'perl -e "rename(q($P/Data), q($P/Moved)) or exit 1"'
              try swap 'perl -e "rename(q($P/image.png), q($P/TXT.rtf)) or exit 1"'
              try exchange 'perl -e "syscall(\(renameat2), -100, q($P/image.png), -100, q($P/TXT.rtf), 2) == 0 or exit 1"'
              try move-out 'perl -e "rename(q($P/Data/note.txt), q($INBOX_DOCUMENTS/note.txt)) or exit 1"'
              try chmod 'chmod u+w "$P/TXT.rtf"'
              try keep 'cp -R "$P" "$INBOX_DOCUMENTS/kept"'
              try remove 'rm "$P/Data/note.txt"'
            } > "$out.tmp"
            mv "$out.tmp" "$out"
            cat "$out"
            """)
        try world.register(handler, exec: probe.path, contentTypes: "com.apple.rtfd")
        try world.start()
        var files = SamplePackages.rtfd
        files["Data/note.txt"] = Array("a note\n".utf8)
        try world.dropPackage(try world.makePackage("Probe.rtfd", files))
        let finished = try world.waitForEvents("finished", ["INBOX_HANDLER=\(handler)"])
        #expect(finished.first?[field: "INBOX_EXIT_STATUS"] == "0")
        let report = try #require(world.contents(of: world.output).first { $0.hasSuffix(".probe") })
        let lines = try String(contentsOf: world.output.appendingPathComponent(report), encoding: .utf8)
        #expect(lines == """
            list allowed
            read allowed
            write denied
            write-nested denied
            truncate denied
            create denied
            create-nested denied
            mkdir denied
            symlink denied
            hardlink denied
            rename-inside denied
            rename-directory denied
            swap denied
            exchange denied
            move-out denied
            chmod denied
            keep allowed
            remove allowed

            """)
        // Reported: the handler's own lines are in the journal under its identifier.
        let said = try Journal.wait(for: ["SYSLOG_IDENTIFIER=\(handler)", "MESSAGE=swap denied"])
        #expect(!said.isEmpty)
        // What it kept is the package as it was given, untouched by the refused attempts.
        let kept = world.state.appendingPathComponent("containers/\(handler)/Documents/kept")
        #expect(TreeSnapshot.of(kept) == TreeSnapshot.of(try world.makePackage(".reference", files)))
        #expect(world.events("violation").isEmpty)
        try waitUntil("the package is removed from the container Inbox") { world.containerEntries(handler).isEmpty }
        #expect(world.visibleEntries(of: world.failedDirectory).isEmpty)
    }

    /// What the kernel would refuse, done anyway (Landlock off, a root handler past the copy's modes): the after-exit
    /// check compares the tree with the identities recorded before the launch, and an entry added, changed or
    /// swapped is a violation, named, with the package kept in failed/ as the handler left it.
    @Test(.enabled(if: getuid() == 0, "needs a handler running as root"), arguments: [
        ("added", #"echo x > "$INBOX_FILE/Data/added.txt""#, "entry Data/added.txt was added"),
        ("changed", #"echo x >> "$INBOX_FILE/TXT.rtf""#, "entry TXT.rtf was changed"),
        ("swapped", #"cp "$INBOX_FILE/TXT.rtf" "$INBOX_DOCUMENTS/t" && mv -f "$INBOX_DOCUMENTS/t" "$INBOX_FILE/TXT.rtf""#,
         "entry TXT.rtf was replaced by another file"),
    ])
    func aTreeChangedByItsHandlerIsAViolationKeptInFailed(change: String, command: String, reason: String) throws {
        let world = try AgentHarness()
        let handler = "test.tamperer.\(world.tag)"
        let tamper = try world.script("tamper", command)
        try world.write(world.registrationText(handler, exec: tamper.path, contentTypes: "com.apple.rtfd",
                                               extraHandler: "User=root"), to: world.handlerFile(handler))
        try world.start(config: "[Agent]\nLandlock=off\n")
        var files = SamplePackages.rtfd
        files["Data/note.txt"] = Array("a note\n".utf8)
        try world.dropPackage(try world.makePackage("Evidence.rtfd", files))
        let violation = try #require(try world.waitForEvents("violation").first)
        #expect(violation[field: "INBOX_HANDLER"] == handler)
        #expect(violation[field: "INBOX_REASON"]?.contains(reason) == true, "\(change): \(violation[field: "INBOX_REASON"] ?? "")")
        #expect(world.visibleEntries(of: world.failedDirectory) == ["Evidence.rtfd"])
        #expect(world.events("finished").isEmpty)
        #expect(world.containerEntries(handler).isEmpty)
    }

    /// `inboxctl send DIR`: the package is copied under a hidden name, renamed in whole and delivered whole; the
    /// sender's own is left as it was.
    @Test func sendDeliversAPackageWhole() throws {
        let world = try AgentHarness()
        let handler = "test.rtfd.\(world.tag)"
        try world.register(handler, exec: "\(try world.packageRecorder().path) --file %f --url %u",
                           contentTypes: "com.apple.rtfd")
        try world.start()
        let package = try world.makePackage("Sent.rtfd", SamplePackages.rtfd)
        let before = TreeSnapshot.of(package)
        let sent = try world.inboxctl("send", ["--source-app", "com.example.mail", package.path])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout == world.inbox.appendingPathComponent("Sent.rtfd").path + "\n")
        try expectDeliveredWhole(world, handler: handler, name: "Sent.rtfd", files: SamplePackages.rtfd,
                                 type: "com.apple.rtfd")
        #expect(world.recording(named: "Sent.rtfd")?.contains("\nINBOX_SOURCE_APP=com.example.mail\n") == true)
        #expect(TreeSnapshot.of(package) == before)
    }
}
