import CNats
import InboxSystem

/// The JetStream side of a connection: streams, publishing with an acknowledgement, stored messages, and the pull
/// consumers, key-value buckets and object stores built on them. Every request waits at most the connection's
/// `requestTimeout`. Holds its connection, so that a JetStream (and what it made) keeps the connection open.
public final class JetStream {
    /// The connection it runs on.
    public let connection: NatsConnection
    /// libnats's JetStream context.
    let context: OpaquePointer
    /// How long a request may wait for its answer.
    public let timeout: Duration

    /// The context of `connection`, its requests bounded by the connection's `requestTimeout`.
    init(connection: NatsConnection) throws(NatsError) {
        self.connection = connection
        self.timeout = connection.settings.requestTimeout
        var options = Self.options(timeout)
        var created: OpaquePointer?
        let status = sys_natsConnection_JetStream(&created, connection.handle, &options)
        guard status == NATS_OK, let created else { throw NatsError.last("open the JetStream context", status) }
        context = created
    }

    /// Frees the context; the connection stays open while anything else holds it.
    deinit { sys_jsCtx_Destroy(context) }

    /// JetStream options whose requests wait up to `timeout`.
    static func options(_ timeout: Duration) -> jsOptions {
        var options = jsOptions()
        _ = sys_jsOptions_Init(&options)
        options.Wait = timeout.natsMilliseconds
        return options
    }

    /// How a stream keeps its messages.
    public enum Retention: Sendable, Equatable {
        /// Until its limits (age, size) drop them: the object store's and the key-value bucket's streams.
        case limits
        /// Until a consumer acknowledges them, each subject served by one consumer only: the delivery messages.
        case workQueue
    }

    /// What `ensureStream` makes a stream be.
    public struct StreamSettings: Sendable {
        /// The stream's name (no `.`, `*`, `>` or white space).
        public var name: String
        /// The subjects it stores (wildcards allowed).
        public var subjects: [String]
        /// How it keeps messages.
        public var retention: Retention
        /// How long a `Nats-Msg-Id` is remembered, so that a second publish with the same id is stored once.
        public var duplicateWindow: Duration
        /// Whether a message with `Nats-Rollup` may replace what its subject holds (the object store's info).
        public var allowRollup: Bool
        /// Whether any server of the stream may answer direct gets (the object store reads chunks so).
        public var allowDirect: Bool
        /// Whether a full stream refuses new messages (true) or drops its oldest (false).
        public var discardNew: Bool
        /// How many servers keep it (1 to 5; more than 1 needs a JetStream cluster).
        public var replicas: Int

        /// A file-backed stream, of one replica unless `replicas` says otherwise.
        public init(name: String, subjects: [String], retention: Retention = .limits,
                    duplicateWindow: Duration = .seconds(120), allowRollup: Bool = false, allowDirect: Bool = false,
                    discardNew: Bool = false, replicas: Int = 1) {
            self.replicas = replicas
            self.name = name
            self.subjects = subjects
            self.retention = retention
            self.duplicateWindow = duplicateWindow
            self.allowRollup = allowRollup
            self.allowDirect = allowDirect
            self.discardNew = discardNew
        }

        /// A work-queue stream of delivery messages: `subjects`, file storage, `Nats-Msg-Id`s remembered for
        /// `duplicateWindow`.
        public static func workQueue(name: String, subjects: [String], duplicateWindow: Duration,
                                     replicas: Int = 1) -> StreamSettings {
            StreamSettings(name: name, subjects: subjects, retention: .workQueue, duplicateWindow: duplicateWindow,
                           replicas: replicas)
        }
    }

    /// What a stream holds, as the server said after a create, an update or a look-up.
    public struct StreamState: Sendable, Equatable {
        /// The stream's name.
        public var name: String
        /// Its subjects.
        public var subjects: [String]
        /// How many messages it holds.
        public var messages: UInt64
        /// The sequence of its last message (0 when it never had one).
        public var lastSequence: UInt64
        /// How many consumers it has.
        public var consumers: Int
        /// Whether it takes `Nats-Rollup` headers.
        public var allowRollup: Bool
        /// Whether it answers direct gets.
        public var allowDirect: Bool
        /// Its subjects with messages and how many each holds, when they were asked for (`stream(_:subjects:)`).
        public var subjectCounts: [String: UInt64]
    }

    /// Creates the stream `settings` describes, or updates the existing one of that name to it (a work queue's
    /// retention cannot change: the server refuses, and says so).
    @discardableResult
    public func ensureStream(_ settings: StreamSettings) throws(NatsError) -> StreamState {
        let pool = CStringPool()
        var config = jsStreamConfig()
        _ = sys_jsStreamConfig_Init(&config)
        config.Name = pool.string(settings.name)
        config.Subjects = pool.array(settings.subjects)
        config.SubjectsLen = CInt(settings.subjects.count)
        config.Retention = settings.retention == .workQueue ? js_WorkQueuePolicy : js_LimitsPolicy
        config.Storage = js_FileStorage
        config.Replicas = Int64(settings.replicas)
        config.MaxBytes = -1
        config.MaxMsgs = -1
        config.Duplicates = settings.duplicateWindow.natsNanoseconds
        config.AllowRollup = settings.allowRollup
        config.AllowDirect = settings.allowDirect
        config.Discard = settings.discardNew ? js_DiscardNew : js_DiscardOld
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        var status = sys_js_AddStream(&info, context, &config, &code)
        if status != NATS_OK && code == JSStreamNameExistErr {
            code = jsErrCode(0)
            status = sys_js_UpdateStream(&info, context, &config, &code)
            guard status == NATS_OK else { throw NatsError.last("update stream \(settings.name)", status, jetStreamCode: code) }
        } else if status != NATS_OK {
            throw NatsError.last("create stream \(settings.name)", status, jetStreamCode: code)
        }
        guard let info else { throw NatsError(operation: "create stream \(settings.name)", status: NATS_ERR, detail: "no stream info") }
        defer { sys_jsStreamInfo_Destroy(info) }
        return Self.state(info)
    }

    /// The stream `name` as the server has it, nil when there is none; with `subjects`, also how many messages each
    /// subject matching that filter holds.
    public func stream(_ name: String, subjects filter: String? = nil) throws(NatsError) -> StreamState? {
        let pool = CStringPool()
        var options = Self.options(timeout)
        if let filter { options.Stream.Info.SubjectsFilter = pool.string(filter) }
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = sys_js_GetStreamInfo(&info, context, name, &options, &code)
        if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return nil }
        guard status == NATS_OK, let info else { throw NatsError.last("look up stream \(name)", status, jetStreamCode: code) }
        defer { sys_jsStreamInfo_Destroy(info) }
        return Self.state(info)
    }

    /// Removes the stream `name` with every message and consumer it has; false when there was none.
    @discardableResult
    public func deleteStream(_ name: String) throws(NatsError) -> Bool {
        var code = jsErrCode(0)
        let status = sys_js_DeleteStream(context, name, &code)
        if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return false }
        if status != NATS_OK { throw NatsError.last("delete stream \(name)", status, jetStreamCode: code) }
        return true
    }

    /// Removes every message of `stream` on `subject` (wildcards allowed).
    public func purge(stream: String, subject: String) throws(NatsError) {
        let pool = CStringPool()
        var options = Self.options(timeout)
        options.Stream.Purge.Subject = pool.string(subject)
        var code = jsErrCode(0)
        let status = sys_js_PurgeStream(context, stream, &options, &code)
        if status != NATS_OK { throw NatsError.last("purge \(subject) from \(stream)", status, jetStreamCode: code) }
    }

    /// Removes the message at `sequence` from `stream`.
    public func deleteMessage(stream: String, sequence: UInt64) throws(NatsError) {
        var code = jsErrCode(0)
        let status = sys_js_DeleteMsg(context, stream, sequence, &code)
        if status != NATS_OK { throw NatsError.last("delete message \(sequence) of \(stream)", status, jetStreamCode: code) }
    }

    /// The StreamState of libnats's stream info.
    private static func state(_ info: UnsafeMutablePointer<jsStreamInfo>) -> StreamState {
        var subjects: [String] = []
        var name = ""
        var (rollup, direct) = (false, false)
        if let config = info.pointee.Config {
            (rollup, direct) = (config.pointee.AllowRollup, config.pointee.AllowDirect)
            name = config.pointee.Name.map { String(cString: $0) } ?? ""
            if let list = config.pointee.Subjects {
                subjects = (0..<Int(config.pointee.SubjectsLen)).compactMap { list[$0].map { String(cString: $0) } }
            }
        }
        var counts: [String: UInt64] = [:]
        if let listed = info.pointee.State.Subjects, let list = listed.pointee.List {
            for index in 0..<Int(listed.pointee.Count) {
                if let subject = list[index].Subject { counts[String(cString: subject)] = list[index].Msgs }
            }
        }
        return StreamState(name: name, subjects: subjects, messages: info.pointee.State.Msgs,
                           lastSequence: info.pointee.State.LastSeq, consumers: Int(info.pointee.State.Consumers),
                           allowRollup: rollup, allowDirect: direct, subjectCounts: counts)
    }

    // MARK: Publishing

    /// The server's acknowledgement of a published message.
    public struct PublishAck: Sendable, Equatable {
        /// The stream that stored it.
        public var stream: String
        /// Its sequence in that stream (for a duplicate, the first copy's).
        public var sequence: UInt64
        /// Whether the server had a message with the same `Nats-Msg-Id` within the duplicate window, and stored
        /// nothing new.
        public var duplicate: Bool
    }

    /// Publishes `payload` to `subject` with `headers` (in order; a name may repeat) and waits for a stream to store
    /// it. `messageID` becomes `Nats-Msg-Id`: the same id again within the stream's duplicate window is acknowledged
    /// as a duplicate and not stored twice. With `expectedStream`, a stream of another name refuses it.
    public func publish(_ subject: String, payload: [UInt8], headers: [(name: String, value: String)] = [],
                        messageID: String? = nil, expectedStream: String? = nil) throws(NatsError) -> PublishAck {
        var result: Result<PublishAck, NatsError>?
        payload.withUnsafeBytes { bytes in
            result = Result { () throws(NatsError) in
                try publish(subject, payload: bytes, headers: headers, messageID: messageID, expectedStream: expectedStream)
            }
        }
        return try result!.get()
    }

    /// The same for bytes in memory the caller holds for the length of the call.
    public func publish(_ subject: String, payload: UnsafeRawBufferPointer, headers: [(name: String, value: String)] = [],
                        messageID: String? = nil, expectedStream: String? = nil) throws(NatsError) -> PublishAck {
        let what = "publish to \(subject)"
        var created: OpaquePointer?
        var status = sys_natsMsg_Create(&created, subject, payload)
        guard status == NATS_OK, let message = created else { throw NatsError.last(what, status) }
        defer { sys_natsMsg_Destroy(message) }
        for header in headers {
            status = sys_natsMsgHeader_Add(message, header.name, header.value)
            if status != NATS_OK { throw NatsError.last("\(what): header \(header.name)", status) }
        }
        let pool = CStringPool()
        var options = jsPubOptions()
        _ = sys_jsPubOptions_Init(&options)
        options.MaxWait = timeout.natsMilliseconds
        if let messageID { options.MsgId = pool.string(messageID) }
        if let expectedStream { options.ExpectStream = pool.string(expectedStream) }
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        status = sys_js_PublishMsg(&ack, context, message, &options, &code)
        guard status == NATS_OK, let ack else { throw NatsError.last(what, status, jetStreamCode: code) }
        defer { sys_jsPubAck_Destroy(ack) }
        return PublishAck(stream: ack.pointee.Stream.map { String(cString: $0) } ?? "", sequence: ack.pointee.Sequence,
                          duplicate: ack.pointee.Duplicate)
    }

    // MARK: Stored messages

    /// A message as a stream stores it, read by sequence or subject rather than through a consumer.
    public struct StoredMessage: Sendable, Equatable {
        /// Its subject.
        public var subject: String
        /// Its sequence in the stream.
        public var sequence: UInt64
        /// When the stream stored it, in nanoseconds since the epoch.
        public var time: Int64
        /// Its payload.
        public var payload: [UInt8]
        /// Its headers, each name with its values in order.
        public var headers: [String: [String]]
    }

    /// The message at `sequence` of `stream`; nil when there is none (never was, or deleted).
    public func message(stream: String, sequence: UInt64) throws(NatsError) -> StoredMessage? {
        var found: OpaquePointer?
        var code = jsErrCode(0)
        let status = sys_js_GetMsg(&found, context, stream, sequence, &code)
        if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
        guard status == NATS_OK, let found else {
            throw NatsError.last("read message \(sequence) of \(stream)", status, jetStreamCode: code)
        }
        defer { sys_natsMsg_Destroy(found) }
        return Self.stored(found)
    }

    /// The last message `stream` holds on `subject`; nil when it holds none.
    public func lastMessage(stream: String, subject: String) throws(NatsError) -> StoredMessage? {
        var found: OpaquePointer?
        var code = jsErrCode(0)
        let status = sys_js_GetLastMsg(&found, context, stream, subject, &code)
        if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
        guard status == NATS_OK, let found else {
            throw NatsError.last("read the last message of \(subject) in \(stream)", status, jetStreamCode: code)
        }
        defer { sys_natsMsg_Destroy(found) }
        return Self.stored(found)
    }

    /// The first message on `subject` at or after `sequence`, by a direct get (the stream must allow them); nil when
    /// there is none. `body` sees the message in place, which lives only for the call.
    func nextMessage<T>(stream: String, subject: String, from sequence: UInt64,
                        _ body: (_ sequence: UInt64, _ payload: UnsafeRawBufferPointer) throws(ObjectStoreError) -> T)
        throws(ObjectStoreError) -> T? {
        let pool = CStringPool()
        var options = jsDirectGetMsgOptions()
        _ = sys_jsDirectGetMsgOptions_Init(&options)
        options.Sequence = sequence
        options.NextBySubject = pool.string(subject)
        var found: OpaquePointer?
        let status = sys_js_DirectGetMsg(&found, context, stream, &options)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let found else {
            throw .nats(NatsError.last("read \(subject) from sequence \(sequence) of \(stream)", status))
        }
        defer { sys_natsMsg_Destroy(found) }
        return try body(sys_natsMsg_GetSequence(found), sys_natsMsg_GetDataBuffer(found))
    }

    /// The StoredMessage of a message libnats read from a stream.
    static func stored(_ message: OpaquePointer) -> StoredMessage {
        var headers: [String: [String]] = [:]
        for key in sys_natsMsgHeader_Keys(message) { headers[key] = sys_natsMsgHeader_Values(message, key) }
        return StoredMessage(subject: sys_natsMsg_GetSubject(message), sequence: sys_natsMsg_GetSequence(message),
                             time: sys_natsMsg_GetTime(message), payload: sys_natsMsg_GetData(message), headers: headers)
    }
}
