import Glibc
import InboxCore

/// What the package fuzz target (Tests/Fuzz/package.swift) and the corpus replay in InboxSystemTests feed each input
/// to: the input is a small program that builds a tree in a fresh temporary directory, next to canaries outside it;
/// the tree is then checked, copied and removed, and the invariants they must keep are returned (empty when none held
/// broken).
///
/// The program: byte 0 chooses the resolution (bit 0: by hand) and whether to copy (bit 1 clear); bytes 1-3 the
/// limits (depth 1 + b % 8, entries 1 + b % 64, bytes one of `sizes`); then operations, each a byte (its value % 12)
/// and its arguments, until the input ends: mkdir, a file with content, a sparse file, a symlink, a hard link inside,
/// a hard link to the canary outside, a FIFO, a socket, a chain of directories, many files, and a change made when
/// the check's walk has visited a given number of entries. A directory argument is a byte indexing the directories
/// made so far, a name a byte choosing one of `names` (or a literal that follows it).
///
/// The invariants: the check never opens a FIFO (the process would block) nor reads the canaries (inotify says);
/// without changes during the walk, its result is exactly what an independent survey of the tree predicts (the
/// manifest every entry in its documented order, or the first refusal, naming a path in the tree); with changes, an
/// accepted manifest is the tree as it is; a manifest is no change from itself; an accepted package's copy has the
/// same names, kinds and contents, the copy's modes, and no canary byte; hand-over gives the modes asked; removal
/// leaves nothing of either tree and the canaries as they were.
public enum PackageFuzzEntry {
    static let sizes: [Int64?] = [nil, 0, 1, 16, 4096, 65536, 1 << 20, nil]

    public static func run(_ bytes: [UInt8]) -> [String] {
        var program = FuzzProgram(bytes)
        let flags = program.byte()
        let resolution: PackageResolution = flags & 1 == 0 ? .openat2 : .byHand
        let limits = PackageLimits(maxDepth: 1 + Int(program.byte() % 8), maxEntries: 1 + Int(program.byte() % 64),
                                   maxBytes: sizes[Int(program.byte() % 8)])
        guard let sandbox = FuzzSandbox() else { return ["cannot make the sandbox"] }
        defer { sandbox.close() }
        var broken: [String] = []
        var builder = TreeBuilder(sandbox: sandbox)
        builder.build(&program)
        broken += run(sandbox, builder, resolution: resolution, limits: limits, copying: flags & 2 == 0)
        broken += sandbox.canariesIntact()
        return broken
    }

    private static func run(_ sandbox: FuzzSandbox, _ builder: TreeBuilder, resolution: PackageResolution,
                            limits: PackageLimits, copying: Bool) -> [String] {
        var broken: [String] = []
        guard let root = sandbox.openDirectory(sandbox.inbox, FuzzSandbox.package) else { return ["the package is gone"] }
        let before = Survey(root)
        var changes = builder.changes, visits = 0, made = builder.made
        let checked = PackageTree.check(root, limits: limits, resolution: resolution) { _ in
            visits += 1
            for index in changes.indices where changes[index].at == visits && !changes[index].done {
                changes[index].done = true
                made.formUnion(changes[index].apply(root, sandbox))
            }
        }
        let changed = changes.contains(where: \.done)
        let after = Survey(root)
        if !changed {
            let expected = before.expected(limits)
            if !same(checked, expected) { broken.append("check gave \(describe(checked)), expected \(describe(expected))") }
        }
        switch checked {
        case .failure(let refusal):
            if let path = refusal.path, path != ".", !made.contains(path) {
                broken.append("refusal \(refusal.reason) names no path of the tree")
            }
            if case .changing = refusal, !changed { broken.append("refused as changing with nothing changed") }
            if refusal.limit.map({ $0 != limit(of: refusal, limits) }) == true { broken.append("refusal \(refusal.reason) names another limit") }
        case .success(let manifest):
            broken += accepted(manifest, after, limits)
            if copying, manifest.totalBytes <= 1 << 22 {
                broken += copy(root, manifest, sandbox, resolution: resolution, limits: limits)
            }
        }
        root.close()
        if let error = PackageTree.remove(FuzzSandbox.package, in: sandbox.inbox, resolution: resolution) {
            broken.append("removing the package failed: \(error)")
        }
        if sandbox.exists(sandbox.inbox, FuzzSandbox.package) { broken.append("the package is still there after remove") }
        return broken
    }

    /// An accepted manifest: only directories and single-link regular files within the limits, in the documented
    /// order, and the tree as it is now.
    private static func accepted(_ manifest: PackageManifest, _ now: Survey, _ limits: PackageLimits) -> [String] {
        var broken: [String] = []
        if manifest.entries.isEmpty || manifest.root.path != [] || manifest.root.depth != 0 {
            return ["the manifest does not start with the package's own directory"]
        }
        if manifest.entryCount > limits.maxEntries { broken.append("\(manifest.entryCount) entries over \(limits.maxEntries)") }
        if let limit = limits.maxBytes, manifest.totalBytes > limit { broken.append("\(manifest.totalBytes) bytes over \(limit)") }
        for entry in manifest.entries {
            if entry.kind != .directory && entry.kind != .regular { broken.append("a \(entry.kind) was accepted") }
            if entry.depth > limits.maxDepth + (entry.kind == .regular ? 1 : 0) { broken.append("an entry at depth \(entry.depth)") }
        }
        let entries = now.entries.map { PackageEntry(path: $0.path, kind: $0.kind, depth: $0.depth, status: $0.status) }
        if entries != manifest.entries { broken.append("the manifest is not the tree: \(manifest.entries.map { displayName($0.path) }) against \(entries.map { displayName($0.path) })") }
        if now.entries.contains(where: { $0.kind == .regular && $0.status.st_nlink != 1 }) { broken.append("a hard link was accepted") }
        for removal in [false, true] {
            for root in [false, true] where manifest.change(since: manifest, allowingRemoval: removal, ignoringRootChange: root) != nil {
                broken.append("a manifest is a change from itself")
            }
        }
        return broken
    }

    /// Copies an accepted package, compares the copy with it, hands the copy over, and removes it.
    private static func copy(_ root: FileDescriptor, _ manifest: PackageManifest, _ sandbox: FuzzSandbox,
                             resolution: PackageResolution, limits: PackageLimits) -> [String] {
        let name = FuzzSandbox.copy
        let copied: PackageManifest
        switch PackageTree.copy(root, into: sandbox.copies, as: name, limits: limits, resolution: resolution) {
        case .success(let manifest): copied = manifest
        case .failure(.refused(let refusal)): return ["the copy refused an accepted package: \(refusal.reason)"]
        case .failure(.failed(let error)): return ["the copy failed: \(error)"]
        }
        var broken: [String] = []
        guard let copyRoot = sandbox.openDirectory(sandbox.copies, name) else { return ["the copy is not there"] }
        defer { copyRoot.close() }
        let survey = Survey(copyRoot)
        let entries = survey.entries.map { PackageEntry(path: $0.path, kind: $0.kind, depth: $0.depth, status: $0.status) }
        if entries != copied.entries { broken.append("the copy's manifest is not the copy") }
        let shape = { (m: [PackageEntry]) in m.map { [$0.path, [$0.kind == .directory ? 1 : 0], Array(String($0.size).utf8)] } }
        if shape(copied.entries) != shape(manifest.entries) { broken.append("the copy has other names, kinds or sizes") }
        let source = Survey(root)
        for (original, copy) in zip(source.entries, survey.entries) where original.path == copy.path {
            // The copy's own directory stays 0700 (the caller renames it on); below it, an ordinary copy's modes.
            let bits = original.status.st_mode & 0o755
            let expected = original.depth == 0 ? 0o700 : original.kind == .directory ? bits | 0o700 : bits
            if copy.status.st_mode & 0o7777 != expected { broken.append("\(displayName(copy.path)) has mode \(String(copy.status.st_mode & 0o7777, radix: 8))") }
            guard original.kind == .regular else { continue }
            let a = sandbox.contents(root, original.path), b = sandbox.contents(copyRoot, copy.path)
            if a != b { broken.append("\(displayName(copy.path)) has other contents") }
            if let b, contains(b, sandbox.canary) { broken.append("the canary's content is in \(displayName(copy.path))") }
        }
        for removal in [false, true] where copied.change(since: copied, allowingRemoval: removal) != nil {
            broken.append("the copy's manifest is a change from itself")
        }
        if copied.change(since: manifest, allowingRemoval: true) == nil { broken.append("the copy is no change from its source") }
        if case .success(let again) = PackageTree.check(copyRoot, limits: limits, resolution: resolution) {
            if again.change(since: copied, allowingRemoval: false) != nil { broken.append("the copy changed after it was made") }
        } else {
            broken.append("the copy does not pass the check")
        }
        if let error = PackageTree.handOver(copyRoot, manifest: copied, owner: nil, group: nil, fileMode: 0o440,
                                            directoryMode: 0o750, resolution: resolution) {
            broken.append("hand-over failed: \(error)")
        } else {
            for entry in Survey(copyRoot).entries where entry.status.st_mode & 0o7777 != (entry.kind == .directory ? 0o750 : 0o440) {
                broken.append("\(displayName(entry.path)) was not handed over")
            }
        }
        if let error = PackageTree.remove(name, in: sandbox.copies, resolution: resolution) {
            broken.append("removing the copy failed: \(error)")
        }
        if sandbox.exists(sandbox.copies, name) { broken.append("the copy is still there after remove") }
        return broken
    }

    private static func same(_ a: Result<PackageManifest, PackageRefusal>, _ b: Result<[PackageEntry], PackageRefusal>) -> Bool {
        switch (a, b) {
        case (.success(let manifest), .success(let entries)): manifest.entries == entries
        case (.failure(let x), .failure(let y)): x == y
        default: false
        }
    }

    private static func describe(_ result: Result<PackageManifest, PackageRefusal>) -> String {
        describe(result.map(\.entries))
    }

    private static func describe(_ result: Result<[PackageEntry], PackageRefusal>) -> String {
        switch result {
        case .success(let entries): "a manifest of \(entries.map { packageDisplay($0.path) })"
        case .failure(let refusal): "a refusal: \(refusal.reason)"
        }
    }

    private static func limit(of refusal: PackageRefusal, _ limits: PackageLimits) -> Int64? {
        switch refusal {
        case .tooDeep: Int64(limits.maxDepth)
        case .tooManyEntries: Int64(limits.maxEntries)
        case .tooLarge: limits.maxBytes
        default: nil
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

extension PackageRefusal {
    /// The path a refusal names, nil for a bound.
    var path: String? {
        switch self {
        case .symlink(let path), .hardLink(let path), .special(let path, _), .mountPoint(let path), .changing(let path),
             .unreadable(let path, _): path
        case .tooDeep, .tooManyEntries, .tooLarge: nil
        }
    }

    /// The limit a bound's refusal names.
    var limit: Int64? {
        switch self {
        case .tooDeep(let limit), .tooManyEntries(let limit): Int64(limit)
        case .tooLarge(let limit): limit
        default: nil
        }
    }
}

/// The input, read a byte at a time (0 past its end).
struct FuzzProgram {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

/// A temporary directory holding the Inbox the package is made in, a directory for its copy, and the canaries outside
/// them: a secret file, a FIFO, and a directory with a file, watched with inotify for any open, read or write.
final class FuzzSandbox {
    static let package = Array("P.pkg".utf8)
    static let copy = Array("C.pkg".utf8)
    let path: String
    let base: Directory
    let inbox: Directory
    let copies: Directory
    let outside: Directory
    /// The secret's content: made for this run, so no input can hold it.
    let canary: [UInt8]
    private let watcher: FileDescriptor
    private nonisolated(unsafe) static var runs = 0

    init?() {
        let shm = FileSystem.accessError("/dev/shm") == nil
        guard let path = try? FileSystem.makeTemporaryDirectory(prefix: (shm ? "/dev/shm" : "/tmp") + "/pkgfz-"),
              let base = try? Directory(path: path) else { return nil }
        self.path = path
        self.base = base
        Self.runs += 1
        var now = timespec()
        _ = sys_clock_gettime(CLOCK_REALTIME, &now)
        canary = Array("CANARY-\(sys_getpid())-\(Self.runs)-\(now.tv_nsec)-\(now.tv_sec)".utf8)
        guard let inbox = try? base.subdirectory("in"), let copies = try? base.subdirectory("copies"),
              let outside = try? base.subdirectory("outside"), let inner = try? outside.subdirectory("dir"),
              (try? outside.writeFile("secret", bytes: canary, mode: 0o644)) != nil,
              (try? inner.writeFile("keep", bytes: canary, mode: 0o644)) != nil,
              withCName(Array("fifo".utf8), { sys_mkfifoat(outside.descriptor.rawValue, $0, 0o644) }) == 0,
              withCName(Self.package, { sys_mkdirat(inbox.descriptor.rawValue, $0, 0o755) }) == 0 else {
            FuzzSandbox.removeAll(path, base)
            return nil
        }
        self.inbox = inbox
        self.copies = copies
        self.outside = outside
        let fd = sys_inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
        watcher = FileDescriptor(rawValue: fd)
        let mask = UInt32(IN_OPEN | IN_ACCESS | IN_MODIFY)
        for name in ["outside/secret", "outside/fifo", "outside/dir", "outside/dir/keep"] {
            _ = sys_inotify_add_watch(fd, path + "/" + name, mask)
        }
    }

    /// What the watches saw, and whether the canaries are as they were made.
    func canariesIntact() -> [String] {
        var broken: [String] = []
        let events = withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            let count = sys_read(watcher.rawValue, buffer)
            return count > 0 ? InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) : []
        }
        if !events.isEmpty { broken.append("a canary outside was reached: \(events.map { String($0.mask.rawValue, radix: 16) })") }
        if let st = status(outside, Array("secret".utf8)) {
            if st.st_nlink != 1 || EntryKind(mode: st.st_mode) != .regular { broken.append("the secret canary has \(st.st_nlink) links") }
        } else {
            broken.append("the secret canary is gone")
        }
        if status(outside, Array("fifo".utf8)).map({ EntryKind(mode: $0.st_mode) }) != .fifo { broken.append("the FIFO canary is gone") }
        if let inner = openDirectory(outside, Array("dir".utf8)) {
            if contents(inner, Array("keep".utf8)) != canary { broken.append("the canary directory's file changed") }
            inner.close()
        } else {
            broken.append("the canary directory is gone")
        }
        return broken
    }

    func close() {
        watcher.close()
        FuzzSandbox.removeAll(path, base)
    }

    private static func removeAll(_ path: String, _ base: Directory) {
        for name in ["in", "copies", "outside"] { base.removeTree(Array(name.utf8)) }
        _ = withCName(Array(path.utf8)) { sys_unlinkat(AT_FDCWD, $0, AT_REMOVEDIR) }
    }

    func status(_ directory: Directory, _ name: [UInt8]) -> stat? { status(directory.descriptor, name) }

    func status(_ directory: FileDescriptor, _ name: [UInt8]) -> stat? {
        var st = stat()
        return withCName(name) { sys_fstatat(directory.rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) } == 0 ? st : nil
    }

    func exists(_ directory: Directory, _ name: [UInt8]) -> Bool { status(directory, name) != nil }

    func openDirectory(_ directory: Directory, _ name: [UInt8]) -> FileDescriptor? {
        openDirectory(directory.descriptor, name)
    }

    func openDirectory(_ directory: FileDescriptor, _ name: [UInt8]) -> FileDescriptor? {
        let fd = withCName(name) { sys_openat(directory.rawValue, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// A regular file's content (at most 4 MiB), by a path of components below `directory`; nil for anything else.
    func contents(_ directory: FileDescriptor, _ path: [UInt8]) -> [UInt8]? {
        let components = path.split(separator: 0x2F, omittingEmptySubsequences: false).map(Array.init)
        var parent = directory
        var opened: [FileDescriptor] = []
        defer { for fd in opened { fd.close() } }
        for component in components.dropLast() {
            guard let next = openDirectory(parent, component) else { return nil }
            opened.append(next)
            parent = next
        }
        guard let name = components.last, let st = status(parent, name), EntryKind(mode: st.st_mode) == .regular,
              st.st_size <= 1 << 22 else { return nil }
        let fd = withCName(name) { sys_openat(parent.rawValue, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        let file = FileDescriptor(rawValue: fd)
        defer { file.close() }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        let count = bytes.withUnsafeMutableBytes { (try? file.read(fully: $0, at: 0)) ?? -1 }
        return count == bytes.count ? bytes : nil
    }

    func contents(_ directory: Directory, _ name: [UInt8]) -> [UInt8]? { contents(directory.descriptor, name) }
}

/// An independent look at a tree: every entry by fstatat(AT_SYMLINK_NOFOLLOW), depth first in byte order of names,
/// nothing opened but directories (O_NOFOLLOW), no deeper than 64 levels.
struct Survey {
    struct Entry {
        let path: [UInt8]
        let kind: EntryKind
        let depth: Int
        let status: stat
        /// For a directory, its entries' indices in `entries`.
        var children: [Int] = []
    }

    private(set) var entries: [Entry] = []

    init(_ root: FileDescriptor) {
        var st = stat()
        guard sys_fstat(root.rawValue, &st) == 0 else { return }
        entries.append(Entry(path: [], kind: .directory, depth: 0, status: st))
        visit(root, 0)
    }

    private mutating func visit(_ directory: FileDescriptor, _ index: Int) {
        let depth = entries[index].depth, path = entries[index].path
        guard depth < 64 else { return }
        let fd = withCName(Array(".".utf8)) { sys_openat(directory.rawValue, $0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0, let stream = sys_fdopendir(fd) else { return }
        var names: [[UInt8]] = []
        while let entry = sys_readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        _ = sys_closedir(stream)
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            var st = stat()
            guard withCName(name, { sys_fstatat(directory.rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else { continue }
            let kind = EntryKind(mode: st.st_mode)
            entries[index].children.append(entries.count)
            entries.append(Entry(path: packagePath(path, name), kind: kind, depth: depth + 1, status: st))
            if kind == .directory {
                let child = entries.count - 1
                let inner = withCName(name) {
                    sys_openat(directory.rawValue, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                if inner >= 0 {
                    visit(FileDescriptor(rawValue: inner), child)
                    FileDescriptor(rawValue: inner).close()
                }
            }
        }
    }

    /// What the check's documentation says of this tree: its entries, or the first refusal.
    func expected(_ limits: PackageLimits) -> Result<[PackageEntry], PackageRefusal> {
        var manifest: [PackageEntry] = []
        var listed = 0
        var bytes: Int64 = 0
        func walk(_ index: Int) -> PackageRefusal? {
            let entry = entries[index]
            manifest.append(PackageEntry(path: entry.path, kind: entry.kind, depth: entry.depth, status: entry.status))
            guard entry.kind == .directory else { return nil }
            if entry.children.count > limits.maxEntries - listed { return .tooManyEntries(limit: limits.maxEntries) }
            listed += entry.children.count
            for child in entry.children {
                let inner = entries[child], path = displayName(inner.path)
                switch inner.kind {
                case .directory:
                    if inner.depth > limits.maxDepth { return .tooDeep(limit: limits.maxDepth) }
                case .regular:
                    if inner.status.st_nlink != 1 { return .hardLink(path: path) }
                    let (sum, overflow) = bytes.addingReportingOverflow(Int64(inner.status.st_size))
                    bytes = overflow ? .max : sum
                    if let limit = limits.maxBytes, bytes > limit { return .tooLarge(limit: limit) }
                case .symlink: return .symlink(path: path)
                default: return .special(path: path, kind: inner.kind)
                }
                if let refusal = walk(child) { return refusal }
            }
            return nil
        }
        if let refusal = walk(0) { return .failure(refusal) }
        return .success(manifest)
    }
}

/// Builds the tree a program describes inside the sandbox's package, and the changes it asks for during the walk.
struct TreeBuilder {
    let sandbox: FuzzSandbox
    /// The directories made, as paths below the package ("" its own).
    private(set) var directories: [[UInt8]] = [[]]
    private(set) var files: [[UInt8]] = []
    /// Every path made in the package, as refusals name them.
    private(set) var made: Set<String> = []
    private(set) var changes: [WalkChange] = []
    private var count = 0
    static let maximumEntries = 400

    init(sandbox: FuzzSandbox) { self.sandbox = sandbox }

    static let names: [[UInt8]] = [
        Array("a".utf8), Array("b".utf8), Array("TXT.rtf".utf8), Array("Index".utf8), Array("...".utf8),
        Array("-rf".utf8), Array("a\nb".utf8), [0xFF, 0xFE, 0x80], Array(repeating: 0x78, count: 255), Array(".. ".utf8),
        Array(" ".utf8), Array(".hidden".utf8), [0xC3, 0xA9], [0x65, 0xCC, 0x81], Array("..\n".utf8),
    ]

    mutating func name(_ program: inout FuzzProgram) -> [UInt8] {
        let choice = Int(program.byte())
        if choice % 16 < Self.names.count { return Self.names[choice % 16] }
        let literal = program.bytes(Int(program.byte() % 32)).filter { $0 != 0 && $0 != 0x2F }
        return literal.isEmpty || literal == [0x2E] || literal == [0x2E, 0x2E] ? Array("x".utf8) : literal
    }

    mutating func directory(_ program: inout FuzzProgram) -> [UInt8] {
        directories[Int(program.byte()) % directories.count]
    }

    mutating func build(_ program: inout FuzzProgram) {
        guard let root = sandbox.openDirectory(sandbox.inbox, FuzzSandbox.package) else { return }
        defer { root.close() }
        while !program.atEnd && count < Self.maximumEntries {
            let op = program.byte() % 12
            let parent = directory(&program)
            guard let fd = open(root, parent) else { continue }
            defer { if fd.rawValue != root.rawValue { fd.close() } }
            switch op {
            case 0:
                let name = name(&program)
                _ = mkdir(fd, parent, name)
            case 1:
                let name = name(&program), content = program.bytes(Int(program.byte() % 64))
                file(fd, parent, name, content: content, size: nil)
            case 2:
                let name = name(&program)
                file(fd, parent, name, content: [], size: Int64(1) << Int64(program.byte() % 63))
            case 3:
                let name = name(&program)
                let target = symlinkTarget(&program, depth: parent.isEmpty ? 1 : parent.count { $0 == 0x2F } + 2)
                if withCName(target, { t in withCName(name) { sys_symlinkat(t, fd.rawValue, $0) } }) == 0 {
                    record(parent, name)
                }
            case 4:
                guard !files.isEmpty else { continue }
                let source = files[Int(program.byte()) % files.count], name = name(&program)
                link(root, source, fd, parent, name)
            case 5:
                let name = name(&program)
                if withCName(Array("secret".utf8), { s in withCName(name) {
                    sys_linkat(sandbox.outside.descriptor.rawValue, s, fd.rawValue, $0) } }) == 0 {
                    record(parent, name)
                }
            case 6:
                let name = name(&program)
                if withCName(name, { sys_mkfifoat(fd.rawValue, $0, 0o644) }) == 0 { record(parent, name) }
            case 7:
                let name = name(&program)
                let place = Array((sandbox.path + "/s").utf8)
                if sys_bind_unix_socket(place) == 0,
                   withCName(Array("s".utf8), { s in withCName(name) {
                       sys_renameat2(sandbox.base.descriptor.rawValue, s, fd.rawValue, $0, 0) } }) == 0 {
                    record(parent, name)
                } else {
                    _ = withCName(Array("s".utf8)) { sys_unlinkat(sandbox.base.descriptor.rawValue, $0, 0) }
                }
            case 8:
                var path = parent, current = fd, opened: [FileDescriptor] = []
                for _ in 0..<(1 + Int(program.byte() % 16)) {
                    guard mkdir(current, path, Array("d".utf8)), let next = sandbox.openDirectory(current, Array("d".utf8))
                    else { break }
                    opened.append(next)
                    current = next
                    path = packagePath(path, Array("d".utf8))
                }
                for fd in opened { fd.close() }
            case 9:
                for index in 0..<Int(program.byte() % 80) {
                    file(fd, parent, Array("f\(index)".utf8), content: [], size: nil)
                }
            case 10:
                changes.append(WalkChange(at: 1 + Int(program.byte() % 32), action: program.byte(), parent: parent,
                                          name: name(&program)))
            default:
                continue
            }
        }
    }

    private func symlinkTarget(_ program: inout FuzzProgram, depth: Int) -> [UInt8] {
        let up = String(repeating: "../", count: depth + 1)
        let targets = [sandbox.path + "/outside/secret", sandbox.path + "/outside/fifo", sandbox.path + "/outside/dir",
                       up + "outside/secret", up + "outside/fifo", up + "outside/dir", "..", ".", "a", "Index",
                       "nowhere/at/all", "/proc/self/root" + sandbox.path + "/outside/secret", "b", "../a", up + "in"]
        return Array(targets[Int(program.byte()) % targets.count].utf8)
    }

    private func open(_ root: FileDescriptor, _ path: [UInt8]) -> FileDescriptor? {
        guard !path.isEmpty else { return root }
        var current = root, opened: [FileDescriptor] = []
        for component in path.split(separator: 0x2F, omittingEmptySubsequences: false) {
            guard let next = sandbox.openDirectory(current, Array(component)) else {
                for fd in opened { fd.close() }
                return nil
            }
            opened.append(next)
            current = next
        }
        for fd in opened.dropLast() { fd.close() }
        return current
    }

    private mutating func record(_ parent: [UInt8], _ name: [UInt8]) {
        made.insert(displayName(packagePath(parent, name)))
        count += 1
    }

    private mutating func mkdir(_ fd: FileDescriptor, _ parent: [UInt8], _ name: [UInt8]) -> Bool {
        guard withCName(name, { sys_mkdirat(fd.rawValue, $0, 0o755) }) == 0 else { return false }
        record(parent, name)
        directories.append(packagePath(parent, name))
        return true
    }

    private mutating func file(_ fd: FileDescriptor, _ parent: [UInt8], _ name: [UInt8], content: [UInt8], size: Int64?) {
        guard count < Self.maximumEntries else { return }
        let raw = withCName(name) { sys_openat(fd.rawValue, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        guard raw >= 0 else { return }
        let file = FileDescriptor(rawValue: raw)
        defer { file.close() }
        _ = file.write(all: content)
        if let size { _ = sys_ftruncate(raw, size) }
        record(parent, name)
        files.append(packagePath(parent, name))
    }

    private mutating func link(_ root: FileDescriptor, _ source: [UInt8], _ fd: FileDescriptor, _ parent: [UInt8],
                               _ name: [UInt8]) {
        let components = source.split(separator: 0x2F, omittingEmptySubsequences: false).map(Array.init)
        guard let from = open(root, components.dropLast().joined(separator: [0x2F]).map { $0 }) else { return }
        defer { if from.rawValue != root.rawValue { from.close() } }
        if withCName(components[components.count - 1], { s in withCName(name) {
            sys_linkat(from.rawValue, s, fd.rawValue, $0) } }) == 0 {
            record(parent, name)
        }
    }
}

/// A change made to the tree when the check's walk has visited `at` entries.
struct WalkChange {
    let at: Int
    let action: UInt8
    let parent: [UInt8]
    let name: [UInt8]
    var done = false

    /// Makes the change (failures are no change); the paths it made.
    func apply(_ root: FileDescriptor, _ sandbox: FuzzSandbox) -> Set<String> {
        var fd = root, opened: [FileDescriptor] = []
        defer { for fd in opened { fd.close() } }
        if !parent.isEmpty {
            for component in parent.split(separator: 0x2F, omittingEmptySubsequences: false) {
                guard let next = sandbox.openDirectory(fd, Array(component)) else { return [] }
                opened.append(next)
                fd = next
            }
        }
        let path: Set<String> = [displayName(packagePath(parent, name))]
        let other = name + Array("~".utf8)
        // Written to only when it is a file of the package's own (a hard link to the canary is never written).
        let writable = sandbox.status(fd, name).map { EntryKind(mode: $0.st_mode) == .regular && $0.st_nlink == 1 } ?? true
        switch action % 8 {
        case 0 where writable:
            let raw = withCName(name) { sys_openat(fd.rawValue, $0, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644) }
            if raw >= 0 {
                _ = FileDescriptor(rawValue: raw).write(all: Array("more".utf8))
                FileDescriptor(rawValue: raw).close()
            }
            return path
        case 1:
            _ = withCName(name) { sys_unlinkat(fd.rawValue, $0, 0) }
            _ = withCName(name) { sys_unlinkat(fd.rawValue, $0, AT_REMOVEDIR) }
            return []
        case 2:
            _ = withCName(name) { sys_unlinkat(fd.rawValue, $0, 0) }
            let target = Array((sandbox.path + "/outside/secret").utf8)
            _ = withCName(target) { t in withCName(name) { sys_symlinkat(t, fd.rawValue, $0) } }
            return path
        case 3:
            _ = withCName(name) { sys_mkfifoat(fd.rawValue, $0, 0o644) }
            return path
        case 4:
            _ = withCName(name) { a in withCName(other) { sys_renameat2(fd.rawValue, a, fd.rawValue, $0, 0) } }
            return [displayName(packagePath(parent, other))]
        case 5:
            _ = withCName(name) { sys_mkdirat(fd.rawValue, $0, 0o755) }
            return path
        case 6:
            // Another inode at the same name: a file made beside it and renamed over it.
            let raw = withCName(other) { sys_openat(fd.rawValue, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            if raw >= 0 { FileDescriptor(rawValue: raw).close() }
            _ = withCName(other) { o in withCName(name) { sys_renameat2(fd.rawValue, o, fd.rawValue, $0, 0) } }
            return path
        case 7 where writable:
            let raw = withCName(name) { sys_openat(fd.rawValue, $0, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
            if raw >= 0 {
                _ = sys_ftruncate(raw, 1 << 40)
                FileDescriptor(rawValue: raw).close()
            }
            return path
        default:
            return []
        }
    }
}
