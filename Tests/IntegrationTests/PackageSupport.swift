import Foundation
import Testing

/// What the package suites share: package trees built outside the Inbox and renamed in whole, a snapshot of a tree
/// (never following a link) to compare before and after, a canary that tells whether anything outside a package was
/// opened, and the tmpfs mounts a test makes (always unmounted).
extension AgentHarness {
    /// Where packages are built before they are renamed into the Inbox (the same filesystem: one rename).
    var staging: URL { root.appendingPathComponent("staging") }

    /// Makes the directory `name` under staging/ with `files` (relative path: contents) and the empty `directories`;
    /// parents are made as needed. Returns its URL.
    @discardableResult
    func makePackage(_ name: String, _ files: [String: [UInt8]], directories: [String] = []) throws -> URL {
        let package = staging.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        for directory in directories {
            try FileManager.default.createDirectory(at: package.appendingPathComponent(directory),
                                                    withIntermediateDirectories: true)
        }
        for (path, contents) in files {
            let url = package.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents).write(to: url)
        }
        return package
    }

    /// Renames a staged directory into the drop Inbox whole (one IN_MOVED_TO with IN_ISDIR); returns where it is.
    @discardableResult
    func dropPackage(_ staged: URL, as name: String? = nil) throws -> URL {
        let target = inbox.appendingPathComponent(name ?? staged.lastPathComponent)
        guard rename(staged.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return target
    }

    /// The recording of the delivery whose INBOX_NAME is `name` (the recorder's and the package recorder's).
    func recording(named name: String) -> String? {
        recordings().values.first { $0.contains("\nINBOX_NAME=\(name)\n") }
    }

    /// Records what a package handler is given (argv, the INBOX_* environment, stdin), the tree it sees (each entry
    /// with its mode; each file with its bytes), and copies the package into its Documents; exits $EXIT_CODE.
    func packageRecorder() throws -> URL {
        try script("package-recorder", """
            out="$OUTPUT_DIR/$INBOX_DELIVERY_ID.$INBOX_ATTEMPT"
            {
              printf 'argv:'; for a in "$@"; do printf ' [%s]' "$a"; done; echo
              env | grep '^INBOX_' | sort
              echo 'stdin:'; cat
              echo 'tree:'
              (cd "$INBOX_FILE" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r e; do
                 if [ -d "$e" ]; then echo "dir ${e#./} $(stat -c %a "$e")"
                 else echo "file ${e#./} $(stat -c %a "$e") $(od -An -tx1 -v "$e" | tr -d ' \\n')"; fi
               done)
              echo "root $(stat -c %a "$INBOX_FILE")"
              if cp -R "$INBOX_FILE" "$INBOX_DOCUMENTS/"; then echo 'copied'; else echo 'not copied'; fi
            } > "$out.tmp" 2>&1
            mv "$out.tmp" "$out"
            exit ${EXIT_CODE:-0}
            """)
    }

    /// The contents of the container Inbox of `handler`, hidden entries included.
    func containerEntries(_ handler: String) -> [String] { allEntries(of: containerInbox(handler)) }

    /// Every entry of `directory`, hidden ones included (the send suites' `allEntries`, for the suites that do not
    /// use inboxctl).
    func visibleEntries(of directory: URL) -> [String] {
        allEntries(of: directory).filter { !$0.hasPrefix(".") }
    }

    /// This agent's entries at info or above that name `name` (in MESSAGE or INBOX_FILE): a delivery outcome's budget.
    func outcomeEntries(naming name: String) -> [[String: Any]] {
        journal().filter { entry in
            guard let priority = Int(entry[field: "PRIORITY"] ?? ""), priority <= 6 else { return false }
            return (entry[field: "MESSAGE"] ?? "").contains(name) || (entry[field: "INBOX_FILE"] ?? "").contains(name)
        }
    }
}

/// An RTFD as TextEdit writes one: the text with an attachment beside it.
enum SamplePackages {
    static let rtfText = Array(#"{\rtf1\ansi\ansicpg1252{\fonttbl\f0\fswiss Helvetica;}\f0\pard Report with a picture {{\NeXTGraphic image.png \width40 \height40}¬}}"#.utf8)

    static var rtfd: [String: [UInt8]] { ["TXT.rtf": rtfText, "image.png": pngBytes(width: 2, height: 2)] }

    /// The package form of a Pages document: Index/ of .iwa archives, Data/, Metadata/ and a preview.
    static var pages: [String: [UInt8]] {
        [
            "Index/Document.iwa": [0x00, 0x1F, 0x00, 0x00] + Array("document archive".utf8),
            "Index/Metadata.iwa": [0x00, 0x0C, 0x00, 0x00] + Array("metadata".utf8),
            "Data/image-1.png": pngBytes(width: 4, height: 3),
            "Metadata/Properties.plist": Array(#"<?xml version="1.0"?><plist version="1.0"><dict/></plist>"#.utf8),
            "Metadata/DocumentIdentifier": Array("6C1C7A0B-2E4F-4C1B-9F3A-1D2E3F4A5B6C".utf8),
            "Metadata/BuildVersionHistory.plist": Array(#"<plist version="1.0"><array/></plist>"#.utf8),
            "preview.jpg": [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0xFF, 0xD9],
        ]
    }

    /// The `tree:` lines the package recorder writes for `files` (and their directories), with the modes a handler's
    /// copy has when the agent runs as root: directories 0770, files 0440.
    static func treeLines(_ files: [String: [UInt8]], directoryMode: String = "770", fileMode: String = "440") -> [String] {
        var directories: Set<String> = []
        for path in files.keys {
            var components = path.split(separator: "/").dropLast()
            while !components.isEmpty {
                directories.insert(components.joined(separator: "/"))
                components = components.dropLast()
            }
        }
        var lines: [(String, String)] = directories.map { ($0, "dir \($0) \(directoryMode)") }
        for (path, contents) in files {
            lines.append((path, "file \(path) \(fileMode) " + contents.map { String(format: "%02x", $0) }.joined()))
        }
        // find | LC_ALL=C sort: byte order of the paths.
        return lines.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }.map(\.1)
    }

    /// The lines between `tree:` and `root` of a package recording.
    static func recordedTree(_ recording: String) -> [String] {
        let lines = recording.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "tree:") else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.hasPrefix("root ") })
    }
}

/// A tree as it lies on disk, never following a link: each entry below the root by its relative path, as its kind
/// and what identifies its content (a file's bytes, a link's target, a device's numbers).
enum TreeSnapshot {
    static func of(_ url: URL) -> [String: String] {
        var result: [String: String] = [:]
        func walk(_ path: String, _ relative: String) {
            guard let stream = opendir(path) else {
                result[relative.isEmpty ? "." : relative] = "unlistable"
                return
            }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard name != ".", name != ".." else { continue }
                let full = path + "/" + name
                let key = relative.isEmpty ? name : relative + "/" + name
                var st = stat()
                guard lstat(full, &st) == 0 else {
                    result[key] = "gone"
                    continue
                }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    result[key] = "dir"
                    walk(full, key)
                case S_IFREG:
                    let bytes = FileManager.default.contents(atPath: full).map { [UInt8]($0) } ?? []
                    result[key] = "file \(st.st_nlink) \(bytes.count) \(fnv(bytes))"
                case S_IFLNK:
                    var target = [CChar](repeating: 0, count: 4096)
                    let count = readlink(full, &target, target.count)
                    result[key] = "link " + String(decoding: target.prefix(max(count, 0)).map { UInt8(bitPattern: $0) },
                                                   as: UTF8.self)
                case S_IFIFO: result[key] = "fifo"
                case S_IFSOCK: result[key] = "socket"
                case S_IFCHR: result[key] = "character device \(st.st_rdev)"
                case S_IFBLK: result[key] = "block device \(st.st_rdev)"
                default: result[key] = "unknown"
                }
            }
        }
        walk(url.path, "")
        return result
    }

    private static func fnv(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

/// Tells whether anything opened or read what lies outside a package: an inotify watch (IN_OPEN|IN_ACCESS) on a
/// directory (its own opens and its entries' through it) and on single inodes (opened by any path, a link's
/// included). Access times are unreliable (relatime, noatime); these events are not.
final class OpenWatch {
    private let descriptor: Int32
    private var watched: [Int32: String] = [:]
    private var seen: [String] = []

    init(_ paths: [URL]) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for path in paths {
            let watch = inotify_add_watch(descriptor, path.path, UInt32(IN_OPEN) | UInt32(IN_ACCESS))
            guard watch >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            watched[watch] = path.path
        }
    }

    deinit { close(descriptor) }

    /// What was opened or read since the watch began: "PATH[/NAME] open|read".
    func events() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let name = String(decoding: buffer[nameStart..<(nameStart + length)].prefix { $0 != 0 }, as: UTF8.self)
                let what = mask & UInt32(IN_OPEN) != 0 ? "open" : "read"
                seen.append("\(watched[watch] ?? "?")\(name.isEmpty ? "" : "/" + name) \(what)")
                offset = nameStart + length
            }
        }
        return seen
    }
}

/// The canary outside a package: a file only root may read, with content a handler would echo; a FIFO, where an
/// open that follows a link would block; and the directory that holds them. `watch` reports any open of them.
struct Canary {
    let directory: URL
    let secret: URL
    let fifo: URL
    let text: String

    init(in world: AgentHarness) throws {
        directory = world.root.appendingPathComponent("outside")
        secret = directory.appendingPathComponent("secret")
        fifo = directory.appendingPathComponent("fifo")
        text = "CANARY-\(world.tag)"
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: secret)
        chmod(secret.path, 0o600)
        guard mkfifo(fifo.path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Watches the directory, the secret and the FIFO. Start it after the last thing the test itself does to them.
    func watch() throws -> OpenWatch { try OpenWatch([directory, secret, fifo]) }
}

/// Mounts a test makes: a tmpfs inside its own temporary directory, unmounted when the test ends (it moves with the
/// directory it is in: unmounted wherever it is then).
enum TestMounts {
    static func mountTmpfs(at url: URL) throws {
        let result = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", url.path])
        guard result.status == 0 else {
            Issue.record("mount failed: \(result.stderr)")
            throw POSIXError(.EPERM)
        }
    }

    /// Unmounts (lazily, deepest first) every mount at or below `root`.
    static func unmountAll(under root: URL) {
        let prefix = root.resolvingSymlinksInPath().path
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return }
        let points = table.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 4 else { return nil }
            let point = String(fields[4]).replacingOccurrences(of: "\\040", with: " ")
            return point == prefix || point.hasPrefix(prefix + "/") ? point : nil
        }
        for point in points.sorted(by: { $0.count > $1.count }) {
            _ = try? run("/bin/umount", ["-l", point])
        }
    }

    /// Whether anything is mounted at or below `root`.
    static func anyMounted(under root: URL) -> Bool {
        let prefix = root.resolvingSymlinksInPath().path
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 && (fields[4] == prefix || fields[4].hasPrefix(prefix + "/"))
        }
    }
}
