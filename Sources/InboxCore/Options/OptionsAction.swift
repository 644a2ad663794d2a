/// One action of the options menu (`inboxctl options`, docs/design.md, The options menu), as `--do ACTION[=ARG]` names
/// it: `quicklook`, `open=ID`, `print[=DEST]`, `copy[=DIR]`, `send=INBOX`. Whether it applies to a file is inboxctl's
/// to say, from the menu it builds for that file.
public enum OptionsAction: Sendable, Equatable {
    /// Quick Look: what `inboxctl preview FILE` shows.
    case quickLook
    /// Open in the handler `handler`: what `inboxctl open FILE --with ID` does.
    case open(handler: String)
    /// Print on `destination`, else on the destination `--printer` names or lp would use.
    case print(destination: String?)
    /// Copy into `directory`, else into `--to` or onto the desktop's clipboard.
    case copy(directory: String?)
    /// Send into the drop Inbox `inbox`.
    case send(inbox: String)

    /// The action's kinds in menu order, as `--do` spells them.
    public static let kinds = ["quicklook", "open", "print", "copy", "send"]

    /// The action `--do` names; a usage error for an unknown kind, an argument where none is taken, or a missing one.
    public static func parse(_ word: String) throws(UsageError) -> OptionsAction {
        let kind: String, argument: String?
        if let equals = word.firstIndex(of: "=") {
            kind = String(word[..<equals])
            argument = String(word[word.index(after: equals)...])
        } else {
            kind = word
            argument = nil
        }
        if argument == "" { throw UsageError(message: "--do \(kind)= has nothing after '='", token: word) }
        switch kind {
        case "quicklook":
            guard argument == nil else { throw UsageError(message: "--do quicklook takes no argument", token: word) }
            return .quickLook
        case "open":
            guard let argument else { throw UsageError(message: "--do open needs a handler: --do open=ID", token: word) }
            guard HandlerIdentifier.isValid(argument) else {
                throw UsageError(message: "invalid handler identifier '\(argument)'", token: argument)
            }
            return .open(handler: argument)
        case "print": return .print(destination: argument)
        case "copy": return .copy(directory: argument)
        case "send":
            guard let argument else { throw UsageError(message: "--do send needs an Inbox: --do send=INBOX", token: word) }
            return .send(inbox: argument)
        default:
            let close = Spelling.closest(to: kind, among: kinds)
            throw UsageError(message: "unknown action '\(kind)' (one of \(kinds.joined(separator: ", ")))"
                                 + (close.map { "; did you mean '\($0)'?" } ?? ""), token: word, suggestion: close)
        }
    }

    /// Its kind, as `--do` spells it.
    public var kind: String {
        switch self {
        case .quickLook: "quicklook"
        case .open: "open"
        case .print: "print"
        case .copy: "copy"
        case .send: "send"
        }
    }

    /// The word `--do` takes for it: `open=com.example.viewer`, `print`, `copy=/tmp`.
    public var word: String {
        switch self {
        case .quickLook: "quicklook"
        case .open(let handler): "open=" + handler
        case .print(let destination): destination.map { "print=" + $0 } ?? "print"
        case .copy(let directory): directory.map { "copy=" + $0 } ?? "copy"
        case .send(let inbox): "send=" + inbox
        }
    }
}
