/// The service manager `Unit=` handlers are started by: systemd as PID 1 for the system instance (root), the user's
/// own manager for a user instance, each asked on its private socket, as `systemctl` does without a bus daemon.
public enum ServiceManager {
    /// The system was booted with systemd (sd_booted(3)): there is a service manager to start units.
    public static var isBooted: Bool { sys_sd_booted() > 0 }

    /// Why `Unit=` cannot work here, for a `file:line` error; nil when it can.
    public static var unitRefusal: String? {
        isBooted ? nil : "Unit= needs systemd as the service manager (PID 1), and this system was not booted with it "
            + "(sd_booted(3)); use Exec= here"
    }

    /// The address of the manager's private socket: `/run/systemd/private` as root, else the user manager's in
    /// `$XDG_RUNTIME_DIR`.
    static var privateAddress: String? {
        if CurrentProcess.isRoot { return "unix:path=/run/systemd/private" }
        return CurrentProcess.environment("XDG_RUNTIME_DIR").map { "unix:path=\($0)/systemd/private" }
    }

    static let destination = "org.freedesktop.systemd1"
    static let managerPath = "/org/freedesktop/systemd1"
    static let managerInterface = "org.freedesktop.systemd1.Manager"
}
