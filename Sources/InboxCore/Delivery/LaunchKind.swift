/// How one attempt of a delivery runs, decided once per attempt from its registration and the delivery: the one value
/// both the dispatcher's limits (`LaunchSlots`) and the launcher's choice of how to start it read, so that what counts
/// against a limit is always what runs.
public enum LaunchKind: String, Sendable, Hashable, CaseIterable {
    /// A process of its own for the one file (`Exec=` with `%f`, `%u`, or no file list).
    case process
    /// A process of its own for one file of a handler whose `Exec=` takes a list: the batch it was in failed
    /// (`Delivery.alone`), and it goes again on its own.
    case alone
    /// One file of a batch: a process for up to `BatchSize=` files (`%F`, `%U`), shared with the others.
    case batch
    /// A message to a resident instance (`Activation=resident`), shared with the instance's other deliveries.
    case resident
    /// An instance of a systemd template unit (`Unit=`): one process per attempt, the service manager's.
    case unit
    /// A print job on the registration's destination (`Print=`): one process of the agent's own per attempt, which
    /// submits the file and follows its job.
    case print

    /// The kind of the next attempt of a delivery of `registration`; `alone` when its batch failed.
    public init(_ registration: HandlerRegistration, alone: Bool) {
        if registration.printer != nil {
            self = .print
        } else if registration.unit != nil {
            self = .unit
        } else if registration.activation == .resident {
            self = .resident
        } else if registration.batchSize > 1 {
            self = alone ? .alone : .batch
        } else {
            self = .process
        }
    }

    /// It has a process to itself, which the agent's `MaxConcurrent=` counts.
    public var ownsProcess: Bool {
        switch self {
        case .process, .alone, .unit, .print: true
        case .batch, .resident: false
        }
    }
}
