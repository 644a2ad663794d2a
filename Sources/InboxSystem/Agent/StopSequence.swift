import Glibc
import InboxCore

/// The agent's stop (SIGTERM, SIGINT, a lost sniffer), in order and bounded, so that no process the agent started is
/// left for the service manager to kill:
///
/// ```
///  0            running handlers (launched, %F batches, resident deliveries) are left to finish; nothing new starts
///               (files waiting for a batch or an instance stay for the next start); resident instances with nothing
///               in flight get end of file now (SIGTERM 1 s later, SIGKILL 1 s after that), busy ones once they have
///               answered
///  timeout      what still runs gets SIGTERM: handlers' process groups and every resident instance
///  timeout + 3s SIGKILL to all of them
///  all reaped   what handlers left running (daemons inherited as a subreaper, processes of their own identities)
///               is killed and reaped
///  timeout + 5s the end in any case: what SIGKILL has not ended by now is named in an error and left
/// ```
///
/// `finished` is called once, when nothing is left (or at the last step); the agent then stops its content sniffer
/// (killed and reaped) and exits.
final class StopSequence {
    private let loop: EventLoop
    private let logger: Logger
    private let dispatcher: Dispatcher
    private let launchers: HandlerLaunchers
    private var resident: ResidentLauncher { launchers.resident }
    private var processes: ProcessLauncher { launchers.processes }
    /// The identities of handlers' containers, whose processes are all leftovers once no handler runs.
    private let handlerUIDs: () -> Set<UInt32>
    private var timer: EventSource?
    private var deliveriesEnded = false
    private var instancesEnded = false
    private var sweeping = false
    private var done = false
    /// Nothing the agent started is left; the agent may exit.
    var finished: () -> Void = {}

    /// How long after SIGTERM the stragglers get SIGKILL, and how long after that the agent waits for them to go.
    static let killDelay = Duration.seconds(3)
    static let reapBound = Duration.seconds(2)

    init(loop: EventLoop, logger: Logger, dispatcher: Dispatcher, launchers: HandlerLaunchers,
         handlerUIDs: @escaping () -> Set<UInt32>) {
        self.loop = loop
        self.logger = logger
        self.dispatcher = dispatcher
        self.launchers = launchers
        self.handlerUIDs = handlerUIDs
    }

    /// Starts the stop; `timeout` is how long running handlers have to finish.
    func begin(timeout: Duration) {
        dispatcher.drained = { [unowned self] in
            self.deliveriesEnded = true
            self.sweepWhenEnded()
        }
        resident.ended = { [unowned self] in
            self.instancesEnded = true
            self.sweepWhenEnded()
        }
        // Instances first, so that a busy one's stop is logged as the agent's, not as its delivery's time-out.
        timer = try? loop.addTimer(after: timeout) { [unowned self] in
            self.resident.terminateAll(SIGTERM)
            self.dispatcher.stopRunning(.terminate)
            self.timer = try? self.loop.addTimer(after: Self.killDelay) { [unowned self] in
                self.resident.terminateAll(SIGKILL)
                self.dispatcher.stopRunning(.kill)
                self.timer = try? self.loop.addTimer(after: Self.reapBound) { [unowned self] in self.giveUp() }
            }
        }
        dispatcher.drain()
        launchers.batches.drain()
        resident.drain()
    }

    private func sweepWhenEnded() {
        guard deliveriesEnded && instancesEnded && !sweeping else { return }
        sweeping = true
        processes.endLeftovers(uids: handlerUIDs()) { [unowned self] in self.finish() }
    }

    /// The last step: whatever did not end after SIGKILL (a process in uninterruptible sleep) is left to the service
    /// manager, said so, rather than keep the agent from stopping past its bound.
    private func giveUp() {
        guard !done else { return }
        let left = Leftovers.children().filter { !processes.isOwnChild($0) }
        logger.log(.error, "Stopping with \(left.count) process(es) that did not end after SIGKILL: "
                   + left.map(String.init).joined(separator: " "))
        finish()
    }

    private func finish() {
        guard !done else { return }
        done = true
        timer = nil
        finished()
    }
}
