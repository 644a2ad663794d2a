import InboxSystem
import Synchronization

/// The signal that interrupted inboxctl, 0 if none: set by the handler (a lock-free atomic store is
/// async-signal-safe, signal-safety(7)).
private let caught = Atomic<CInt>(0)

/// SIGINT, SIGTERM and SIGHUP for commands that must clean up: a send stopped in the middle of a copy still removes
/// its hidden file, a preview still stops its viewer and removes its scratch directory.
enum Interruption {
    /// The signal caught so far, 0 if none.
    static var signal: CInt { caught.load(ordering: .relaxed) }

    /// Catches the three signals from now on. They interrupt a blocking read or write (no SA_RESTART).
    static func catchSignals() {
        let signals: [Signal] = [.interrupt, .terminate, .hangUp]
        Signals.handle(signals) { signal in caught.store(signal, ordering: .relaxed) }
        // A parent may have started us with them blocked (the mask is inherited across exec).
        Signals.unblock(signals)
    }
}
