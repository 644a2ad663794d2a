import Glibc
import InboxCore

/// A kernel signal number with the names we use (signal(7)): the one form a signal takes in the system layer. The raw
/// `CInt` is only what the `*Syscalls.swift` wrappers pass on; the core says how a handler is to stop as a
/// `DeliveryLifecycle.StopSignal`, turned into a signal here and nowhere else (`init(_:)`).
public struct Signal: RawRepresentable, Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// SIGINT: Ctrl-C at the terminal.
    public static let interrupt = Signal(rawValue: SIGINT)
    /// SIGTERM: asked to stop.
    public static let terminate = Signal(rawValue: SIGTERM)
    /// SIGHUP: the terminal went away (for the agent: reload).
    public static let hangUp = Signal(rawValue: SIGHUP)
    /// SIGKILL: cannot be caught.
    public static let kill = Signal(rawValue: SIGKILL)

    /// The signal that carries out the lifecycle's stop: SIGTERM to finish up, SIGKILL for now.
    public init(_ stop: DeliveryLifecycle.StopSignal) {
        switch stop {
        case .terminate: self = .terminate
        case .kill: self = .kill
        }
    }
}

extension Signals {
    /// `handle(_:with:)` for named signals.
    public static func handle(_ signals: [Signal], with handler: @convention(c) (CInt) -> Void) {
        handle(signals.map(\.rawValue), with: handler)
    }

    /// Sends `signal` to the process group `leader` leads (a handler is made a session leader, so its descendants share
    /// its pid as group id), or to `leader` alone when it leads none (yet, or any more). Safe from pid reuse while
    /// `leader` is an unreaped child of ours.
    public static func send(_ signal: Signal, toGroupOf leader: pid_t) {
        if send(signal, toGroup: leader) != nil { send(signal, to: leader) }
    }

    /// `unblock(_:)` for named signals.
    public static func unblock(_ signals: [Signal]) {
        unblock(signals.map(\.rawValue))
    }
}

extension DeliveryOutcome {
    /// The end of an attempt that `stop` ended before any process of it ran (a file still waiting for its batch or
    /// for a resident instance): as if its process had been killed by that signal.
    static func stopped(_ stop: DeliveryLifecycle.StopSignal) -> DeliveryOutcome { .signaled(Signal(stop).rawValue) }
}
