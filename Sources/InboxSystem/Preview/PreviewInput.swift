import Glibc
import InboxCore

/// Reading a document before any generator sees it, by its descriptor alone: its first bytes, a ZIP archive's central
/// directory (the zip-bomb bound), a member of a package directory. Nothing here is opened by name from outside.
enum PreviewInput {
    /// A central directory larger than this is refused before it is read: a real document's is a few KiB.
    static let maximumZipDirectory: UInt64 = 4 << 20
    /// A member that expands more than this many times, to more than `absurdMemberSize`, is a bomb.
    static let absurdRatio: UInt64 = 1000
    static let absurdMemberSize: UInt64 = 100 << 20

    /// Up to `count` bytes from `offset` (pread: the descriptor's offset is untouched); fewer at end of file.
    static func read(_ file: FileDescriptor, at offset: Int64 = 0, count: Int) -> Result<[UInt8], Errno> {
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        let got = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try file.read(fully: buffer, at: offset) }
        }
        return got.map { count in
            bytes.removeSubrange(count...)
            return bytes
        }
    }

    /// Whether the file starts as a ZIP archive does (a local file header, `PK\3\4`).
    static func isZip(_ file: FileDescriptor) -> Bool {
        (try? read(file, count: 4).get()) == [0x50, 0x4B, 0x03, 0x04]
    }

    /// The archive's central directory read without inflating anything, bounded (`maximumZipDirectory`).
    static func zipDirectory(_ file: FileDescriptor, size: Int64) -> Result<ZipDirectory, PreviewError> {
        let fileSize = UInt64(max(0, size))
        let tailSize = min(fileSize, UInt64(ZipDirectory.tailSize))
        let tailOffset = fileSize - tailSize
        let tail: [UInt8]
        switch read(file, at: Int64(tailOffset), count: Int(tailSize)) {
        case .success(let bytes): tail = bytes
        case .failure(let error): return .failure(.system(SystemError("pread", errno: error)))
        }
        guard let location = ZipDirectory.locate(tail: tail, tailOffset: tailOffset, fileSize: fileSize) else {
            return .failure(.refused("is not a readable ZIP archive (no end of central directory record)"))
        }
        guard location.size <= maximumZipDirectory else {
            return .failure(.refused("has a ZIP central directory of \(byteCount(location.size)), more than the "
                                     + "\(byteCount(maximumZipDirectory)) a preview reads"))
        }
        let bytes: [UInt8]
        switch read(file, at: Int64(location.offset), count: Int(location.size)) {
        case .success(let read): bytes = read
        case .failure(let error): return .failure(.system(SystemError("pread", errno: error)))
        }
        guard bytes.count == Int(location.size), let directory = ZipDirectory.parse(bytes, location: location) else {
            return .failure(.refused("is not a readable ZIP archive (its central directory is malformed)"))
        }
        return .success(directory)
    }

    /// Refuses an archive whose members declare more than `maximum` bytes in all, or one that expands absurdly: a zip
    /// bomb posing as a document.
    static func checkUnpackedSize(_ directory: ZipDirectory, maximum: UInt64) -> PreviewError? {
        let total = directory.totalUncompressedSize
        if total > maximum {
            return .refused("would unpack to \(byteCount(total)), more than the \(byteCount(maximum)) a preview unpacks")
        }
        for entry in directory.entries where entry.uncompressedSize > absurdMemberSize {
            let compressed = max(entry.compressedSize, 1)
            if entry.uncompressedSize / compressed > absurdRatio {
                let name = String(decoding: entry.name.prefix(100), as: UTF8.self)
                return .refused("has a member (\(name)) that expands \(entry.uncompressedSize / compressed) times, to "
                                + "\(byteCount(entry.uncompressedSize)): a zip bomb")
            }
        }
        return nil
    }

    /// Opens `path` ("QuickLook/Preview.pdf") beneath the open package directory `root`, component by component,
    /// never following a link nor leaving the package's filesystem (the package walk's rules, `PackageOpener`): a
    /// regular file with one link, open for reading; nil when it is missing or anything else.
    static func openMember(_ path: String, in root: FileDescriptor) -> FileDescriptor? {
        let components = path.split(separator: "/").map { Array($0.utf8) }
        guard !components.isEmpty, !components.contains([0x2E, 0x2E]),
              let opener = try? PackageOpener.beneath(root, resolution: .detected) else { return nil }
        var directories: [FileDescriptor] = []
        defer { directories.forEach { $0.close() } }
        var parent = root
        for name in components.dropLast() {
            guard case .success(let (fd, st)) = opener.pin(name, in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            else { return nil }
            directories.append(fd)
            guard (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
            parent = fd
        }
        guard case .success(let (pinned, st)) = opener.pin(components.last!, in: parent) else { return nil }
        defer { pinned.close() }
        guard (st.st_mode & S_IFMT) == S_IFREG, st.st_nlink == 1 else { return nil }
        // The very inode pinned and checked, reopened for reading through /proc/self/fd.
        guard let file = try? pinned.reopenedReadOnly() else { return nil }
        guard let check = try? file.status(), check.st_ino == st.st_ino, check.st_dev == st.st_dev else {
            file.close()
            return nil
        }
        return file
    }

    /// A file name's extension fit for a copy's name ("docx"): letters and digits, at most 10; "" when it has none.
    static func safeExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        let ext = name[name.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 10, ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return ""
        }
        return String(ext)
    }

    /// `file://` and the path, percent-encoded where RFC 3986 requires (a thumbnailer's `%u`, LibreOffice's profile).
    static func fileURI(_ path: String) -> String {
        var uri = "file://"
        for byte in path.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "/-._~".contains(c) {
                uri.append(c)
            } else {
                uri += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return uri
    }

    /// 268435456 as "268,435,456".
    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (number < 0 ? "-" : "") + result
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
