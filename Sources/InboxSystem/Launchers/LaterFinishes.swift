import InboxCore

/// Attempts whose end is reported from the event loop rather than inside the call that decided it: a launcher may not
/// call back into the dispatcher while the dispatcher is calling it (a start it refuses, a stop of one still waiting).
/// They are queued and finished together on the loop's next turn, in the order they came.
final class LaterFinishes<Attempt: AnyObject> {
    private let loop: EventLoop
    private let finish: (Attempt, DeliveryOutcome) -> Void
    private var due: [(Attempt, DeliveryOutcome)] = []
    private var source: EventSource?

    init(loop: EventLoop, finish: @escaping (Attempt, DeliveryOutcome) -> Void) {
        self.loop = loop
        self.finish = finish
    }

    /// Finishes `attempt` with `outcome` on the loop's next turn.
    func add(_ attempt: Attempt, _ outcome: DeliveryOutcome) {
        due.append((attempt, outcome))
        guard source == nil else { return }
        source = try? loop.addDefer { [unowned self] in
            self.source = nil
            let now = self.due
            self.due.removeAll()
            for (attempt, outcome) in now { self.finish(attempt, outcome) }
        }
    }

    /// Forgets a queued end: the caller reports it another way.
    func cancel(_ attempt: Attempt) {
        due.removeAll { $0.0 === attempt }
    }
}
