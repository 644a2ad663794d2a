import Glibc

/// Process-wide signal handling, and signals to other processes by pid.
public enum Signals {
    /// Blocks the signals the event loop takes through signalfd (sd_event_add_signal(3)); call before any thread
    /// is started, so that every thread inherits the mask.
    public static func block(_ signals: [CInt]) {
        var set = makeSet(signals)
        // pthread_sigmask only fails for a bad `how`; nothing to handle.
        _ = sys_pthread_sigmask(SIG_BLOCK, &set)
    }

    /// Unblocks them in the calling thread: a parent may have started us with them blocked (the mask survives exec).
    public static func unblock(_ signals: [CInt]) {
        var set = makeSet(signals)
        _ = sys_pthread_sigmask(SIG_UNBLOCK, &set)
    }

    /// Waits up to `duration` for one of `signals`, which the caller has blocked (`block`): the signal taken, or nil
    /// when none came. A program without an event loop sleeps here and still hears SIGTERM at once.
    public static func wait(for signals: [CInt], upTo duration: Duration) -> CInt? {
        var set = makeSet(signals)
        let (seconds, attoseconds) = duration.components
        var timeout = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        let taken = sys_sigtimedwait(&set, &timeout)
        return taken > 0 ? taken : nil
    }

    /// Ignores SIGPIPE so a vanished journal or reader turns into EPIPE, not death.
    public static func ignorePipe() {
        _ = sys_signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `handler` on each of `signals` (sigaction(2), empty mask, no SA_RESTART: a blocking read or write they
    /// interrupt fails with EINTR, so a loop can look at what the handler recorded). `handler` must be
    /// async-signal-safe (signal-safety(7)): an atomic store, nothing that allocates or locks.
    public static func handle(_ signals: [CInt], with handler: @convention(c) (CInt) -> Void) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        _ = sys_sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        // sigaction only fails for a bad signal number or SIGKILL/SIGSTOP: our bug.
        for signal in signals { precondition(sys_sigaction(signal, &action) == 0, "sigaction(\(signal))") }
    }

    /// kill(2) to one process. Prefer `sendSignal(_:to:)` for a child with a pidfd: a pid can be reused once its
    /// process is reaped.
    @discardableResult
    public static func send(_ signal: Signal, to pid: pid_t) -> Errno? {
        precondition(pid > 0, "kill(\(pid)): a pid of 0 or less names a group or everyone")
        return sys_kill(pid, signal.rawValue) == 0 ? nil : .current
    }

    /// kill(2) to every process in the group `group` (the pid of its leader).
    @discardableResult
    public static func send(_ signal: Signal, toGroup group: pid_t) -> Errno? {
        precondition(group > 1, "kill(-\(group)): not a process group of ours")
        return sys_kill(-group, signal.rawValue) == 0 ? nil : .current
    }

    /// Whether a process `pid` exists (kill(2) with signal 0), ours or someone else's (EPERM). A pid can be reused:
    /// this says that some process has it, not which.
    public static func processExists(_ pid: pid_t) -> Bool {
        precondition(pid > 0, "kill(\(pid), 0): a pid of 0 or less names a group or everyone")
        return sys_kill(pid, 0) == 0 || Errno.current == .notPermitted
    }

    private static func makeSet(_ signals: [CInt]) -> sigset_t {
        var set = sigset_t()
        _ = sys_sigemptyset(&set)
        for signal in signals { _ = sys_sigaddset(&set, signal) }
        return set
    }
}
