/// An action run once, a little later, however often it is asked for meanwhile: the status written a quarter second
/// after a change, the registrations reloaded after an editor's save (write, rename, chmod), memory given back a
/// second after the agent fell idle. Asking again before it has run changes nothing; once it has run, the next ask
/// starts a new wait.
final class DeferredAction {
    private let loop: EventLoop
    private let delay: Duration
    private let accuracy: Duration
    private var timer: EventSource?
    /// What runs; set by whoever wires it (its owner, once that is whole).
    var action: () -> Void = {}

    init(loop: EventLoop, after delay: Duration, accuracy: Duration) {
        self.loop = loop
        self.delay = delay
        self.accuracy = accuracy
    }

    /// Whether it waits to run.
    var isScheduled: Bool { timer != nil }

    /// Runs the action after the delay, unless it already waits to. A timer the loop cannot make (out of memory)
    /// leaves it unscheduled: the next ask tries again.
    func schedule() {
        guard timer == nil else { return }
        timer = try? loop.addTimer(after: delay, accuracy: accuracy) { [unowned self] in
            self.timer = nil
            self.action()
        }
    }
}
