/// Assignments written as a systemd `EnvironmentFile=` (systemd.exec(5)): one `NAME="value"` line each, the value in
/// double quotes with `\`, `"`, `` ` `` and `$` escaped by a backslash, so that every byte of it (a newline or a quote
/// in a file name, an annotation's JSON) reads back as it was. A `Unit=` handler's unit reads the delivery so.
public enum EnvironmentFile {
    /// The file for `assignments` (`NAME=value`, as a launched handler's environment has them).
    public static func render(_ assignments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for assignment in assignments {
            guard let equals = assignment.utf8.firstIndex(of: UInt8(ascii: "=")) else { continue }
            out += assignment.utf8[..<equals]
            out += Array("=\"".utf8)
            for byte in assignment.utf8[assignment.utf8.index(after: equals)...] {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "`")
                    || byte == UInt8(ascii: "$") {
                    out.append(UInt8(ascii: "\\"))
                }
                out.append(byte)
            }
            out += Array("\"\n".utf8)
        }
        return out
    }
}
