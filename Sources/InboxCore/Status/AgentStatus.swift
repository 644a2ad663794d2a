/// What the agent is doing, as it writes it to `status.json` in its runtime directory and `inboxctl status` reads it
/// back: one schema, encoded and decoded here. Times are wall-clock microseconds since the epoch; ages are as of
/// `writtenAtUSec`.
public struct AgentStatus: Sendable, Hashable {
    /// The file's name in the runtime directory.
    public static let fileName = "status.json"

    /// One handler running for one delivery.
    public struct InFlight: Sendable, Hashable {
        public var handler: String
        public var file: String
        public var deliveryID: String
        public var attempt: Int
        public var pid: Int32
        public var ageUSec: Int64

        public init(handler: String, file: String, deliveryID: String, attempt: Int, pid: Int32, ageUSec: Int64) {
            self.handler = handler
            self.file = file
            self.deliveryID = deliveryID
            self.attempt = attempt
            self.pid = pid
            self.ageUSec = ageUSec
        }
    }

    /// One delivery waiting for its retry: its last attempt failed and the next is due at `nextAttemptUSec`.
    public struct Retrying: Sendable, Hashable {
        public var handler: String
        public var file: String
        public var deliveryID: String
        /// The attempt that failed.
        public var attempt: Int
        /// How it failed: "exited with status 75".
        public var reason: String
        public var nextAttemptUSec: Int64

        public init(handler: String, file: String, deliveryID: String, attempt: Int, reason: String, nextAttemptUSec: Int64) {
            self.handler = handler
            self.file = file
            self.deliveryID = deliveryID
            self.attempt = attempt
            self.reason = reason
            self.nextAttemptUSec = nextAttemptUSec
        }
    }

    /// One running instance of a resident handler (Activation=resident).
    public struct Instance: Sendable, Hashable {
        public var handler: String
        public var pid: Int32
        /// Deliveries sent to it and not answered yet.
        public var inFlight: Int
        /// Deliveries it answered.
        public var served: Int
        public var ageUSec: Int64
        /// It takes no more deliveries (idle, reloaded, timed out or the agent stops).
        public var stopping: Bool

        public init(handler: String, pid: Int32, inFlight: Int, served: Int, ageUSec: Int64, stopping: Bool = false) {
            self.handler = handler
            self.pid = pid
            self.inFlight = inFlight
            self.served = served
            self.ageUSec = ageUSec
            self.stopping = stopping
        }
    }

    /// The content sniffer child.
    public struct Sniffer: Sendable, Hashable {
        public var pid: Int32
        public var libmagic: String
        /// shared-mime-info magic rule sections the sniffer asks first, and how many bytes they read.
        public var ruleSections: Int
        public var rulesExtent: Int
        /// Files sniffed and their cost since the agent started, by which check answered.
        public var costs: SniffCosts

        public init(pid: Int32, libmagic: String, ruleSections: Int = 0, rulesExtent: Int = 0,
                    costs: SniffCosts = SniffCosts()) {
            self.pid = pid
            self.libmagic = libmagic
            self.ruleSections = ruleSections
            self.rulesExtent = rulesExtent
            self.costs = costs
        }
    }

    public var pid: Int32 = 0
    /// When the agent started; its counters (`metrics`) count from then.
    public var startedAtUSec: Int64 = 0
    /// starting, running, draining or stopped.
    public var phase: String = "starting"
    public var inboxes: [String] = []
    /// Inboxes of `inboxes` that are gone (deleted, moved away, unmounted): nothing is taken from them until they
    /// are back.
    public var missingInboxes: [String] = []
    public var stateDirectory: String = ""
    /// The handlers.d search path the agent loads, first wins by file name.
    public var handlerDirectories: [String] = []
    /// Inboxes on another mount than the state directory: their files are copied, not moved, and what is not a
    /// regular file is left in place.
    public var crossMountInboxes: [String] = []
    /// Entries that could not be moved aside, left where they were (`inboxctl list failed` names them).
    public var leftInPlace: Int = 0
    public var queued: Int = 0
    public var inFlight: [InFlight] = []
    /// Deliveries waiting for a retry, the soonest first (neither queued nor in flight).
    public var retrying: [Retrying] = []
    /// Resident handlers' instances, oldest first.
    public var instances: [Instance] = []
    public var failed: Int = 0
    public var unhandled: Int = 0
    /// Files waiting in pending/ for a person's choice of handler (`ChooseHandler=ask`).
    public var pending: Int = 0
    /// The Landlock ABI handlers are confined with; 0 without Landlock.
    public var landlockABI: Int = 0
    public var registrations: Int = 0
    public var registrationsLoadedAtUSec: Int64 = 0
    public var contentSniffing: Bool = true
    public var sniffer: Sniffer?
    /// KeepFailedSec=, KeepUnhandledSec=, the Inbox bounds and each bounded Inbox's use.
    public var limits = HeldFileLimitsStatus()
    /// What the service manager and journald did not read in time.
    public var stalls = ReaderStalls()
    /// Deliveries ended and attempts started by handler, queue latency and handler run time, since `startedAtUSec`.
    public var metrics = DeliveryMetrics()
    public var writtenAtUSec: Int64 = 0
    /// The cluster this agent takes part in; nil without a `[Cluster]`.
    public var cluster: ClusterStatus?

    public init() {}

    /// The status file's text: one JSON object and a newline.
    public func json() -> String {
        let inFlight = inFlight.map { run in
            "{\"handler\":\(JSON.quote(run.handler)),\"file\":\(JSON.quote(run.file)),"
                + "\"deliveryID\":\(JSON.quote(run.deliveryID)),\"attempt\":\(run.attempt),"
                + "\"pid\":\(run.pid),\"ageUSec\":\(run.ageUSec)}"
        }
        let retrying = retrying.map { waiting in
            "{\"handler\":\(JSON.quote(waiting.handler)),\"file\":\(JSON.quote(waiting.file)),"
                + "\"deliveryID\":\(JSON.quote(waiting.deliveryID)),\"attempt\":\(waiting.attempt),"
                + "\"reason\":\(JSON.quote(waiting.reason)),\"nextAttemptUSec\":\(waiting.nextAttemptUSec)}"
        }
        let instances = instances.map { instance in
            "{\"handler\":\(JSON.quote(instance.handler)),\"pid\":\(instance.pid),\"inFlight\":\(instance.inFlight),"
                + "\"served\":\(instance.served),\"ageUSec\":\(instance.ageUSec),\"stopping\":\(instance.stopping)}"
        }
        let sniffer = sniffer.map {
            "{\"pid\":\($0.pid),\"libmagic\":\(JSON.quote($0.libmagic)),\"ruleSections\":\($0.ruleSections),"
                + "\"rulesExtent\":\($0.rulesExtent),\"costs\":\($0.costs.json())}"
        } ?? "null"
        return "{\"pid\":\(pid),\"startedAtUSec\":\(startedAtUSec),\"phase\":\(JSON.quote(phase)),"
            + "\"inboxes\":[\(inboxes.map(JSON.quote).joined(separator: ","))],"
            + "\"missingInboxes\":[\(missingInboxes.map(JSON.quote).joined(separator: ","))],"
            + "\"stateDirectory\":\(JSON.quote(stateDirectory)),"
            + "\"handlerDirectories\":[\(handlerDirectories.map(JSON.quote).joined(separator: ","))],"
            + "\"crossMountInboxes\":[\(crossMountInboxes.map(JSON.quote).joined(separator: ","))],"
            + "\"leftInPlace\":\(leftInPlace),"
            + "\"queued\":\(queued),\"inFlight\":[\(inFlight.joined(separator: ","))],"
            + "\"retrying\":[\(retrying.joined(separator: ","))],"
            + "\"instances\":[\(instances.joined(separator: ","))],"
            + "\"failed\":\(failed),\"unhandled\":\(unhandled),\"pending\":\(pending),"
            + "\"landlock\":\(landlockABI > 0),\"landlockABI\":\(landlockABI),\"registrations\":\(registrations),"
            + "\"registrationsLoadedAtUSec\":\(registrationsLoadedAtUSec),"
            + "\"contentSniffing\":\(contentSniffing),\"sniffer\":\(sniffer),"
            + "\"limits\":\(limits.json),"
            + stalls.jsonMembers + ","
            + "\"cluster\":\(cluster?.json ?? "null"),"
            + "\"metrics\":\(metrics.json),"
            + "\"writtenAtUSec\":\(writtenAtUSec)}\n"
    }

    /// Reads a status file's text; a missing or mistyped member takes its default, so an older or newer agent's
    /// file still reads. The error is the JSON parser's.
    public static func parse(_ bytes: [UInt8]) -> Result<AgentStatus, JSONError> {
        let value: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let parsed): value = parsed
        case .failure(let error): return .failure(error)
        }
        var status = AgentStatus()
        status.pid = Int32(clamping: value["pid"]?.int ?? 0)
        status.startedAtUSec = Int64(value["startedAtUSec"]?.int ?? 0)
        status.phase = value["phase"]?.string ?? "?"
        status.inboxes = value["inboxes"]?.array?.compactMap(\.string) ?? []
        status.missingInboxes = value["missingInboxes"]?.array?.compactMap(\.string) ?? []
        status.stateDirectory = value["stateDirectory"]?.string ?? "?"
        status.handlerDirectories = value["handlerDirectories"]?.array?.compactMap(\.string) ?? []
        status.crossMountInboxes = value["crossMountInboxes"]?.array?.compactMap(\.string) ?? []
        status.leftInPlace = value["leftInPlace"]?.int ?? 0
        status.queued = value["queued"]?.int ?? 0
        status.inFlight = (value["inFlight"]?.array ?? []).map { run in
            InFlight(handler: run["handler"]?.string ?? "?", file: run["file"]?.string ?? "?",
                     deliveryID: run["deliveryID"]?.string ?? "?", attempt: run["attempt"]?.int ?? 0,
                     pid: Int32(clamping: run["pid"]?.int ?? 0), ageUSec: Int64(run["ageUSec"]?.int ?? 0))
        }
        status.retrying = (value["retrying"]?.array ?? []).map { waiting in
            Retrying(handler: waiting["handler"]?.string ?? "?", file: waiting["file"]?.string ?? "?",
                     deliveryID: waiting["deliveryID"]?.string ?? "?", attempt: waiting["attempt"]?.int ?? 0,
                     reason: waiting["reason"]?.string ?? "", nextAttemptUSec: Int64(waiting["nextAttemptUSec"]?.int ?? 0))
        }
        status.instances = (value["instances"]?.array ?? []).map { instance in
            Instance(handler: instance["handler"]?.string ?? "?", pid: Int32(clamping: instance["pid"]?.int ?? 0),
                     inFlight: instance["inFlight"]?.int ?? 0, served: instance["served"]?.int ?? 0,
                     ageUSec: Int64(instance["ageUSec"]?.int ?? 0), stopping: instance["stopping"]?.bool ?? false)
        }
        status.failed = value["failed"]?.int ?? 0
        status.unhandled = value["unhandled"]?.int ?? 0
        status.pending = value["pending"]?.int ?? 0
        status.landlockABI = value["landlockABI"]?.int ?? 0
        status.registrations = value["registrations"]?.int ?? 0
        status.registrationsLoadedAtUSec = Int64(value["registrationsLoadedAtUSec"]?.int ?? 0)
        status.contentSniffing = value["contentSniffing"]?.bool ?? true
        if let sniffer = value["sniffer"], sniffer != .null {
            status.sniffer = Sniffer(pid: Int32(clamping: sniffer["pid"]?.int ?? 0), libmagic: sniffer["libmagic"]?.string ?? "?",
                                     ruleSections: sniffer["ruleSections"]?.int ?? 0,
                                     rulesExtent: sniffer["rulesExtent"]?.int ?? 0, costs: SniffCosts(sniffer["costs"]))
        }
        status.limits = HeldFileLimitsStatus(value["limits"])
        status.stalls = ReaderStalls(notifications: value["notifications"], journal: value["journal"])
        status.cluster = ClusterStatus.parse(value["cluster"])
        status.metrics = DeliveryMetrics(value["metrics"])
        status.writtenAtUSec = Int64(value["writtenAtUSec"]?.int ?? 0)
        return .success(status)
    }
}
