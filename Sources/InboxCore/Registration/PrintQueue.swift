/// `Print=DEST` in a registration's [Handler]: the CUPS destination each delivery is printed on, instead of a program
/// of the handler's own (a print hot folder). DEST is a printer or class, `NAME` or `NAME/INSTANCE`, as `lp -d` takes
/// it; the rules of its characters are CUPS's own (lpadmin(8): printable characters but space, tab, `/`, `\`, `?`,
/// `'`, `"` and `#`; at most 127 bytes).
public struct PrintQueue: Sendable, Hashable, CustomStringConvertible {
    /// The printer or class.
    public let name: String
    /// The lpoptions instance, if one is named.
    public let instance: String?

    /// The longest name CUPS gives a queue.
    public static let maximumLength = 127

    /// Why a Print= value names no destination.
    public struct ParseError: Error, Sendable, Hashable {
        public let message: String
    }

    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= Self.maximumLength && $0.utf8.allSatisfy(Self.isNameByte) })
        else {
            throw ParseError(message: "invalid destination '\(text.abbreviated)' in Print=: NAME or NAME/INSTANCE, each "
                             + "of at most \(Self.maximumLength) printable characters but space, '/', '\\', '?', "
                             + "quotes and '#'")
        }
        name = parts[0]
        instance = parts.count > 1 ? parts[1] : nil
    }

    /// `NAME` or `NAME/INSTANCE`: what `lp -d` and `inboxctl print --printer` take.
    public var description: String { instance.map { name + "/" + $0 } ?? name }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && !"/\\?'\"#".utf8.contains(byte)
    }
}
