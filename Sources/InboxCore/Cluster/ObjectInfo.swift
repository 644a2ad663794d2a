/// What a JetStream object store says of one object (NATS ADR-20, ObjectInfo): the JSON of the last message on its
/// meta subject. It is written as nats.go writes it (`name`, `options.max_chunk_size`, `bucket`, `nuid`, `size`,
/// `mtime`, `chunks`, `digest`, and `deleted` when it is), so that `nats object` and every client read it; `mtime`
/// is written as the zero time, as nats.go does, and read from the message's own time instead.
public struct ObjectInfo: Sendable, Equatable {
    /// The object's name in the bucket (any UTF-8).
    public var name: String
    /// The bucket it is in.
    public var bucket: String
    /// The id its chunks are stored under (`$O.<bucket>.C.<nuid>`).
    public var nuid: String
    /// Its length in bytes.
    public var size: UInt64
    /// How many chunk messages hold it.
    public var chunks: Int
    /// `SHA-256=<base64url of the digest>`; nil for a deleted object.
    public var digest: String?
    /// Whether this is a deletion marker: the object is gone, its chunks purged.
    public var deleted: Bool
    /// The chunk size it was written with (`options.max_chunk_size`), when the writer said.
    public var chunkSize: Int?
    /// When the info was stored, in nanoseconds since the epoch: the meta message's time, not part of the JSON.
    public var modified: Int64?

    /// The digest algorithm's prefix in `digest`, as ADR-20 spells it.
    public static let digestPrefix = "SHA-256="

    /// An info from its parts.
    public init(name: String, bucket: String, nuid: String, size: UInt64, chunks: Int, digest: String?,
                deleted: Bool = false, chunkSize: Int? = ObjectStoreLayout.chunkSize, modified: Int64? = nil) {
        self.name = name
        self.bucket = bucket
        self.nuid = nuid
        self.size = size
        self.chunks = chunks
        self.digest = digest
        self.deleted = deleted
        self.chunkSize = chunkSize
        self.modified = modified
    }

    /// `SHA-256=` and the 32 bytes in padded base64url (`ObjectDigest`'s spelling).
    public static func digestText(_ sha256: [UInt8]) -> String {
        ObjectDigest(sha256: sha256)?.description ?? digestPrefix + Base64URL.encode(sha256)
    }

    /// The 32 bytes `digest` names; nil when there is none, or it is not SHA-256 (the prefix is matched without
    /// regard to case: early clients wrote `sha-256=`).
    public var digestBytes: [UInt8]? {
        guard let digest, digest.uppercased().hasPrefix(Self.digestPrefix) else { return nil }
        let spelled = ObjectDigest.prefix + digest.dropFirst(Self.digestPrefix.count)
        guard case .success(let parsed) = ObjectDigest.parse(spelled) else { return nil }
        return parsed.bytes
    }

    /// The info as stored on the meta subject.
    public func json() -> [UInt8] {
        var out = Array("{\"name\":".utf8)
        JSON.appendQuoted(name, to: &out)
        if let chunkSize { out += Array(",\"options\":{\"max_chunk_size\":\(chunkSize)}".utf8) }
        out += Array(",\"bucket\":".utf8)
        JSON.appendQuoted(bucket, to: &out)
        out += Array(",\"nuid\":".utf8)
        JSON.appendQuoted(nuid, to: &out)
        out += Array(",\"size\":\(size),\"mtime\":\"0001-01-01T00:00:00Z\",\"chunks\":\(chunks)".utf8)
        if let digest {
            out += Array(",\"digest\":".utf8)
            JSON.appendQuoted(digest, to: &out)
        }
        if deleted { out += Array(",\"deleted\":true".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Reads an info from a meta message's body; `modified` is the message's time. Fails for text that is not JSON,
    /// or lacks a name, a bucket or a nuid, or whose numbers are not counts.
    public static func parse(_ bytes: [UInt8], modified: Int64? = nil) -> Result<ObjectInfo, JSONError> {
        let value: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let parsed): value = parsed
        case .failure(let error): return .failure(error)
        }
        guard let name = value["name"]?.string, let bucket = value["bucket"]?.string,
              let nuid = value["nuid"]?.string else {
            return .failure(JSONError(message: "an object info needs a name, a bucket and a nuid"))
        }
        let size = value["size"].map { $0.int } ?? 0
        let chunks = value["chunks"].map { $0.int } ?? 0
        guard let size, size >= 0, let chunks, chunks >= 0 else {
            return .failure(JSONError(message: "an object info's size and chunks are counts"))
        }
        return .success(ObjectInfo(name: name, bucket: bucket, nuid: nuid, size: UInt64(size), chunks: chunks,
                                   digest: value["digest"]?.string, deleted: value["deleted"]?.bool ?? false,
                                   chunkSize: value["options"]?["max_chunk_size"]?.int, modified: modified))
    }
}
