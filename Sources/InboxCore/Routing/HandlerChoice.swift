/// Whether an arrival waits for a person to choose its handler, as AirDrop shows a list when several apps could
/// open a file (`ChooseHandler=ask` of inboxd.conf), and what becomes of a file that waits in pending/: delivered to
/// the handler a person chose (`inboxctl choose`), to the best-ranked candidate once `ChooseTimeoutSec=` has passed,
/// or still waiting. The system layer carries the decision out.
public enum HandlerChoice {
    /// ChooseHandler=: `rank` decides at once (the default); `ask` lets a person choose among several candidates.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case ask, rank
    }

    /// The settings of one drop Inbox.
    public struct Settings: Sendable, Hashable {
        public var mode: Mode
        /// ChooseTimeoutSec=: how long a file waits for a choice; nil: for ever.
        public var timeout: Duration?

        public init(mode: Mode = .rank, timeout: Duration? = nil) {
            self.mode = mode
            self.timeout = timeout
        }

        /// Today's behaviour: the rank decides.
        public static let rank = Settings()
    }

    /// A file that waits in pending/: when it started waiting (microseconds since the epoch) and the choice recorded
    /// on it since, if any.
    public struct Waiting: Sendable, Hashable {
        public var sinceUSec: Int64
        public var choice: String?

        public init(sinceUSec: Int64, choice: String? = nil) {
            self.sinceUSec = sinceUSec
            self.choice = choice
        }
    }

    public enum Decision: Equatable, Sendable {
        /// Nothing to choose: the routing decision stands (one candidate or none, a sender's or an Inbox's choice,
        /// or an Inbox that does not ask).
        case proceed
        /// Waits in pending/ for a person's choice among `candidates` (best first), until `deadlineUSec` (nil: for
        /// ever).
        case wait(candidates: [String], deadlineUSec: Int64?)
        /// Delivered to `handler`: the person's choice, or the best-ranked candidate after the timeout.
        case deliver(handler: String, chosenBy: Delivery.ChosenBy)
        /// The recorded choice is no candidate (the registrations changed since it was made, or it was written by
        /// hand): it is cleared and the file waits on, as `wait` says.
        case refuse(choice: String, candidates: [String], deadlineUSec: Int64?)
    }

    /// Decides for one file. `routed` is what `Routing.decide` said, `candidates` the ranked candidates (best first,
    /// `Routing.select`), `settings` those of the Inbox the file was dropped in, `waiting` what a file in pending/
    /// records (nil for an arrival that does not wait yet).
    public static func decide(_ routed: Routing.Decision, candidates: [String], settings: Settings,
                              waiting: Waiting?, nowUSec: Int64) -> Decision {
        // Only a choice the rank made is offered to a person: a sender's request and an Inbox's binding stand.
        guard case .deliver(_, let chosenBy, _) = routed, chosenBy == .rank || chosenBy == .namePattern else {
            return .proceed
        }
        guard let waiting else {
            guard settings.mode == .ask, candidates.count > 1 else { return .proceed }
            return .wait(candidates: candidates, deadlineUSec: deadline(from: nowUSec, settings.timeout))
        }
        // A choice made is honoured even if the Inbox asks no more, as long as the handler can still take the file.
        if let choice = waiting.choice {
            if candidates.contains(choice) { return .deliver(handler: choice, chosenBy: .person) }
            if candidates.count > 1 && settings.mode == .ask {
                return .refuse(choice: choice, candidates: candidates,
                               deadlineUSec: deadline(from: waiting.sinceUSec, settings.timeout))
            }
        }
        guard settings.mode == .ask, candidates.count > 1 else { return .proceed }
        let due = deadline(from: waiting.sinceUSec, settings.timeout)
        if let due, due <= nowUSec, let best = candidates.first { return .deliver(handler: best, chosenBy: .timeout) }
        return .wait(candidates: candidates, deadlineUSec: due)
    }

    private static func deadline(from start: Int64, _ timeout: Duration?) -> Int64? {
        guard let timeout else { return nil }
        let (seconds, attoseconds) = timeout.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        let (sum, overflow2) = start.addingReportingOverflow(product + attoseconds / 1_000_000_000_000)
        return overflow2 ? nil : sum
    }
}

extension HandlerChoice {
    /// What one section of inboxd.conf says: `[Agent]` for every Inbox, `[Inbox]` for its own; nil is unset.
    public struct Overrides: Sendable, Hashable {
        /// ChooseHandler=.
        public var mode: Mode?
        /// ChooseTimeoutSec=: `.some(nil)` is `infinity` given.
        public var timeout: Duration??

        public init(mode: Mode? = nil, timeout: Duration?? = nil) {
            self.mode = mode
            self.timeout = timeout
        }

        /// These settings over `base`.
        public func applied(to base: Settings) -> Settings {
            Settings(mode: mode ?? base.mode, timeout: timeout ?? base.timeout)
        }
    }

    /// The settings of every drop Inbox: `[Agent]`'s for all, an `[Inbox]` section's over them for its path.
    public struct Inboxes: Sendable, Hashable {
        public var common: Settings
        public var byInbox: [String: Settings]

        public init(common: Settings = .rank, byInbox: [String: Settings] = [:]) {
            self.common = common
            self.byInbox = byInbox
        }

        /// Some Inbox asks: only then does the router look further than the routing decision.
        public var anyAsks: Bool { common.mode == .ask || byInbox.values.contains { $0.mode == .ask } }

        /// The settings of the Inbox at `path` (without trailing '/').
        public func settings(forInbox path: String?) -> Settings {
            guard let path else { return common }
            return byInbox[path] ?? byInbox[ConfigurationParser.normalized(path)] ?? common
        }
    }
}

extension ConfigurationParser {
    /// The keys `parseChoice` reads, in `[Agent]` and `[Inbox]` alike.
    static let choiceKeys: Set<String> = ["ChooseHandler", "ChooseTimeoutSec"]

    /// ChooseHandler=ask|rank and ChooseTimeoutSec= (a time span, `infinity`: never); an empty value unsets.
    static func parseChoice(_ entry: INIEntry, into overrides: inout HandlerChoice.Overrides,
                            sink: inout DiagnosticSink) {
        switch entry.key {
        case "ChooseHandler":
            if entry.value.isEmpty {
                overrides.mode = nil
            } else if let mode = HandlerChoice.Mode(rawValue: entry.value) {
                overrides.mode = mode
            } else {
                sink.error(entry.line, "invalid ChooseHandler= '\(entry.value.abbreviated)': expected ask or rank")
            }
        default:
            guard !entry.value.isEmpty else {
                overrides.timeout = nil
                return
            }
            do {
                let span = try TimeSpan.parse(entry.value)
                if span == .zero {
                    sink.error(entry.line, "invalid ChooseTimeoutSec=: must be more than 0 (infinity: never)")
                } else {
                    overrides.timeout = .some(span)
                }
            } catch {
                sink.error(entry.line, "invalid ChooseTimeoutSec=: \(error.message)")
            }
        }
    }
}
