import CShims
import CSystemd
import Glibc

/// The agent's single-threaded event loop: libsystemd's sd-event (sd-event(3)).
/// Every callback runs on the thread that called `run()`.
public final class EventLoop {
    let event: OpaquePointer

    public init() throws(SystemError) {
        var pointer: OpaquePointer?
        let result = sys_sd_event_new(&pointer)
        guard result >= 0, let pointer else {
            throw SystemError("sd_event_new", errno: Errno(rawValue: -result))
        }
        event = pointer
    }

    deinit { sys_sd_event_unref(event) }

    /// Runs until `exit(code:)`; returns that code.
    public func run() throws(SystemError) -> CInt {
        let result = sys_sd_event_loop(event)
        if result < 0 { throw SystemError("sd_event_loop", errno: Errno(rawValue: -result)) }
        return result
    }

    public func exit(code: CInt) {
        _ = sys_sd_event_exit(event, code)
    }

    /// CLOCK_MONOTONIC now.
    public static func now() -> Duration { MonotonicClock.now }

    /// The `events` of `addIO` for a descriptor that can be written (EPOLLOUT).
    public static let writable = EPOLLOUT.rawValue

    /// Calls `handler` with the poll events whenever `fd` is ready (level-triggered).
    public func addIO(_ fd: FileDescriptor, events: UInt32 = EPOLLIN.rawValue,
                      _ handler: @escaping (UInt32) -> Void) throws(SystemError) -> EventSource {
        let box = CallbackBox(.io(handler))
        var source: OpaquePointer?
        let result = sys_sd_event_add_io(event, &source, fd.rawValue, events, { _, _, revents, userdata in
            CallbackBox.from(userdata).fireIO(revents)
            return 0
        }, box.opaque)
        return try EventSource.make(source, box: box, result: result, operation: "sd_event_add_io")
    }

    /// Calls `handler` once after `delay`, counted from now: not from the start of the loop's iteration, which
    /// sd_event_add_time_relative(3) counts from (sd_event_now), so that a wait armed late in a long iteration still
    /// lasts its whole `delay`.
    public func addTimer(after delay: Duration, accuracy: Duration = .milliseconds(1),
                         _ handler: @escaping () -> Void) throws(SystemError) -> EventSource {
        let box = CallbackBox(.plain(handler))
        var source: OpaquePointer?
        let due = UInt64(max(0, MonotonicClock.now.microseconds)) + delay.microseconds
        let result = sys_sd_event_add_time(
            event, &source, CLOCK_MONOTONIC, due, accuracy.microseconds,
            { _, _, userdata in
                CallbackBox.from(userdata).firePlain()
                return 0
            }, box.opaque)
        return try EventSource.make(source, box: box, result: result, operation: "sd_event_add_time")
    }

    /// Delivers `signal` through a signalfd; the caller must have blocked it (see `Signals.block`).
    public func addSignal(_ signal: CInt, _ handler: @escaping () -> Void) throws(SystemError) -> EventSource {
        let box = CallbackBox(.plain(handler))
        var source: OpaquePointer?
        let result = sys_sd_event_add_signal(event, &source, signal, { _, _, userdata in
            CallbackBox.from(userdata).firePlain()
            return 0
        }, box.opaque)
        return try EventSource.make(source, box: box, result: result, operation: "sd_event_add_signal")
    }

    /// Calls `handler` with the exit status once child `pid` exits; sd-event then reaps it. sd-event
    /// watches it through a pidfd of its own (pidfd_open(2)), which is cheaper than handing it ours
    /// (sd_event_add_child_pidfd reads /proc/self/fdinfo to learn the pid: four syscalls per launch).
    public func addChild(pid: pid_t, _ handler: @escaping (ExitStatus) -> Void) throws(SystemError) -> EventSource {
        let box = CallbackBox(.child(handler))
        var source: OpaquePointer?
        let result = sys_sd_event_add_child(event, &source, pid, WEXITED, { _, info, userdata in
            guard let info else { return 0 }
            CallbackBox.from(userdata).fireChild(ExitStatus(info.pointee))
            return 0
        }, box.opaque)
        return try EventSource.make(source, box: box, result: result, operation: "sd_event_add_child")
    }

    /// Runs `handler` once at the end of the current loop iteration, after the other ready sources.
    public func addDefer(_ handler: @escaping () -> Void) throws(SystemError) -> EventSource {
        let box = CallbackBox(.plain(handler))
        var source: OpaquePointer?
        let result = sys_sd_event_add_defer(event, &source, { _, userdata in
            CallbackBox.from(userdata).firePlain()
            return 0
        }, box.opaque)
        let wrapped = try EventSource.make(source, box: box, result: result, operation: "sd_event_add_defer")
        wrapped.setEnabled(.oneShot)
        return wrapped
    }
}

extension ExitStatus {
    /// How a child ended, from the `siginfo_t` sd-event hands over.
    init(_ info: siginfo_t) {
        // si_code tells exit from signal (waitid(2)); the union's status field sits at the same place for both.
        let status = info._sifields._sigchld.si_status
        if info.si_code == INBOX_CLD_EXITED { self = .exited(status) } else { self = .signaled(status) }
    }
}

extension Duration {
    /// Whole microseconds, saturating at zero. A negative duration of less than a second has zero seconds and negative
    /// attoseconds (`components` truncates toward zero): both are checked (a retry overdue by 50 ms is due now).
    var microseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
