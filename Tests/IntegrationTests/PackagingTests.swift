import Foundation
import Testing

/// The conffiles the Debian package installs in /etc/inboxd (packaging/conf/): they are valid as shipped, every setting
/// inboxd.conf(5) documents is there, commented out, and the defaults they show are valid values too.
struct PackagingTests {
    static let conf = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../packaging/conf").standardizedFileURL

    /// inboxctl verify against no running agent (a runtime directory that has none), whatever runs on the host.
    static func verify(_ paths: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.inboxctl.path, ["verify", "--runtime-dir", "/nonexistent/inboxd-packaging-tests"] + paths)
    }

    /// The file with every `#Key=value` line made a setting, written under the same name in a scratch directory.
    static func uncommented(_ name: String) throws -> (path: String, keys: [String]) {
        let text = try String(contentsOf: conf.appendingPathComponent(name), encoding: .utf8)
        var keys: [String] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("#"), let equals = line.firstIndex(of: "="),
                  line[line.index(after: line.startIndex)..<equals].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }),
                  equals > line.index(after: line.startIndex) else { return String(line) }
            keys.append(String(line[line.index(after: line.startIndex)..<equals]))
            return String(line.dropFirst())
        }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (path, keys)
    }

    @Test func theConffilesAreValidAsShipped() throws {
        let result = try Self.verify(["inboxd.conf", "defaults.conf"].map { Self.conf.appendingPathComponent($0).path })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2 configuration files, 0 warnings\n", "\(result.stdout)")
    }

    @Test func theDefaultsTheyShowAreValidSettings() throws {
        for name in ["inboxd.conf", "defaults.conf"] {
            let (path, keys) = try Self.uncommented(name)
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            #expect(!keys.isEmpty, "\(name) shows no commented setting")
            let result = try Self.verify([path])
            // inboxd.conf's directories would be checked against a running agent's sandbox: none runs, and a notice
            // says so.
            let directories = name == "inboxd.conf"
            let summary = "1 configuration file, 0 warnings" + (directories ? ", 1 notice" : "") + "\n"
            #expect(result.status == 0 && result.stdout.hasSuffix(summary) && (directories || result.stdout == summary),
                    "\(name) uncommented: \(result.stdout)\(result.stderr)")
            #expect(!directories || (result.stdout + result.stderr).contains(
                "notice: directories not checked against the agent's sandbox: no agent runs"))
        }
    }

    @Test(.enabled(if: ManPages.toolsPresent, "man is needed to read inboxd.conf(5)"))
    func inboxdConfShowsEverySettingOfItsManPage() throws {
        let documented = try ManPage("inboxd.conf.5").section("inboxd.conf: [Agent] SECTION")
            .compactMap { line -> String? in
                guard line.hasPrefix("       "), !line.hasPrefix("        "), let equals = line.firstIndex(of: "=") else { return nil }
                return line[..<equals].trimmingCharacters(in: .whitespaces)
            }
        #expect(documented.count >= 9, "\(documented)")
        let (path, shown) = try Self.uncommented("inboxd.conf")
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        for key in documented {
            #expect(shown.contains(key), "packaging/conf/inboxd.conf does not show #\(key)=")
        }
    }
}
