import CMagic
import Glibc
import InboxCore

/// Content sniffing: shared-mime-info's magic rules first (`rules`, what GLib uses), then libmagic (what file(1)
/// uses) where the rules say nothing or only a generic container (MagicRules.needsLibmagic).
///
/// libmagic is asked in two passes, the second only where the decision needs it. The first (`quick`, with
/// MAGIC_NO_CHECK_SOFT) runs its built-in checks alone — tar, JSON, CSV, CDF (OLE2 kinds), text encodings — in a
/// few microseconds; whatever it names is final (libmagic runs those checks before its database, and stops at
/// the first that answers). The second searches libmagic's whole database (soft magic, 0.1 to 5 ms a file), and
/// only for text, where it names scripts and source languages, and for a container the rules named, whose kinds
/// it tells apart by the members, and for binary content that neither the rules nor the first pass name only when
/// the caller's decision can use libmagic's name for it (`namingBinary`: no claim, an abstract one or a tie);
/// otherwise such content is `application/octet-stream` without the second pass (MagicRules.needsSoftMagic).
/// With no rules loaded, libmagic alone is all there is, and the whole database is always searched.
///
/// Untrusted files are read here, in the agent, so libmagic is held short: it sees at most `byteLimit` bytes
/// read by us (it never opens a path), never decompresses (MAGIC_NO_CHECK_COMPRESS: no decompressor processes),
/// and its recursion and ELF-walking parameters are bounded. One cookie (its flags say the pass), used from one
/// thread.
public final class ContentSniffer {
    /// How many bytes from the start of a file are examined.
    public static let byteLimit = 64 * 1024

    /// How many bytes are examined when the first `byteLimit` say only "an OLE2 compound file": libmagic tells
    /// Word, Excel, PowerPoint, Works, MSI and Outlook files apart by the names in the file's directory, which a
    /// large file keeps past the first 64 KiB (a 450 KB PowerPoint file reads as a generic OLE2 file from them).
    public static let extendedByteLimit = 2 << 20

    /// True when libmagic's answer for the first `byteLimit` bytes is worth a second look with `extendedByteLimit`.
    public static func needsMoreBytes(_ answer: String) -> Bool {
        ["application/x-ole-storage", "application/vnd.ms-office", "application/cdfv2"]
            .contains(answer.lowercased().split(separator: ";").first.map(String.init) ?? "")
    }

    private let cookie: OpaquePointer
    private static let flags = MAGIC_MIME_TYPE | MAGIC_NO_CHECK_COMPRESS | MAGIC_NO_COMPRESS_FORK | MAGIC_ERROR
    /// True while the cookie's flags skip libmagic's database (MAGIC_NO_CHECK_SOFT): the first, quick pass.
    private var quick = false
    private var buffer: [UInt8]
    /// shared-mime-info's rules, asked before libmagic; empty: libmagic alone.
    public var rules: MagicRules = .empty
    /// "5.44": the library's version, for the start-up log.
    public let version: String

    /// Loads the default compiled magic database (`/usr/share/misc/magic.mgc`, or `$MAGIC`).
    public init() throws(SniffError) {
        self.cookie = try Self.open(Self.flags)
        self.buffer = [UInt8](repeating: 0, count: Self.byteLimit)
        let number = sys_magic_version()
        self.version = "\(number / 100).\(number % 100)"
    }

    deinit {
        sys_magic_close(cookie)
    }

    /// A cookie with `flags` and the default database loaded, bounded.
    private static func open(_ flags: CInt) throws(SniffError) -> OpaquePointer {
        guard let cookie = sys_magic_open(flags) else {
            throw SniffError("magic_open: \(Errno.current)")
        }
        guard sys_magic_load(cookie, nil) == 0 else {
            let message = Self.message(cookie) ?? "cannot load the magic database"
            sys_magic_close(cookie)
            throw SniffError("magic_load: \(message)")
        }
        // Bounds on what one file can make libmagic do (libmagic(3), magic_setparam): indirections, named uses,
        // ELF program and section headers and notes walked, bytes a regex may scan.
        for (parameter, value) in [(MAGIC_PARAM_INDIR_MAX, 15), (MAGIC_PARAM_NAME_MAX, 30),
                                   (MAGIC_PARAM_ELF_PHNUM_MAX, 128), (MAGIC_PARAM_ELF_SHNUM_MAX, 1024),
                                   (MAGIC_PARAM_ELF_NOTES_MAX, 64), (MAGIC_PARAM_REGEX_MAX, 8192)] {
            _ = sys_magic_setparam(cookie, parameter, value)
        }
        return cookie
    }

    /// The MIME type of an open file's first bytes (read with pread, so the offset is untouched).
    ///
    /// With `text: .none`, bytes that are plain UTF-8 text are answered `text/plain` without asking libmagic,
    /// whose text heuristics cost 0.3 to 5 ms a file: for a caller whose decision no kind of text can change
    /// (TypeResolver rule 5, ContentNeeds), that is all it needs to know; with `.builtin`, libmagic's built-in
    /// checks (JSON, CSV) are asked, not its database. With `namingBinary: false`, binary content that neither the
    /// rules nor libmagic's built-in checks name is `application/octet-stream` (see the type). With
    /// `refiningText: false` as well, such text is not shown to the rules either: `text/plain` is all.
    public func sniff(_ file: FileDescriptor, text: ContentNeeds.Text = .all, namingBinary: Bool = true,
                      refiningText: Bool = true) -> Result<Sniffed, SniffError> {
        let started = ContinuousClock.now
        let count: Int
        switch buffer.withUnsafeMutableBytes({ bytes in Result { () throws(Errno) in try file.read(fully: bytes, at: 0) } }) {
        case .success(let read): count = read
        case .failure(let error): return .failure(SniffError("read: \(error)"))
        }
        if text == .none && Self.isText(buffer.prefix(count)) {
            guard refiningText else { return .success(Sniffed("text/plain", .text, since: started)) }
            // The rules may name a kind of text that refines the claim; libmagic's kinds could not change it.
            let byRules = buffer.withUnsafeBytes { sniffByRules(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            return .success(byRules.map { Sniffed($0, .rules, since: started) } ?? Sniffed("text/plain", .text, since: started))
        }
        let answer = buffer.withUnsafeBytes {
            sniff(UnsafeRawBufferPointer(rebasing: $0[..<count]), namingBinary: namingBinary, classifyingText: text == .all)
        }
        guard count == buffer.count, case .success(let first) = answer, Self.needsMoreBytes(first.0) else {
            return answer.map { Sniffed($0.0, $0.1, since: started) }
        }
        var more = [UInt8](repeating: 0, count: Self.extendedByteLimit)
        switch more.withUnsafeMutableBytes({ bytes in Result { () throws(Errno) in try file.read(fully: bytes, at: 0) } }) {
        case .success(let read):
            return more.withUnsafeBytes { sniff(UnsafeRawBufferPointer(rebasing: $0[..<read])) }
                .map { Sniffed($0.0, $0.1, since: started) }
        case .failure(let error): return .failure(SniffError("read: \(error)"))
        }
    }

    /// The rules' answer and which check gave it, libmagic asked only where the rules leave it open, and its whole
    /// database only where its built-in checks leave open what the decision needs (see the type's comment).
    public func sniff(_ bytes: UnsafeRawBufferPointer, namingBinary: Bool = true,
                      classifyingText: Bool = true) -> Result<(String, SniffPath), SniffError> {
        let match = rules.match(bytes)
        if let match, !MagicRules.needsLibmagic(match) { return .success((match.mimeType, .rules)) }
        guard let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1) else { return .success(("", .libmagic)) }
        if !rules.sections.isEmpty {
            switch classify(base, bytes.count, quick: true) {
            case .success(let answer):
                if !MagicRules.needsSoftMagic(rules: match, quick: answer, namingBinary: namingBinary,
                                              classifyingText: classifyingText) {
                    return .success((answer, .quick))
                }
            case .failure(let error):
                return .failure(error)
            }
        }
        return classify(base, bytes.count).map { MagicRules.combine(rules: match, libmagic: $0) }
    }

    /// The rules' answer when it is the last word, nil when libmagic must be asked.
    public func sniffByRules(_ bytes: UnsafeRawBufferPointer) -> String? {
        rules.match(bytes).flatMap { MagicRules.needsLibmagic($0) ? nil : $0.mimeType }
    }

    /// Non-empty UTF-8 without NUL or other control bytes than tab, newlines, form feed and escape; a sequence
    /// cut by the byte limit at the very end is allowed.
    static func isText(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0C && byte != 0x0D && byte != 0x1B { return false }
                if byte == 0x7F { return false }
                index += 1
                continue
            }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC2 ? 2 : 0
            guard length > 0, byte <= 0xF4 else { return false }
            let end = index + length
            if end > bytes.endIndex { return bytes.count == byteLimit }
            if String(validating: bytes[index..<end], as: UTF8.self) == nil { return false }
            index = end
        }
        return true
    }

    /// The MIME type of some bytes (at most `extendedByteLimit` are looked at).
    public func sniff(_ bytes: some Collection<UInt8>) -> Result<String, SniffError> {
        guard bytes.count <= buffer.count else {
            let whole = Array(bytes.prefix(Self.extendedByteLimit))
            return whole.withUnsafeBytes { classify($0.baseAddress!, $0.count) }
        }
        let count = bytes.count
        buffer.replaceSubrange(0..<count, with: bytes)
        return classify(count)
    }

    /// Classifies the first `count` bytes of the buffer.
    private func classify(_ count: Int) -> Result<String, SniffError> {
        buffer.withUnsafeBytes { raw in classify(raw.baseAddress!, count) }
    }

    /// libmagic's answer, with its whole database or (`quick`) its built-in checks alone.
    private func classify(_ bytes: UnsafeRawPointer, _ count: Int, quick: Bool = false) -> Result<String, SniffError> {
        if quick != self.quick {
            guard sys_magic_setflags(cookie, quick ? Self.flags | MAGIC_NO_CHECK_SOFT : Self.flags) == 0 else {
                return .failure(SniffError(Self.message(cookie) ?? "magic_setflags failed"))
            }
            self.quick = quick
        }
        guard let answer = sys_magic_buffer(cookie, bytes, count).map({ String(cString: $0) }) else {
            return .failure(SniffError(Self.message(cookie) ?? "magic_buffer failed"))
        }
        return .success(answer)
    }

    private static func message(_ cookie: OpaquePointer) -> String? {
        sys_magic_error(cookie).map { String(cString: $0) }
    }
}

/// What sniffing said about a file: the MIME type, which check answered, and how long it took (reading included).
public struct Sniffed: Sendable, Hashable {
    public let mimeType: String
    public let path: SniffPath
    public let duration: Duration

    public init(_ mimeType: String, _ path: SniffPath, duration: Duration = .zero) {
        self.mimeType = mimeType
        self.path = path
        self.duration = duration
    }

    init(_ mimeType: String, _ path: SniffPath, since start: ContinuousClock.Instant) {
        self.init(mimeType, path, duration: ContinuousClock.now - start)
    }
}

/// libmagic could not be loaded or could not classify some bytes, or the sniffer could not be started.
public struct SniffError: Error, Sendable, CustomStringConvertible {
    /// Where it went wrong, so that the advice fits: starting the process, or libmagic inside it.
    public enum Stage: Sendable {
        /// The sniffer's program could not be run (spawn or exec failed).
        case start
        /// libmagic itself, in the sniffer or in this process.
        case libmagic
    }

    public let description: String
    public let stage: Stage
    init(_ description: String, stage: Stage = .libmagic) {
        self.description = description
        self.stage = stage
    }
}

extension SniffCosts {
    /// Counts one sniffed file.
    public mutating func add(_ sniffed: Sniffed) {
        add(sniffed.path, microseconds: sniffed.duration.microsecondsClamped)
    }
}
