import CNats
import InboxSystem

/// What `JetStream.ensurePullConsumer` makes a durable pull consumer be: the one consumer per handler identifier that
/// every host's workers share, each message acknowledged explicitly.
public struct PullConsumerSettings: Sendable {
    /// The stream it reads.
    public var stream: String
    /// Its durable name (no `.`): ClusterNames.consumerName(handler:).
    public var durable: String
    /// The one subject it takes messages from: ClusterNames.deliverySubject(handler:).
    public var filterSubject: String
    /// How long a message handed out may go unacknowledged before the server hands it out again; an in-progress
    /// acknowledgement starts it over.
    public var ackWait: Duration
    /// How many times a message is handed out at most (the last attempt's worker terminates it or acknowledges it).
    public var maxDeliver: Int
    /// How many messages may be handed out and unacknowledged at once, across every worker.
    public var maxAckPending: Int

    /// A consumer of `filterSubject` in `stream`.
    public init(stream: String, durable: String, filterSubject: String, ackWait: Duration, maxDeliver: Int,
                maxAckPending: Int) {
        self.stream = stream
        self.durable = durable
        self.filterSubject = filterSubject
        self.ackWait = ackWait
        self.maxDeliver = maxDeliver
        self.maxAckPending = maxAckPending
    }
}

/// What the server says of a consumer.
public struct PullConsumerState: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// Its filter subject.
    public var filterSubject: String
    /// Its ack wait.
    public var ackWait: Duration
    /// Its maximum deliveries.
    public var maxDeliver: Int
    /// Its maximum of unacknowledged messages.
    public var maxAckPending: Int
    /// Messages handed out and not acknowledged yet.
    public var ackPending: Int
    /// Messages redelivered at least once and not acknowledged yet.
    public var redelivered: Int
    /// Messages in the stream it has not handed out yet.
    public var pending: UInt64
    /// Pull requests waiting at the server.
    public var waiting: Int
}

extension JetStream {
    /// Creates the durable pull consumer `settings` describes (explicit acks, from the first message), or, when one of
    /// that name exists, updates it to `settings` (the server refuses what cannot change, such as the filter).
    @discardableResult
    public func ensurePullConsumer(_ settings: PullConsumerSettings) throws(NatsError) -> PullConsumerState {
        let pool = CStringPool()
        var config = jsConsumerConfig()
        _ = sys_jsConsumerConfig_Init(&config)
        config.Durable = pool.string(settings.durable)
        config.FilterSubject = pool.string(settings.filterSubject)
        config.AckPolicy = js_AckExplicit
        config.DeliverPolicy = js_DeliverAll
        config.AckWait = settings.ackWait.natsNanoseconds
        config.MaxDeliver = Int64(settings.maxDeliver)
        config.MaxAckPending = Int64(settings.maxAckPending)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        var status = sys_js_AddConsumer(&info, context, settings.stream, &config, &code)
        if status != NATS_OK && (code == JSConsumerNameExistErr || code == JSConsumerExistingActiveErr
                                  || code == jsErrCode(10148)) {
            // 10148: "consumer already exists" with another configuration (servers from 2.9.x on).
            code = jsErrCode(0)
            status = sys_js_UpdateConsumer(&info, context, settings.stream, &config, &code)
            guard status == NATS_OK else {
                throw NatsError.last("update consumer \(settings.durable) of \(settings.stream)", status, jetStreamCode: code)
            }
        } else if status != NATS_OK {
            throw NatsError.last("create consumer \(settings.durable) of \(settings.stream)", status, jetStreamCode: code)
        }
        guard let info else {
            throw NatsError(operation: "create consumer \(settings.durable)", status: NATS_ERR, detail: "no consumer info")
        }
        defer { sys_jsConsumerInfo_Destroy(info) }
        return Self.consumerState(info)
    }

    /// The consumer `name` of `stream`; nil when there is none.
    public func consumer(stream: String, name: String) throws(NatsError) -> PullConsumerState? {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let status = sys_js_GetConsumerInfo(&info, context, stream, name, &code)
        if status == NATS_NOT_FOUND || code == JSConsumerNotFoundErr { return nil }
        guard status == NATS_OK, let info else {
            throw NatsError.last("look up consumer \(name) of \(stream)", status, jetStreamCode: code)
        }
        defer { sys_jsConsumerInfo_Destroy(info) }
        return Self.consumerState(info)
    }

    /// A subscription bound to the existing durable consumer `consumer` of `stream`: it creates nothing, and ending
    /// it leaves the consumer for the other workers.
    public func pullSubscription(stream: String, consumer: String) throws(NatsError) -> PullSubscription {
        let pool = CStringPool()
        var options = jsSubOptions()
        _ = sys_jsSubOptions_Init(&options)
        options.Stream = pool.string(stream)
        options.Consumer = pool.string(consumer)
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = sys_js_PullSubscribe(&subscription, context, &options, &code)
        guard status == NATS_OK, let subscription else {
            throw NatsError.last("bind to consumer \(consumer) of \(stream)", status, jetStreamCode: code)
        }
        return PullSubscription(jetStream: self, handle: subscription, consumer: consumer)
    }

    /// The PullConsumerState of libnats's consumer info.
    private static func consumerState(_ info: UnsafeMutablePointer<jsConsumerInfo>) -> PullConsumerState {
        let config = info.pointee.Config?.pointee
        return PullConsumerState(
            name: info.pointee.Name.map { String(cString: $0) } ?? "",
            filterSubject: config?.FilterSubject.map { String(cString: $0) } ?? "",
            ackWait: .nanoseconds(config?.AckWait ?? 0), maxDeliver: Int(config?.MaxDeliver ?? 0),
            maxAckPending: Int(config?.MaxAckPending ?? 0), ackPending: Int(info.pointee.NumAckPending),
            redelivered: Int(info.pointee.NumRedelivered), pending: info.pointee.NumPending,
            waiting: Int(info.pointee.NumWaiting))
    }
}

/// A worker's handle on a durable pull consumer: it asks for messages when it has room for them.
public final class PullSubscription {
    /// The context it was made by, kept open while it lives.
    public let jetStream: JetStream
    /// libnats's subscription.
    let handle: OpaquePointer
    /// The consumer it is bound to.
    public let consumer: String

    /// Wraps a subscription libnats bound to `consumer`.
    init(jetStream: JetStream, handle: OpaquePointer, consumer: String) {
        self.jetStream = jetStream
        self.handle = handle
        self.consumer = consumer
    }

    /// Ends the subscription; the consumer stays, with what it handed out still waiting for acknowledgements.
    deinit { sys_natsSubscription_Destroy(handle) }

    /// Up to `max` messages, waiting at most `timeout` for the first: as soon as some are there they are returned
    /// (libnats asks for what is there first, then waits for at least one). None after `timeout` is an empty array,
    /// not an error.
    public func fetch(max: Int, timeout: Duration) throws(NatsError) -> [JetStreamMessage] {
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = sys_natsSubscription_Fetch(&list, handle, CInt(clamping: Swift.max(1, max)), timeout.natsMilliseconds,
                                                &code)
        if status == NATS_TIMEOUT { return [] }
        guard status == NATS_OK else { throw NatsError.last("fetch from consumer \(consumer)", status, jetStreamCode: code) }
        defer { sys_natsMsgList_Destroy(&list) }
        var messages: [JetStreamMessage] = []
        if let array = list.Msgs {
            for index in 0..<Int(list.Count) {
                guard let message = array[index] else { continue }
                array[index] = nil
                messages.append(JetStreamMessage(subscription: self, handle: message))
            }
        }
        return messages
    }
}

/// A message a pull consumer handed out, to be answered once: `ack` when its work is done, `nak(delay:)` to have it
/// again later, `term` to never have it again; `inProgress` while the work goes on, so that it is not handed out
/// again meanwhile.
public final class JetStreamMessage {
    /// The subscription that fetched it, kept open while it lives.
    public let subscription: PullSubscription
    /// libnats's message.
    let handle: OpaquePointer

    /// Takes over a message `subscription` fetched.
    init(subscription: PullSubscription, handle: OpaquePointer) {
        self.subscription = subscription
        self.handle = handle
    }

    /// Frees the message; one never answered is handed out again once the consumer's ack wait has passed.
    deinit { sys_natsMsg_Destroy(handle) }

    /// Where a message stands in its stream and consumer (its reply subject, `$JS.ACK.…`).
    public struct Metadata: Sendable, Equatable {
        /// The stream that holds it.
        public var stream: String
        /// The consumer that handed it out.
        public var consumer: String
        /// Its sequence in the stream.
        public var streamSequence: UInt64
        /// The consumer's count of messages handed out, this one included.
        public var consumerSequence: UInt64
        /// How many times it has been handed out, this time included: 1 the first time.
        public var delivered: UInt64
        /// How many messages the consumer still has to hand out after it.
        public var pending: UInt64
        /// When the stream stored it, in nanoseconds since the epoch.
        public var timestamp: Int64
    }

    /// Its subject.
    public var subject: String { sys_natsMsg_GetSubject(handle) }

    /// Its payload.
    public var payload: [UInt8] { sys_natsMsg_GetData(handle) }

    /// The first value of the header `name`; nil when it has none.
    public func header(_ name: String) -> String? { sys_natsMsgHeader_Get(handle, name) }

    /// Its place in stream and consumer; an error for a message that did not come from a consumer.
    public func metadata() throws(NatsError) -> Metadata {
        var found: UnsafeMutablePointer<jsMsgMetaData>?
        let status = sys_natsMsg_GetMetaData(&found, handle)
        guard status == NATS_OK, let found else { throw NatsError.last("read the metadata of \(subject)", status) }
        defer { sys_jsMsgMetaData_Destroy(found) }
        let meta = found.pointee
        return Metadata(stream: meta.Stream.map { String(cString: $0) } ?? "",
                        consumer: meta.Consumer.map { String(cString: $0) } ?? "",
                        streamSequence: meta.Sequence.Stream, consumerSequence: meta.Sequence.Consumer,
                        delivered: meta.NumDelivered, pending: meta.NumPending, timestamp: meta.Timestamp)
    }

    /// Acknowledges it and waits for the server to confirm: it will not be handed out again (a work queue drops it).
    public func ack() throws(NatsError) {
        var options = JetStream.options(subscription.jetStream.timeout)
        var code = jsErrCode(0)
        let status = sys_natsMsg_AckSync(handle, &options, &code)
        if status != NATS_OK { throw NatsError.last("acknowledge \(subject)", status, jetStreamCode: code) }
    }

    /// Gives it back, to be handed out again after `delay` (an attempt that failed and will be retried).
    public func nak(delay: Duration) throws(NatsError) {
        var options = JetStream.options(subscription.jetStream.timeout)
        try sent("give back \(subject)", sys_natsMsg_NakWithDelay(handle, delay.natsMilliseconds, &options))
    }

    /// Says that its work goes on: the ack wait starts over.
    public func inProgress() throws(NatsError) {
        var options = JetStream.options(subscription.jetStream.timeout)
        try sent("mark \(subject) in progress", sys_natsMsg_InProgress(handle, &options))
    }

    /// Ends it for good: it is never handed out again, whatever attempts were left (after the last attempt).
    public func term() throws(NatsError) {
        var options = JetStream.options(subscription.jetStream.timeout)
        try sent("terminate \(subject)", sys_natsMsg_Term(handle, &options))
    }

    /// An answer the server does not confirm has been sent once the connection is flushed: checks the send, then
    /// flushes, so that when this returns the server has it.
    private func sent(_ what: String, _ status: natsStatus) throws(NatsError) {
        if status != NATS_OK { throw NatsError.last(what, status) }
        do {
            try subscription.jetStream.connection.flush(timeout: subscription.jetStream.timeout)
        } catch {
            throw error.named(what)
        }
    }
}
