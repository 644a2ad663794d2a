import CSystemd

/// An sd-event source and the Swift closure behind it; disabling and releasing happen on deinit.
public final class EventSource {
    let source: OpaquePointer
    private let box: CallbackBox

    public enum Enabled { case off, on, oneShot }

    init(source: OpaquePointer, box: CallbackBox) {
        self.source = source
        self.box = box
    }

    static func make(_ source: OpaquePointer?, box: CallbackBox, result: CInt,
                     operation: String) throws(SystemError) -> EventSource {
        guard result >= 0, let source else { throw SystemError(operation, errno: Errno(rawValue: -result)) }
        return EventSource(source: source, box: box)
    }

    deinit { sys_sd_event_source_disable_unref(source) }

    public func setEnabled(_ state: Enabled) {
        let value: CInt = switch state {
        case .off: CInt(SD_EVENT_OFF)
        case .on: CInt(SD_EVENT_ON)
        case .oneShot: CInt(SD_EVENT_ONESHOT)
        }
        _ = sys_sd_event_source_set_enabled(source, value)
    }

    /// Lower runs first when several sources are ready (sd_event_source_set_priority(3)).
    public func setPriority(_ priority: Int64) {
        _ = sys_sd_event_source_set_priority(source, priority)
    }

}

/// Holds a callback for the C side; the owning `EventSource` keeps it alive.
final class CallbackBox {
    enum Callback {
        case plain(() -> Void)
        case io((UInt32) -> Void)
        case child((ExitStatus) -> Void)
    }

    let callback: Callback
    init(_ callback: Callback) { self.callback = callback }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CallbackBox {
        guard let pointer else { fatalError("sd-event callback without userdata") }
        return Unmanaged<CallbackBox>.fromOpaque(pointer).takeUnretainedValue()
    }

    func firePlain() { if case .plain(let f) = callback { f() } }
    func fireIO(_ events: UInt32) { if case .io(let f) = callback { f(events) } }
    func fireChild(_ status: ExitStatus) { if case .child(let f) = callback { f(status) } }
}
