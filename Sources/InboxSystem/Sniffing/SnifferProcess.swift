import Glibc

/// The agent's side of the content sniffer: a sandboxed child running `inboxd --content-sniffer` (SnifferWorker).
///
/// Requests are synchronous and bounded in time: libmagic answers in well under a millisecond for nearly every
/// file, and a file that makes it crash or spin is the file's fault, which the caller hears about as `.crashed`
/// or `.timedOut` (the child is then gone; start another).
public final class SnifferProcess {
    /// Why a file could not be sniffed.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// libmagic said it could not (the sniffer lives on).
        case refused(String)
        /// The sniffer died while looking at the file.
        case crashed
        /// The sniffer took longer than the bound; it was killed.
        case timedOut(Duration)
        /// The file could not be read.
        case unreadable(Errno)

        public var description: String {
            switch self {
            case .refused(let reason): "libmagic: \(reason)"
            case .crashed: "the content sniffer died on it"
            case .timedOut(let bound): "the content sniffer took longer than \(bound) on it"
            case .unreadable(let errno): "cannot read it: \(errno)"
            }
        }
    }

    /// The worker, for the leftover sweep (it is the agent's child, not a handler's).
    public let process: SpawnedProcess
    /// libmagic's version, as the worker reported it.
    public private(set) var version = ""
    private let channel: FileDescriptor
    private let timeout: Duration
    private var buffer: [UInt8]
    private var alive = true

    /// Starts a worker from `executable` (the agent's own binary) as `identity` (nil: the agent's), sandboxed with
    /// Landlock to reading and running files (it sandboxes itself further once libmagic is loaded), and waits
    /// until it says it is ready.
    public init(executable: String, identity: Identity?, landlockABI: Int,
                timeout: Duration = .seconds(2)) throws(SniffError) {
        var fds: [CInt] = [-1, -1]
        guard sys_socketpair_seqpacket(&fds) == 0 else {
            throw SniffError("socketpair: \(Errno.current)", stage: .start)
        }
        let (ours, theirs) = (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
        defer { theirs.close() }
        var request = SpawnRequest(executablePath: executable, arguments: [executable, SnifferWorker.argument],
                                   standardInput: theirs, standardOutput: theirs,
                                   standardError: FileDescriptor(rawValue: 2))
        if let identity {
            request.uid = identity.uid
            request.gid = identity.gid
            request.supplementaryGroups = []
        }
        request.workingDirectory = "/"
        request.parentDeathSignal = SIGKILL
        request.resourceLimits = [ResourceLimit(.openFiles, 32), ResourceLimit(.fileSize, 0),
                                  ResourceLimit(.coreSize, 0)]
        var ruleset: LandlockRuleset?
        if landlockABI > 0 {
            do {
                let made = try LandlockRuleset(abi: landlockABI)
                try made.allow(.readExecute, beneath: "/")
                ruleset = made
            } catch {
                ours.close()
                throw SniffError("cannot sandbox the sniffer: \(error)", stage: .start)
            }
        }
        request.landlockRuleset = ruleset?.descriptor
        let process: SpawnedProcess
        do {
            process = try spawn(request)
        } catch {
            ours.close()
            throw SniffError("cannot start \(executable) \(SnifferWorker.argument): \(error)", stage: .start)
        }
        self.process = process
        self.channel = ours
        self.timeout = timeout
        self.buffer = [UInt8](repeating: 0, count: ContentSniffer.byteLimit + 1)
        let greeting = receive(within: .seconds(10))
        guard case .success(let text) = greeting, text.hasPrefix("ready ") else {
            stop()
            switch greeting {
            case .success(let text): throw SniffError(text.hasPrefix("error ") ? String(text.dropFirst(6)) : text)
            case .failure(let failure): throw SniffError("the content sniffer did not start: \(failure)", stage: .start)
            }
        }
        self.version = String(text.dropFirst(6))
    }

    deinit { stop() }

    /// False once the worker died or was stopped.
    public var isAlive: Bool {
        guard alive else { return false }
        let ready = (try? channel.poll(0, timeout: .zero)) ?? 0
        return ready & CShort(POLLHUP | POLLERR) == 0
    }

    /// The MIME type of an open file's first bytes (read here with pread, so the worker never sees the file).
    /// With `classifyingText: false`, plain UTF-8 text is answered `text/plain` without asking libmagic
    /// (see ContentSniffer.sniff).
    public func sniff(_ file: FileDescriptor, classifyingText: Bool = true) -> Result<String, Failure> {
        buffer[0] = UInt8(ascii: "S")
        let count: Int
        // Byte 0 is the request's tag; the file's bytes follow it.
        let read = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in try file.read(fully: .init(rebasing: bytes[1...]), at: 0) }
        }
        switch read {
        case .success(let n): count = n
        case .failure(let error): return .failure(.unreadable(error))
        }
        // An empty file says nothing, whatever libmagic would call it; plain text may not need classifying.
        if count == 0 { return .success("application/x-empty") }
        if !classifyingText && ContentSniffer.isText(buffer[1..<(1 + count)]) { return .success("text/plain") }
        guard alive else { return .failure(.crashed) }
        let sent = buffer.withUnsafeBytes { bytes in retryingErrno { sys_send(channel.rawValue, .init(rebasing: bytes[..<(1 + count)])) } }
        guard case .success(1 + count) = sent else {
            stop()
            return .failure(.crashed)
        }
        let result = answer()
        guard count == ContentSniffer.byteLimit, case .success(let first) = result,
              ContentSniffer.needsMoreBytes(first) else { return result }
        return sniffMore(file)
    }

    /// The second look at an OLE2 file (ContentSniffer.extendedByteLimit): its bytes go over in `A` parts and a
    /// last `S` part, each at most one ordinary request long.
    private func sniffMore(_ file: FileDescriptor) -> Result<String, Failure> {
        var bytes = [UInt8](repeating: 0, count: ContentSniffer.extendedByteLimit)
        let count: Int
        switch bytes.withUnsafeMutableBytes({ raw in Result { () throws(Errno) in try file.read(fully: raw, at: 0) } }) {
        case .success(let n): count = n
        case .failure(let error): return .failure(.unreadable(error))
        }
        var start = 0
        repeat {
            let end = min(count, start + ContentSniffer.byteLimit)
            buffer[0] = UInt8(ascii: end == count ? "S" : "A")
            buffer.replaceSubrange(1..<(1 + end - start), with: bytes[start..<end])
            let length = 1 + end - start
            let sent = buffer.withUnsafeBytes { raw in
                retryingErrno { sys_send(channel.rawValue, .init(rebasing: raw[..<length])) }
            }
            guard case .success(length) = sent else {
                stop()
                return .failure(.crashed)
            }
            start = end
        } while start < count
        return answer()
    }

    /// The worker's answer to the request just sent.
    private func answer() -> Result<String, Failure> {
        switch receive(within: timeout) {
        case .success(let text) where text.hasPrefix("ok "):
            return .success(String(text.dropFirst(3)))
        case .success(let text):
            return .failure(.refused(text.hasPrefix("error ") ? String(text.dropFirst(6)) : text))
        case .failure(let failure):
            stop()
            return .failure(failure)
        }
    }

    /// Ends the worker (closing its channel, then SIGKILL) and reaps it.
    public func stop() {
        guard alive else { return }
        alive = false
        channel.close()
        try? sendSignal(SIGKILL, to: process)
        _ = waitForExit(process)
        process.pidfd.close()
    }

    /// One message from the worker, waiting at most `bound`.
    private func receive(within bound: Duration) -> Result<String, Failure> {
        let ready: CShort
        do { ready = try channel.poll(CShort(POLLIN), timeout: bound) } catch { return .failure(.crashed) }
        guard ready != 0 else { return .failure(.timedOut(bound)) }
        var answer = [UInt8](repeating: 0, count: 512)
        let received = answer.withUnsafeMutableBytes { bytes in retryingErrno { sys_recv(channel.rawValue, bytes) } }
        guard case .success(let count) = received, count > 0 else { return .failure(.crashed) }
        return .success(String(decoding: answer.prefix(count), as: UTF8.self))
    }
}
