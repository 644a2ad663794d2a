/// Where an arrival goes, decided once its type is known: the one place that merges a sender's choice of handler
/// (`user.inbox.handler`, set by `inboxctl open --with`) with rank selection. The system layer carries it out.
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

    public enum Decision: Equatable, Sendable {
        /// Deliver to `handler`. `tiedWith` lists the candidates when a tie in preference, rank and distance was
        /// broken by identifier (worth a notice).
        case deliver(handler: String, chosenBy: Delivery.ChosenBy, tiedWith: [String] = [])
        /// No handler for the type, or the one its sender chose (`requested`) is not registered (yet): the file waits
        /// in unhandled/ until a registration for it appears.
        case park(requested: String?)
        /// Refused, with the reason for the journal and the failure attribute.
        case reject(reason: String)
    }

    /// Decides where a file of `type` goes. A sender may pick any candidate for the type (the "Open In" list), never a
    /// Rank=None one; only a trusted sender may override the type check. Without a request, the best candidate wins
    /// (HandlerSelector has the ranking).
    public static func decide(type: String, request: Request?, index: SelectionIndex, database: TypeDatabase,
                              preferences: HandlerPreferences) -> Decision {
        if let request {
            guard index.registration(request.handler) != nil else { return .park(requested: request.handler) }
            if claims(request.handler, type: type, index: index, database: database) {
                return .deliver(handler: request.handler, chosenBy: .sender)
            }
            guard request.override else { return .reject(reason: "refused: \(request.handler) cannot open \(type)") }
            guard request.trusted else {
                return .reject(reason: "refused: \(request.handler) cannot open \(type), and only root or the agent's own "
                               + "user may override that")
            }
            return .deliver(handler: request.handler, chosenBy: .senderOverride)
        }
        let selection = HandlerSelector.select(type: type, index: index, database: database, preferences: preferences,
                                               ranking: .best)
        guard let chosen = selection.chosen else { return .park(requested: nil) }
        return .deliver(handler: chosen.handler, chosenBy: .rank,
                        tiedWith: selection.tieBroken ? selection.candidates.map(\.handler) : [])
    }

    /// True if one of the handler's document types claims the type or one it conforms to (Rank=None never does).
    public static func claims(_ handler: String, type: String, index: SelectionIndex, database: TypeDatabase) -> Bool {
        guard let registration = index.registration(handler) else { return false }
        return database.ancestorsByDistance(of: type).contains { ancestor in
            index.claims(on: ancestor.identifier).contains { $0.registration == registration }
        }
    }
}
