/// A sender's choice of handler (`user.inbox.handler`, set by `inboxctl open --with`), checked against the
/// registrations like the "Open In" list: a sender may pick any candidate for the file's type, and only a trusted
/// sender (root, or the agent's own user) may override the type check.
public enum HandlerRequest {
    public enum Decision: Equatable, Sendable {
        /// Deliver to this handler; `overridden` when it does not claim the type.
        case deliver(handler: String, overridden: Bool)
        /// No registration has that identifier (yet): the file waits in unhandled/ for one.
        case notRegistered
        /// Refused, with the reason for the journal and the failure attribute.
        case refused(String)
    }

    /// Decides a request for `handler` for a file of `type`.
    /// - Parameters:
    ///   - override: the sender asked to deliver even if the handler does not claim the type (`--force`).
    ///   - trusted: the file's owner is root or the agent's own user, who could run the handler anyway.
    public static func decide(handler: String, override: Bool, trusted: Bool, type: String, index: SelectionIndex,
                              database: TypeDatabase) -> Decision {
        guard index.registration(handler) != nil else { return .notRegistered }
        if claims(handler, type: type, index: index, database: database) {
            return .deliver(handler: handler, overridden: false)
        }
        guard override else { return .refused("\(handler) cannot open \(type)") }
        guard trusted else {
            return .refused("\(handler) cannot open \(type), and only root or the agent's own user may override that")
        }
        return .deliver(handler: handler, overridden: true)
    }

    /// True if one of the handler's document types claims the type or one it conforms to (Rank=None never does).
    public static func claims(_ handler: String, type: String, index: SelectionIndex, database: TypeDatabase) -> Bool {
        guard let registration = index.registration(handler) else { return false }
        return database.ancestorsByDistance(of: type).contains { ancestor in
            index.claims(on: ancestor.identifier).contains { $0.registration == registration }
        }
    }
}
