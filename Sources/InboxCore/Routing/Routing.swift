/// Where an arrival goes, decided once its type is known: the one place that merges the Inbox it was dropped in
/// (`[Inbox] Handler=`), a sender's choice of handler (`user.inbox.handler`, set by `inboxctl open --with`) and rank
/// selection by type and name. The system layer carries it out; `inboxctl handlers`, `info` and `open` ask the same.
public enum Routing {
    /// A sender's request for a handler, as read from the file's metadata.
    public struct Request: Sendable, Hashable {
        public var handler: String
        /// The sender asked to deliver even if the handler does not claim the type (`--force`).
        public var override: Bool
        /// The file's owner is root or the agent's own user, who could run the handler anyway.
        public var trusted: Bool

        public init(handler: String, override: Bool, trusted: Bool) {
            self.handler = handler
            self.override = override
            self.trusted = trusted
        }
    }

    /// A drop Inbox bound to a handler (`[Inbox] Path= Handler=` in inboxd.conf).
    public struct Binding: Sendable, Hashable {
        /// The Inbox's path, for messages.
        public var inbox: String
        public var handler: String

        public init(inbox: String, handler: String) {
            self.inbox = inbox
            self.handler = handler
        }
    }

    /// What the choice depends on: the file's type, its name (only document types with NamePatterns= look at it)
    /// and the binding of the Inbox it came from.
    public struct Subject: Sendable, Hashable {
        public var type: String
        public var name: String?
        public var binding: Binding?

        public init(type: String, name: String? = nil, binding: Binding? = nil) {
            self.type = type
            self.name = name
            self.binding = binding
        }
    }

    public enum Decision: Equatable, Sendable {
        /// Deliver to `handler`. `tiedWith` lists the candidates when a tie in preference, rank and distance was
        /// broken by identifier (worth a notice).
        case deliver(handler: String, chosenBy: Delivery.ChosenBy, tiedWith: [String] = [])
        /// No handler for the type, the one its sender chose (`requested`) is not registered (yet), or the handler its
        /// Inbox is bound to is not registered or does not take the file (`because`, a sentence): the file waits in
        /// unhandled/ until the registrations change.
        case park(requested: String?, because: String? = nil)
        /// Refused, with the reason for the journal and the failure attribute.
        case reject(reason: String)
    }

    /// The ranked candidates for a file, as it would be routed without a sender's request: with a binding, only the
    /// bound handler, and only if it claims the file (its reason says so either way); else every handler that claims
    /// the type or the name (`HandlerSelector`).
    public static func select(_ subject: Subject, index: SelectionIndex, database: TypeDatabase,
                              preferences: HandlerPreferences, ranking: HandlerSelector.Ranking = .all,
                              role: HandlerRole? = nil) -> Selection {
        guard let binding = subject.binding else {
            return HandlerSelector.select(type: subject.type, name: subject.name, index: index, database: database,
                                          preferences: preferences, ranking: ranking, role: role)
        }
        let bound = "Inbox \(binding.inbox) is bound to \(binding.handler)"
        guard let registration = index.registration(binding.handler) else {
            return Selection(candidates: [], reason: "\(bound), which is not registered", tieBroken: false)
        }
        let selection = HandlerSelector.select(type: subject.type, name: subject.name, index: index, database: database,
                                               preferences: preferences, ranking: ranking, role: role,
                                               only: binding.handler)
        guard let chosen = selection.chosen else {
            let byName = index.patternClaims.contains { $0.registration == registration }
            let what = role.map { " as a \($0.name.lowercased())" } ?? ""
            return Selection(candidates: [], reason: "\(bound), which does not open \(subject.type)"
                             + (byName ? " by that name" : "") + what, tieBroken: false)
        }
        return Selection(candidates: [chosen], reason: "\(bound)"
                         + (chosen.namePattern.map { "; name matches \($0)" } ?? ""), tieBroken: false)
    }

    /// Decides where a file goes. An Inbox's binding comes first: only its handler may have the file, and a sender
    /// may not ask for another. A sender may pick any candidate for the file (the "Open In" list), never a Rank=None
    /// one; only a trusted sender may override the type check. Without a request, the best candidate wins.
    public static func decide(_ subject: Subject, request: Request?, index: SelectionIndex, database: TypeDatabase,
                              preferences: HandlerPreferences) -> Decision {
        if let binding = subject.binding, let request, request.handler != binding.handler {
            return .reject(reason: "refused: Inbox \(binding.inbox) is bound to \(binding.handler), and its sender asked "
                           + "for \(request.handler)")
        }
        if let request {
            guard index.registration(request.handler) != nil else {
                return .park(requested: request.handler)
            }
            if claims(request.handler, subject: subject, index: index, database: database) {
                return .deliver(handler: request.handler, chosenBy: .sender)
            }
            guard request.override else {
                return .reject(reason: "refused: \(request.handler) cannot open \(subject.type)")
            }
            guard request.trusted else {
                return .reject(reason: "refused: \(request.handler) cannot open \(subject.type), and only root or the "
                               + "agent's own user may override that")
            }
            return .deliver(handler: request.handler, chosenBy: .senderOverride)
        }
        let selection = select(subject, index: index, database: database, preferences: preferences, ranking: .best)
        guard let chosen = selection.chosen else {
            return .park(requested: nil, because: subject.binding != nil ? selection.reason : nil)
        }
        let chosenBy: Delivery.ChosenBy = subject.binding != nil ? .inbox : chosen.namePattern != nil ? .namePattern : .rank
        return .deliver(handler: chosen.handler, chosenBy: chosenBy,
                        tiedWith: selection.tieBroken ? selection.candidates.map(\.handler) : [])
    }

    /// True if one of the handler's document types claims the file: its type or one it conforms to, and its name
    /// where the document type has NamePatterns= (Rank=None never does).
    public static func claims(_ handler: String, subject: Subject, index: SelectionIndex, database: TypeDatabase) -> Bool {
        HandlerSelector.select(type: subject.type, name: subject.name, index: index, database: database,
                               preferences: HandlerPreferences(), ranking: .best, only: handler).chosen != nil
    }
}
