import InboxCore

/// Takes each arrival from its type to where it goes, through owners that each have one job and their own state:
/// `ArrivalTyping` leases the file and gives its type and the decision (`Routing`, InboxCore), `Placement` moves it
/// (into the chosen handler's container Inbox, queued with the dispatcher, or into unhandled/; `Quarantine`:
/// failed/), and `MoveRetries` waits out a move that failed for a reason that passes, or a sender still writing the
/// file, and checks a dropped package again until it is still. The router keeps nothing between calls: what each
/// step found is passed on as a value.
final class Router {
    /// Whether a routing ended with the file waiting for a retry (its retries go on) or not (they end).
    private enum Routed { case settled, waiting }

    private let quarantine: Quarantine
    private let logger: Logger
    private let typing: ArrivalTyping
    private let placement: Placement
    private let retries: MoveRetries
    /// Judges directories by the catalog's types: swapped with it.
    private let reader: ArrivalReader
    /// The Inbox bounds; nil when none is set (nothing is counted, no attribute written).
    var quotas: InboxQuotas? {
        get { placement.quotas }
        set { placement.quotas = newValue }
    }
    var catalog: HandlerCatalog { typing.catalog }
    /// The files that wait for a person's choice of handler (`ChooseHandler=ask`); nil: every choice is the rank's.
    var choices: PendingChoices?
    /// Where arrivals in a cluster Inbox go once decided (`[Cluster] Inboxes=`); nil when this host feeds no cluster.
    var publisher: ClusterPublisher?
    /// A file fetched from the cluster was not delivered here (its type is not its handler's, or it could not be
    /// placed): kept in failed/ with the reason, which its message is terminated with.
    var clusterRefused: (ClusterTicket, String) -> Void = { _, _ in }

    init(loop: EventLoop, logger: Logger, state: StateDirectories, quarantine: Quarantine, inspector: TypeInspector,
         reader: ArrivalReader, dispatcher: DeliveryHandoff, catalog: HandlerCatalog) {
        self.quarantine = quarantine
        self.logger = logger
        typing = ArrivalTyping(logger: logger, inspector: inspector, catalog: catalog)
        placement = Placement(logger: logger, state: state, quarantine: quarantine, handoff: dispatcher, catalog: catalog,
                              reader: reader)
        self.reader = reader
        reader.database = catalog.database
        retries = MoveRetries(loop: loop, logger: logger, state: state, quarantine: quarantine, reader: reader)
        retries.route = { [unowned self, unowned dispatcher] arrival in
            self.route(arrival)
            // No intake batch ends after a timer: what was queued is launched here.
            dispatcher.launchReady()
        }
    }

    func use(_ catalog: HandlerCatalog) {
        reader.database = catalog.database
        typing.use(catalog)
        placement.use(catalog)
    }

    /// How many files wait for a retry of their move.
    var waitingCount: Int { retries.count }

    /// Decides where an arrival goes and moves it there.
    func route(_ arrival: Arrival) {
        if take(arrival, lyingIn: nil) == .settled { retries.forget(arrival.name, in: arrival.directory) }
    }

    /// Queues again a file found in a container Inbox as `name` (`Recovery`), typed and decided as it was when first
    /// routed: if the decision is its container's handler, it is queued where it lies, chosen as it was; otherwise
    /// (its handler is no longer registered, or no longer the choice) the decision is carried out, as for any file
    /// the agent holds.
    func requeue(_ arrival: Arrival, named name: String, in container: Container) {
        if take(arrival, lyingIn: (container, name)) == .settled { retries.forget(arrival.name, in: arrival.directory) }
    }

    /// The one path of every file: bounds, lease and type, decision, then the decision carried out (or, for a file
    /// found in its handler's container, left where it lies).
    private func take(_ arrival: Arrival, lyingIn placed: (container: Container, name: String)?) -> Routed {
        // A package its check refused goes to failed/ whole; one still being written is checked again first.
        if case .refusedPackage(let refusal) = arrival.kind {
            if refusal.passes { return retries.waitForWriter(arrival, refusal: refusal.reason) ? .waiting : .settled }
            quarantine.reject(arrival, reason: refusal.reason)
            return .settled
        }
        // A dropped package is taken only once it is still (the settle rule); one the agent holds is the agent's.
        if arrival.origin == .dropped, let manifest = arrival.package {
            switch retries.settle(arrival, manifest) {
            case .still: break
            case .waiting: return .waiting
            case .refused: return .settled
            }
        }
        if arrival.origin == .dropped, let reason = quotas?.refusal(for: arrival) {
            quarantine.reject(arrival, reason: reason)
            return .settled
        }
        if let ticket = arrival.cluster { return takeFromCluster(arrival, ticket) }
        switch typing.type(arrival) {
        case .busy:
            return retries.waitForWriter(arrival) ? .waiting : .settled
        case .unsniffable(let reason):
            quarantine.reject(arrival, reason: reason)
            return .settled
        case .typed(var typed):
            if let choices, choices.concerns(arrival), case .deliver = typed.decision {
                switch choose(arrival, typed, choices, placed: placed != nil) {
                case .decided(let decision): typed.decision = decision
                case .waiting(let routed): return routed
                }
            } else if let choices, choices.holds(arrival), let name = String(validating: arrival.name, as: UTF8.self) {
                choices.forget(name)
            }
            if let placed, case .deliver(placed.container.handler, let chosenBy, _) = typed.decision {
                placement.requeue(arrival, named: placed.name, in: placed.container, chosenBy: chosenBy,
                                  type: typed.type)
                return .settled
            }
            return carryOut(typed, for: arrival)
        }
    }

    /// A file a worker fetched from the cluster: typed here again (its content sniffed, the mismatch rule applied),
    /// and delivered only to the handler its message came for, registered here, which must take its type; anything
    /// else keeps it in failed/ (never a handler the message named but this host's decision did not pick).
    private func takeFromCluster(_ arrival: Arrival, _ ticket: ClusterTicket) -> Routed {
        func refuse(_ reason: String, type: String? = nil) -> Routed {
            quarantine.reject(arrival, reason: reason, contentType: type, requested: ticket.handler)
            clusterRefused(ticket, reason)
            return .settled
        }
        switch typing.type(arrival) {
        case .busy:
            return refuse("it was being written while it was typed")
        case .unsniffable(let reason):
            return refuse(reason)
        case .typed(let typed):
            guard case .deliver(ticket.handler, let chosenBy, _) = typed.decision else {
                let decided = switch typed.decision {
                case .deliver(let other, _, _): "this host would give it to \(other)"
                case .park(_, let reason): reason ?? "no handler here takes it"
                case .reject(let reason): reason
                }
                return refuse("not delivered to \(ticket.handler) here, as its type is \(typed.type.identifier): "
                              + decided, type: typed.type.identifier)
            }
            switch placement.deliver(arrival, to: ticket.handler, chosenBy: chosenBy, type: typed.type,
                                     leased: typed.leased, binding: nil) {
            case .done: return .settled
            case .cannotMove(let error, let target): return refuse("cannot move it into \(target): \(error)")
            case .staged(_, let error, let target): return refuse("cannot move it into \(target): \(error)")
            case .changing(let reason): return refuse(reason)
            }
        }
    }

    private enum Chosen {
        case decided(Routing.Decision)
        /// It waits in pending/ (put there now, or still there: settled), or for a move into it to be tried again.
        case waiting(Routed)
    }

    /// Whether a person chooses the handler (`HandlerChoice.decide`): the file waits in pending/, or goes to the
    /// handler chosen, or to the best-ranked once nobody chose in time. A file found in a container goes on as decided
    /// unless a person's choice is recorded on it (it is queued for that handler again).
    private func choose(_ arrival: Arrival, _ typed: ArrivalTyping.Typed, _ choices: PendingChoices,
                        placed: Bool) -> Chosen {
        let candidates = typing.candidates(arrival, typed)
        let name = String(validating: arrival.name, as: UTF8.self)
        let decision = choices.decide(arrival, routed: typed.decision, candidates: candidates)
        if choices.holds(arrival), let name {
            if case .wait = decision {} else if case .refuse = decision {} else { choices.forget(name) }
        }
        switch decision {
        case .proceed:
            return .decided(typed.decision)
        case .deliver(let handler, let chosenBy):
            if chosenBy == .timeout {
                logger.log(.notice, "Nobody chose a handler for \(arrival.shown) in time (ChooseTimeoutSec=); "
                           + "delivering it to the best-ranked, \(handler)", fields: [
                    "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_HANDLER": handler,
                    "INBOX_CHOSEN_BY": chosenBy.rawValue, "INBOX_CANDIDATES": candidates.joined(separator: " ")])
            } else if choices.holds(arrival) {
                logger.log(.info, "Delivering \(arrival.shown) to \(handler), as chosen", fields: [
                    "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_HANDLER": handler,
                    "INBOX_CHOSEN_BY": chosenBy.rawValue, "INBOX_CANDIDATES": candidates.joined(separator: " ")])
            }
            return .decided(.deliver(handler: handler, chosenBy: chosenBy))
        case .wait(let candidates, let deadline):
            // One already handed to its handler stays its: it was decided before this Inbox asked.
            if placed { return .decided(typed.decision) }
            if choices.holds(arrival) {
                if let name { choices.wait(name, until: deadline) }
                return .waiting(.settled)
            }
            switch placement.hold(arrival, type: typed.type, candidates: candidates, binding: typed.binding) {
            case .held(let newName):
                choices.wait(newName, until: deadline)
                return .waiting(.settled)
            case .unplaced(.done):
                return .waiting(.settled)
            case .unplaced(.cannotMove(let error, let target)):
                return .waiting(retries.cannotMove(arrival, error, into: target, handler: nil) ? .waiting : .settled)
            case .unplaced(.staged(let staged, let error, let target)):
                retries.cannotMoveOn(arrival, staged: staged, error, into: target)
                return .waiting(.settled)
            case .unplaced(.changing(let reason)):
                return .waiting(retries.waitForWriter(arrival, refusal: reason) ? .waiting : .settled)
            }
        case .refuse(let choice, let candidates, let deadline):
            choices.refuse(arrival, choice: choice, candidates: candidates)
            if placed { return .decided(typed.decision) }
            if let name { choices.wait(name, until: deadline) }
            return .waiting(.settled)
        }
    }

    /// Carries out the decision: the move, and what a failed move leaves to wait for.
    private func carryOut(_ typed: ArrivalTyping.Typed, for arrival: Arrival) -> Routed {
        let placed: Placement.Placed
        var handler: String?
        switch typed.decision {
        case .deliver(let chosen, _, _) where publisher?.feeds(arrival) == true:
            handler = chosen
            guard let publisher else { return .settled }
            placed = placement.publish(arrival, to: chosen, type: typed.type, leased: typed.leased,
                                       binding: typed.binding, through: publisher)
        case .deliver(let chosen, let chosenBy, _):
            handler = chosen
            if arrival.isPackage, publisher?.serves(arrival) == true {
                logger.log(.notice, "\(arrival.shown) is a package document, which the cluster does not carry: "
                           + "delivered on this host, to \(chosen)", fields: [
                    "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_HANDLER": chosen])
            }
            placed = placement.deliver(arrival, to: chosen, chosenBy: chosenBy, type: typed.type, leased: typed.leased,
                                       binding: typed.binding)
        case .park(let requested, let reason):
            placed = placement.park(arrival, type: typed.type, requested: requested, reason: reason,
                                    binding: typed.binding)
        case .reject(let reason):
            quarantine.reject(arrival, reason: reason, contentType: typed.type.identifier,
                              requested: arrival.metadata.handler)
            return .settled
        }
        switch placed {
        case .done:
            return .settled
        case .cannotMove(let error, let target):
            return retries.cannotMove(arrival, error, into: target, handler: handler) ? .waiting : .settled
        case .staged(let name, let error, let target):
            retries.cannotMoveOn(arrival, staged: name, error, into: target)
            return .settled
        case .changing(let reason):
            return retries.waitForWriter(arrival, refusal: reason) ? .waiting : .settled
        }
    }
}
