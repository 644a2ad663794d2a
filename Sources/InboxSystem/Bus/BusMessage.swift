import CSystemd

/// A D-Bus message as a callback is handed it: read in order, as sd-bus reads it (sd_bus_message_read(3)), and only
/// during the callback (sd-bus owns it). Reading past the end or a type that is not next returns nil.
struct BusMessage: ~Copyable {
    let message: OpaquePointer

    /// The object path it concerns (a signal's sender object).
    var path: String? { sys_sd_bus_message_get_path(message).map { String(cString: $0) } }
    var member: String? { sys_sd_bus_message_get_member(message).map { String(cString: $0) } }

    /// The error a method reply carries, as `name: message`; nil for a reply that is no error.
    var error: BusError? {
        guard let error = sys_sd_bus_message_get_error(message), let name = error.pointee.name else { return nil }
        return BusError(name: String(cString: name), message: error.pointee.message.map { String(cString: $0) } ?? "")
    }

    func readString() -> String? {
        var value: UnsafePointer<CChar>?
        // 's' and 'o' both read as a C string.
        guard let type = peek()?.type, type == "s" || type == "o",
              sys_sd_bus_message_read_basic(message, CChar(UInt8(ascii: type == "s" ? "s" : "o")), &value) > 0,
              let value else { return nil }
        return String(cString: value)
    }

    func readInt32() -> Int32? {
        var value: Int32 = 0
        guard peek()?.type == "i", sys_sd_bus_message_read_basic(message, CChar(UInt8(ascii: "i")), &value) > 0 else {
            return nil
        }
        return value
    }

    func readUInt32() -> UInt32? {
        var value: UInt32 = 0
        guard peek()?.type == "u", sys_sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value) > 0 else {
            return nil
        }
        return value
    }

    /// Enters the container of `type` (`a`, `e`, `v`, `r`) whose contents are `contents`; false at the end of an
    /// array or when something else is next.
    func enter(_ type: Character, _ contents: String) -> Bool {
        sys_sd_bus_message_enter_container(message, CChar(type.asciiValue ?? 0), contents) > 0
    }

    func exit() { _ = sys_sd_bus_message_exit_container(message) }

    /// Skips the next complete type (`v`, `s`, ...).
    func skip(_ types: String) { _ = sys_sd_bus_message_skip(message, types) }

    /// What comes next: its type, and for a container its contents' signature.
    func peek() -> (type: Character, contents: String)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sys_sd_bus_message_peek_type(message, &type, &contents) > 0 else { return nil }
        return (Character(Unicode.Scalar(UInt8(bitPattern: type))), contents.map { String(cString: $0) } ?? "")
    }

    /// Reads a variant whose value is a string, an int32 or a uint32 (as Int64); nil for any other (it is skipped).
    func readVariantScalar() -> BusValue? {
        guard let next = peek(), next.type == "v" else { return nil }
        switch next.contents {
        case "s", "o":
            guard enter("v", next.contents) else { return nil }
            defer { exit() }
            return readString().map(BusValue.string)
        case "i":
            guard enter("v", "i") else { return nil }
            defer { exit() }
            return readInt32().map { .integer(Int64($0)) }
        case "u":
            guard enter("v", "u") else { return nil }
            defer { exit() }
            return readUInt32().map { .integer(Int64($0)) }
        case "(uo)":
            // A unit's Job: its id (0 for none) and object path.
            guard enter("v", "(uo)") else { return nil }
            defer { exit() }
            guard enter("r", "uo") else { return nil }
            defer { exit() }
            return readUInt32().map { .integer(Int64($0)) }
        default:
            skip("v")
            return nil
        }
    }

    /// A properties dictionary (`a{sv}`), keeping the scalar values of `wanted` only.
    func readProperties(_ wanted: Set<String>) -> [String: BusValue] {
        var properties: [String: BusValue] = [:]
        guard enter("a", "{sv}") else { return properties }
        while enter("e", "sv") {
            if let name = readString(), wanted.contains(name) {
                properties[name] = readVariantScalar()
            } else {
                skip("v")
            }
            exit()
        }
        exit()
        return properties
    }
}

/// A scalar property value.
enum BusValue: Equatable {
    case string(String)
    case integer(Int64)

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
}

/// An error reply: its D-Bus name and message.
struct BusError: Error, CustomStringConvertible {
    let name: String
    let message: String

    var description: String { message.isEmpty ? name : message }
}
