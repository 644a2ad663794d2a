import InboxCore

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

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
    private let mimeDirectories: [String]
    /// Files sniffed and the time it took, by which check answered (for the status file).
    public private(set) var costs = SniffCosts()

    public init(logger: Logger, isRoot: Bool, mimeDirectories: [String] = []) {
        self.logger = logger
        identity = isRoot ? DynamicIdentity.sniffer : nil
        self.mimeDirectories = mimeDirectories
    }

    /// Starts the first sniffer; the error is why it could not start.
    @discardableResult
    public func start() throws(SniffError) -> SnifferProcess {
        let sniffer = try Self.start(identity: identity, mimeDirectories: mimeDirectories)
        current = sniffer
        return sniffer
    }

    /// Starts the first sniffer and says so; false, after logging why, when it cannot start. A sniffer that cannot
    /// start stops the agent: without it a file's name alone would decide, and an executable named .png would reach
    /// an image viewer.
    public func startReporting() -> Bool {
        do throws(SniffError) {
            let process = try start()
            let rules = process.ruleSections == 0 ? "no shared-mime-info magic rules"
                : "\(process.ruleSections) shared-mime-info magic rules (first \(process.rulesExtent) bytes)"
                    + (process.skippedRuleSections > 0 ? ", \(process.skippedRuleSections) unreadable section(s) skipped" : "")
            logger.log(.info, "Content sniffing with \(rules), then libmagic \(process.version) (first "
                       + "\(ContentSniffer.byteLimit) bytes), in a sandboxed child (pid \(process.process.pid))")
            return true
        } catch {
            logger.fatal("Cannot start the content sniffer: \(error); \(advice(for: error))")
            return false
        }
    }

    /// What to do about a sniffer that does not start. It runs the agent's own binary under its own identity, so a
    /// binary in a directory that identity cannot enter (a checkout under /root, mode 0700) fails with EACCES: say
    /// which directory, rather than send the user after libmagic's database, which is only to blame when libmagic
    /// itself said so.
    func advice(for error: SniffError) -> String {
        let executable = CurrentProcess.executablePath ?? "/proc/self/exe"
        if error.stage == .start, let identity, let blocked = Self.firstBarrier(to: executable, for: identity) {
            return "the sniffer runs as uid \(identity.uid), which cannot reach \(executable): \(blocked); "
                + "build or install inboxd where every user may enter (not under /root or a private home), "
                + "or set ContentSniffing=no"
        }
        if error.stage == .start { return "set ContentSniffing=no to run without it" }
        return "install libmagic-mgc (libmagic's database) or set ContentSniffing=no"
    }

    /// The first directory on the way to `path` (or the file itself) that `identity` may not search (or run), as
    /// "/root is mode 0700, owner uid 0"; nil when every step allows it.
    static func firstBarrier(to path: String, for identity: Identity) -> String? {
        var prefix = ""
        let components = path.split(separator: "/").map(String.init)
        for (index, component) in ([""] + components).enumerated() {
            prefix = index == 0 ? "/" : (prefix == "/" ? "" : prefix) + "/" + component
            guard let st = try? FileSystem.status(prefix) else { return nil }
            let mode = UInt32(st.st_mode) & 0o7777
            let bits: UInt32 = st.st_uid == identity.uid ? 0o100 : (st.st_gid == identity.gid ? 0o010 : 0o001)
            if mode & bits == 0 {
                return "\(prefix) is mode \(String(mode, radix: 8).leftPadded(to: 4)), owner uid \(st.st_uid)"
            }
        }
        return nil
    }

    /// The sniffer as the status file shows it; nil when none runs.
    public var status: AgentStatus.Sniffer? {
        current.map { .init(pid: $0.process.pid, libmagic: $0.version, ruleSections: $0.ruleSections,
                            rulesExtent: $0.rulesExtent, costs: costs) }
    }

    /// The running sniffer's pid: the agent's own child, never a handler's leftover.
    public var pid: Int32? { current?.process.pid }

    private static func start(identity: Identity?, mimeDirectories: [String]) throws(SniffError) -> SnifferProcess {
        try SnifferProcess(executable: (CurrentProcess.executablePath ?? "/proc/self/exe"), identity: identity,
                           landlockABI: LandlockRuleset.abi(), mimeDirectories: mimeDirectories)
    }

    public func sniffContent(_ file: FileDescriptor, text: ContentNeeds.Text, namingBinary: Bool,
                             refiningText: Bool) -> Result<Sniffed, SnifferProcess.Failure> {
        guard var sniffer = current else { return .failure(.refused("no content sniffer")) }
        if !sniffer.isAlive {
            logger.log(.warning, "The content sniffer (pid \(sniffer.process.pid)) exited; starting another")
            guard let replacement = restart() else { return .failure(.refused("no content sniffer")) }
            sniffer = replacement
        }
        let result = sniffer.sniff(file, text: text, namingBinary: namingBinary, refiningText: refiningText)
        if case .success(let sniffed) = result { costs.add(sniffed) }
        if case .failure(.crashed) = result { restart() }
        if case .failure(.timedOut) = result { restart() }
        return result
    }

    /// Replaces the sniffer; nil, after `lost` was called, when no new one starts.
    @discardableResult
    private func restart() -> SnifferProcess? {
        current?.stop()
        do throws(SniffError) {
            current = try Self.start(identity: identity, mimeDirectories: mimeDirectories)
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
