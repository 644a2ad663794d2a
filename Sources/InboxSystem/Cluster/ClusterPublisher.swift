import Glibc
import InboxCore

/// The ingest side of a cluster (docs/design.md, Cluster: the agent): what arrives in a cluster Inbox is decided as
/// any arrival is, then moved into the state directory's `outbox/` under its delivery id with its delivery message
/// beside it (`.<id>.cluster`), and published through the cluster child (`ClusterLink`, role ingest): its content
/// into the object store, its message into the stream. The local copy is removed only once the server acknowledged
/// both. While the server cannot be reached, files wait in the outbox (the journal says so once, the status line
/// too) and go out in their order when it is back; at start-up what an earlier run left there is published again
/// (the server's duplicate window drops a message it already has: `Nats-Msg-Id` is the delivery id).
final class ClusterPublisher {
    /// One file of the outbox on its way.
    struct Entry {
        /// Its name in the outbox: its delivery id.
        let name: String
        var message: ClusterDelivery
        /// Where it was dropped, for the journal.
        let shown: String
        let hasSidecar: Bool
    }

    private let loop: EventLoop
    private let logger: Logger
    private let settings: ClusterSettings
    private let hostName: String
    /// nil when it could not be made (nothing is published; arrivals for the cluster wait where they were dropped).
    let outbox: Directory?
    private let makeLink: () throws(SystemError) -> ClusterLink
    private var link: ClusterLink?
    /// Waiting to be sent to the child, oldest first.
    private var waiting: [Entry] = []
    private var head = 0
    /// Sent to the child, not yet answered, by reference.
    private var sent: [UInt64: Entry] = [:]
    /// How many publishes the child is given at once: each holds a descriptor until it is answered.
    private let window = 32
    /// The server could not be reached: said once, until it can again.
    private var unreachable: String?
    private var retryTimer: EventSource?
    private var restartTimer: EventSource?
    private var cluster: String { settings.names.name }
    /// The status changed (connected, files waiting).
    var changed: () -> Void = {}

    init(loop: EventLoop, logger: Logger, settings: ClusterSettings, state: StateDirectories, hostName: String,
         makeLink: @escaping () throws(SystemError) -> ClusterLink) {
        self.loop = loop
        self.logger = logger
        self.settings = settings
        self.hostName = hostName
        self.makeLink = makeLink
        do {
            outbox = try state.clusterDirectory(StateDirectories.outboxName)
        } catch {
            logger.log(.error, "Cannot make the cluster's outbox: \(error); arrivals in "
                       + "\(settings.inboxes.joined(separator: ", ")) wait there", event: .cluster)
            outbox = nil
        }
        normalizedInboxes = Set(settings.inboxes)
    }

    private let normalizedInboxes: Set<String>

    /// Whether an arrival was dropped in one of `[Cluster] Inboxes=`.
    func serves(_ arrival: Arrival) -> Bool {
        arrival.origin == .dropped && normalizedInboxes.contains(ConfigurationParser.normalized(arrival.directory.path))
    }

    /// Whether an arrival goes to the cluster: dropped in one of its Inboxes, and a single file (the cluster carries
    /// no package document yet: one is delivered on this host, and `Router` says so).
    func feeds(_ arrival: Arrival) -> Bool { !arrival.isPackage && serves(arrival) }

    /// How many files wait in the outbox (sent or not).
    var waitingCount: Int { waiting.count - head + sent.count }
    var pid: pid_t? { link?.pid }
    var isReachable: Bool { unreachable == nil && link?.state?.connected == true }
    /// The last state the child reported.
    var state: ClusterState? { link?.state }

    /// The delivery message of an arrival about to be published: its content's digest and size are the child's to
    /// fill in from what it put in the object store.
    func message(for arrival: Arrival, handler: String, contentTypes: [String]) -> ClusterDelivery {
        ClusterDelivery(id: arrival.id, handler: handler, name: arrival.cleanName,
                        contentType: contentTypes.first ?? "public.data", contentTypes: contentTypes,
                        sourceApp: arrival.metadata.sourceApp, annotation: arrival.metadata.annotation,
                        sourceHost: hostName, sourceUID: arrival.sourceUID, object: arrival.id,
                        digest: ObjectDigest(sha256: [UInt8](repeating: 0, count: ObjectDigest.byteCount))!, size: arrival.bytes, isPackage: arrival.isPackage,
                        arrivedAtUSec: WallClock.now)
    }

    /// Starts the child and takes up what an earlier run left in the outbox.
    func start() {
        startLink()
        guard let outbox, let names = try? outbox.entries() else { return }
        var found: [Entry] = []
        for name in names where !FileNames.isHidden(name) {
            guard let text = String(validating: name, as: UTF8.self) else { continue }
            switch outbox.readMessage(of: text) {
            case .read(let message):
                found.append(Entry(name: text, message: message, shown: outbox.child(text),
                                   hasSidecar: outbox.hasSidecar(of: name)))
            case .unusable(let reason):
                logger.log(.warning, "Cannot publish \(outbox.child(text)): its delivery message \(reason); left "
                           + "in the outbox", event: .cluster, fields: ["INBOX_FILE": outbox.child(text)])
            }
        }
        // In the order they arrived.
        for entry in found.sorted(by: { $0.message.arrivedAtUSec < $1.message.arrivedAtUSec }) { waiting.append(entry) }
        if !found.isEmpty {
            logger.log(.info, "Publishing \(found.count) file(s) an earlier run left in \(outbox.path) to cluster "
                       + "\(cluster)", event: .cluster, fields: ["INBOX_CLUSTER": cluster])
        }
        pump()
    }

    func stop() {
        retryTimer = nil
        restartTimer = nil
        link?.stop()
        link = nil
    }

    /// A file moved into the outbox as `name`: published as soon as the child can take it.
    func enqueue(_ name: String, message: ClusterDelivery, from shown: String, hasSidecar: Bool) {
        waiting.append(Entry(name: name, message: message, shown: shown, hasSidecar: hasSidecar))
        pump()
        changed()
    }

    // MARK: The child

    private func startLink() {
        restartTimer = nil
        do {
            let link = try makeLink()
            link.published = { [unowned self] reference, result in self.published(reference, result) }
            link.stateChanged = { [unowned self] state in self.stateChanged(state) }
            link.lost = { [unowned self] why in self.lost(why) }
            self.link = link
        } catch {
            lost("cannot start it: \(error)")
        }
    }

    /// The child died: what it had not answered goes again (the server drops what it already stored) with the next.
    private func lost(_ why: String) {
        link = nil
        let unanswered = sent.values.sorted { $0.message.arrivedAtUSec < $1.message.arrivedAtUSec }
        sent.removeAll()
        waiting.replaceSubrange(0..<head, with: unanswered)
        head = 0
        logger.log(.error, "The cluster child ended (\(why)); starting another in 5s", event: .cluster,
                   fields: ["INBOX_CLUSTER": cluster])
        restartTimer = try? loop.addTimer(after: .seconds(5)) { [unowned self] in
            self.startLink()
            self.pump()
        }
        changed()
    }

    private func stateChanged(_ state: ClusterState) {
        if state.connected {
            if unreachable != nil {
                unreachable = nil
                logger.log(.notice, "Cluster \(cluster) is reachable again (\(state.server ?? "?")); publishing "
                           + "\(waitingCount) waiting file(s)", event: .cluster, fields: [
                    "INBOX_CLUSTER": cluster, "INBOX_CLUSTER_SERVER": state.server])
            }
            pump()
        } else {
            becameUnreachable(state.error ?? "the connection to \(state.server ?? "the server") was lost")
        }
        changed()
    }

    private func becameUnreachable(_ why: String) {
        guard unreachable == nil else { return }
        unreachable = why
        logger.log(.warning, "Cannot reach cluster \(cluster): \(why); arrivals for it wait in "
                   + "\(outbox?.path ?? "the outbox") until it can be reached", event: .cluster, fields: [
            "INBOX_CLUSTER": cluster, "INBOX_REASON": why])
        changed()
    }

    /// Sends what the window allows, oldest first.
    private func pump() {
        guard let link, let outbox, link.isReady else { return }
        while sent.count < window, head < waiting.count {
            let entry = waiting[head]
            head += 1
            switch outbox.openRegular(Array(entry.name.utf8)) {
            case .opened(let file):
                let reference = link.publish(entry.message, content: file.descriptor)
                file.descriptor.close()
                sent[reference] = entry
            case .gone:
                outbox.removeMessage(of: entry.name)
                logger.log(.warning, "\(outbox.child(entry.name)) left the outbox before it was published",
                           event: .cluster, fields: ["INBOX_FILE": outbox.child(entry.name),
                                                     "INBOX_DELIVERY_ID": entry.message.id])
            case .refused, .failed:
                logger.log(.warning, "Cannot open \(outbox.child(entry.name)) to publish it; left in the outbox",
                           event: .cluster, fields: ["INBOX_FILE": outbox.child(entry.name)])
            }
        }
        if head > 1024 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }

    private func published(_ reference: UInt64, _ result: Result<PublishReceipt, PublishFailure>) {
        guard let entry = sent.removeValue(forKey: reference), let outbox else { return }
        switch result {
        case .success(let receipt):
            let name = Array(entry.name.utf8)
            if let error = outbox.remove(name) {
                logger.log(.warning, "Cannot remove \(outbox.child(entry.name)) after it was published: \(error)",
                           fields: ["INBOX_FILE": outbox.child(entry.name)])
            }
            if entry.hasSidecar { outbox.removeSidecar(of: name) }
            outbox.removeMessage(of: entry.name)
            logger.log(.info, "Published \(entry.message.name) for \(entry.message.handler) to cluster \(cluster)"
                       + (receipt.duplicate ? " (the server had it already)" : ""), event: .published, fields: [
                "INBOX_FILE": entry.shown, "INBOX_DELIVERY_ID": entry.message.id, "INBOX_HANDLER": entry.message.handler,
                "INBOX_CONTENT_TYPE": entry.message.contentType, "INBOX_SOURCE_UID": String(entry.message.sourceUID),
                "INBOX_SOURCE_APP": entry.message.sourceApp, "INBOX_CLUSTER": cluster,
                "INBOX_CLUSTER_SEQUENCE": String(receipt.sequence), "INBOX_SIZE": String(receipt.size),
                "INBOX_DIGEST": receipt.digest.description, "INBOX_DUPLICATE": receipt.duplicate ? "1" : nil])
        case .failure(let failure) where failure.transient:
            // Back at the front, in its order: it goes again once the server answers.
            head -= 1
            if head >= 0 && head < waiting.count { waiting[head] = entry } else { waiting.insert(entry, at: 0); head = 0 }
            becameUnreachable(failure.reason)
            scheduleRetry()
        case .failure(let failure):
            logger.log(.error, "Cannot publish \(entry.message.name) to cluster \(cluster): \(failure.reason); left "
                       + "in \(outbox.path)", event: .cluster, fields: [
                "INBOX_FILE": outbox.child(entry.name), "INBOX_DELIVERY_ID": entry.message.id,
                "INBOX_HANDLER": entry.message.handler, "INBOX_REASON": failure.reason])
        }
        pump()
        changed()
    }

    /// A transient failure: sent again after a pause, or as soon as the child says it is connected.
    private func scheduleRetry() {
        guard retryTimer == nil else { return }
        retryTimer = try? loop.addTimer(after: .seconds(2)) { [unowned self] in
            self.retryTimer = nil
            self.pump()
        }
    }
}

extension Directory {
    /// `.<id>.cluster`: the delivery message of an outbox file, written before the file is moved in.
    fileprivate static func messageName(of name: String) -> String { "." + name + ".cluster" }

    /// Writes the delivery message of the outbox file `name` (never replacing one), synced; nil on success.
    func createMessage(_ bytes: [UInt8], for name: String) -> Errno? {
        let file: FileDescriptor
        do {
            file = try openFile(Self.messageName(of: name), .writeOnly, options: [.create, .exclusive, .noFollow],
                                permissions: 0o600)
        } catch {
            return error
        }
        defer { file.close() }
        var failure = file.write(all: bytes)
        if failure == nil {
            do { try file.fsync() } catch { failure = error }
        }
        if failure != nil { _ = remove(Self.messageName(of: name)) }
        return failure
    }

    func removeMessage(of name: String) { _ = remove(Self.messageName(of: name)) }

    func moveMessage(of name: String, to newName: String) {
        _ = move(Array(Self.messageName(of: name).utf8), to: self, as: Array(Self.messageName(of: newName).utf8))
    }

    /// What reading an outbox file's delivery message gave.
    enum MessageRead {
        case read(ClusterDelivery)
        case unusable(String)
    }

    /// The delivery message of the outbox file `name`, read as untrusted (it is the agent's own, but a file).
    func readMessage(of name: String) -> MessageRead {
        let file: OpenedFile
        switch openRegular(Array(Self.messageName(of: name).utf8)) {
        case .gone: return .unusable("is missing")
        case .refused(let kind): return .unusable("is a \(kind.rawValue)")
        case .failed(let error): return .unusable("cannot be opened: \(error)")
        case .opened(let opened): file = opened
        }
        defer { file.descriptor.close() }
        guard file.status.st_size <= ClusterDelivery.maximumBytes else { return .unusable("is too large") }
        var bytes = [UInt8](repeating: 0, count: Int(file.status.st_size) + 1)
        let count: Int
        switch bytes.withUnsafeMutableBytes({ buffer in Result { () throws(Errno) in try file.descriptor.read(fully: buffer) } }) {
        case .success(let read): count = read
        case .failure(let error): return .unusable("cannot be read: \(error)")
        }
        switch ClusterDelivery.parse(Array(bytes.prefix(count))) {
        case .success(let message): return .read(message)
        case .failure(let problem): return .unusable("is malformed (\(problem))")
        }
    }

    /// Whether the agent's sidecar of `name` is there.
    func hasSidecar(of name: [UInt8]) -> Bool {
        ((try? status(of: Sidecar.name(for: name))) ?? nil) != nil
    }
}
