/// Why a word of `Servers=` is not a server URL.
struct ServerURLError: Error, Sendable, Hashable {
    /// A phrase naming the word and what is wrong with it.
    let message: String

    /// An error with its phrase.
    init(_ message: String) {
        self.message = message
    }
}

/// The server URLs of `[Cluster] Servers=`: `nats://HOST[:PORT]` or `tls://HOST[:PORT]`, HOST a host name, an IPv4
/// address or an IPv6 address in brackets. Nothing else: no user or password (they belong in a file,
/// `Credentials=`), no path, query or fragment.
enum ServerURL {
    /// The scheme, host (an IPv6 address without brackets) and port of `text`, or why it is not a server URL.
    static func parse(_ text: String) -> Result<(scheme: ClusterSettings.Server.Scheme, host: String, port: Int),
                                                 ServerURLError> {
        guard let separator = text.firstRange(of: "://") else {
            return .failure(.init("'\(text.abbreviated)' is not a URL: write nats://HOST[:PORT] or tls://HOST[:PORT]"))
        }
        let schemeText = text[..<separator.lowerBound].lowercased()
        guard let scheme = ClusterSettings.Server.Scheme(rawValue: schemeText) else {
            return .failure(.init("'\(text.abbreviated)' has the scheme '\(schemeText.abbreviated)': a server is "
                                  + "nats:// or tls://"))
        }
        var authority = text[separator.upperBound...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            // A lone '/' after the authority is what many write; anything more is a path, a query or a fragment.
            guard authority[end...] == "/" else {
                return .failure(.init("'\(text.abbreviated)' has a path, query or fragment: a server is "
                                      + "\(scheme.rawValue)://HOST[:PORT]"))
            }
            authority = authority[..<end]
        }
        // The message does not repeat the URL: what it carries is a secret.
        guard !authority.contains("@") else {
            return .failure(.init("a \(scheme.rawValue):// URL carries a user or password: name a file with "
                                  + "Credentials= (or NKeySeedFile=) instead"))
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(.init("'\(text.abbreviated)' has an unclosed '[' before its IPv6 address"))
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    return .failure(.init("'\(text.abbreviated)' has '\(String(rest).abbreviated)' after its IPv6 "
                                          + "address"))
                }
                portText = rest.dropFirst()
            }
            guard IPv6.parse(host) != nil else {
                return .failure(.init("'\(text.abbreviated)' has '\(String(host).abbreviated)' in brackets, not an "
                                      + "IPv6 address"))
            }
        } else {
            let colons = authority.count { $0 == ":" }
            guard colons <= 1 else {
                return .failure(.init("'\(text.abbreviated)' has an IPv6 address without brackets: write "
                                      + "\(scheme.rawValue)://[ADDRESS]:PORT"))
            }
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty else { return .failure(.init("'\(text.abbreviated)' has no host")) }
            if let problem = hostProblem(host) { return .failure(.init("'\(text.abbreviated)' \(problem)")) }
        }
        var port = ClusterSettings.defaultPort
        if let portText {
            guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(portText), (1...65535).contains(number) else {
                return .failure(.init("'\(text.abbreviated)' has the port '\(String(portText).abbreviated)': a "
                                      + "port is a number from 1 to 65535"))
            }
            port = number
        }
        return .success((scheme, String(host), port))
    }

    /// What is wrong with a host that is not in brackets, as a phrase; nil for a host name or an IPv4 address. A
    /// host of digits and dots is an address, four numbers to 255; a name has labels of 1 to 63 letters, digits,
    /// '-' and '_' (container names have it), 253 bytes in all.
    static func hostProblem(_ host: Substring) -> String? {
        if host.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }) {
            return IPv4.parse(host) == nil ? "has '\(String(host).abbreviated)', not an IPv4 address" : nil
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard host.utf8.count <= 253, labels.allSatisfy({ label in
            !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }) else {
            return "has the host '\(String(host).abbreviated)': a host name has dot-separated labels of letters, "
                + "digits, '-' and '_'"
        }
        return nil
    }

    /// True for `localhost`, an IPv4 address in 127.0.0.0/8, and the IPv6 loopback `::1` or an IPv4 loopback
    /// address mapped into IPv6 (`::ffff:127.0.0.1`).
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        if let address = IPv4.parse(Substring(host)) { return address[0] == 127 }
        guard let groups = IPv6.parse(Substring(host)) else { return false }
        if groups == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
        return groups[0..<5].allSatisfy { $0 == 0 } && groups[5] == 0xFFFF && groups[6] >> 8 == 127
    }
}

/// Dotted-quad IPv4 addresses, strictly: four decimal numbers to 255 without leading zeros.
enum IPv4 {
    /// The four bytes of `text`, nil when it is not a dotted quad.
    static func parse(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 3, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }
}

/// Textual IPv6 addresses (RFC 4291 2.2): eight groups of 1 to 4 hex digits, one `::` for a run of zero groups, the
/// last 32 bits perhaps as a dotted quad. No zone (`%eth0`).
enum IPv6 {
    /// The eight groups of `text`, nil when it is not an IPv6 address.
    static func parse(_ text: Substring) -> [UInt16]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        guard let gap = text.firstRange(of: "::") else {
            guard let all = groups(text, last: true), all.count == 8 else { return nil }
            return all
        }
        let rest = text[gap.upperBound...]
        guard !rest.contains("::"), !text[..<gap.lowerBound].hasSuffix(":"), !rest.hasPrefix(":"),
              let head = groups(text[..<gap.lowerBound], last: false), let tail = groups(rest, last: true),
              head.count + tail.count <= 7 else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// The groups of one side of `::` (empty for an empty side); a dotted quad is allowed at the end of the address.
    private static func groups(_ text: Substring, last: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if last && index == parts.count - 1 && part.contains(".") {
                guard let quad = IPv4.parse(part) else { return nil }
                groups += [UInt16(quad[0]) << 8 | UInt16(quad[1]), UInt16(quad[2]) << 8 | UInt16(quad[3])]
                continue
            }
            guard !part.isEmpty, part.utf8.count <= 4, let value = UInt16(part, radix: 16),
                  part.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0)
                                         || (0x61...0x66).contains($0) }) else { return nil }
            groups.append(value)
        }
        return groups
    }
}
