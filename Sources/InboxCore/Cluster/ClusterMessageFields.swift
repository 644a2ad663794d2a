/// The members of one JSON object of the protocol between the agent and its cluster child (ClusterProtocol), read as
/// untrusted input: each member at most once, each of the kind and within the bound asked, every refusal a sentence
/// naming the member. Members not asked for are ignored.
struct ClusterMessageFields {
    /// What is being read, for sentences: `"publish"`, `"state.handlers[2]"`.
    let context: String
    /// Each member's value.
    private var values: [String: JSONValue] = [:]
    /// Each member's raw text, at the top level only (where a delivery message is passed on as written).
    private var raw: [String: [UInt8]] = [:]

    /// The top-level object of a message of at most `ClusterProtocol.maximumMessageBytes`.
    init(message bytes: [UInt8]) throws(ClusterProtocolError) {
        context = "the message"
        guard bytes.count <= ClusterProtocol.maximumMessageBytes else {
            throw ClusterProtocolError("the message is \(bytes.count) bytes, over the limit of "
                                       + "\(ClusterProtocol.maximumMessageBytes)")
        }
        let members: [(key: String, raw: [UInt8])]
        switch JSON.members(bytes) {
        case .failure(let error): throw ClusterProtocolError("the message is not JSON: \(error.message)")
        case .success(nil): throw ClusterProtocolError("the message is not a JSON object")
        case .success(let found?): members = found
        }
        for (key, text) in members {
            guard raw[key] == nil else { throw ClusterProtocolError("\"\(key)\" appears twice in the message") }
            raw[key] = text
            // Valid JSON already: the whole message was.
            values[key] = (try? JSONValue.parse(text).get()) ?? .null
        }
    }

    /// An object nested in a message.
    init(_ value: JSONValue, context: String) throws(ClusterProtocolError) {
        self.context = context
        guard case .object(let members) = value else { throw ClusterProtocolError("\(context) is not an object") }
        for (key, member) in members {
            guard values[key] == nil else { throw ClusterProtocolError("\"\(key)\" appears twice in \(context)") }
            values[key] = member
        }
    }

    /// The raw text of a top-level member.
    func rawText(_ key: String) throws(ClusterProtocolError) -> [UInt8] {
        guard let text = raw[key] else { throw missing(key) }
        return text
    }

    private func missing(_ key: String) -> ClusterProtocolError {
        ClusterProtocolError("\"\(key)\" is missing from \(context)")
    }

    private func refuse(_ key: String, _ problem: String) -> ClusterProtocolError {
        ClusterProtocolError("\"\(key)\" of \(context) \(problem)")
    }

    /// A string of at most `limit` bytes without a NUL; with `printable`, 1 to `limit` bytes of printable ASCII
    /// without spaces. nil when absent or null and `optional`.
    func string(_ key: String, limit: Int, printable: Bool = false, optional: Bool) throws(ClusterProtocolError)
        -> String? {
        let text: String
        switch values[key] {
        case .string(let found)?: text = found
        case nil where optional, .null? where optional: return nil
        case nil: throw missing(key)
        case let other?: throw refuse(key, "is \(Self.kind(other)), not a string")
        }
        guard text.utf8.count <= limit else {
            throw refuse(key, "is \(text.utf8.count) bytes, over the limit of \(limit)")
        }
        guard !text.utf8.contains(0) else { throw refuse(key, "has a NUL byte") }
        if printable {
            guard !text.isEmpty else { throw refuse(key, "is empty") }
            guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw refuse(key, "is not printable ASCII without spaces")
            }
        }
        return text
    }

    /// A string that must be there.
    func string(_ key: String, limit: Int, printable: Bool = false) throws(ClusterProtocolError) -> String {
        guard let text = try string(key, limit: limit, printable: printable, optional: false) else { throw missing(key) }
        return text
    }

    /// A whole number from `minimum` to `maximum` (at most 2^53 - 1, what a JSON number carries exactly).
    func integer(_ key: String, minimum: Int64 = 0, maximum: Int64 = ClusterProtocol.maximumInteger)
        throws(ClusterProtocolError) -> Int64 {
        guard let value = try integer(key, minimum: minimum, maximum: maximum, optional: false) else {
            throw missing(key)
        }
        return value
    }

    /// The same, nil when absent or null and `optional`.
    func integer(_ key: String, minimum: Int64 = 0, maximum: Int64 = ClusterProtocol.maximumInteger, optional: Bool)
        throws(ClusterProtocolError) -> Int64? {
        let number: Double
        switch values[key] {
        case .number(let found)?: number = found
        case nil where optional, .null? where optional: return nil
        case nil: throw missing(key)
        case let other?: throw refuse(key, "is \(Self.kind(other)), not a number")
        }
        guard number.rounded() == number, number >= Double(minimum), number <= Double(maximum) else {
            throw refuse(key, "is not a whole number from \(minimum) to \(maximum)")
        }
        return Int64(number)
    }

    /// A boolean.
    func bool(_ key: String) throws(ClusterProtocolError) -> Bool {
        switch values[key] {
        case .bool(let flag)?: return flag
        case nil: throw missing(key)
        case let other?: throw refuse(key, "is \(Self.kind(other)), not true or false")
        }
    }

    /// An array of at most `limit` values.
    func array(_ key: String, limit: Int) throws(ClusterProtocolError) -> [JSONValue] {
        switch values[key] {
        case .array(let items)?:
            guard items.count <= limit else {
                throw refuse(key, "has \(items.count) entries, over the limit of \(limit)")
            }
            return items
        case nil: throw missing(key)
        case let other?: throw refuse(key, "is \(Self.kind(other)), not an array")
        }
    }

    /// An array of at most `limit` strings, each 1 to `bytes` bytes of printable ASCII without spaces.
    func strings(_ key: String, limit: Int, bytes: Int) throws(ClusterProtocolError) -> [String] {
        var strings: [String] = []
        for item in try array(key, limit: limit) {
            guard case .string(let text) = item, !text.isEmpty, text.utf8.count <= bytes,
                  text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw refuse(key, "has an entry that is not 1 to \(bytes) bytes of printable ASCII without spaces")
            }
            strings.append(text)
        }
        return strings
    }

    /// An array of at most `limit` objects, each read by `read`.
    func objects<T>(_ key: String, limit: Int, _ read: (ClusterMessageFields) throws(ClusterProtocolError) -> T)
        throws(ClusterProtocolError) -> [T] {
        var found: [T] = []
        for (index, item) in try array(key, limit: limit).enumerated() {
            found.append(try read(try ClusterMessageFields(item, context: "\(key)[\(index)] of \(context)")))
        }
        return found
    }

    /// An object member.
    func object(_ key: String) throws(ClusterProtocolError) -> ClusterMessageFields {
        guard let value = values[key] else { throw missing(key) }
        return try ClusterMessageFields(value, context: "\"\(key)\" of \(context)")
    }

    /// What kind of value it is, for sentences.
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
