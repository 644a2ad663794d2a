import Glibc
import InboxSystem
import Testing

/// The inotify record parser on hand-made buffers (inotify(7): a 16-byte header, then `len` bytes of NUL-padded name).
@Suite("InotifyEvent.parse")
struct InotifyParseTests {
    /// One record as the kernel lays it out (little-endian, as on every architecture we run on).
    static func record(watch: Int32, mask: InotifyEvent.Mask, cookie: UInt32 = 0, name: String = "",
                       length: Int? = nil) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        let length = length ?? nameBytes.count
        var bytes: [UInt8] = []
        for value in [UInt32(bitPattern: watch), mask.rawValue, cookie, UInt32(length)] {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        return bytes + nameBytes + [UInt8](repeating: 0, count: length - nameBytes.count)
    }

    @Test func severalEvents() {
        let buffer = Self.record(watch: 1, mask: .closeWrite, name: "a.txt", length: 16)
            + Self.record(watch: 2, mask: [.movedTo, .isDirectory], cookie: 7, name: "dir", length: 4)
            + Self.record(watch: 1, mask: .queueOverflow, length: 0)
        #expect(InotifyEvent.parse(buffer) == [
            InotifyEvent(watch: 1, mask: .closeWrite, cookie: 0, name: Array("a.txt".utf8)),
            InotifyEvent(watch: 2, mask: [.movedTo, .isDirectory], cookie: 7, name: Array("dir".utf8)),
            InotifyEvent(watch: 1, mask: .queueOverflow, cookie: 0, name: []),
        ])
    }

    @Test func nulPaddingIsNotPartOfTheName() {
        let events = InotifyEvent.parse(Self.record(watch: 3, mask: .create, name: "x", length: 32))
        #expect(events.map(\.name) == [[0x78]])
    }

    @Test func zeroLengthNameIsTheDirectoryItself() {
        let events = InotifyEvent.parse(Self.record(watch: 4, mask: .deleteSelf))
        #expect(events == [InotifyEvent(watch: 4, mask: .deleteSelf, cookie: 0, name: [])])
    }

    @Test func nonUTF8NameBytesArePassedThrough() {
        let raw: [UInt8] = [0xFF, 0xFE, 0x2E]
        var buffer = Self.record(watch: 1, mask: .movedTo, length: 8)
        buffer.replaceSubrange(16..<19, with: raw)
        #expect(InotifyEvent.parse(buffer).map(\.name) == [raw])
    }

    @Test(arguments: [
        (cut: 10, expected: 1),  // a header cut short
        (cut: 16, expected: 1),  // a whole header whose name is missing
        (cut: 24, expected: 1),  // half of the name
        (cut: 32, expected: 2),  // nothing cut
    ])
    func truncatedTrailingRecordIsDropped(cut: Int, expected: Int) {
        let second = Self.record(watch: 2, mask: .closeWrite, name: "second", length: 16)
        let buffer = Self.record(watch: 1, mask: .closeWrite, name: "first", length: 16) + second.prefix(cut)
        let events = InotifyEvent.parse(buffer)
        #expect(events.count == expected)
        #expect(events.first?.name == Array("first".utf8))
    }

    @Test func emptyBuffer() {
        #expect(InotifyEvent.parse([UInt8]()).isEmpty)
    }
}

@Suite("FileDescriptor reads and writes")
struct FileDescriptorTests {
    static let pattern = (0..<100).map { UInt8($0) }

    @Test(arguments: [
        (offset: Int64(0), size: 10, expected: Array(0..<10)),
        (offset: 95, size: 10, expected: Array(95..<100)),
        (offset: 40, size: 200, expected: Array(40..<100)),
        (offset: 100, size: 10, expected: []),
        (offset: 500, size: 10, expected: []),
    ])
    func readFullyAtOffsets(offset: Int64, size: Int, expected: [Int]) throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("data")
        defer { file.close() }
        #expect(file.write(all: Self.pattern) == nil)
        var buffer = [UInt8](repeating: 0xAA, count: size)
        let count = try buffer.withUnsafeMutableBytes { try file.read(fully: $0, at: offset) }
        #expect(Array(buffer.prefix(count)) == expected.map { UInt8($0) })
        // pread: the offset the write left is where it was.
        #expect(lseek(file.rawValue, 0, SEEK_CUR) == 100)
    }

    @Test func writeAllLargeAndText() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("big")
        defer { file.close() }
        let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(file.write(all: big) == nil)
        #expect(file.write(all: "tail é\n") == nil)
        #expect(try scratch.read("big") == big + Array("tail é\n".utf8))
    }

    @Test func writeAllAtOffsetLeavesTheOffset() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("at")
        defer { file.close() }
        #expect(file.write(all: Array("hello world".utf8)) == nil)
        #expect(Array("W".utf8).withUnsafeBytes { file.write(all: $0, at: 6) } == nil)
        #expect(lseek(file.rawValue, 0, SEEK_CUR) == 11)
        #expect(try scratch.read("at") == Array("hello World".utf8))
    }

    @Test func writeAllReportsTheErrno() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try scratch.create("ro").close()
        let readOnly = try FileDescriptor.open(scratch.path("ro"), .readOnly)
        defer { readOnly.close() }
        #expect(readOnly.write(all: [1, 2, 3]) == .badFileDescriptor)
        #expect(throws: Errno.badFileDescriptor) { try FileDescriptor(rawValue: -1).fsync() }
    }

    @Test func statusChmodChown() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("meta")
        defer { file.close() }
        try file.chmod(0o640)
        let st = try file.status()
        #expect(st.st_mode & 0o7777 == 0o640)
        #expect((st.st_mode & S_IFMT) == S_IFREG)
        // (uid_t)-1 and (gid_t)-1 keep both: allowed for anyone.
        try file.chown(uid: uid_t.max, gid: gid_t.max)
        #expect(try file.status().st_uid == CurrentProcess.effectiveUserID)
    }
}

@Suite("Directory.writeFile")
struct WriteFileTests {
    @Test func writesContentsWithExactModeAndLeavesNoTemporary() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = try Directory(path: scratch.path)
        try directory.writeFile("status.json", bytes: Array("{}\n".utf8), mode: 0o644)
        #expect(try scratch.read("status.json") == Array("{}\n".utf8))
        #expect(try FileSystem.status(scratch.path("status.json")).st_mode & 0o7777 == 0o644)
        #expect(try directory.entries() == [Array("status.json".utf8)])
    }

    @Test func replacesAnExistingFile() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = try Directory(path: scratch.path)
        try directory.writeFile("state", bytes: Array(repeating: 0x41, count: 5000), mode: 0o600)
        let before = try FileSystem.status(scratch.path("state"))
        try directory.writeFile("state", bytes: Array("short".utf8), mode: 0o640)
        let after = try FileSystem.status(scratch.path("state"))
        #expect(try scratch.read("state") == Array("short".utf8))
        #expect(after.st_ino != before.st_ino)  // a new file renamed over it, not the old one rewritten
        #expect(after.st_mode & 0o7777 == 0o640)
        #expect(try directory.entries() == [Array("state".utf8)])
    }

    @Test func aFailedRenameLeavesNoTemporary() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = try Directory(path: scratch.path)
        #expect(mkdir(scratch.path("taken"), 0o700) == 0)
        defer { rmdir(scratch.path("taken")) }
        #expect {
            try directory.writeFile("taken", bytes: [1], mode: 0o600)
        } throws: { error in
            let failure = error as? SystemError
            return failure?.operation == "renameat" && failure?.errno == .isDirectory
        }
        #expect(try directory.entries() == [Array("taken".utf8)])
    }

    @Test func doesNotWriteThroughASymlinkedTemporary() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = try Directory(path: scratch.path)
        let temporary = ".out.\(CurrentProcess.id).tmp"
        #expect(symlink(scratch.path("victim"), scratch.path(temporary)) == 0)
        #expect {
            try directory.writeFile("out", bytes: [1], mode: 0o600)
        } throws: { error in
            (error as? SystemError)?.errno == .tooManyLinks
        }
        #expect((try? FileSystem.status(scratch.path("victim"))) == nil)
    }
}

@Suite("readBounded")
struct ReadBoundedTests {
    @Test func readsAFileUpToTheLimit() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("ten")
        file.write(all: Array("0123456789".utf8))
        file.close()
        #expect(try readBounded(scratch.path("ten"), limit: 10).get() == Array("0123456789".utf8))
        #expect(try readBounded(scratch.path("ten"), limit: 1 << 20).get() == Array("0123456789".utf8))
    }

    @Test func tooLarge() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("big")
        file.write(all: [UInt8](repeating: 0x20, count: 100))
        file.close()
        let result = readBounded(scratch.path("big"), limit: 10)
        #expect(result == .failure(.tooLarge(size: 100, limit: 10)))
        #expect(result.failure?.description == "file too large (100 bytes, at most 10)")
    }

    @Test func aProcFileGrowsTheBufferAndIsBounded() throws {
        // /proc files say st_size 0: the read must not stop at the size fstat gave.
        let status = try readBounded("/proc/self/status", limit: 1 << 20).get()
        #expect(String(decoding: status, as: UTF8.self).contains("Uid:"))
        let small = readBounded("/proc/self/status", limit: 10)
        #expect(small == .failure(.grewTooLarge(limit: 10)))
        #expect(small.failure?.description == "file too large (more than 10 bytes)")
    }

    @Test func aFIFODoesNotBlock() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        #expect(mkfifo(scratch.path("fifo"), 0o600) == 0)
        let result = readBounded(scratch.path("fifo"), limit: 100)
        #expect(result == .failure(.notRegularFile))
        #expect(result.failure?.description == "not a regular file")
    }

    @Test func aDirectoryIsRefused() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        #expect(readBounded(scratch.path, limit: 100) == .failure(.notRegularFile))
    }

    @Test func aSymlinkIsFollowedAndADanglingOneIsMissing() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = try scratch.create("target")
        file.write(all: "linked")
        file.close()
        #expect(symlink(scratch.path("target"), scratch.path("link")) == 0)
        #expect(try readBounded(scratch.path("link"), limit: 100).get() == Array("linked".utf8))
        #expect(symlink(scratch.path("nowhere"), scratch.path("dangling")) == 0)
        let dangling = readBounded(scratch.path("dangling"), limit: 100)
        #expect(dangling == .failure(.cannotOpen(.noSuchFile)))
        #expect(dangling.failure?.errno == .noSuchFile)
        #expect(dangling.failure?.description == "cannot open: No such file or directory")
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Suite("Typed opens")
struct TypedOpenTests {
    @Test func createExclusiveIsCloseOnExecWithThePermissions() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let directory = try Directory(path: scratch.path)
        let file = try directory.openFile("new", .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600)
        defer { file.close() }
        #expect(fcntl(file.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(try file.status().st_mode & 0o7777 == 0o600)
        #expect(throws: Errno.fileExists) {
            try directory.openFile("new", .writeOnly, options: [.create, .exclusive]).close()
        }
    }

    @Test func noFollowRefusesASymlinkAndReadOnlyCannotWrite() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try scratch.create("target").close()
        #expect(symlink(scratch.path("target"), scratch.path("link")) == 0)
        #expect(throws: Errno.tooManyLinks) {
            try FileDescriptor.open(scratch.path("link"), .readOnly, options: [.noFollow, .nonBlocking]).close()
        }
        let file = try FileDescriptor.open(scratch.path("link"), .readOnly, options: .noControllingTerminal)
        defer { file.close() }
        #expect(EntryKind(mode: try file.status().st_mode) == .regular)
        #expect(file.write(all: [1]) == .badFileDescriptor)
    }
}

@Suite("Signals.processExists")
struct ProcessExistsTests {
    @Test func ourselvesInitAndNoOne() {
        #expect(Signals.processExists(CurrentProcess.id))
        // pid 1 is someone else's unless we are root: EPERM still says it exists.
        #expect(Signals.processExists(1))
        // Above any pid_max the kernel allows (4194304): never a process.
        #expect(!Signals.processExists(Int32.max))
    }
}

@Suite("WallClock.utcComponents")
struct UTCComponentsTests {
    static let cases: [(microseconds: Int64, expected: CalendarTime)] = [
        (0, CalendarTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0)),
        (1_796_059_812_999_999, CalendarTime(year: 2026, month: 11, day: 30, hour: 17, minute: 30, second: 12)),
        (951_782_400_000_000, CalendarTime(year: 2000, month: 2, day: 29, hour: 0, minute: 0, second: 0)),
        (-1_000_000, CalendarTime(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59)),
    ]

    @Test(arguments: cases)
    func components(microseconds: Int64, expected: CalendarTime) {
        #expect(WallClock.utcComponents(microseconds) == expected)
    }

    @Test func theEndsOfInt64() {
        #expect(WallClock.utcComponents(Int64.max).year == 294_247)
        #expect(WallClock.utcComponents(Int64.min).year == -290_308)
    }
}
