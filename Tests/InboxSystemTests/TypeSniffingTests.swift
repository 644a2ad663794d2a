import Glibc
import InboxCore
import InboxSystem
import Testing

/// libmagic and the host's shared-mime-info, for real.
@Suite("Content sniffing and the host MIME database")
struct TypeSniffingTests {
    /// Bytes a real tool made: Python's zlib-backed PNG writer, gzip and json modules.
    static func python(_ program: String) throws -> [UInt8] {
        let outcome = try run(["/usr/bin/python3", "-c", program])
        #expect(outcome.status == .exited(0), "\(outcome.errorOutput)")
        return outcome.stdout
    }

    static let png = """
        import sys, zlib, struct
        def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
        rows = b''.join(b'\\x00' + b'\\x10\\x80\\xf0' * 8 for _ in range(8))
        sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 8, 8, 2, 0, 0, 0))
                                + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
        """

    @Test func sniffsRealFiles() throws {
        let sniffer = try ContentSniffer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        func sniffFile(_ name: String, _ bytes: [UInt8]) throws -> String {
            let fd = try scratch.create(name)
            defer { fd.close() }
            _ = bytes.withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
            // The offset is at the end: the sniffer must read from the start without moving it.
            let answer = try sniffer.sniff(fd).get().mimeType
            #expect(lseek(fd.rawValue, 0, SEEK_CUR) == off_t(bytes.count))
            return answer
        }
        #expect(try sniffFile("a", try Self.python(Self.png)) == "image/png")
        #expect(try sniffFile("b", try Self.python("import sys, gzip; sys.stdout.buffer.write(gzip.compress(b'x' * 1000))"))
            == "application/gzip")
        #expect(try sniffFile("c", try Self.python("import json; print(json.dumps({'a': [1, 2, {'b': None}]}))"))
            == "application/json")
        guard case .success(let elf) = readBounded("/bin/true", limit: 16 << 20) else {
            Issue.record("cannot read /bin/true")
            return
        }
        #expect(try sniffFile("d", elf).hasPrefix("application/x-"), "an ELF executable or shared object")
        #expect(try sniffFile("e", []) == "application/x-empty")
        #expect(try sniffFile("f", Array("hello, world\n".utf8)) == "text/plain")
    }

    @Test func readsOnlyTheFirstBytes() throws {
        let sniffer = try ContentSniffer()
        // Text for longer than the limit, then a PNG signature: only the text is seen.
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: ContentSniffer.byteLimit)
        bytes += try Self.python(Self.png)
        #expect(try sniffer.sniff(bytes).get() == "text/plain")
        #expect(try sniffer.sniff(try Self.python(Self.png)).get() == "image/png")
    }

    @Test func garbageNeverTraps() throws {
        let sniffer = try ContentSniffer()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for size in [1, 2, 16, 512, 4096, ContentSniffer.byteLimit, ContentSniffer.byteLimit * 2] {
            let bytes = (0..<size).map { _ -> UInt8 in
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            }
            #expect((try? sniffer.sniff(bytes).get()) != nil)
        }
    }

    static let host = MIMEDatabaseLoader.load(directories: MIMEDatabaseLoader.defaultDirectories())

    @Test func hostDatabaseLoads() throws {
        try #require(Self.host.problems.isEmpty, "\(Self.host.problems)")
        #expect(Self.host.database.knownTypes.count > 500, "shared-mime-info knows hundreds of types")
    }

    @Test(arguments: [
        ("photo.png", "image/png"), ("PHOTO.PNG", "image/png"), ("backup.tar.gz", "application/x-compressed-tar"),
        ("backup.TAR.GZ", "application/x-compressed-tar"), ("main.c", "text/x-csrc"), ("main.C", "text/x-c++src"),
        ("Makefile", "text/x-makefile"), ("libz.so.1", "application/x-sharedlib"), ("report.pdf", "application/pdf"),
        ("index.html", "text/html"), ("data.sqlite3", "application/vnd.sqlite3"),
    ])
    func hostGlobs(_ name: String, _ mimeType: String) {
        #expect(Self.host.database.match(fileName: name)?.mimeType == mimeType)
    }

    @Test func everyHostTypeResolvesAndConforms() {
        let types = TypeDatabase.builtin.attaching(Self.host.database)
        var unresolved: [String] = []
        for mime in Self.host.database.knownTypes {
            guard let identifier = types.typeIdentifier(forMIMEType: mime) else {
                unresolved.append(mime)
                continue
            }
            let chain = types.conformanceChain(of: identifier)
            if !mime.hasPrefix("inode/") && !chain.contains("public.item") && !chain.contains("public.content") {
                unresolved.append("\(mime) -> \(chain)")
            }
        }
        #expect(unresolved.isEmpty, "\(unresolved)")
        let sqlite = types.typeIdentifier(forMIMEType: "application/vnd.sqlite3") ?? ""
        let isData = types.conforms(sqlite, to: "public.data")
        #expect(isData)
    }

    /// The built-in table and shared-mime-info agree: a name with an extension the table gives a type gets, through
    /// the host's globs (which the name rule asks first), that type or one it conforms to or that conforms to it.
    /// The exceptions are where the host's database itself folds two formats into one MIME type.
    @Test func builtinExtensionsAgreeWithHostGlobs() {
        let types = TypeDatabase.builtin.attaching(Self.host.database)
        let exceptions: Set<String> = [
            "heic",  // shared-mime-info names *.heic image/heif; the content (libmagic: image/heic) corrects it
            "vcs",   // shared-mime-info names vCalendar *.vcs text/calendar, which is iCalendar's MIME type
            "pfa",   // shared-mime-info gives ASCII and binary Type 1 fonts one MIME type
        ]
        var disagreements: [String] = []
        var extensions: Set<String> = []
        for identifier in types.allIdentifiers {
            extensions.formUnion(types.declaration(for: identifier)?.extensions ?? [])
        }
        for ext in extensions.sorted() where !exceptions.contains(ext) {
            guard let table = types.identifier(forExtension: ext), let named = types.nameType(of: "file." + ext) else {
                continue
            }
            let agrees = types.conforms(named.identifier, to: table) || types.conforms(table, to: named.identifier)
            if !agrees { disagreements.append("*.\(ext): table \(table), host \(named.mimeType ?? "-") -> \(named.identifier)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }
}
