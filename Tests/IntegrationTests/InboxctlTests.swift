import Foundation
import Testing

@Suite struct InboxctlVerifyTests {
    let directory: URL

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func reportsEachErrorWithItsLineAndFails() throws {
        let bad = try file("bad.handler", "[Handler]\nExec=/bin/true\n\n[DocumentType]\nContentTypes=public.png\nRank=Supreme\n")
        let good = try file("good.handler", "[Handler]\nExec=/bin/true\n[DocumentType]\nContentTypes=public.png\n")
        let result = try run(Binaries.inboxctl.path, ["verify", bad, good])
        #expect(result.status == 1)
        #expect(result.stdout == "\(bad):6: invalid Rank= 'Supreme': expected Owner, Default, Alternate or None\n")
        #expect(result.stderr == "2 paths: 1 error(s)\n")
    }

    @Test func aCleanDirectoryPassesWithOneLineSaidSo() throws {
        _ = try file("viewer.handler", "[Handler]\nExec=/bin/cat %f\n[DocumentType]\nContentTypes=public.text\n")
        _ = try file("editor.handler", "[Handler]\nExec=/bin/cat %f\n[DocumentType]\nContentTypes=public.png\n")
        for arguments in [["verify", "--handlers", directory.path], ["verify", "--strict", "--handlers", directory.path]] {
            let result = try run(Binaries.inboxctl.path, arguments)
            #expect(result.status == 0)
            #expect(result.stdout == "2 registrations, 0 warnings\n")
            #expect(result.stderr.isEmpty)
        }
        let one = try run(Binaries.inboxctl.path, ["verify", directory.appendingPathComponent("viewer.handler").path])
        #expect(one.stdout == "1 registration, 0 warnings\n")
        let defaults = try file("defaults.conf", "[Defaults]\npublic.text=viewer\n")
        #expect(try run(Binaries.inboxctl.path, ["verify", defaults]).stdout == "1 configuration file, 0 warnings\n")
        let both = try run(Binaries.inboxctl.path, ["verify", directory.appendingPathComponent("viewer.handler").path, defaults])
        #expect(both.stdout == "1 registration, 1 configuration file, 0 warnings\n")
    }

    /// A typo in a key leaves the rank at its default, and a misspelt type matches no file: the registration loads,
    /// so both are warnings, with the close name; --strict makes them fail (CI, configuration management).
    @Test func warningsAreSaidWithTheNearestNameAndFailUnderStrict() throws {
        let chess = try file("chess.handler", """
            [Handler]
            Identifier=com.example.chess
            Exec=/bin/true %f

            [DocumentType]
            Name=Games
            ContentTypes=public.pgn
            Rnak=Owner

            """)
        let warnings = """
            \(chess):7: warning: ContentTypes= names 'public.pgn', which no type declares; did you mean 'public.png'?
            \(chess):8: warning: unknown key 'Rnak' in section [DocumentType], ignored; did you mean 'Rank='?

            """
        let plain = try run(Binaries.inboxctl.path, ["verify", chess])
        #expect(plain.status == 0)
        #expect(plain.stdout == warnings + "1 registration, 2 warnings\n")
        #expect(plain.stderr.isEmpty)

        let strict = try run(Binaries.inboxctl.path, ["verify", "--strict", chess])
        #expect(strict.status == 1)
        #expect(strict.stdout == warnings)
        #expect(strict.stderr == "\(chess): 2 warnings, which fail under --strict\n")

        let directory = try run(Binaries.inboxctl.path, ["verify", "--strict", "--handlers", self.directory.path])
        #expect(directory.status == 1)
        #expect(directory.stdout == warnings)
        #expect(directory.stderr == "the handlers.d search path: 2 warnings, which fail under --strict\n")

        let json = try run(Binaries.inboxctl.path, ["verify", "--strict", "--json", chess])
        #expect(json.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(document["registrations"] as? Int == 1)
        #expect(document["warnings"] as? Int == 2)
        #expect(document["errors"] as? Int == 0)
        #expect(document["strict"] as? Bool == true)
        #expect(try run(Binaries.inboxctl.path, ["verify", "--json", chess]).status == 0)

        // inboxctl handlers marks it: it is in force, with what is wrong with it.
        let handlers = try run(Binaries.inboxctl.path, ["handlers", "--handlers", self.directory.path, "--inbox", self.directory.path])
        #expect(handlers.status == 0)
        #expect(handlers.stdout == """
            com.example.chess  active  \(chess)
              warning: \(chess):7: ContentTypes= names 'public.pgn', which no type declares; did you mean 'public.png'?
              warning: \(chess):8: unknown key 'Rnak' in section [DocumentType], ignored; did you mean 'Rank='?
              Games: public.pgn (Default, Viewer)

            """)
        let handlersJSON = try run(Binaries.inboxctl.path, ["handlers", "--json", "--handlers", self.directory.path,
                                                            "--inbox", self.directory.path])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(handlersJSON.stdout.utf8)) as? [[String: Any]])
        #expect(entries.first?["warnings"] as? [String] == [
            "\(chess):7: ContentTypes= names 'public.pgn', which no type declares; did you mean 'public.png'?",
            "\(chess):8: unknown key 'Rnak' in section [DocumentType], ignored; did you mean 'Rank='?"])
    }

    /// LSTypeIsPackage on a type whose documents are files cannot make them packages: a warning at the key.
    @Test func packageKeyOnAFileTypeIsAWarningAtTheKey() throws {
        let plist = try file("notes.plist", """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
            <key>InboxdHandler</key> <dict><key>Exec</key> <string>/bin/true %f</string></dict>
            <key>CFBundleDocumentTypes</key> <array> <dict>
            <key>LSItemContentTypes</key> <array><string>public.plain-text</string></array>
            <key>LSTypeIsPackage</key> <true/>
            </dict> <dict>
            <key>CFBundleTypeExtensions</key> <array><string>notebook</string></array>
            <key>LSTypeIsPackage</key> <true/>
            </dict> </array>
            </dict>
            </plist>

            """)
        let result = try run(Binaries.inboxctl.path, ["verify", plist])
        #expect(result.status == 0)
        #expect(result.stdout == """
            \(plist):7: warning: LSTypeIsPackage is set but public.plain-text is not a package type; its documents are files
            1 registration, 1 warning

            """)
        #expect(result.stderr.isEmpty)
    }

    @Test func checksPackageLimits() throws {
        let conf = try file("inboxd.conf", "[Agent]\nMaxPackageDepth=2000\nMaxPackageSize=0\nMaxPackageEntries=100\n")
        let result = try run(Binaries.inboxctl.path, ["verify", conf])
        #expect(result.status == 1)
        #expect(result.stdout == """
            \(conf):2: MaxPackageDepth= must be a whole number from 1 to 1024, got '2000'
            \(conf):3: MaxPackageSize= must be more than 0 bytes (or infinity)

            """)
    }

    @Test func checksAgentConfiguration() throws {
        let conf = try file("inboxd.conf", "[Agent]\nInbox=relative/path\nMaxAttempts=3\n")
        let result = try run(Binaries.inboxctl.path, ["verify", conf])
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("\(conf):2: "))
    }

    @Test func unknownSubcommandIsAUsageError() throws {
        let result = try run(Binaries.inboxctl.path, ["verfy"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            Error: unknown subcommand 'verfy'; did you mean 'verify'?
            Usage: inboxctl <subcommand> [options]
              See 'inboxctl --help'.

            """)
        #expect(result.stdout.isEmpty)
    }

    @Test func helpIsTheSameEveryWay() throws {
        let plain = try run(Binaries.inboxctl.path, ["--help"])
        #expect(plain.status == 0)
        #expect(plain.stdout.hasPrefix("OVERVIEW: Control and inspect inboxd.\n\nUSAGE: inboxctl <subcommand> [options]\n"))
        #expect(try run(Binaries.inboxctl.path, ["-h"]).stdout == plain.stdout)
        #expect(try run(Binaries.inboxctl.path, ["help"]).stdout == plain.stdout)
        let verify = try run(Binaries.inboxctl.path, ["help", "verify"])
        #expect(verify.stdout.contains(
            "USAGE: inboxctl verify [--handlers DIR]... [--runtime-dir DIR] [--strict] [--json] [PATH...]"))
        #expect(try run(Binaries.inboxctl.path, ["verify", "--help"]).stdout == verify.stdout)
    }
}
