import InboxCore

/// Takes each arrival from its type to where it goes, through owners that each have one job and their own state:
/// `ArrivalTyping` leases the file and gives its type and the decision (`Routing`, InboxCore), `Placement` moves it
/// (into the chosen handler's container Inbox, queued with the dispatcher, or into unhandled/; `Quarantine`:
/// failed/), and `MoveRetries` waits out a move that failed for a reason that passes, or a sender still writing the
/// file. The router keeps nothing between calls: what each step found is passed on as a value. A move runs on the
/// `MoveWorker`'s thread: the routing then goes on when its outcome is back on the loop, and the arrival's file stays
/// open until then (`route` says so; the router closes it).
final class Router {
    /// Whether a routing ended with the file waiting for a retry (its retries go on) or not (they end), or goes on
    /// once its move is done.
    private enum Routed { case settled, waiting, moving }

    private let quarantine: Quarantine
    private let typing: ArrivalTyping
    private let placement: Placement
    private let retries: MoveRetries
    private let mover: MoveWorker
    /// The Inbox bounds; nil when none is set (nothing is counted, no attribute written).
    var quotas: InboxQuotas? {
        get { placement.quotas }
        set { placement.quotas = newValue }
    }
    var catalog: HandlerCatalog { typing.catalog }

    /// Moves in flight were done: what they queued can start, and intake may take more.
    var movesSettled: () -> Void = {}

    /// `threaded`: moves run on the worker thread (the agent); without, on the loop at once (tests that need each
    /// routing done when its call returns).
    init(loop: EventLoop, logger: Logger, state: StateDirectories, quarantine: Quarantine, inspector: TypeInspector,
         reader: ArrivalReader, dispatcher: DeliveryHandoff, catalog: HandlerCatalog, threaded: Bool = false) {
        self.quarantine = quarantine
        mover = MoveWorker(loop: loop, logger: logger, threaded: threaded)
        typing = ArrivalTyping(logger: logger, inspector: inspector, catalog: catalog)
        placement = Placement(logger: logger, state: state, quarantine: quarantine, handoff: dispatcher, mover: mover,
                              catalog: catalog)
        retries = MoveRetries(loop: loop, logger: logger, state: state, quarantine: quarantine, reader: reader)
        retries.route = { [unowned self, unowned dispatcher] arrival in
            let kept = self.route(arrival)
            // No intake batch ends after a timer: what was queued is launched here.
            dispatcher.launchReady()
            return kept
        }
        mover.settled = { [unowned self, unowned dispatcher] in
            dispatcher.launchReady()
            self.movesSettled()
        }
    }

    func use(_ catalog: HandlerCatalog) {
        typing.use(catalog)
        placement.use(catalog)
    }

    /// How many files wait for a retry of their move.
    var waitingCount: Int { retries.count }
    /// How many moves are in flight (on the worker, or waiting on the loop behind those).
    var movingCount: Int { mover.inFlight }

    /// Decides where an arrival goes and moves it there. True when the router keeps the arrival's file (its move is
    /// in flight) and closes it itself once done; false when the caller closes it.
    @discardableResult
    func route(_ arrival: Arrival) -> Bool {
        settle(arrival, take(arrival, lyingIn: nil))
    }

    /// Queues again a file found in a container Inbox as `name` (`Recovery`), typed and decided as it was when first
    /// routed: if the decision is its container's handler, it is queued where it lies, chosen as it was; otherwise
    /// (its handler is no longer registered, or no longer the choice) the decision is carried out, as for any file
    /// the agent holds.
    @discardableResult
    func requeue(_ arrival: Arrival, named name: String, in container: Container) -> Bool {
        settle(arrival, take(arrival, lyingIn: (container, name)))
    }

    /// What a routing's end leaves to do: a settled file's retries end. Whether the file is kept open (`.moving`).
    private func settle(_ arrival: Arrival, _ routed: Routed) -> Bool {
        switch routed {
        case .settled: retries.forget(arrival.name, in: arrival.directory)
        case .waiting: break
        case .moving: return true
        }
        return false
    }

    /// The one path of every file: bounds, lease and type, decision, then the decision carried out (or, for a file
    /// found in its handler's container, left where it lies).
    private func take(_ arrival: Arrival, lyingIn placed: (container: Container, name: String)?) -> Routed {
        if arrival.origin == .dropped, let reason = quotas?.refusal(for: arrival) {
            quarantine.reject(arrival, reason: reason)
            return .settled
        }
        switch typing.type(arrival) {
        case .busy:
            return retries.waitForWriter(arrival) ? .waiting : .settled
        case .unsniffable(let reason):
            quarantine.reject(arrival, reason: reason)
            return .settled
        case .typed(let typed):
            if let placed, case .deliver(placed.container.handler, let chosenBy, _) = typed.decision {
                placement.requeue(arrival, named: placed.name, in: placed.container, chosenBy: chosenBy,
                                  type: typed.type)
                return .settled
            }
            return carryOut(typed, for: arrival)
        }
    }

    /// Carries out the decision: the move, and what a failed move leaves to wait for.
    /// The move's outcome may come after this returns (`.moving`): what it leaves to do is then done in its
    /// continuation, and the arrival's file closed there.
    private func carryOut(_ typed: ArrivalTyping.Typed, for arrival: Arrival) -> Routed {
        var handler: String?
        var ended: Routed?
        var returned = false
        let then: (Placement.Placed) -> Void = { [unowned self] placed in
            let routed = self.followUp(placed, of: arrival, handler: handler)
            guard returned else { return ended = routed }
            _ = self.settle(arrival, routed)
            arrival.file.descriptor.close()
        }
        switch typed.decision {
        case .deliver(let chosen, let chosenBy, _):
            handler = chosen
            placement.deliver(arrival, to: chosen, chosenBy: chosenBy, type: typed.type, leased: typed.leased,
                              binding: typed.binding, then: then)
        case .park(let requested, let reason):
            placement.park(arrival, type: typed.type, requested: requested, reason: reason, binding: typed.binding,
                           then: then)
        case .reject(let reason):
            quarantine.reject(arrival, reason: reason, contentType: typed.type.identifier,
                              requested: arrival.metadata.handler)
            return .settled
        }
        returned = true
        return ended ?? .moving
    }

    /// What a placement leaves to wait for.
    private func followUp(_ placed: Placement.Placed, of arrival: Arrival, handler: String?) -> Routed {
        switch placed {
        case .done:
            return .settled
        case .cannotMove(let error, let target):
            return retries.cannotMove(arrival, error, into: target, handler: handler) ? .waiting : .settled
        case .staged(let name, let error, let target):
            retries.cannotMoveOn(arrival, staged: name, error, into: target)
            return .settled
        }
    }
}
