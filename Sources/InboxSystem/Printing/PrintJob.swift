import CCups

/// What a job is created with, besides its document: `lp`'s -t, -n, -P and -o.
public struct PrintRequest: Sendable {
    public var title: String
    public var copies: Int?
    /// `1-3,5`, as `page-ranges` takes it.
    public var pageRanges: String?
    /// `-o NAME=VALUE`, in order (a later one of a name wins, as with lp).
    public var options: [(name: String, value: String)]

    public init(title: String, copies: Int? = nil, pageRanges: String? = nil, options: [(name: String, value: String)] = []) {
        self.title = title
        self.copies = copies
        self.pageRanges = pageRanges
        self.options = options
    }
}

/// A job as IPP describes it (RFC 8011 `job-state`), read with Get-Job-Attributes.
public struct PrintJobStatus: Sendable, Equatable {
    public enum State: Int32, Sendable {
        case pending = 3, held = 4, processing = 5, stopped = 6, canceled = 7, aborted = 8, completed = 9

        public var name: String {
            switch self {
            case .pending: "pending"
            case .held: "held"
            case .processing: "processing"
            case .stopped: "stopped"
            case .canceled: "canceled"
            case .aborted: "aborted"
            case .completed: "completed"
            }
        }

        /// Nothing more will happen to it.
        public var isFinal: Bool { self == .canceled || self == .aborted || self == .completed }
    }

    public var state: State
    /// `job-state-reasons` without `none`.
    public var reasons: [String]
    /// Pages printed so far (`job-impressions-completed`), and in all when the server knows (`job-impressions`).
    public var pagesCompleted: Int?
    public var pages: Int?
    /// `job-printer-state-message`: what the printer or its filters said last.
    public var message: String?

    public init(state: State, reasons: [String], pagesCompleted: Int?, pages: Int?, message: String?) {
        self.state = state
        self.reasons = reasons
        self.pagesCompleted = pagesCompleted
        self.pages = pages
        self.message = message
    }

    /// The queue was stopped (cupsdisable, or by an error) with the job on it: it waits, and stays queued.
    public var printerStopped: Bool { !state.isFinal && reasons.contains("printer-stopped") }
}

extension PrintDestination {
    /// Bytes read from the document and written to the server at a time.
    static let chunk = 64 << 10

    /// Creates a job, sends `file` (read by descriptor from its start to its end, never opened by name) as its one
    /// document in `format`, and closes it; the job's id. A job that fails after it was created is cancelled.
    public func submit(_ file: FileDescriptor, documentName: String, format: String,
                       request: PrintRequest) -> Result<CInt, PrintError> {
        var options: UnsafeMutablePointer<cups_option_t>? = nil
        var count: CInt = 0
        if let copies = request.copies { count = sys_cupsAddOption("copies", String(copies), count, &options) }
        if let ranges = request.pageRanges { count = sys_cupsAddOption("page-ranges", ranges, count, &options) }
        for option in request.options { count = sys_cupsAddOption(option.name, option.value, count, &options) }
        defer { sys_cupsFreeOptions(count, options) }
        var jobID: CInt = 0
        let created = sys_cupsCreateDestJob(dest, info, &jobID, request.title, count, options)
        guard created.rawValue <= IPP_STATUS_OK_CONFLICTING.rawValue, jobID > 0 else {
            return .failure(PrintError.last("Create-Job"))
        }
        guard sys_cupsStartDestDocument(dest, info, jobID, documentName, format) == HTTP_STATUS_CONTINUE else {
            let error = PrintError.last("Send-Document")
            _ = sys_cupsCancelDestJob(dest, jobID)
            return .failure(error)
        }
        var failure: PrintError?
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var offset: Int64 = 0
        while failure == nil {
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(Errno) in try file.read(fully: bytes, at: offset) }
            }
            let read: Int
            switch result {
            case .success(let count): read = count
            case .failure(let error):
                failure = .system(SystemError("pread", path: documentName, errno: error))
                continue
            }
            if read == 0 { break }
            let written = buffer.withUnsafeBytes { sys_cupsWriteRequestData(UnsafeRawBufferPointer(rebasing: $0[..<read])) }
            if written != HTTP_STATUS_CONTINUE { failure = PrintError.last("Send-Document") }
            offset += Int64(read)
        }
        // Finished even after a failure: it ends the request libcups holds open on its connection.
        let finished = sys_cupsFinishDestDocument(dest, info)
        if failure == nil, finished.rawValue > IPP_STATUS_OK_CONFLICTING.rawValue { failure = PrintError.last("Send-Document") }
        if let failure {
            _ = sys_cupsCancelDestJob(dest, jobID)
            return .failure(failure)
        }
        return .success(jobID)
    }

    /// Cancels a job (IPP Cancel-Job); whether the server took the request.
    @discardableResult
    public func cancel(_ jobID: CInt) -> Bool {
        sys_cupsCancelDestJob(dest, jobID).rawValue <= IPP_STATUS_OK_CONFLICTING.rawValue
    }

    /// Waits between two looks at a job; a signal ends the wait early.
    public static func pause(_ duration: Duration) { sys_nanosleep(duration) }

    /// The job's state now (IPP Get-Job-Attributes).
    public func status(ofJob jobID: CInt) -> Result<PrintJobStatus, PrintError> {
        guard let request = sys_ippNewRequest(IPP_OP_GET_JOB_ATTRIBUTES) else {
            return .failure(.request(operation: "Get-Job-Attributes", message: "out of memory"))
        }
        sys_ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri",
                         option("printer-uri-supported") ?? "ipp://localhost/printers/" + String(cString: dest.pointee.name))
        sys_ippAddInteger(request, IPP_TAG_OPERATION, IPP_TAG_INTEGER, "job-id", jobID)
        sys_ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_NAME, "requesting-user-name", sys_cupsUser())
        sys_ippAddStrings(request, IPP_TAG_OPERATION, IPP_TAG_KEYWORD, "requested-attributes",
                          ["job-state", "job-state-reasons", "job-impressions-completed", "job-impressions",
                           "job-printer-state-message"])
        guard let response = sys_cupsDoRequest(request, "/") else { return .failure(PrintError.last("Get-Job-Attributes")) }
        defer { sys_ippDelete(response) }
        if sys_cupsLastError() == IPP_STATUS_ERROR_NOT_FOUND { return .failure(.jobGone(jobID)) }
        if sys_cupsLastError().rawValue > IPP_STATUS_OK_CONFLICTING.rawValue {
            return .failure(PrintError.last("Get-Job-Attributes"))
        }
        guard let stateAttribute = sys_ippFindAttribute(response, "job-state", IPP_TAG_ENUM),
              let state = PrintJobStatus.State(rawValue: sys_ippGetInteger(stateAttribute, 0)) else {
            return .failure(.request(operation: "Get-Job-Attributes", message: "the server gave no job-state"))
        }
        var reasons: [String] = []
        if let attribute = sys_ippFindAttribute(response, "job-state-reasons", IPP_TAG_KEYWORD) {
            for index in 0..<sys_ippGetCount(attribute) {
                if let reason = sys_ippGetString(attribute, index), reason != "none" { reasons.append(reason) }
            }
        }
        func integer(_ name: String) -> Int? {
            sys_ippFindAttribute(response, name, IPP_TAG_INTEGER).map { Int(sys_ippGetInteger($0, 0)) }
        }
        let message = sys_ippFindAttribute(response, "job-printer-state-message", IPP_TAG_TEXT)
            .flatMap { sys_ippGetString($0, 0) }.flatMap { $0.isEmpty ? nil : $0 }
        return .success(PrintJobStatus(state: state, reasons: reasons, pagesCompleted: integer("job-impressions-completed"),
                                       pages: integer("job-impressions"), message: message))
    }
}
