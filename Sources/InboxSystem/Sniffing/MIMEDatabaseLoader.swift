import Glibc
import InboxCore

/// Reads shared-mime-info's generated files from the XDG data directories.
public enum MIMEDatabaseLoader {
    /// Each generated file is bounded (the host's are about 40 KB).
    public static let maximumSize = 8 << 20

    /// `$XDG_DATA_HOME/mime` (or `~/.local/share/mime` for an ordinary user), then `mime` in each of
    /// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`): most important first, as the specification says.
    public static func defaultDirectories() -> [String] {
        var bases: [String] = []
        if let home = environment("XDG_DATA_HOME"), home.hasPrefix("/") {
            bases.append(home)
        } else if CurrentProcess.userID != 0, let home = environment("HOME"), home.hasPrefix("/") {
            bases.append(home + "/.local/share")
        }
        let dirs = environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share"
        bases += dirs.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var seen: Set<String> = []
        return bases.map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/mime" }.filter { seen.insert($0).inserted }
    }

    /// The merged database and what went wrong; a directory without `globs2` is skipped quietly, but no
    /// directory at all is a problem worth a warning (names then resolve through the built-in table only).
    public static func load(directories: [String]) -> (database: MIMEDatabase, problems: [String]) {
        var sources: [MIMEDatabase.Source] = []
        var problems: [String] = []
        for directory in directories {
            func read(_ name: String) -> [UInt8] {
                switch readBounded(directory + "/" + name, limit: maximumSize) {
                case .success(let bytes): return bytes
                case .failure(let error):
                    if error.errno != .noSuchFile { problems.append("\(directory)/\(name): \(error)") }
                    return []
                }
            }
            let globs2 = read("globs2")
            guard !globs2.isEmpty else { continue }
            sources.append(MIMEDatabase.Source(directory: directory, globs2: globs2, subclasses: read("subclasses"),
                                               aliases: read("aliases")))
        }
        if sources.isEmpty {
            problems.append("no shared-mime-info database (globs2) in \(directories.joined(separator: ", "))")
        }
        let database = MIMEDatabase(sources: sources)
        problems += database.diagnostics.map(\.description)
        return (database, problems)
    }

    private static func environment(_ name: String) -> String? {
        CurrentProcess.environment(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// shared-mime-info's content rules: `magic` in each directory, most important first; a directory without one
    /// is skipped quietly. The problems are files that could not be read or are no magic files, and a count of
    /// sections skipped.
    public static func loadMagic(directories: [String]) -> (rules: MagicRules, problems: [String]) {
        var sources: [[UInt8]] = []
        var problems: [String] = []
        for directory in directories {
            switch readBounded(directory + "/magic", limit: maximumSize) {
            case .success(let bytes):
                if !bytes.isEmpty && !bytes.starts(with: MagicRules.header) {
                    problems.append("\(directory)/magic: not a shared-mime-info magic file; skipped")
                }
                sources.append(bytes)
            case .failure(let error):
                if error.errno != .noSuchFile { problems.append("\(directory)/magic: \(error)") }
            }
        }
        let rules = MagicRules(sources: sources)
        if rules.skippedSections > 0 {
            problems.append("\(rules.skippedSections) section(s) of the magic files in \(directories.joined(separator: ", ")) "
                + "could not be read and were skipped")
        }
        return (rules, problems)
    }
}
