import CShims
import InboxCore

/// The desktop's clipboard, for the options menu's Copy when no directory is given: in an X session the CLIPBOARD
/// selection, owned with every target at once (`X11Clipboard`); in a Wayland session `wl-copy`, which offers one type.
public enum DesktopClipboard {
    /// Which clipboard a session has.
    public enum Session: String, Sendable {
        case wayland, x11
    }

    /// The most bytes put on the clipboard: its owner holds them in memory until another program takes it. (An X
    /// owner is handed them with the rest of its state, which `X11SelectionHandoff.maximumBytes` leaves room for.)
    public static let maximumBytes = 256 << 20

    /// The session the environment names: Wayland when `WAYLAND_DISPLAY` is set, else X when `DISPLAY` is; nil
    /// for neither (a console, ssh without forwarding, a service).
    public static var session: Session? {
        if !(CurrentProcess.environment("WAYLAND_DISPLAY") ?? "").isEmpty { return .wayland }
        if !(CurrentProcess.environment("DISPLAY") ?? "").isEmpty { return .x11 }
        return nil
    }

    /// The targets offered for a document, in order: in an X session its `file://` URI as `text/uri-list` and, for a
    /// file, its bytes as its own MIME type (`application/octet-stream` when it has none); in a Wayland session one
    /// of them, since wl-copy offers one type: a file's bytes, a package's URI.
    public static func targets(in session: Session, mimeType: String?, isPackage: Bool) -> [String] {
        let content = mimeType.flatMap { $0.isEmpty || $0 == uriList ? nil : $0 } ?? "application/octet-stream"
        switch session {
        case .x11: return isPackage ? [uriList] : [uriList, content]
        case .wayland: return [isPackage ? uriList : content]
        }
    }

    /// The MIME type of a list of URIs (RFC 2483): what file managers copy and paste files as.
    public static let uriList = "text/uri-list"

    /// A `text/uri-list` of one URI: the line and its CRLF.
    public static func uriListBytes(_ url: String) -> [UInt8] { Array((url + "\r\n").utf8) }

    /// Puts `targets` (MIME type and bytes) on the session's clipboard, and leaves whatever serves them running in
    /// the background until another program takes the clipboard.
    public static func copy(_ targets: [(type: String, bytes: [UInt8])], in session: Session) -> Result<Void, ClipboardError> {
        switch session {
        case .x11:
            return X11Clipboard.copy(targets, display: CurrentProcess.environment("DISPLAY") ?? "")
        case .wayland:
            guard let target = targets.first else { return .success(()) }
            return waylandCopy(target)
        }
    }

    /// `wl-copy --type TYPE` with the bytes on its stdin: it reads them, forks a process that serves them, and exits.
    private static func waylandCopy(_ target: (type: String, bytes: [UInt8])) -> Result<Void, ClipboardError> {
        guard let program = GeneratorTool.locate("wl-copy") else {
            return .failure(.missingTool("wl-copy", package: "wl-clipboard"))
        }
        var environment: [String] = []
        for (key, value) in CurrentProcess.environmentVariables.sorted(by: { $0.key < $1.key }) {
            environment.append(key + "=" + value)
        }
        let input: FileDescriptor, null: FileDescriptor, log: FileDescriptor
        do throws(SystemError) {
            input = try makeStandardInput(name: "inboxctl-clipboard", contents: target.bytes)
            null = try openNullDevice()
            log = try makeLog()
        } catch {
            return .failure(.system(error))
        }
        defer {
            input.close()
            null.close()
            log.close()
        }
        // What wl-copy says goes to a file, not a pipe: the process it leaves behind may keep its stderr open.
        let request = SpawnRequest(executablePath: program, arguments: ["wl-copy", "--type", target.type],
                                   environment: environment, standardInput: input, standardOutput: null,
                                   standardError: log)
        let process: SpawnedProcess
        do { process = try spawn(request) } catch {
            return .failure(.system(SystemError(error.step, path: error.path, errno: error.errno)))
        }
        defer { process.pidfd.close() }
        switch waitForExit(process) {
        case .exited(0): return .success(())
        case let status:
            let said = GeneratorSandbox.lastLine(GeneratorSandbox.tail(of: log))
            return .failure(.toolFailed("wl-copy", said.isEmpty ? "it \(status)" : said))
        }
    }

    /// An anonymous file for a program's messages, read back afterwards.
    private static func makeLog() throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try retrying("memfd_create", path: "wl-copy") {
            sys_memfd_create("wl-copy", INBOX_MFD_CLOEXEC)
        })
    }
}
