import Glibc
import InboxCore

/// Ends what handlers leave running, for every kind of launch. Each handler process the spawner starts (a launched
/// handler, a batch's, a resident instance) is known here from the moment it is watched until it exits; when one
/// exits, its process group goes with it, and what it started outside its group (a daemon, inherited by the agent as a
/// subreaper) goes too once nothing else of its identity runs. At start-up it stops what an earlier run left; at the
/// stop, everything that is left (`endLeftovers`). Which processes are leftovers is read from /proc (`Leftovers`).
final class Reaper {
    /// A handler process that runs: whose it is, and the uid it runs as.
    private struct Handler {
        let name: String
        let uid: UInt32
        /// The one delivery it was started for, if one (its journal entries name it).
        let deliveryID: String?
    }

    private let loop: EventLoop
    private let logger: Logger
    /// The agent's own children that are not handlers (its content sniffer): never taken for leftovers.
    private let ownChildren: () -> [pid_t]
    /// The agent's children, its own and those it inherited as a subreaper (`Leftovers.children`).
    private let children: () -> [pid_t]
    /// Every handler process that runs, by pid.
    private var running: [pid_t: Handler] = [:]
    /// Child sources that only reap orphans the agent inherited as a subreaper and killed.
    private var orphans: [pid_t: EventSource] = [:]
    /// Sweeping at the agent's stop (`endLeftovers`): called once no leftover is left.
    private var leftoversEnded: (() -> Void)?
    private var leftoverUIDs: Set<UInt32> = []
    private var sweepSource: EventSource?

    /// `children` is the agent's children from /proc; a process that is not only the agent (a test) names the ones
    /// its handlers left.
    init(loop: EventLoop, logger: Logger, ownChildren: @escaping () -> [pid_t],
         children: @escaping () -> [pid_t] = Leftovers.children) {
        self.loop = loop
        self.logger = logger
        self.ownChildren = ownChildren
        self.children = children
    }

    /// The agent's own children that are not handlers (its content sniffer).
    func isOwnChild(_ pid: pid_t) -> Bool { ownChildren().contains(pid) }

    /// Handler processes that run.
    var runningCount: Int { running.count }

    /// A handler process started and is watched: `handler` runs as `uid`.
    func track(_ pid: pid_t, handler: String, uid: UInt32, deliveryID: String?) {
        running[pid] = Handler(name: handler, uid: uid, deliveryID: deliveryID)
    }

    /// A handler process exited, from its child source (before sd-event reaps it, so its pid, and the id of the process
    /// group it leads, cannot be anyone else's yet): whatever it left running in its group goes with it, and, with no
    /// other process of its identity running, whatever it left outside the group.
    func exited(_ pid: pid_t) {
        guard let handler = running.removeValue(forKey: pid) else { return }
        Signals.send(.kill, toGroupOf: pid)
        killLeftovers(of: handler, pid: pid)
    }

    /// At start-up, before anything is relaunched: stops what an earlier run's handlers may still be running. After a
    /// crash PR_SET_PDEATHSIG has killed each handler, but not what it started (a child of a shell script, a daemon),
    /// which would go on working on a file while it is delivered again. Every process of an identity of its own
    /// (`uids`: the owners of the containers) is such a leftover. Processes of a named `User=`, or of the agent's own
    /// uid when it is not root, cannot be told from that user's others and are left alone: for those handlers only
    /// the direct child is sure to be gone (docs/design.md, Reliability).
    func stopEarlierRun(uids: Set<UInt32>) {
        let killed = Leftovers.kill(uids: uids)
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) that handlers of an earlier run left running",
                       fields: ["INBOX_KILLED": String(killed)])
        }
    }

    /// Stops what a finished handler left running once nothing else of its identity runs: with an identity of its
    /// own, every process of that uid; otherwise the orphans the agent inherited (as a subreaper) that run as its
    /// user. Another process of the same uid still running (another delivery, another instance) could have started
    /// any of them, so then nothing is killed now; it goes when the last one ends. The orphans are reaped through the
    /// event loop, whoever they belong to.
    private func killLeftovers(of handler: Handler, pid: pid_t) {
        // Anything a handler left running has an ancestor that is now the agent's child (it is a subreaper): with no
        // such child, nothing was left, and no /proc scan is needed.
        let tracked = Set(running.keys).union([pid]).union(ownChildren())
        let inherited = children().filter { !tracked.contains($0) }
        guard !inherited.isEmpty else { return }
        var killed = 0
        if !running.values.contains(where: { $0.uid == handler.uid }) {
            if DynamicIdentity.contains(handler.uid) {
                killed = Leftovers.kill(uid: handler.uid)
            } else {
                for orphan in inherited where Leftovers.realUID(of: orphan) == handler.uid {
                    if Signals.send(.kill, to: orphan) == nil { killed += 1 }
                }
            }
        }
        for orphan in inherited { reap(orphan: orphan) }
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) \(handler.name) left running",
                       fields: ["INBOX_HANDLER": handler.name, "INBOX_PID": String(pid),
                                "INBOX_DELIVERY_ID": handler.deliveryID, "INBOX_KILLED": String(killed)])
        }
    }

    private func reap(orphan pid: pid_t) {
        guard orphans[pid] == nil else { return }
        do throws(SystemError) {
            orphans[pid] = try loop.addChild(pid: pid) { [unowned self] _ in
                self.orphans[pid] = nil
                if self.orphans.isEmpty && self.leftoversEnded != nil { self.sweepSoon() }
            }
        } catch {
            // No source to wait with: it was sent SIGKILL, so the wait is short.
            _ = Signals.send(.kill, to: pid)
            _ = waitForExit(pid: pid)
        }
    }

    /// The agent stops and no handler runs any more: every process of the handlers' own identities (`uids`) is
    /// killed, and so is every child the agent has left but its own (`ownChildren`) and handler processes still
    /// running (resident instances reaped by their launcher): what handlers left running, inherited as a subreaper.
    /// Each is reaped, and what they leave in turn becomes the agent's child and goes the same way; `done` is called
    /// once there is nothing left.
    func endLeftovers(uids: Set<UInt32>, _ done: @escaping () -> Void) {
        leftoversEnded = done
        leftoverUIDs = uids
        sweepSoon()
    }

    /// The next round of `endLeftovers`, from the loop: a child source hands over its process before sd-event reaps
    /// it, so a round run inside one would take the ending process for a leftover.
    private func sweepSoon() {
        guard sweepSource == nil else { return }
        sweepSource = try? loop.addDefer { [unowned self] in
            self.sweepSource = nil
            self.sweep()
        }
        if sweepSource == nil { sweep() }
    }

    private func sweep() {
        guard let done = leftoversEnded else { return }
        var killed = Leftovers.kill(uids: leftoverUIDs)
        let own = Set(ownChildren()).union(running.keys)
        for pid in children() where !own.contains(pid) {
            if Signals.send(.kill, to: pid) == nil { killed += 1 }
            reap(orphan: pid)
        }
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) that handlers left running", fields: ["INBOX_KILLED": String(killed)])
        }
        if orphans.isEmpty {
            leftoversEnded = nil
            done()
        }
    }
}
