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

/// Blocks until child `pid` ends and reaps it (waitpid(2)), for a child whose pidfd is not at hand, such as one that
/// was started but could not be watched; nil when it is not our unreaped child (ECHILD).
@discardableResult
public func waitForExit(pid: pid_t) -> ExitStatus? {
    var status: CInt = 0
    guard case .success = retryingErrno({ sys_waitpid(pid, &status, 0) }) else { return nil }
    // wait(2)'s macros: the low 7 bits are the signal that ended it, or 0 with the exit status in the next 8.
    let signal = status & 0x7F
    return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
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
