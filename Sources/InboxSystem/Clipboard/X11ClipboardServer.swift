import Glibc
import InboxCore

/// The X clipboard's owner: inboxctl spawned by `X11Clipboard` with `argument` first and the display after it (for
/// whoever lists processes). Its fd 3 is the connection whose window owns the CLIPBOARD, its stdin a sealed memory
/// file holding the `X11SelectionHandoff`, its stdout and stderr /dev/null; spawn gives it a session of its own (no
/// terminal's hang-up reaches it), `/` as its directory, an empty signal mask, the signals' default actions and
/// nothing else open. It answers requests (`X11SelectionServer`) until another client takes the clipboard or the
/// server goes away, then exits. Nobody waits for it: it outlives the inboxctl that started it, as xclip's owner
/// outlives xclip, and is reparented when that inboxctl exits (without a parent-death signal, it lives on).
public enum X11ClipboardServer {
    /// inboxctl's hidden first argument that makes it the owner; not an option for users.
    public static let argument = "--serve-x11-clipboard"

    /// Spawns the owner for `handoff`, with `connection` (the caller keeps it, and closes it) as its fd 3; returns
    /// once it has exec'd.
    static func start(_ handoff: X11SelectionHandoff, connection: FileDescriptor,
                      display: String) -> Result<Void, ClipboardError> {
        let null: FileDescriptor, input: FileDescriptor
        do throws(SystemError) {
            null = try openNullDevice()
            do throws(SystemError) {
                input = try makeMemoryFile(name: "inboxctl-clipboard", contents: handoff.encoded())
            } catch {
                null.close()
                throw error
            }
        } catch {
            return .failure(.system(error))
        }
        defer {
            input.close()
            null.close()
        }
        // /proc/self/exe in the child is this very program, even one replaced on disk since it started.
        var request = SpawnRequest(executablePath: "/proc/self/exe",
                                   arguments: [CurrentProcess.executablePath ?? "inboxctl", argument, display],
                                   standardInput: input, standardOutput: null, standardError: null)
        request.descriptor3 = connection
        // It may run for days: it keeps no directory busy (a disk the file was copied from can be unmounted).
        request.workingDirectory = "/"
        do {
            let process = try spawn(request)
            // Not waited for. Until inboxctl exits (right after this answer) an owner that ended is its zombie; then
            // it is init's, or the session's subreaper's.
            process.pidfd.close()
            return .success(())
        } catch {
            return .failure(.system(SystemError(error.step, path: error.path, errno: error.errno)))
        }
    }

    /// The owner's side, `arguments` those after `argument`: reads the handoff, then serves. The exit status: 0 once
    /// the selection is lost or the connection ends; 1 for a handoff that cannot be read; 2 when fd 3 is no socket
    /// (inboxctl run with `argument` by hand).
    public static func run(_ arguments: [String]) -> CInt {
        let socket = FileDescriptor(rawValue: 3)
        guard let status = try? socket.status(), status.st_mode & S_IFMT == S_IFSOCK else {
            FileDescriptor.standardError.write(all: "inboxctl: \(argument) is inboxctl's own way to serve the X "
                                               + "clipboard, not a command\n")
            return 2
        }
        let handoff: X11SelectionHandoff
        switch readHandoff() {
        case .success(let read): handoff = read
        case .failure(let reason):
            FileDescriptor.standardError.write(all: "inboxctl: \(argument): \(reason)\n")
            return 1
        }
        // The memory file's pages go with its last descriptor: the targets' bytes are held once, in the server.
        releaseStandardInput()
        // A server gone away is EPIPE, and the end of the loop, rather than death by SIGPIPE.
        Signals.ignorePipe()
        var server = handoff.server
        let connection = X11Connection(socket: socket, events: handoff.events)
        // The answers are sent as they are: an error for one (a requestor that went away meanwhile) changes nothing
        // for the next.
        while true {
            guard let message = try? connection.next() else { return 0 }
            let (requests, lost) = server.handle(message)
            for request in requests where (try? connection.send(request)) == nil { return 0 }
            if lost { return 0 }
        }
    }

    /// Why a handoff could not be read.
    private struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The handoff on stdin: a regular file (the sealed memory file), read whole from its start.
    private static func readHandoff() -> Result<X11SelectionHandoff, Unreadable> {
        let input = FileDescriptor.standardInput
        let status: stat
        do { status = try input.status() } catch { return .failure(Unreadable(description: "stdin: \(error)")) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(Unreadable(description: "stdin is no file with the handoff"))
        }
        guard status.st_size <= X11SelectionHandoff.maximumBytes else {
            return .failure(Unreadable(description: "\(X11SelectionHandoff.Malformed.tooLarge(Int(status.st_size)))"))
        }
        // One byte more than the size: a file that grew since fstat (a sealed one cannot) is refused, not cut short.
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        let read = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) -> Int in try input.read(fully: buffer, at: 0) }
        }
        switch read {
        case .success(let count): bytes.removeLast(bytes.count - count)
        case .failure(let error): return .failure(Unreadable(description: "stdin: \(error)"))
        }
        return X11SelectionHandoff.parse(bytes).mapError { Unreadable(description: "the handoff on stdin is \($0)") }
    }

    /// /dev/null in place of stdin (or stdin closed, when /dev/null cannot be opened).
    private static func releaseStandardInput() {
        guard let null = try? openNullDevice() else {
            FileDescriptor.standardInput.close()
            return
        }
        _ = sys_dup2(null.rawValue, 0)
        null.close()
    }
}
