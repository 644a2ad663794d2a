import InboxCore

/// Keeps the agent's content sniffer running: a sandboxed child under an identity of its own when the agent is root
/// (never as root), else as the agent's user. A sniffer that dies is replaced — after the file that killed it, which
/// is then refused, or before the next file, which is not to blame. If no new one starts, `lost` is called: the agent
/// stops rather than type files by name alone unasked.
public final class SnifferSupervisor: ContentSniffing {
    private let logger: Logger
    private let identity: Identity?
    /// No sniffer could be started again.
    public var lost: () -> Void = {}
    public private(set) var current: SnifferProcess?

    public init(logger: Logger, isRoot: Bool) {
        self.logger = logger
        identity = isRoot ? DynamicIdentity.sniffer : nil
    }

    /// Starts the first sniffer; the error is why it could not start.
    @discardableResult
    public func start() throws(SniffError) -> SnifferProcess {
        let sniffer = try Self.start(identity: identity)
        current = sniffer
        return sniffer
    }

    /// Starts the first sniffer and says so; false, after logging why, when it cannot start. A sniffer that cannot
    /// start stops the agent: without it a file's name alone would decide, and an executable named .png would reach
    /// an image viewer.
    public func startReporting() -> Bool {
        do throws(SniffError) {
            let process = try start()
            logger.log(.info, "Content sniffing with libmagic \(process.version) in a sandboxed child (pid "
                       + "\(process.process.pid)), first \(ContentSniffer.byteLimit) bytes")
            return true
        } catch {
            logger.log(.error, "Cannot start the content sniffer: \(error); install libmagic-mgc or set ContentSniffing=no")
            return false
        }
    }

    /// The running sniffer's pid: the agent's own child, never a handler's leftover.
    public var pid: Int32? { current?.process.pid }

    private static func start(identity: Identity?) throws(SniffError) -> SnifferProcess {
        try SnifferProcess(executable: (CurrentProcess.executablePath ?? "/proc/self/exe"), identity: identity, landlockABI: LandlockRuleset.abi())
    }

    public func sniffContent(_ file: FileDescriptor, classifyingText: Bool) -> Result<String, SnifferProcess.Failure> {
        guard var sniffer = current else { return .failure(.refused("no content sniffer")) }
        if !sniffer.isAlive {
            logger.log(.warning, "The content sniffer (pid \(sniffer.process.pid)) exited; starting another")
            guard let replacement = restart() else { return .failure(.refused("no content sniffer")) }
            sniffer = replacement
        }
        let result = sniffer.sniff(file, classifyingText: classifyingText)
        if case .failure(.crashed) = result { restart() }
        if case .failure(.timedOut) = result { restart() }
        return result
    }

    /// Replaces the sniffer; nil, after `lost` was called, when no new one starts.
    @discardableResult
    private func restart() -> SnifferProcess? {
        current?.stop()
        do throws(SniffError) {
            current = try Self.start(identity: identity)
            return current
        } catch {
            current = nil
            logger.log(.error, "Cannot start the content sniffer again: \(error); stopping")
            lost()
            return nil
        }
    }

    public func stop() {
        current?.stop()
        current = nil
    }
}
