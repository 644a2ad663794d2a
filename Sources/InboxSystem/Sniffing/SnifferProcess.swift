import Glibc
import InboxCore

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
    /// How many bytes of a file the worker's shared-mime-info rules can look at (0: it has none): what is read first.
    public private(set) var rulesExtent = 0
    /// The worker's rule sections, and those it skipped as unreadable.
    public private(set) var ruleSections = 0
    public private(set) var skippedRuleSections = 0
    private let channel: FileDescriptor
    private let timeout: Duration
    private var buffer: [UInt8]
    private var alive = true

    /// Starts a worker from `executable` (the agent's own binary) as `identity` (nil: the agent's), sandboxed with
    /// Landlock to reading and running files (it sandboxes itself further once libmagic and the `magic` files of
    /// `mimeDirectories` are loaded), and waits until it says it is ready.
    public init(executable: String, identity: Identity?, landlockABI: Int, mimeDirectories: [String] = [],
                timeout: Duration = .seconds(2)) throws(SniffError) {
        var fds: [CInt] = [-1, -1]
        guard sys_socketpair_seqpacket(&fds) == 0 else {
            throw SniffError("socketpair: \(Errno.current)", stage: .start)
        }
        let (ours, theirs) = (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
        defer { theirs.close() }
        var request = SpawnRequest(executablePath: executable, arguments: [executable, SnifferWorker.argument] + mimeDirectories,
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
        let words = text.dropFirst(6).split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard words.count == 4, let extent = Int(words[0]), let sections = Int(words[1]), let skipped = Int(words[2]),
              (0...MagicRules.maximumExtent).contains(extent) else {
            stop()
            throw SniffError("the content sniffer's greeting is malformed: \(text)", stage: .start)
        }
        (rulesExtent, ruleSections, skippedRuleSections) = (extent, sections, skipped)
        self.version = String(words[3])
    }

    deinit { stop() }

    /// False once the worker died or was stopped.
    public var isAlive: Bool {
        guard alive else { return false }
        let ready = (try? channel.poll(0, timeout: .zero)) ?? 0
        return ready & CShort(POLLHUP | POLLERR) == 0
    }

    /// The MIME type of an open file's first bytes (read here with pread, so the worker never sees the file).
    /// With `text: .none`, plain UTF-8 text is answered `text/plain` without asking libmagic, with `.builtin` without
    /// its database (see ContentSniffer.sniff, ContentNeeds); with `namingBinary: false`, binary content that neither the rules nor libmagic's
    /// built-in checks name is `application/octet-stream` without libmagic's database being searched.
    ///
    /// Only as many bytes as the rules can look at are read first (`rulesExtent`); the first `ContentSniffer.byteLimit`
    /// only when libmagic is needed and the file is longer.
    ///
    /// With `refiningText: false` (a claim no kind of text refines, TypeResolver.Claim.refinableAsText) plain text is
    /// answered `text/plain` here, without a request to the child at all.
    public func sniff(_ file: FileDescriptor, text: ContentNeeds.Text = .all, namingBinary: Bool = true,
                      refiningText: Bool = true) -> Result<Sniffed, Failure> {
        let started = ContinuousClock.now
        let first = rulesExtent > 0 ? rulesExtent : ContentSniffer.byteLimit
        var count: Int
        switch read(file, first) {
        case .success(let n): count = n
        case .failure(let error): return .failure(.unreadable(error))
        }
        // An empty file says nothing, whatever libmagic would call it; plain text may not need classifying.
        if count == 0 { return .success(Sniffed("application/x-empty", .empty, since: started)) }
        guard alive else { return .failure(.crashed) }
        if text == .none && ContentSniffer.isText(buffer[1..<(1 + count)]) {
            // Text: the rules may name a kind of it (a PGP key, an RSS feed) that refines the claim; libmagic's
            // kinds of text could not change the decision.
            if rulesExtent > 0 && refiningText {
                switch exchange("Q", min(count, rulesExtent)) {
                case .success(let text) where text.hasPrefix("ok rules "):
                    return .success(Sniffed(String(text.dropFirst(9)), .rules, since: started))
                case .success: break
                case .failure(let failure): return .failure(failure)
                }
            }
            guard count == first, first < ContentSniffer.byteLimit else {
                return .success(Sniffed("text/plain", .text, since: started))
            }
            // Text so far; the rest of what libmagic would see decides whether it is text.
            switch read(file, from: count, ContentSniffer.byteLimit) {
            case .success(let n): count = n
            case .failure(let error): return .failure(.unreadable(error))
            }
            if ContentSniffer.isText(buffer[1..<(1 + count)]) { return .success(Sniffed("text/plain", .text, since: started)) }
        }
        if count == first && first < ContentSniffer.byteLimit {
            // The file may go on: the rules alone on what they can see, then more bytes only if libmagic is needed.
            switch exchange("Q", count) {
            case .success(let text) where text.hasPrefix("ok rules "):
                return .success(Sniffed(String(text.dropFirst(9)), .rules, since: started))
            case .success(let text) where text == "more":
                break
            case .success(let text):
                return .failure(.refused(text.hasPrefix("error ") ? String(text.dropFirst(6)) : text))
            case .failure(let failure):
                return .failure(failure)
            }
            switch read(file, from: count, ContentSniffer.byteLimit) {
            case .success(let n): count = n
            case .failure(let error): return .failure(.unreadable(error))
            }
        }
        let tag: Unicode.Scalar = text == .all ? (namingBinary ? "S" : "C") : (namingBinary ? "s" : "c")
        let result = exchange(tag, count).flatMap(Self.parseAnswer)
        guard count == ContentSniffer.byteLimit, case .success(let answered) = result,
              ContentSniffer.needsMoreBytes(answered.0) else {
            return result.map { Sniffed($0.0, $0.1, since: started) }
        }
        return sniffMore(file).flatMap(Self.parseAnswer).map { Sniffed($0.0, $0.1, since: started) }
    }

    /// The file's bytes from `start` (what the buffer already holds from its start) up to `limit`, into the buffer
    /// after the tag byte; how many of the file's first bytes the buffer holds then.
    private func read(_ file: FileDescriptor, from start: Int = 0, _ limit: Int) -> Result<Int, Errno> {
        buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in
                start + (try file.read(fully: .init(rebasing: bytes[(1 + start)..<(1 + limit)]), at: Int64(start)))
            }
        }
    }

    /// Sends the tag and the `count` bytes in the buffer; the worker's answer.
    private func exchange(_ tag: Unicode.Scalar, _ count: Int) -> Result<String, Failure> {
        buffer[0] = UInt8(ascii: tag)
        let sent = buffer.withUnsafeBytes { bytes in retryingErrno { sys_send(channel.rawValue, .init(rebasing: bytes[..<(1 + count)])) } }
        guard case .success(1 + count) = sent else {
            stop()
            return .failure(.crashed)
        }
        return receiveAnswer()
    }

    /// `ok <path> <MIME type>` as its parts; anything else the worker said is a refusal.
    private static func parseAnswer(_ text: String) -> Result<(String, SniffPath), Failure> {
        guard text.hasPrefix("ok ") else {
            return .failure(.refused(text.hasPrefix("error ") ? String(text.dropFirst(6)) : text))
        }
        let words = text.dropFirst(3).split(separator: " ", maxSplits: 1)
        guard words.count == 2, let path = SniffPath(rawValue: String(words[0])) else {
            return .failure(.refused("malformed answer: \(text)"))
        }
        return .success((String(words[1]), path))
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
        return receiveAnswer()
    }

    /// The worker's answer to the request just sent; a worker that does not answer in time is stopped.
    private func receiveAnswer() -> Result<String, Failure> {
        let received = receive(within: timeout)
        if case .failure = received { stop() }
        return received
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
