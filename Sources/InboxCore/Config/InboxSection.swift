/// One `[Inbox]` section of inboxd.conf: a drop Inbox, watched like those of `[Agent] Inbox=`, and the handler every
/// file dropped there goes to (`Routing.Binding`).
public struct InboxSection: Sendable, Hashable {
    /// Path=: absolute, without a trailing '/'.
    public var path: String
    /// Handler=: the identifier of the handler the Inbox is bound to; nil: an ordinary drop Inbox.
    public var handler: String?
    /// ChooseHandler=, ChooseTimeoutSec=: over [Agent]'s for this Inbox.
    public var choice = HandlerChoice.Overrides()
    /// Where the section starts.
    public var location: SourceLocation
    /// Where Handler= is (for the warning when no such handler is registered).
    public var handlerLocation: SourceLocation?

    public init(path: String, handler: String?, location: SourceLocation, handlerLocation: SourceLocation? = nil) {
        self.path = path
        self.handler = handler
        self.location = location
        self.handlerLocation = handlerLocation
    }

    /// The binding, when the section names a handler.
    public var binding: Routing.Binding? { handler.map { Routing.Binding(inbox: path, handler: $0) } }

    /// A warning for each section bound to a handler that is not among `registered`: files dropped there wait in
    /// unhandled/ until it is. The nearest registered identifier is suggested.
    public static func unregisteredHandlers(_ sections: [InboxSection], registered: [String]) -> [Diagnostic] {
        let known = Set(registered)
        return sections.compactMap { section in
            guard let handler = section.handler, !known.contains(handler) else { return nil }
            let close = Spelling.closest(to: handler, among: registered.sorted())
            return Diagnostic(.warning, at: section.handlerLocation ?? section.location,
                              "Handler= names '\(handler)', which is not registered: files dropped in \(section.path) "
                              + "wait in unhandled/ until it is" + (close.map { "; did you mean '\($0)'?" } ?? ""))
        }
    }
}

extension ConfigurationParser {
    /// Every key `readInboxes` knows; keep in step with its switch.
    static let inboxKeys: Set<String> = ["Path", "Handler", "ChooseHandler", "ChooseTimeoutSec"]

    /// The [Inbox] sections: each needs one absolute Path=, which no other section (nor, as a warning, `[Agent]
    /// Inbox=`) names, and at most one Handler=, a valid identifier.
    static func readInboxes(_ sections: [INISection], agentEntries: [INIEntry],
                            sink: inout DiagnosticSink) -> [InboxSection] {
        var result: [InboxSection] = []
        var lineByPath: [String: Int] = [:]
        for section in sections {
            var path: (value: String, line: Int)?
            var handler: (value: String?, line: Int)?
            var choice = HandlerChoice.Overrides()
            var valid = true
            for entry in section.entries {
                switch entry.key {
                case "Path":
                    if let first = path {
                        sink.error(entry.line, "Path= given twice in this [Inbox] section (first at line \(first.line)): "
                                   + "an [Inbox] section is one Inbox")
                        valid = false
                    } else if let absolute = absolutePath(entry, sink: &sink) {
                        path = (normalized(absolute), entry.line)
                    } else {
                        valid = false
                    }
                case "Handler":
                    if let first = handler {
                        sink.error(entry.line, "Handler= given twice in this [Inbox] section (first at line "
                                   + "\(first.line)): an Inbox is bound to one handler")
                        valid = false
                    } else if entry.value.isEmpty {
                        handler = (nil, entry.line)
                    } else if IdentifierSyntax.isValid(entry.value) {
                        handler = (entry.value, entry.line)
                    } else {
                        sink.error(entry.line, "invalid Handler= '\(entry.value.abbreviated)': a handler identifier has "
                                   + "letters, digits, '.' and '-'")
                        valid = false
                    }
                case let key where choiceKeys.contains(key):
                    let errors = sink.diagnostics.filter(\.isError).count
                    parseChoice(entry, into: &choice, sink: &sink)
                    if sink.diagnostics.filter(\.isError).count > errors { valid = false }
                default:
                    sink.unknownKey(entry, in: "Inbox", known: inboxKeys)
                }
            }
            guard let path else {
                if valid { sink.error(section.line, "[Inbox] without Path=") }
                continue
            }
            if let earlier = lineByPath[path.value] {
                sink.error(path.line, "Inbox \(path.value) is already configured by the [Inbox] section at line \(earlier)")
                continue
            }
            lineByPath[path.value] = section.line
            guard valid else { continue }
            var inbox = InboxSection(path: path.value, handler: handler?.value, location: sink.location(section.line),
                                     handlerLocation: handler.map { sink.location($0.line) })
            inbox.choice = choice
            result.append(inbox)
        }
        for entry in agentEntries where entry.key == "Inbox" && !entry.value.isEmpty {
            if let line = lineByPath[normalized(entry.value)] {
                sink.warning(entry.line, "Inbox \(entry.value) is also configured by the [Inbox] section at line "
                             + "\(line): it is watched once, as that section says")
            }
        }
        return result
    }

    /// The path without trailing slashes ("/" stays).
    public static func normalized(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }
}
