/// Where a JetStream object store keeps what, in the layout every NATS client and `nats object` share (NATS ADR-20):
/// the bucket is the stream `OBJ_<bucket>`; an object's chunks are the messages of `$O.<bucket>.C.<nuid>`, in order;
/// its info (ObjectInfo, JSON) is the last message of `$O.<bucket>.M.<base64url of its name>`, rolled up so that the
/// subject keeps one.
public struct ObjectStoreLayout: Sendable, Hashable {
    /// The bucket's name: 1 to 64 letters, digits, `-` and `_` (ADR-20's restricted term).
    public let bucket: String

    /// The chunk size every client writes unless told otherwise, and the one this store writes: 128 KiB.
    public static let chunkSize = 128 * 1024
    /// The longest bucket name accepted.
    public static let maximumBucketLength = 64

    /// The layout of `bucket`, or why that cannot be a bucket's name.
    public init(bucket: String) throws(ClusterNameError) {
        if let reason = ClusterNames.nameProblem(bucket, maximum: Self.maximumBucketLength) {
            throw ClusterNameError(kind: .bucket, name: bucket, reason: reason)
        }
        self.bucket = bucket
    }

    /// The stream behind the bucket: `OBJ_<bucket>`.
    public var streamName: String { "OBJ_\(bucket)" }
    /// The stream's subjects for chunks, `$O.<bucket>.C.>`.
    public var chunkSubjects: String { "$O.\(bucket).C.>" }
    /// The stream's subjects for infos, `$O.<bucket>.M.>`.
    public var metaSubjects: String { "$O.\(bucket).M.>" }

    /// The subject of the chunks of the object stored as `nuid`.
    public func chunkSubject(nuid: String) -> String { "$O.\(bucket).C.\(nuid)" }

    /// The subject of the info of the object named `name`: its UTF-8 in padded base64url, so that any name (dots,
    /// spaces, slashes) is one subject token.
    public func metaSubject(name: String) -> String { "$O.\(bucket).M.\(Base64URL.encode(Array(name.utf8)))" }

    /// The object name a meta subject of this bucket stands for; nil for another subject, or a token that is not
    /// base64url of UTF-8.
    public func objectName(metaSubject subject: String) -> String? {
        let prefix = "$O.\(bucket).M."
        guard subject.hasPrefix(prefix), let bytes = Base64URL.decode(String(subject.dropFirst(prefix.count))) else {
            return nil
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A new object id: the 128 random bits given, as 22 base62 digits (the length of a NATS NUID), most significant
    /// first. A new one for every put, so that a name's new chunks never mix with its old ones.
    public static func nuid(random: (UInt64, UInt64)) -> String {
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        // Long division of the 128-bit number by 62, 32 bits at a time.
        var words: [UInt64] = [random.0 >> 32, random.0 & 0xFFFF_FFFF, random.1 >> 32, random.1 & 0xFFFF_FFFF]
        var out = [UInt8](repeating: digits[0], count: 22)
        for position in (0..<22).reversed() {
            var remainder: UInt64 = 0
            for index in words.indices {
                let value = remainder << 32 | words[index]
                words[index] = value / 62
                remainder = value % 62
            }
            out[position] = digits[Int(remainder)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A bucket name the object store or key-value layer cannot use, and why.
public struct ClusterNameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the name was to name.
    public enum Kind: String, Sendable, Equatable {
        /// A key-value or object store bucket's name.
        case bucket = "bucket name"
    }

    /// What the name was to name.
    public let kind: Kind
    /// The name as given.
    public let name: String
    /// Why it cannot be used, as the end of a sentence (`is empty`).
    public let reason: String

    /// `bucket name "a.b" has a character other than letters, digits, '-' and '_'`.
    public var description: String { "\(kind.rawValue) \(JSON.quote(name)) \(reason)" }
}
