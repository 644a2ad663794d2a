import Foundation

/// A registration directory of its own for `inboxctl types`, `info` and `handlers`, and the agent options that
/// point inboxctl at it.
struct InspectWorkspace {
    let directory: URL
    let handlers: URL
    /// An empty inboxd.conf and a defaults.conf that may not exist: the host's /etc/inboxd never takes part.
    let agentOptions: [String]

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxctl-inspect-\(UUID().uuidString)")
        handlers = directory.appendingPathComponent("handlers.d")
        try FileManager.default.createDirectory(at: handlers, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("inboxd.conf")
        try "".write(to: config, atomically: true, encoding: .utf8)
        agentOptions = ["--config", config.path, "--handlers", handlers.path,
                        "--defaults", directory.appendingPathComponent("defaults.conf").path]
    }
}

/// A suite that runs inboxctl against an ``InspectWorkspace``: where its files are, and how to add to them.
protocol InspectsWorkspace {
    var workspace: InspectWorkspace { get }
}

extension InspectsWorkspace {
    var directory: URL { workspace.directory }
    var handlers: URL { workspace.handlers }
    var agentOptions: [String] { workspace.agentOptions }

    func write(_ name: String, _ text: String, in folder: URL? = nil) throws -> URL {
        let url = (folder ?? directory).appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func write(_ name: String, bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    func register(_ identifier: String, _ sections: String) throws {
        _ = try write("\(identifier).handler", "[Handler]\nIdentifier=\(identifier)\nExec=/bin/true %f\n" + sections,
                      in: handlers)
    }

    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }
}

/// Runs inboxctl with these arguments.
func inboxctl(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    try run(Binaries.inboxctl.path, arguments, environment: environment)
}
