import Glibc

/// A signal number with the names we use (signal(7)).
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
}

extension Signals {
    /// `handle(_:with:)` for named signals.
    public static func handle(_ signals: [Signal], with handler: @convention(c) (CInt) -> Void) {
        handle(signals.map(\.rawValue), with: handler)
    }

    /// `unblock(_:)` for named signals.
    public static func unblock(_ signals: [Signal]) {
        unblock(signals.map(\.rawValue))
    }

    /// Whether a process `pid` exists (kill(2) with signal 0), ours or someone else's (EPERM). A pid can be reused:
    /// this says that some process has it, not which.
    public static func processExists(_ pid: pid_t) -> Bool {
        switch send(0, to: pid) {
        case nil, .notPermitted?: true
        default: false
        }
    }
}
