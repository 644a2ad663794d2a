import InboxCore

/// The files that wait in pending/ for a person to choose their handler (`ChooseHandler=ask`): which Inbox asks and
/// how long (`HandlerChoice.Inboxes`), what the core decides for a file (`HandlerChoice.decide`), a watch on pending/
/// for the choice `inboxctl choose` writes on a file (`user.inboxd.choice`, seen as IN_ATTRIB, inotify(7)), and one
/// timer armed for the first deadline of `ChooseTimeoutSec=`. It moves nothing: a file it names again (`retake`) goes
/// through the router, which asks it again and carries out what it says.
final class PendingChoices {
    private let loop: EventLoop
    private let logger: Logger
    private let pending: Directory?
    let settings: HandlerChoice.Inboxes
    /// The names waiting with a deadline, in wall-clock microseconds.
    private var deadlines: [String: Int64] = [:]
    private var timer: EventSource?
    private var armedFor: Int64?
    private var inotify: Inotify?
    private var watchSource: EventSource?
    /// Takes a file of pending/ again, by name (the router decides and moves it): set by the agent.
    var retake: (String) -> Void = { _ in }

    init(loop: EventLoop, logger: Logger, pending: Directory?, settings: HandlerChoice.Inboxes) {
        self.loop = loop
        self.logger = logger
        self.pending = pending
        self.settings = settings
    }

    /// True if `arrival` lies in pending/.
    func holds(_ arrival: Arrival) -> Bool { pending != nil && arrival.directory === pending }

    /// Whether the router need ask at all: some Inbox asks, or the file lies in pending/ or carries a choice.
    func concerns(_ arrival: Arrival) -> Bool {
        settings.anyAsks || holds(arrival)
    }

    /// What the core decides for a typed arrival. `candidates` come from the catalog as the routing decision did.
    func decide(_ arrival: Arrival, routed: Routing.Decision, candidates: [String]) -> HandlerChoice.Decision {
        let attributes = ExtendedAttributes(arrival.file.descriptor)
        let recorded = arrival.origin == .held ? attributes.readString(AgentAttribute.inbox, limit: 4096) : nil
        var waiting: HandlerChoice.Waiting?
        let choice = arrival.origin == .held ? attributes.readString(AgentAttribute.choice, limit: 256) : nil
        if holds(arrival) {
            let since = attributes.readString(AgentAttribute.waiting, limit: 32).flatMap(Int64.init)
                ?? Int64(arrival.file.status.st_ctim.tv_sec) * 1_000_000
            waiting = HandlerChoice.Waiting(sinceUSec: since, choice: choice)
        } else if let choice {
            // Chosen already and placed (a container at start-up): only the choice counts.
            waiting = HandlerChoice.Waiting(sinceUSec: WallClock.now, choice: choice)
        }
        let inbox = arrival.origin == .dropped ? arrival.directory.path : recorded
        return HandlerChoice.decide(routed, candidates: candidates, settings: settings.settings(forInbox: inbox),
                                    waiting: waiting, nowUSec: WallClock.now)
    }

    /// A recorded choice that is no candidate: cleared, so that the next `inboxctl choose` is seen; logged once.
    func refuse(_ arrival: Arrival, choice: String, candidates: [String]) {
        _ = ExtendedAttributes(arrival.file.descriptor).remove(AgentAttribute.choice)
        logger.log(.warning, "\(arrival.shown): \(choice) is not among its candidates (\(candidates.joined(separator: ", "))); "
                   + "it waits for another choice", event: .pending, fields: [
            "INBOX_FILE": arrival.shown, "INBOX_DELIVERY_ID": arrival.id, "INBOX_REQUESTED_HANDLER": choice,
            "INBOX_CANDIDATES": candidates.joined(separator: " ")])
    }

    // MARK: Waiting and its deadlines

    /// `name` waits in pending/, until `deadline` (wall-clock microseconds) or for ever.
    func wait(_ name: String, until deadline: Int64?) {
        guard let deadline else {
            deadlines[name] = nil
            return
        }
        deadlines[name] = deadline
        arm()
    }

    /// `name` left pending/ (delivered, parked or refused).
    func forget(_ name: String) { deadlines[name] = nil }

    /// Arms the one timer for the earliest deadline, if it is not armed for it already.
    private func arm() {
        guard let first = deadlines.values.min() else {
            timer = nil
            armedFor = nil
            return
        }
        guard armedFor != first else { return }
        let delay = Duration.microseconds(max(0, first - WallClock.now))
        timer = try? loop.addTimer(after: delay, accuracy: .milliseconds(50)) { [unowned self] in self.fire() }
        armedFor = first
    }

    private func fire() {
        timer = nil
        armedFor = nil
        let now = WallClock.now
        let due = deadlines.filter { $0.value <= now }.map(\.key).sorted()
        for name in due {
            deadlines[name] = nil
            retake(name)
        }
        arm()
    }

    // MARK: The choice as it is made

    /// Watches pending/ for attribute changes: `inboxctl choose` records a choice on the file it names.
    func watch() {
        guard let pending else { return }
        do {
            let inotify = try Inotify()
            _ = try inotify.addWatch(pending.path, mask: [.attrib])
            watchSource = try loop.addIO(inotify.descriptor) { [unowned self] _ in self.readEvents() }
            self.inotify = inotify
        } catch {
            logger.log(.error, "Cannot watch \(pending.path) for choices: \(error); a choice is seen at the next start")
        }
    }

    private func readEvents() {
        guard let inotify, let events = try? inotify.read() else { return }
        var seen = Set<[UInt8]>()
        for event in events where !event.name.isEmpty && !FileNames.isHidden(event.name) && seen.insert(event.name).inserted {
            guard let name = String(validating: event.name, as: UTF8.self) else { continue }
            retake(name)
        }
    }
}
