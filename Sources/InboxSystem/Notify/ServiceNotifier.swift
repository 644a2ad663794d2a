
/// The service-manager protocol (sd_notify(3)); a no-op when NOTIFY_SOCKET is unset.
public struct ServiceNotifier: Sendable {
    public init() {}

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { send("STATUS=\(text)") }
    public func reloading() { send("RELOADING=1\nSTATUS=Reloading registrations") }
    public func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }

    private func send(_ state: String) {
        _ = sys_sd_notify(0, state)
    }
}
