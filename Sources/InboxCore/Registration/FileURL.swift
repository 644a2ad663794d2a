/// "file://" followed by the path, percent-encoded per RFC 3986 path rules (UTF-8 bytes, uppercase hex).
public func fileURL(forPath path: String) -> String {
    // Built as bytes: this runs for every launch, and most paths need no escaping at all.
    var url: [UInt8] = Array("file://".utf8)
    url.reserveCapacity(path.utf8.count + 16)
    let hex: StaticString = "0123456789ABCDEF"
    for byte in path.utf8 {
        if isPathCharacter(byte) {
            url.append(byte)
        } else {
            url.append(UInt8(ascii: "%"))
            url.append(hex.utf8Start[Int(byte >> 4)])
            url.append(hex.utf8Start[Int(byte & 0x0F)])
        }
    }
    return String(decoding: url, as: UTF8.self)
}

/// RFC 3986 `pchar` plus "/": unreserved, sub-delims, ":" and "@".
private func isPathCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
         UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
         UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
         UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
        return true
    default:
        return false
    }
}
