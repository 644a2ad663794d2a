/// "file://" followed by the path, percent-encoded per RFC 3986 path rules (UTF-8 bytes, uppercase hex).
public func fileURL(forPath path: String) -> String {
    var url = "file://"
    url.reserveCapacity(path.utf8.count + 16)
    let hex: [Character] = Array("0123456789ABCDEF")
    for byte in path.utf8 {
        if isPathCharacter(byte) {
            url.append(Character(Unicode.Scalar(byte)))
        } else {
            url.append("%")
            url.append(hex[Int(byte >> 4)])
            url.append(hex[Int(byte & 0x0F)])
        }
    }
    return url
}

/// RFC 3986 `pchar` plus "/": unreserved, sub-delims, ":" and "@".
private func isPathCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "-._~!$&'()*+,;=:@/".utf8.contains(byte)
    }
}
