/// The delivery message of a cluster: what an ingest host publishes on a handler's delivery subject
/// (`ClusterNames.deliverySubject(for:)`) once it has put an arrival's content in the object store, and what a worker
/// host reads before it fetches that content and delivers it through its own lifecycle (docs/design.md, Cluster: the
/// core parts). One JSON object, written by `encode()`.
///
/// A worker reads it as untrusted input: anyone who may publish on the subject can write one. `parse` bounds the whole
/// message and every member, and refuses a message with a sentence naming the member at fault.
public struct ClusterDelivery: Sendable, Hashable {
    /// The delivery id the ingest host gave the arrival (32 lowercase hex digits), kept on every host.
    public var id: String
    /// The handler it goes to, as the ingest host selected it.
    public var handler: String
    /// The file's name, clean (`FileNames.sanitized`).
    public var name: String
    /// The file's UTI, as the ingest host decided it.
    public var contentType: String
    /// Its conformance chain, `contentType` first.
    public var contentTypes: [String]
    /// The claimed sender (`user.inbox.source-app`), checked like a source application; nil for none.
    public var sourceApp: String?
    /// The annotation, JSON text of at most `MetadataLimits.annotationBytes`; nil for none.
    public var annotation: [UInt8]?
    /// The ingest host's name.
    public var sourceHost: String
    /// The uid that owned the dropped file on the ingest host.
    public var sourceUID: UInt32
    /// The object's name in the cluster's object store (`ClusterNames.objectStore`).
    public var object: String
    /// The content's SHA-256 digest, as the object store keeps it.
    public var digest: ObjectDigest
    /// The content's size in bytes.
    public var size: Int64
    /// The document is a package: a directory delivered whole.
    public var isPackage: Bool
    /// When it arrived at the ingest host: wall-clock microseconds since the epoch.
    public var arrivedAtUSec: Int64

    /// Creates a delivery message.
    public init(id: String, handler: String, name: String, contentType: String, contentTypes: [String],
                sourceApp: String? = nil, annotation: [UInt8]? = nil, sourceHost: String, sourceUID: UInt32,
                object: String, digest: ObjectDigest, size: Int64, isPackage: Bool = false, arrivedAtUSec: Int64) {
        self.id = id
        self.handler = handler
        self.name = name
        self.contentType = contentType
        self.contentTypes = contentTypes
        self.sourceApp = sourceApp
        self.annotation = annotation
        self.sourceHost = sourceHost
        self.sourceUID = sourceUID
        self.object = object
        self.digest = digest
        self.size = size
        self.isPackage = isPackage
        self.arrivedAtUSec = arrivedAtUSec
    }

    /// What the sender attached, as the worker passes it on: the source application and the annotation.
    public var sender: SenderMetadata { SenderMetadata(sourceApp: sourceApp, annotation: annotation) }
}

extension ClusterDelivery {
    /// The largest message read: a maximal annotation, which travels as a JSON string and so at most doubles, and
    /// room for every other member at its bound.
    public static let maximumBytes = 160 * 1024
    /// The longest file name taken (`NAME_MAX`); a longer one is refused, a shorter one cleaned to the 200 bytes of
    /// `FileNames.sanitized`.
    public static let maximumNameBytes = 255
    /// The longest host name (DNS's bound).
    public static let maximumSourceHostBytes = 253
    /// The longest object name.
    public static let maximumObjectBytes = 255
    /// The most types in a conformance chain.
    public static let maximumContentTypes = 64
    /// The largest size and time: the largest integer a JSON number carries exactly everywhere (2^53 - 1).
    public static let maximumInteger: Int64 = (1 << 53) - 1
    /// The largest uid (`(uid_t)-1` is no uid).
    public static let maximumUID: Int64 = 4_294_967_294

    /// The message, one compact JSON object: every member, absent ones as null. The annotation travels as a JSON
    /// string holding its text, so that its nesting counts against a limit of its own rather than the message's.
    public func encode() -> [UInt8] {
        var out = JSONBytes(capacity: 512 + 2 * (annotation?.count ?? 0))
        out.raw("{\"deliveryID\":"); out.string(id)
        out.raw(",\"handler\":"); out.string(handler)
        out.raw(",\"name\":"); out.string(name)
        out.raw(",\"contentType\":"); out.string(contentType)
        out.raw(",\"contentTypes\":"); out.strings(contentTypes)
        out.raw(",\"sourceApplication\":"); out.string(sourceApp)
        out.raw(",\"annotation\":"); out.string(annotation.map { String(decoding: $0, as: UTF8.self) })
        out.raw(",\"sourceHost\":"); out.string(sourceHost)
        out.raw(",\"sourceUID\":"); out.integer(sourceUID)
        out.raw(",\"object\":"); out.string(object)
        out.raw(",\"digest\":"); out.string(digest.description)
        out.raw(",\"size\":"); out.integer(size)
        out.raw(",\"package\":"); out.boolean(isPackage)
        out.raw(",\"arrivedAtUSec\":"); out.integer(arrivedAtUSec)
        out.raw("}")
        return out.bytes
    }

    /// Reads a message as untrusted input: at most `maximumBytes`, a JSON object, each member of the right type and
    /// within its bounds, none twice; members it does not know are ignored. The name is refused when it could name
    /// anything but a file in one directory (empty, `.`, `..`, a '/', a NUL) or is longer than `maximumNameBytes`,
    /// and otherwise cleaned as a dropped file's name is (`FileNames.sanitized`).
    public static func parse(_ bytes: [UInt8]) -> Result<ClusterDelivery, ClusterDeliveryError> {
        do throws(ClusterDeliveryError) {
            return .success(try read(bytes))
        } catch {
            return .failure(error)
        }
    }

    /// `parse`, its refusal thrown.
    private static func read(_ bytes: [UInt8]) throws(ClusterDeliveryError) -> ClusterDelivery {
        guard bytes.count <= maximumBytes else {
            throw ClusterDeliveryError(nil, "the message is \(bytes.count) bytes, over the limit of \(maximumBytes)")
        }
        let members: [(key: String, raw: [UInt8])]
        switch JSON.members(bytes) {
        case .failure(let error): throw ClusterDeliveryError(nil, "the message is not JSON: \(error.message)")
        case .success(nil): throw ClusterDeliveryError(nil, "the message is not a JSON object")
        case .success(let found?): members = found
        }
        var message = Members()
        for (key, raw) in members where Members.known.contains(key) {
            guard message.raw[key] == nil else { throw ClusterDeliveryError(key, "\"\(key)\" appears twice") }
            message.raw[key] = raw
        }

        let id = try message.string("deliveryID")
        guard Delivery.isValidID(id) else {
            throw ClusterDeliveryError("deliveryID", "\"deliveryID\" is not 32 lowercase hex digits")
        }
        let handler = try message.string("handler")
        guard IdentifierSyntax.isValid(handler), NATSNameSyntax.isSubject(handler),
              handler.utf8.count <= ClusterNames.maximumAssetNameLength else {
            throw ClusterDeliveryError("handler", "\"handler\" is not a handler identifier a subject can carry "
                                       + "(letters, digits, '-', and dots between them, at most "
                                       + "\(ClusterNames.maximumAssetNameLength) bytes)")
        }
        let name = try fileName(try message.string("name"))
        let contentType = try message.string("contentType")
        guard isTypeIdentifier(contentType) else {
            throw ClusterDeliveryError("contentType", "\"contentType\" is not a type identifier (printable ASCII "
                                       + "without spaces, at most \(MetadataLimits.contentTypeBytes) bytes)")
        }
        let contentTypes = try message.strings("contentTypes", limit: maximumContentTypes)
        guard contentTypes.allSatisfy(isTypeIdentifier) else {
            throw ClusterDeliveryError("contentTypes", "\"contentTypes\" has an entry that is not a type identifier")
        }
        guard contentTypes.first == contentType else {
            throw ClusterDeliveryError("contentTypes", "\"contentTypes\" does not start with \"contentType\"")
        }
        let sourceApp = try message.string("sourceApplication", optional: true)
        if let sourceApp, !SourceApplication.isValid(sourceApp) {
            throw ClusterDeliveryError("sourceApplication", "\"sourceApplication\" is not a source application "
                                       + "(printable ASCII without spaces, at most \(MetadataLimits.sourceAppBytes) "
                                       + "bytes)")
        }
        let annotation = try message.string("annotation", optional: true).map { Array($0.utf8) }
        if let annotation {
            guard annotation.count <= MetadataLimits.annotationBytes else {
                throw ClusterDeliveryError("annotation", "\"annotation\" is \(annotation.count) bytes, over the "
                                           + "limit of \(MetadataLimits.annotationBytes)")
            }
            if let problem = JSON.validate(annotation) {
                throw ClusterDeliveryError("annotation", "\"annotation\" does not hold JSON: \(problem)")
            }
        }
        let sourceHost = try printable(try message.string("sourceHost"), "sourceHost", limit: maximumSourceHostBytes)
        let sourceUID = try message.integer("sourceUID", maximum: maximumUID, what: "a uid")
        let object = try printable(try message.string("object"), "object", limit: maximumObjectBytes)
        let digest: ObjectDigest
        switch ObjectDigest.parse(try message.string("digest")) {
        case .success(let parsed): digest = parsed
        case .failure(let problem): throw ClusterDeliveryError("digest", "\"digest\" \(problem.message)")
        }
        let size = try message.integer("size", maximum: maximumInteger, what: "a size in bytes")
        let isPackage = try message.bool("package")
        let arrived = try message.integer("arrivedAtUSec", maximum: maximumInteger, what: "a time in microseconds")
        return ClusterDelivery(id: id, handler: handler, name: name, contentType: contentType,
                               contentTypes: contentTypes, sourceApp: sourceApp, annotation: annotation,
                               sourceHost: sourceHost, sourceUID: UInt32(sourceUID), object: object, digest: digest,
                               size: size, isPackage: isPackage, arrivedAtUSec: arrived)
    }

    /// The name refused or cleaned, as `parse` says.
    private static func fileName(_ name: String) throws(ClusterDeliveryError) -> String {
        let refuse = { (problem: String) in ClusterDeliveryError("name", "\"name\" \(problem)") }
        guard name.utf8.count <= maximumNameBytes else {
            throw refuse("is \(name.utf8.count) bytes, over the limit of \(maximumNameBytes)")
        }
        guard !name.isEmpty else { throw refuse("is empty") }
        guard name != "." && name != ".." else { throw refuse("is '\(name)', not a file name") }
        guard !name.utf8.contains(UInt8(ascii: "/")) else { throw refuse("has a '/': a file name is not a path") }
        guard !name.utf8.contains(0) else { throw refuse("has a NUL byte") }
        return FileNames.sanitized(Array(name.utf8))
    }

    /// `text`, when it is 1 to `limit` bytes of printable ASCII without spaces.
    private static func printable(_ text: String, _ key: String, limit: Int) throws(ClusterDeliveryError) -> String {
        let refuse = { (problem: String) in ClusterDeliveryError(key, "\"\(key)\" \(problem)") }
        guard !text.isEmpty else { throw refuse("is empty") }
        guard text.utf8.count <= limit else { throw refuse("is \(text.utf8.count) bytes, over the limit of \(limit)") }
        guard !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw refuse("has a control character") }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("is not printable ASCII without spaces")
        }
        return text
    }

    /// A UTI, a `dyn.` identifier or a MIME type: printable ASCII without spaces, at most
    /// `MetadataLimits.contentTypeBytes` (the bound of `user.inbox.content-type`).
    private static func isTypeIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= MetadataLimits.contentTypeBytes
            && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The members `parse` reads, each by its raw JSON text, and the readers of each kind of value.
    private struct Members {
        /// The keys read; any other member is ignored.
        static let known: Set<String> = ["deliveryID", "handler", "name", "contentType", "contentTypes",
                                         "sourceApplication", "annotation", "sourceHost", "sourceUID", "object",
                                         "digest", "size", "package", "arrivedAtUSec"]

        /// The raw text of each known member present.
        var raw: [String: [UInt8]] = [:]

        /// The member's value, parsed (it is valid JSON: the message was); nil when absent.
        func value(_ key: String) -> JSONValue? {
            raw[key].flatMap { try? JSONValue.parse($0).get() }
        }

        /// A string member; an absent or null one is nil when `optional`, else refused.
        func string(_ key: String, optional: Bool) throws(ClusterDeliveryError) -> String? {
            switch value(key) {
            case .string(let text)?: return text
            case nil where optional, .null? where optional: return nil
            case nil: throw ClusterDeliveryError(key, "\"\(key)\" is missing")
            case let other?: throw ClusterDeliveryError(key, "\"\(key)\" is \(Self.kind(other)), not a string")
            }
        }

        /// A string member that must be there.
        func string(_ key: String) throws(ClusterDeliveryError) -> String {
            guard let text = try string(key, optional: false) else {
                throw ClusterDeliveryError(key, "\"\(key)\" is missing")
            }
            return text
        }

        /// An array member of 1 to `limit` strings.
        func strings(_ key: String, limit: Int) throws(ClusterDeliveryError) -> [String] {
            switch value(key) {
            case .array(let items)?:
                guard !items.isEmpty else { throw ClusterDeliveryError(key, "\"\(key)\" is empty") }
                guard items.count <= limit else {
                    throw ClusterDeliveryError(key, "\"\(key)\" has \(items.count) entries, over the limit of \(limit)")
                }
                var strings: [String] = []
                for item in items {
                    guard case .string(let text) = item else {
                        throw ClusterDeliveryError(key, "\"\(key)\" has \(Self.kind(item)) among its strings")
                    }
                    strings.append(text)
                }
                return strings
            case nil: throw ClusterDeliveryError(key, "\"\(key)\" is missing")
            case let other?: throw ClusterDeliveryError(key, "\"\(key)\" is \(Self.kind(other)), not an array")
            }
        }

        /// A whole number member from 0 to `maximum`, written as plain digits (no sign, fraction or exponent).
        func integer(_ key: String, maximum: Int64, what: String) throws(ClusterDeliveryError) -> Int64 {
            switch value(key) {
            case .number?: break
            case nil: throw ClusterDeliveryError(key, "\"\(key)\" is missing")
            case let other?: throw ClusterDeliveryError(key, "\"\(key)\" is \(Self.kind(other)), not a number")
            }
            let text = raw[key] ?? []
            guard text.count <= 16, text.allSatisfy({ (0x30...0x39).contains($0) }),
                  text == [0x30] || text.first != 0x30, let number = Int64(String(decoding: text, as: UTF8.self)),
                  number <= maximum else {
                throw ClusterDeliveryError(key, "\"\(key)\" is not \(what), a whole number from 0 to \(maximum)")
            }
            return number
        }

        /// A boolean member.
        func bool(_ key: String) throws(ClusterDeliveryError) -> Bool {
            switch value(key) {
            case .bool(let flag)?: return flag
            case nil: throw ClusterDeliveryError(key, "\"\(key)\" is missing")
            case let other?: throw ClusterDeliveryError(key, "\"\(key)\" is \(Self.kind(other)), not true or false")
            }
        }

        /// What kind of value it is, for messages: "a number", "null"...
        static func kind(_ value: JSONValue) -> String {
            switch value {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }
}

/// Why a delivery message was refused: one sentence, naming the member at fault when one is.
public struct ClusterDeliveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The member at fault; nil when the message as a whole is (too large, not JSON, not an object).
    public let member: String?
    /// The sentence.
    public let message: String
    /// The sentence.
    public var description: String { message }

    /// A refusal of `member` (nil: the message as a whole) with its sentence.
    init(_ member: String?, _ message: String) {
        self.member = member
        self.message = message
    }
}
