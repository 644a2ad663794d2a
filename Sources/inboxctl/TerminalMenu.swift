import InboxCore
import InboxSystem

/// A numbered list on the terminal where one key picks a row: what `inboxctl choose`, `open` and `options` show when
/// no choice was given on the command line. Rows are keyed 1 to 9, then a to z without q; q, Escape, Ctrl-C and
/// Ctrl-D leave it without a choice. Keys are read in raw mode (Terminal.RawMode) and parsed as the preview's pager
/// parses them (TerminalKey), so an arrow key's escape sequence is ignored rather than taken for Escape.
struct TerminalMenu {
    /// The line above the rows, without its newline.
    let title: String
    /// One row per choice, shown after its key, without newlines.
    let rows: [String]
    /// What leaving does, in the prompt: "leave it waiting" gives "Choose 1-2, or q to leave it waiting: ".
    let leave: String
    /// The line written after `q` when the menu is left without a choice ("Left waiting.").
    let left: String

    /// The keys of the rows, in order: at most this many rows can be shown.
    static let keys: [Character] = Array("123456789abcdefghijklmnoprstuvwxyz")

    /// The rows shown: as many as there are keys.
    var shown: [String] { Array(rows.prefix(Self.keys.count)) }

    /// The menu as written before a key is read: the title, each row after its key, and the prompt.
    var text: String {
        var text = title + "\n"
        for (index, row) in shown.enumerated() { text += "  \(Self.keys[index])  \(row)\n" }
        return text + "Choose \(Self.range(shown.count)), or q to \(leave): "
    }

    /// "1-2", "1-9, a-c": the keys of `count` rows, as the prompt names them.
    static func range(_ count: Int) -> String {
        guard count > 1 else { return "1" }
        let digits = min(count, 9)
        var text = "1-\(digits)"
        if count > 9 {
            let last = keys[count - 1]
            text += count == 10 ? ", a" : ", a-\(last)"
        }
        return text
    }

    /// Writes the menu on standard output and waits for a key on standard input, a terminal in raw mode meanwhile:
    /// the index of the row picked, or nil when the menu was left (or standard input ended or is no terminal).
    func choose() -> Int? {
        let rows = shown
        guard !rows.isEmpty else { return nil }
        Inboxctl.write(text, to: 1)
        let input = FileDescriptor(rawValue: 0)
        guard let raw = Terminal.RawMode(input) else {
            Inboxctl.write("\n", to: 1)
            return nil
        }
        defer { raw.restore() }
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                (try? input.read(into: $0, retryingInterrupted: { Interruption.signal == 0 })) ?? -1
            }
            guard count > 0 else {
                Inboxctl.write("\r\n", to: 1)
                return nil
            }
            for key in TerminalKey.parse(Array(buffer[..<count])) {
                switch key {
                case .character("q"):
                    Inboxctl.write("q\r\n\(left)\r\n", to: 1)
                    return nil
                case .escape, .character("\u{03}"), .character("\u{04}"):
                    Inboxctl.write("\r\n\(left)\r\n", to: 1)
                    return nil
                case .character(let character):
                    guard let index = Self.keys.firstIndex(of: character), index < rows.count else { continue }
                    Inboxctl.write("\(character)\r\n", to: 1)
                    return index
                default:
                    continue
                }
            }
        }
    }

    /// Whether standard input and output are both terminals: only then is there a menu to choose from.
    static var available: Bool {
        Terminal.isTerminal(FileDescriptor(rawValue: 0)) && Terminal.isTerminal(FileDescriptor(rawValue: 1))
    }
}
