import InboxCore

/// How the dispatcher starts a handler for a delivery: the one seam between deciding what runs and making it run.
/// `HandlerLaunchers` conforms (the one the dispatcher is given); it hands each attempt, by its launch kind, to one of
/// five launchers of the same shape: `ProcessLauncher` (a process per file), `BatchLauncher` (a process for many,
/// `%F`), `ResidentLauncher` (messages to instances that stay running), `UnitLauncher` (an instance of a systemd
/// unit) and `PrintLauncher` (a print job on a CUPS destination, `Print=`). A fake conformer tests the dispatcher in process.
protocol Launcher: AnyObject {
    /// Starts `delivery`'s handler as `kind`, the launch kind the dispatcher decided for this attempt and counts it
    /// as. When `.started`, `ended` is called exactly once, from the event loop, with how the attempt ended;
    /// otherwise never. `copy` is the Inbox copy as the dispatcher holds it open (and leased) for the attempt, until
    /// `ended`: a launcher that hands the file itself to the handler reopens it from this descriptor, never by name.
    func start(_ delivery: Delivery, kind: LaunchKind, copy: FileDescriptor, registration: HandlerRegistration,
               container: Container, ended: @escaping (DeliveryOutcome) -> Void) -> LaunchStart

    /// A reload swapped the catalog: what was derived from the old one is dropped.
    func use(_ catalog: HandlerCatalog)
}

/// What `Launcher.start` did.
enum LaunchStart {
    /// It runs; the attempt is how the dispatcher stops it and what the status file shows of it.
    case started(LaunchedAttempt)
    /// It may not run at all (no retry can help): the delivery fails with this reason.
    case refused(String)
    /// It could not be started this time; retried like any failure.
    case failed(String)
}

/// A started attempt, as the launcher that started it knows it.
protocol LaunchedAttempt: AnyObject {
    /// The process that runs it (for the status file); 0 while none does (a file waiting for its batch).
    var pid: Int32 { get }
    /// Whether it runs under Landlock rules that refuse it any write to its Inbox copy: only then is an open for
    /// writing during the attempt surely another process's (Dispatcher, the read lease).
    var sandboxed: Bool { get }
    /// Tells it to stop (TimeoutSec= passed, or the agent's stop bound): `.terminate` to finish up, `.kill` for now,
    /// each as its kind of launch carries it out. How it then ended still comes once through `ended`, from the event
    /// loop, never from inside this call; a stop of an attempt that has ended does nothing.
    func stop(_ signal: DeliveryLifecycle.StopSignal)
}

extension DeliveryOutcome {
    /// How a handler process's end reads as the end of its attempt (a launched handler's, a batch's).
    init(_ status: ExitStatus) {
        switch status {
        case .exited(let code): self = .exited(code)
        case .signaled(let signal): self = .signaled(signal)
        }
    }
}
