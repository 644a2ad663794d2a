import CShims
import Glibc

/// How a child ended.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// It called exit with this status (0...255).
    case exited(Int32)
    /// A signal ended it (core dumped or not).
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// Sends `signal` to the child through its pidfd, so a recycled pid can never be hit.
/// Fails with ESRCH once the child has been reaped.
public func sendSignal(_ signal: CInt, to process: SpawnedProcess) throws(SystemError) {
    _ = try retrying("pidfd_send_signal") { sys_pidfd_send_signal(process.pidfd.rawValue, signal) }
}

/// Collects the child's exit status if it has ended (waitid with WNOHANG); nil while it still runs.
/// Reaping twice is a programmer error and traps.
public func reap(_ process: SpawnedProcess) -> ExitStatus? {
    wait(for: process, options: WEXITED | WNOHANG)
}

/// Blocks the calling thread until the child ends and reaps it. For tests and tools, not the event loop.
public func waitForExit(_ process: SpawnedProcess) -> ExitStatus {
    guard let status = wait(for: process, options: WEXITED) else {
        preconditionFailure("waitid without WNOHANG returned no child for pid \(process.pid)")
    }
    return status
}

private func wait(for process: SpawnedProcess, options: CInt) -> ExitStatus? {
    var code: CInt = 0
    var status: CInt = 0
    if case .failure(let error) = retryingErrno({ sys_waitid_pidfd(process.pidfd.rawValue, &code, &status, options) }) {
        // ECHILD: reaped already, or SIGCHLD is ignored (then the kernel reaps for us); both are our bugs.
        preconditionFailure("waitid on the pidfd of pid \(process.pid): \(error)")
    }
    switch code {
    case 0: return nil
    case INBOX_CLD_EXITED: return .exited(status)
    case INBOX_CLD_KILLED, INBOX_CLD_DUMPED: return .signaled(status)
    default: preconditionFailure("waitid: unexpected si_code \(code) for pid \(process.pid)")
    }
}
