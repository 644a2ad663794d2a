import Testing
@testable import InboxCore

/// `OptionsAction.parse` (`inboxctl options --do`), and the X11 selection's owner as bytes: `DISPLAY` names,
/// `.Xauthority` entries, the set-up's answer, and what `X11SelectionServer` sends for each request.
@Suite("Options menu")
struct OptionsMenuCoreTests {
    @Test(arguments: [
        ("quicklook", OptionsAction.quickLook),
        ("open=com.example.viewer", .open(handler: "com.example.viewer")),
        ("print", .print(destination: nil)),
        ("print=office/duplex", .print(destination: "office/duplex")),
        ("copy", .copy(directory: nil)),
        ("copy=/tmp/a=b", .copy(directory: "/tmp/a=b")),
        ("send=/srv/photos/Inbox", .send(inbox: "/srv/photos/Inbox")),
    ])
    func eachActionReadsBackAsItsWord(word: String, action: OptionsAction) throws {
        #expect(try OptionsAction.parse(word) == action)
        #expect(action.word == word)
    }

    @Test(arguments: [
        ("open", "--do open needs a handler: --do open=ID"),
        ("send", "--do send needs an Inbox: --do send=INBOX"),
        ("quicklook=x", "--do quicklook takes no argument"),
        ("copy=", "--do copy= has nothing after '='"),
        ("open=not an id", "invalid handler identifier 'not an id'"),
        ("prnt", "unknown action 'prnt' (one of quicklook, open, print, copy, send); did you mean 'print'?"),
        ("dance", "unknown action 'dance' (one of quicklook, open, print, copy, send)"),
    ])
    func aWrongWordIsAUsageError(word: String, message: String) {
        #expect(throws: UsageError.self) { try OptionsAction.parse(word) }
        do {
            _ = try OptionsAction.parse(word)
        } catch {
            #expect(error.message == message)
        }
    }

    // MARK: X11

    @Test func onlyLocalDisplaysAreReached() throws {
        #expect(try X11Display.parse(":0").get().number == 0)
        #expect(try X11Display.parse(":12.1").get().number == 12)
        #expect(try X11Display.parse("unix:3").get().socketPath == "/tmp/.X11-unix/X3")
        for name in ["localhost:10.0", "host.example:0", "", ":", ":x", ":1.", ":99999"] {
            #expect((try? X11Display.parse(name).get()) == nil, "\(name)")
        }
    }

    /// libXau's format: a 16-bit family, then address, number, name and data, each a 16-bit big-endian length first.
    static func entry(_ family: UInt16, _ address: String, _ number: String, _ name: String, _ data: [UInt8]) -> [UInt8] {
        func field(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        return [UInt8(family >> 8), UInt8(family & 0xFF)] + field(Array(address.utf8)) + field(Array(number.utf8))
            + field(Array(name.utf8)) + field(data)
    }

    @Test func theCookieIsThisHostsForThisDisplayOrAWildcard() {
        let file = Self.entry(256, "otherhost", "0", "MIT-MAGIC-COOKIE-1", [1])
            + Self.entry(256, "myhost", "1", "MIT-MAGIC-COOKIE-1", [2])
            + Self.entry(256, "myhost", "0", "XDM-AUTHORIZATION-1", [3])
            + Self.entry(256, "myhost", "0", "MIT-MAGIC-COOKIE-1", [4, 4])
            + Self.entry(65535, "", "", "MIT-MAGIC-COOKIE-1", [5])
            + [0x01, 0x00, 0x00]  // a cut entry
        let entries = X11AuthorityEntry.parse(file)
        #expect(entries.count == 5)
        #expect(X11AuthorityEntry.cookie(in: entries, display: 0, hostname: "myhost")?.data == [4, 4])
        #expect(X11AuthorityEntry.cookie(in: entries, display: 1, hostname: "myhost")?.data == [2])
        #expect(X11AuthorityEntry.cookie(in: entries, display: 7, hostname: "myhost")?.data == [5])
        #expect(X11AuthorityEntry.cookie(in: Array(entries.prefix(3)), display: 0, hostname: "myhost") == nil)
    }

    @Test func theSetupRequestCarriesTheCookiePadded() {
        let request = X11Protocol.setupRequest(authorizationName: Array("MIT-MAGIC-COOKIE-1".utf8),
                                               authorizationData: [UInt8](repeating: 7, count: 16))
        #expect(request.prefix(12) == [0x6C, 0, 11, 0, 0, 0, 18, 0, 16, 0, 0, 0])
        #expect(request.count == 12 + 20 + 16)
    }

    /// A server's answer to the set-up: one format, one screen whose root is 0x2a1.
    static func setupReply(vendor: String = "X.Org") -> [UInt8] {
        var body = X11Bytes()
        body.u32(12_101_007)      // release
        body.u32(0x0040_0000)     // resource-id-base
        body.u32(0x001F_FFFF)     // resource-id-mask
        body.u32(256)             // motion buffer
        body.u16(UInt16(vendor.utf8.count))
        body.u16(65535)           // maximum request length, in words
        body.u8(1)                // screens
        body.u8(1)                // formats
        for _ in 0..<6 { body.u8(0) }
        body.u32(0)
        body.padded(Array(vendor.utf8))
        body.padded([UInt8](repeating: 1, count: 8))  // the format
        body.u32(0x2A1)           // the screen's root
        body.padded([UInt8](repeating: 0, count: 36))
        var header = X11Bytes()
        header.u8(1)
        header.u8(0)
        header.u16(11)
        header.u16(0)
        header.u16(UInt16(body.bytes.count / 4))
        return header.bytes + body.bytes
    }

    @Test func theSetupGivesIdsTheLargestRequestAndTheRoot() throws {
        let reply = Self.setupReply()
        #expect(X11Protocol.setupLength(Array(reply.prefix(8))) == reply.count - 8)
        let setup = try X11Protocol.parseSetup(reply).get()
        #expect(setup == X11Setup(resourceIDBase: 0x0040_0000, resourceIDMask: 0x001F_FFFF,
                                  maximumRequestBytes: 65535 * 4, root: 0x2A1))
        let refused: [UInt8] = [0, 22, 11, 0, 0, 0, 6, 0] + Array("No protocol specified\n\0\0".utf8)
        #expect(X11Protocol.parseSetup(refused) == .failure(X11Refusal(reason: "No protocol specified")))
    }

    static let atoms = X11SelectionServer.Atoms(selection: 100, targets: 101, incr: 102)
    static let window: UInt32 = 0x0040_0000

    static func request(target: UInt32, property: UInt32 = 500, requestor: UInt32 = 0x0060_0001) -> X11Message {
        .selectionRequest(X11SelectionRequest(time: 77, owner: window, requestor: requestor, selection: atoms.selection,
                                              target: target, property: property))
    }

    static func notify(target: UInt32, property: UInt32, requestor: UInt32 = 0x0060_0001) -> [UInt8] {
        X11Protocol.selectionNotify(requestor: requestor, selection: atoms.selection, target: target, property: property,
                                    time: 77)
    }

    @Test func targetsListsEveryTargetAndEachGetsItsOwnBytes() {
        var server = X11SelectionServer(window: Self.window, atoms: Self.atoms,
                                        offered: [.init(atom: 200, bytes: Array("file:///a.png\r\n".utf8)),
                                                  .init(atom: 201, bytes: [0x89, 0x50, 0x4E, 0x47])],
                                        partBytes: 1024)
        let targets = server.handle(Self.request(target: Self.atoms.targets))
        #expect(targets.requests == [X11Protocol.changeProperty(0x0060_0001, property: 500, type: X11Protocol.atomATOM,
                                                                values: [101, 200, 201]),
                                     Self.notify(target: 101, property: 500)])
        let uri = server.handle(Self.request(target: 200))
        #expect(uri.requests == [X11Protocol.changeProperty(0x0060_0001, property: 500, type: 200, format: 8,
                                                            data: Array("file:///a.png\r\n".utf8)[...]),
                                 Self.notify(target: 200, property: 500)])
        let png = server.handle(Self.request(target: 201, property: X11Protocol.none))
        // No property named: the target is the property.
        #expect(png.requests == [X11Protocol.changeProperty(0x0060_0001, property: 201, type: 201, format: 8,
                                                            data: [0x89, 0x50, 0x4E, 0x47][...]),
                                 Self.notify(target: 201, property: 201)])
        #expect(server.handle(Self.request(target: 999)).requests == [Self.notify(target: 999, property: X11Protocol.none)])
        #expect(!server.handle(.selectionClear(owner: Self.window, selection: 55)).lost)
        #expect(server.handle(.selectionClear(owner: Self.window, selection: Self.atoms.selection)).lost)
    }

    @Test func aLargeValueGoesInPartsAtEachDeletion() {
        let bytes = (0..<10).map { UInt8($0) }
        var server = X11SelectionServer(window: Self.window, atoms: Self.atoms, offered: [.init(atom: 201, bytes: bytes)],
                                        partBytes: 4)
        let requestor: UInt32 = 0x0060_0001
        let start = server.handle(Self.request(target: 201))
        #expect(start.requests == [X11Protocol.selectEvents(requestor, mask: X11Protocol.propertyChangeMask),
                                   X11Protocol.changeProperty(requestor, property: 500, type: Self.atoms.incr,
                                                              values: [10]),
                                   Self.notify(target: 201, property: 500)])
        #expect(server.transfersInProgress == 1)
        // Our own change is no deletion; another property's deletion is not this transfer's.
        #expect(server.handle(.propertyNotify(window: requestor, atom: 500, deleted: false)).requests.isEmpty)
        #expect(server.handle(.propertyNotify(window: requestor, atom: 501, deleted: true)).requests.isEmpty)
        var parts: [[UInt8]] = []
        for _ in 0..<4 {
            parts += server.handle(.propertyNotify(window: requestor, atom: 500, deleted: true)).requests
        }
        #expect(parts == [
            X11Protocol.changeProperty(requestor, property: 500, type: 201, format: 8, data: bytes[0..<4]),
            X11Protocol.changeProperty(requestor, property: 500, type: 201, format: 8, data: bytes[4..<8]),
            X11Protocol.changeProperty(requestor, property: 500, type: 201, format: 8, data: bytes[8..<10]),
            X11Protocol.changeProperty(requestor, property: 500, type: 201, format: 8, data: bytes[10..<10]),
        ])
        // The requestor deletes the empty part: the transfer is over, its window's events no longer asked for.
        #expect(server.handle(.propertyNotify(window: requestor, atom: 500, deleted: true)).requests
                == [X11Protocol.selectEvents(requestor, mask: 0)])
        #expect(server.transfersInProgress == 0)
    }

    @Test func eventsAndRepliesAreReadFromTheirBytes() {
        var event = [UInt8](repeating: 0, count: 32)
        event[0] = 30
        for (offset, value) in [(4, UInt32(9)), (8, Self.window), (12, 0x0060_0001), (16, 100), (20, 201), (24, 500)] {
            for byte in 0..<4 { event[offset + byte] = UInt8((value >> UInt32(byte * 8)) & 0xFF) }
        }
        #expect(X11Protocol.parseMessage(event) == .selectionRequest(X11SelectionRequest(
            time: 9, owner: Self.window, requestor: 0x0060_0001, selection: 100, target: 201, property: 500)))
        event[0] = 30 | 0x80  // sent by another client: the same event
        #expect(X11Protocol.parseMessage(event) != .other)
        var reply = [UInt8](repeating: 0, count: 32)
        reply[0] = 1
        reply[2] = 7
        reply[4] = 2
        #expect(X11Protocol.extraLength(reply) == 8)
        #expect(X11Protocol.parseMessage(reply + [UInt8](repeating: 0, count: 8))
                == .reply(sequence: 7, bytes: reply + [UInt8](repeating: 0, count: 8)))
        var error = [UInt8](repeating: 0, count: 32)
        error[1] = 3
        error[10] = 18
        #expect(X11Protocol.parseMessage(error) == .error(code: 3, sequence: 0, majorOpcode: 18))
        #expect(X11Protocol.errorName(3) == "BadWindow")
    }
}
