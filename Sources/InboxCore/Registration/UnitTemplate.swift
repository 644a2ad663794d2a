/// `Unit=NAME@.service` in a registration's [Handler]: a systemd template unit, of which each delivery starts one
/// instance, `NAME@<escaped delivery id>.service` (systemd.unit(5), "instance"). The rules of unit names and of their
/// escaping are systemd's (systemd-escape(1)), so that what the agent starts is what `systemctl status` names.
public struct UnitTemplate: Sendable, Hashable, CustomStringConvertible {
    /// What stands before the `@`.
    public let prefix: String

    /// A unit name is at most this long, suffix included (systemd's UNIT_NAME_MAX).
    public static let maximumLength = 255

    /// Why a Unit= value is no template of a service.
    public struct ParseError: Error, Sendable, Hashable {
        public let message: String
    }

    /// Checks a Unit= value: `NAME@.service`, NAME of systemd's unit-name characters (letters, digits and `:-_.\`).
    public init(parsing text: String) throws(ParseError) {
        let shown = "'\(text.abbreviated)'"
        guard text.hasSuffix(".service") else {
            throw ParseError(message: "Unit= must name a template service, NAME@.service, not \(shown)")
        }
        let stem = text.dropLast(".service".count)
        guard stem.hasSuffix("@") else {
            throw ParseError(message: "Unit= must name a template, NAME@.service (each delivery starts an instance), "
                             + "not \(shown)")
        }
        let name = String(stem.dropLast())
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte), !name.contains("@") else {
            throw ParseError(message: "invalid unit name \(shown) in Unit=: NAME may hold letters, digits and ':-_.\\'")
        }
        // The longest instance name a delivery gives it (32 hex digits) must fit.
        guard name.utf8.count + "@.service".count + 32 <= Self.maximumLength else {
            throw ParseError(message: "unit name \(shown) in Unit= is too long for its instances' names")
        }
        prefix = name
    }

    /// `NAME@.service`.
    public var description: String { prefix + "@.service" }

    /// The instance for one delivery: `NAME@<escaped id>.service`.
    public func instance(_ id: String) -> String {
        prefix + "@" + Self.escape(id) + ".service"
    }

    /// systemd's escaping of a string for a unit name (`systemd-escape`, unit_name_escape): letters, digits, `:`,
    /// `_` and `.` stay (a leading `.` does not), `/` becomes `-`, and every other byte `\xNN`.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for (index, byte) in text.utf8.enumerated() {
            if byte == UInt8(ascii: "/") {
                escaped.append("-")
            } else if (byte == UInt8(ascii: ".") && index > 0) || isAlphanumeric(byte) || byte == UInt8(ascii: ":")
                        || byte == UInt8(ascii: "_") {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "\\x" + hex(byte)
            }
        }
        return escaped
    }

    /// The D-Bus object path systemd gives a unit (sd_bus_path_encode under `/org/freedesktop/systemd1/unit`):
    /// every byte but a letter, or a digit that is not the first, becomes `_NN`.
    public static func objectPath(of unit: String) -> String {
        var label = ""
        for (index, byte) in unit.utf8.enumerated() {
            if (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (index > 0 && byte >= 0x30 && byte <= 0x39) {
                label.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                label += "_" + hex(byte)
            }
        }
        return "/org/freedesktop/systemd1/unit/" + (label.isEmpty ? "_" : label)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "\\")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }
}
