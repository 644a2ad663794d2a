import CCups

/// A printer or class as `lp` finds it, through libcups's destination API: named, else `$PRINTER`/`$LPDEST`, the
/// lpoptions default, then the server's default (`cupsGetNamedDest(3)`). Holds the destination and its
/// capabilities (`cupsCopyDestInfo`) until it is released.
public final class PrintDestination {
    let dest: UnsafeMutablePointer<cups_dest_t>
    let info: OpaquePointer
    /// `name` or `name/instance`.
    public let name: String
    /// The queue's name, without an instance: what job ids are named after (`office-laser-42`).
    public var queue: String { String(cString: dest.pointee.name) }

    /// What the server said of the queue when it was found.
    public enum State: Sendable, Equatable {
        case idle, processing, stopped
    }

    private init(dest: UnsafeMutablePointer<cups_dest_t>, info: OpaquePointer) {
        self.dest = dest
        self.info = info
        let base = String(cString: dest.pointee.name)
        name = dest.pointee.instance.map { base + "/" + String(cString: $0) } ?? base
    }

    deinit {
        sys_cupsFreeDestInfo(info)
        sys_cupsFreeDests(dest)
    }

    /// The destination named (`NAME` or `NAME/INSTANCE`), else the default one.
    public static func find(_ named: String?) -> Result<PrintDestination, PrintError> {
        guard let dest = sys_cupsGetNamedDest(named) else {
            // cupsGetNamedDest says "not found" whether or not a server answered: ask it something to tell which.
            if let unreachable = serverUnreachable() { return .failure(unreachable) }
            if let named { return .failure(.noDestination("no destination is named \(named)")) }
            return .failure(.noDestination("no destination is given (--printer), and there is no default "
                                           + "($PRINTER, $LPDEST, lpoptions -d, or the server's)"))
        }
        guard let info = sys_cupsCopyDestInfo(dest) else {
            let error = PrintError.last("cupsCopyDestInfo")
            sys_cupsFreeDests(dest)
            return .failure(error)
        }
        return .success(PrintDestination(dest: dest, info: info))
    }

    /// `.unreachable` when no server answers a CUPS-Get-Default.
    static func serverUnreachable() -> PrintError? {
        guard let request = sys_ippNewRequest(IPP_OP_CUPS_GET_DEFAULT) else { return nil }
        if let response = sys_cupsDoRequest(request, "/") { sys_ippDelete(response) }
        guard sys_cupsLastError() == IPP_STATUS_ERROR_SERVICE_UNAVAILABLE else { return nil }
        return .unreachable(sys_cupsLastErrorString())
    }

    public var state: State {
        switch option("printer-state") {
        case "4": .processing
        case "5": .stopped
        default: .idle
        }
    }

    public var stateReasons: [String] {
        (option("printer-state-reasons") ?? "").split(separator: ",").map(String.init).filter { $0 != "none" }
    }

    public var stateMessage: String? { option("printer-state-message") }

    public var acceptingJobs: Bool { option("printer-is-accepting-jobs") != "false" }

    /// Refuses a stopped queue or one that does not accept jobs, before anything is sent to it.
    public func checkReady() -> PrintError? {
        if state == .stopped { return .stopped(destination: name, reasons: stateReasons, message: stateMessage) }
        if !acceptingJobs { return .notAccepting(destination: name, message: stateMessage) }
        return nil
    }

    /// Whether it takes documents of this MIME type (`document-format-supported`).
    public func supports(format: String) -> Bool {
        sys_cupsCheckDestSupported(dest, info, "document-format", format)
    }

    func option(_ name: String) -> String? { sys_cupsGetOption(name, dest) }
}
