import InboxCore

/// The desktop's thumbnailer registrations (freedesktop Thumbnail Managing Standard, as GNOME and Thunar read them):
/// `*.thumbnailer` in `thumbnailers/` under `$XDG_DATA_HOME` and then each of `$XDG_DATA_DIRS`, the first of a file
/// name winning. Read the forgiving way registrations are: a bad file is a `file:line` diagnostic and is skipped; an
/// entry whose `TryExec=` program is not installed does not count, as on the desktop.
public enum ThumbnailerDirectories {
    /// Bytes a `.thumbnailer` file may have; larger ones are reported and skipped.
    public static let maximumFileSize = 64 << 10

    public static func searchPath() -> [String] {
        let home = CurrentProcess.environment("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
        let dataHome = CurrentProcess.environment("XDG_DATA_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? home.map { $0 + "/.local/share" }
        let dataDirs = (CurrentProcess.environment("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 }
            ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return ([dataHome].compactMap { $0 } + dataDirs).map { $0 + "/thumbnailers" }
    }

    /// The entries of `directories` (default: the search path), and what was wrong with the files skipped.
    public static func load(_ directories: [String] = searchPath())
        -> (entries: [ThumbnailerEntry], diagnostics: [String]) {
        var seen: Set<[UInt8]> = []
        var entries: [ThumbnailerEntry] = []
        var diagnostics: [String] = []
        for path in directories {
            guard let directory = try? Directory(path: path), let names = try? directory.entries() else { continue }
            for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) })
            where name.count > 12 && name.suffix(12).elementsEqual(".thumbnailer".utf8) && !seen.contains(name) {
                seen.insert(name)
                guard let text = String(validating: name, as: UTF8.self) else { continue }
                let file = path + "/" + text
                switch readBounded(file, limit: maximumFileSize) {
                case .success(let bytes):
                    let (entry, problems) = ThumbnailerEntry.parse(bytes, path: file)
                    diagnostics += problems.map(\.description)
                    if let entry, entry.tryExec.map({ GeneratorTool.locate($0) != nil }) ?? true {
                        entries.append(entry)
                    }
                case .failure(let error):
                    diagnostics.append("\(file): \(error)")
                }
            }
        }
        return (entries, diagnostics)
    }
}
