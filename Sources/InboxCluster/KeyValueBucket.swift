import CNats
import InboxSystem
import InboxCore

/// A JetStream key-value bucket (the stream `KV_<bucket>`), as the agents' presence entries use one: each agent puts
/// its entry under its own key, and an entry no one renews goes when the bucket's `maxAge` passes.
public final class KeyValueBucket {
    /// The context it was made by, kept open while it lives.
    public let jetStream: JetStream
    /// libnats's store.
    let handle: OpaquePointer
    /// The bucket's name.
    public let bucket: String

    /// Wraps a store libnats made or bound to.
    private init(jetStream: JetStream, handle: OpaquePointer, bucket: String) {
        self.jetStream = jetStream
        self.handle = handle
        self.bucket = bucket
    }

    /// Frees the store; the bucket stays on the servers.
    deinit { sys_kvStore_Destroy(handle) }

    /// One key's current value.
    public struct Entry: Sendable, Equatable {
        /// The value.
        public var value: [UInt8]
        /// Its revision: the stream sequence that stored it.
        public var revision: UInt64
        /// When it was stored, in nanoseconds since the epoch.
        public var created: Int64
    }

    /// The bucket `bucket`, made if there is none: file storage, `history` values kept per key, each value dropped
    /// after `maxAge` (nil: kept until replaced). An existing bucket of other settings is an error (libnats compares
    /// them); one of the same settings is bound to.
    public static func ensure(_ jetStream: JetStream, bucket: String, history: Int = 1,
                              maxAge: Duration? = nil, replicas: Int = 1) throws(NatsError) -> KeyValueBucket {
        if let reason = ClusterNames.nameProblem(bucket, maximum: ObjectStoreLayout.maximumBucketLength) {
            throw NatsError(operation: "create key-value bucket \(bucket)", status: NATS_INVALID_ARG,
                            detail: "the bucket name \(reason)")
        }
        let pool = CStringPool()
        var config = kvConfig()
        _ = sys_kvConfig_Init(&config)
        config.Bucket = pool.string(bucket)
        config.History = UInt8(clamping: history)
        config.StorageType = js_FileStorage
        config.Replicas = CInt(replicas)
        if let maxAge { config.TTL = maxAge.natsNanoseconds }
        var store: OpaquePointer?
        let status = sys_js_CreateKeyValue(&store, jetStream.context, &config)
        guard status == NATS_OK, let store else { throw NatsError.last("create key-value bucket \(bucket)", status) }
        return KeyValueBucket(jetStream: jetStream, handle: store, bucket: bucket)
    }

    /// The existing bucket `bucket`; an error (`.notFound`) when there is none.
    public static func bind(_ jetStream: JetStream, bucket: String) throws(NatsError) -> KeyValueBucket {
        var store: OpaquePointer?
        let status = sys_js_KeyValue(&store, jetStream.context, bucket)
        guard status == NATS_OK, let store else { throw NatsError.last("open key-value bucket \(bucket)", status) }
        return KeyValueBucket(jetStream: jetStream, handle: store, bucket: bucket)
    }

    /// Stores `value` under `key` (letters, digits, `-`, `_`, `/`, `=`, `.` as token separators); its revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NatsError) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { sys_kvStore_Put(&revision, handle, key, $0) }
        if status != NATS_OK { throw NatsError.last("put \(key) in \(bucket)", status) }
        return revision
    }

    /// The current value of `key`; nil when it has none (never put, deleted, or dropped by the bucket's max age).
    public func get(_ key: String) throws(NatsError) -> Entry? {
        var found: OpaquePointer?
        let status = sys_kvStore_Get(&found, handle, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let found else { throw NatsError.last("get \(key) from \(bucket)", status) }
        defer { sys_kvEntry_Destroy(found) }
        return Entry(value: sys_kvEntry_Value(found), revision: sys_kvEntry_Revision(found),
                     created: sys_kvEntry_Created(found))
    }

    /// Deletes `key`: a delete marker takes its place, and `get` and `keys` no longer see it.
    public func delete(_ key: String) throws(NatsError) {
        let status = sys_kvStore_Delete(handle, key)
        if status != NATS_OK { throw NatsError.last("delete \(key) from \(bucket)", status) }
    }

    /// Every key with a current value, in the order the bucket holds them; empty when there is none.
    public func keys() throws(NatsError) -> [String] {
        var options = kvWatchOptions()
        _ = sys_kvWatchOptions_Init(&options)
        options.Timeout = jetStream.timeout.natsMilliseconds
        let (status, keys) = sys_kvStore_Keys(handle, &options)
        if status == NATS_NOT_FOUND { return [] }
        if status != NATS_OK { throw NatsError.last("list the keys of \(bucket)", status) }
        return keys
    }
}
