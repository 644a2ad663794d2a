import Foundation

/// A private cupsd for one test: every path under a temp directory, listening on DIR/cups.sock only, stopped by its
/// PID at the end. Its queues print through the Generic PDF Printer PPD (cups-filters) to a `file:` device: what comes
/// out is the PDF the filter chain made of the document, readable by the test, and nothing is written under /etc
/// (cups-pdf reads its settings only from /etc/cups). CUPS 2.4 opens a `file:` device without O_CREAT or O_TRUNC, so
/// each queue prints into an empty file made for it, once.
final class PrintServer: @unchecked Sendable {
    // @unchecked: each test owns its server and uses it from one task at a time.
    let root: URL
    private var process: Process?
    var socket: String { root.appendingPathComponent("cups.sock").path }
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["CUPS_SERVER"] = socket
        environment.removeValue(forKey: "PRINTER")
        environment.removeValue(forKey: "LPDEST")
        return environment
    }

    static let available = FileManager.default.isExecutableFile(atPath: "/usr/sbin/cupsd")
        && FileManager.default.fileExists(atPath: "/usr/share/ppd/cupsfilters/Generic-PDF_Printer-PDF.ppd")
    static let required = ProcessInfo.processInfo.environment["CI"] == "true"
    static let missing = "no cupsd or cups-filters: apt-get install cups-daemon cups-client cups-filters (scripts/setup)"

    /// `keepsHistory: false` purges each job as soon as it ended (`PreserveJobHistory No`), as some servers are set up.
    init(_ name: String = #function, keepsHistory: Bool = true) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("inboxd-print-\(name.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))")
        let fm = FileManager.default
        for directory in ["spool", "cache", "state", "log", "out", "tmp"] {
            try fm.createDirectory(at: root.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        // The filters run as lp: they make temporary files and write the output file.
        chmod(root.path, 0o755)
        chmod(root.appendingPathComponent("tmp").path, 0o1777)
        chmod(root.appendingPathComponent("out").path, 0o777)
        let path = root.path
        var files = "ServerRoot \(path)\nRequestRoot \(path)/spool\nCacheDir \(path)/cache\nStateDir \(path)/state\n"
        files += "TempDir \(path)/tmp\nAccessLog \(path)/log/access_log\nErrorLog \(path)/log/error_log\n"
        files += "PageLog \(path)/log/page_log\nServerBin /usr/lib/cups\nDataDir /usr/share/cups\nFileDevice Yes\n"
        // cupsd refuses User root; as another user it runs as that user.
        files += getuid() == 0 ? "User lp\nGroup lp\nSystemGroup root\n" : ""
        try files.write(to: root.appendingPathComponent("cups-files.conf"), atomically: true, encoding: .utf8)
        let conf = "Listen \(socket)\nBrowsing No\nWebInterface No\nErrorPolicy abort-job\nDefaultAuthType None\n"
            + (keepsHistory ? "" : "PreserveJobHistory No\n")
            + "<Location />\n  Order allow,deny\n  Allow all\n</Location>\n"
        try conf.write(to: root.appendingPathComponent("cupsd.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    func start() throws {
        let cupsd = Process()
        // The test process blocks most signals (SIGTERM, SIGCHLD) and exec keeps the mask: cupsd needs them, so it is
        // started through python3 with an empty mask.
        cupsd.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        cupsd.arguments = ["-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                           + "os.execv(sys.argv[1], sys.argv[1:])", "/usr/sbin/cupsd",
                           "-f", "-c", root.appendingPathComponent("cupsd.conf").path,
                           "-s", root.appendingPathComponent("cups-files.conf").path]
        cupsd.standardOutput = FileHandle.nullDevice
        cupsd.standardError = FileHandle.nullDevice
        cupsd.standardInput = FileHandle.nullDevice
        try cupsd.run()
        process = cupsd
        try waitUntil("cupsd answers on \(socket)", timeout: 20) {
            try run("/usr/bin/lpstat", ["-r"], environment: environment).stdout.contains("scheduler is running")
        }
    }

    /// Stops the cupsd this server started (by its PID), and waits for it.
    func stop() {
        guard let process else { return }
        // SIGKILL if SIGTERM has not ended it within 10 s; only ever this PID.
        stopStarted(process, grace: 10)
        self.process = nil
    }

    /// Adds an enabled queue printing to `out/NAME.pdf`; the output file's URL.
    @discardableResult
    func addQueue(_ name: String) throws -> URL {
        let output = root.appendingPathComponent("out/\(name).pdf")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        chmod(output.path, 0o666)
        try lp("/usr/sbin/lpadmin", ["-p", name, "-E", "-v", "file://" + output.path,
                                     "-m", "lsb/usr/cupsfilters/Generic-PDF_Printer-PDF.ppd"])
        return output
    }

    /// Runs a CUPS client against this server; fails the test when it fails.
    @discardableResult
    func lp(_ executable: String, _ arguments: [String]) throws -> String {
        let result = try run(executable, arguments, environment: environment)
        guard result.status == 0 else { throw PrintServerError(what: "\(executable) \(arguments): \(result.stderr)") }
        return result.stdout
    }
}

struct PrintServerError: Error { let what: String }
