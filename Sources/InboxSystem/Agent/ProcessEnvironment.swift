import Glibc

/// The process's environment and working directory.
public enum ProcessEnvironment {
    /// geteuid(2): who the agent runs as.
    public static var effectiveUID: UInt32 { geteuid() }
    /// Whether the agent runs as root, with the powers that gives it (identities, chown).
    public static var isRoot: Bool { geteuid() == 0 }
    /// getpid(2).
    public static var processID: Int32 { getpid() }

    /// getcwd(3); nil when it fails (the directory was removed, or its path is too long).
    public static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The environment as a dictionary (environ(7)).
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// This program, to start its content sniffer from (/proc/self/exe, read once).
    public static let ownExecutable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "/proc/self/exe" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
