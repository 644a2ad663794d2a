import CShims
import Glibc
import InboxSystem
import Testing

@Suite struct ResourceLimitTests {
    @Test func openFilesLimitReachesTheShell() throws {
        let outcome = try run(["/bin/sh", "-c", "ulimit -n; ulimit -Hn"]) { request in
            request.resourceLimits = [ResourceLimit(.openFiles, soft: 64, hard: 128)]
        }
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "64\n128\n")
    }

    @Test(arguments: [
        (ResourceLimit.Resource.openFiles, "Max open files", 64, 128),
        (.addressSpace, "Max address space", 1 << 30, 2 << 30),
        (.processes, "Max processes", 500, 1000),
        (.cpuSeconds, "Max cpu time", 30, 60),
        (.fileSize, "Max file size", 1 << 20, 2 << 20),
        (.coreSize, "Max core file size", 0, 4096),
    ] as [(ResourceLimit.Resource, String, UInt64, UInt64)])
    func eachResourceIsTheOneTheKernelReports(
        resource: ResourceLimit.Resource, name: String, soft: UInt64, hard: UInt64
    ) throws {
        // Without privileges the handler cannot get more than the agent has.
        let hard = min(hard, agentHardLimit(resource))
        let soft = min(soft, hard)
        let outcome = try run(["/bin/grep", "^\(name)  ", "/proc/self/limits"]) { request in
            request.resourceLimits = [ResourceLimit(resource, soft: soft, hard: hard)]
        }
        #expect(outcome.status == .exited(0))
        #expect(limitsLine(outcome.output, name: name) == ["\(soft)", "\(hard)"])
    }

    @Test(.enabled(if: canRaiseHardLimits || agentHardLimit(.cpuSeconds) == .max,
                   "needs CAP_SYS_RESOURCE or an unlimited CPU hard limit"))
    func nilIsUnlimited() throws {
        let outcome = try run(["/bin/grep", "^Max cpu time  ", "/proc/self/limits"]) { request in
            request.resourceLimits = [ResourceLimit(.cpuSeconds, nil)]
        }
        #expect(limitsLine(outcome.output, name: "Max cpu time") == ["unlimited", "unlimited"])
    }

    @Test(arguments: [("1M", true), ("300M", false)])
    func addressSpaceLimitStopsALargeAllocation(blockSize: String, fits: Bool) throws {
        // dd allocates one buffer of the block size: 300 MiB can never fit under 256 MiB, 1 MiB always does.
        let outcome = try run(["/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=\(blockSize)", "count=1"]) { request in
            request.resourceLimits = [ResourceLimit(.addressSpace, 256 << 20)]
        }
        if fits {
            #expect(outcome.status == .exited(0))
        } else {
            #expect(outcome.status == .exited(1))
            #expect(outcome.errorOutput.contains("memory exhausted"))
        }
    }

    @Test func limitsApplyInOrderUpToTheMaximum() throws {
        // Each one lower than the one before, so no step needs the privilege to raise a hard limit.
        let limits = (0..<SpawnRequest.maximumResourceLimits).reversed().map {
            ResourceLimit(.openFiles, UInt64(100 + $0))
        }
        let outcome = try run(["/bin/sh", "-c", "ulimit -n; ulimit -Hn"]) { request in
            request.resourceLimits = limits
        }
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "100\n100\n")
    }

    @Test(arguments: [
        ResourceLimit(.openFiles, soft: 200, hard: 100),
        ResourceLimit(.openFiles, soft: nil, hard: 100),  // unlimited is above every number
    ])
    func softAboveHardFailsInTheChildAndLeavesNoProcess(limit: ResourceLimit) throws {
        let before = try childrenOfThisThread()
        let error = try withTrivialRequest { request in
            request.resourceLimits = [ResourceLimit(.coreSize, 0), limit]
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "prlimit64")
        #expect(error?.errno == .invalidArgument)
        #expect(error?.description == "prlimit64 /bin/true: \(Errno.invalidArgument)")
        #expect(try childrenOfThisThread() == before)
    }

    @Test func tooManyLimitsAreRefusedBeforeStarting() throws {
        let before = try childrenOfThisThread()
        let error = try withTrivialRequest { request in
            request.resourceLimits = Array(
                repeating: ResourceLimit(.openFiles, 64), count: SpawnRequest.maximumResourceLimits + 1)
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "prlimit64")
        #expect(error?.errno == .invalidArgument)
        #expect(try childrenOfThisThread() == before)
    }

    @Test(.enabled(if: runningAsRoot, "changing uid and gid needs root"))
    func limitsOutliveTheDropToAnotherUser() throws {
        let outcome = try run(["/bin/sh", "-c", "ulimit -n; ulimit -Hn; id -u"]) { request in
            request.uid = 65534
            request.gid = 65534
            request.resourceLimits = [ResourceLimit(.openFiles, soft: 64, hard: 128)]
        }
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "64\n128\n65534\n")
    }

    @Test(.enabled(if: runningAsRoot && canRaiseHardLimits && agentHardLimit(.openFiles) < openFilesCeiling(),
                   "needs root with CAP_SYS_RESOURCE, and a NOFILE hard limit below fs.nr_open"))
    func rootRaisesTheHardLimitForAnUnprivilegedHandler() throws {
        // Applied before the drop to uid 65534, which could only lower it, and kept across setresuid.
        let hard = min(agentHardLimit(.openFiles) + 1024, openFilesCeiling())
        let outcome = try run(["/bin/sh", "-c", "ulimit -n; ulimit -Hn; id -u"]) { request in
            request.uid = 65534
            request.gid = 65534
            request.resourceLimits = [ResourceLimit(.openFiles, soft: hard, hard: hard)]
        }
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "\(hard)\n\(hard)\n65534\n")
    }

    @Test(.enabled(if: !canRaiseHardLimits, "the agent has CAP_SYS_RESOURCE, so it may raise hard limits"))
    func agentWithoutCapSysResourceCannotRaiseTheHardLimit() throws {
        let error = try withTrivialRequest { request in
            request.resourceLimits = [ResourceLimit(.openFiles, agentHardLimit(.openFiles) + 1)]
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "prlimit64")
        #expect(error?.errno == .notPermitted)
    }
}

/// The agent's own hard limit; RLIM_INFINITY is UInt64.max.
private func agentHardLimit(_ resource: ResourceLimit.Resource) -> UInt64 {
    let number = switch resource {
    case .openFiles: INBOX_RLIMIT_NOFILE
    case .addressSpace: INBOX_RLIMIT_AS
    case .processes: INBOX_RLIMIT_NPROC
    case .cpuSeconds: INBOX_RLIMIT_CPU
    case .fileSize: INBOX_RLIMIT_FSIZE
    case .coreSize: INBOX_RLIMIT_CORE
    }
    var limit = rlimit()
    precondition(getrlimit(__rlimit_resource_t(number.rawValue), &limit) == 0, "getrlimit: \(Errno.current)")
    return limit.rlim_max == rlim_t.max ? .max : UInt64(limit.rlim_max)  // rlim_t.max: RLIM_INFINITY
}

/// Whether the agent has CAP_SYS_RESOURCE (capability 24), which raising a hard limit takes, root or not:
/// containers often run root without it.
private let canRaiseHardLimits: Bool = {
    let status = (try? readProcFile("/proc/self/status")) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
          let mask = UInt64(line.dropFirst("CapEff:".count).trimmingPrefix("\t"), radix: 16)
    else { return false }
    return mask & (1 << 24) != 0
}()

/// fs.nr_open: no RLIMIT_NOFILE may exceed it, root's included.
private func openFilesCeiling() -> UInt64 {
    let text = (try? readProcFile("/proc/sys/fs/nr_open")) ?? ""
    return text.split(separator: "\n").first.flatMap { UInt64($0) } ?? 1 << 20
}

/// The soft and hard columns of one /proc/PID/limits line.
private func limitsLine(_ text: String, name: String) -> [String] {
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }) else { return [] }
    return Array(line.dropFirst(name.count).split(separator: " ").prefix(2).map(String.init))
}

/// The calling thread's children, zombies included (proc(5), CONFIG_PROC_CHILDREN). Spawning records the
/// child under the thread that cloned it, so this ignores whatever tests on other threads are running.
private func childrenOfThisThread() throws -> [pid_t] {
    try readProcFile("/proc/thread-self/children").split(separator: " ").compactMap { pid_t($0) }
}

/// A small /proc file's text, from one read.
private func readProcFile(_ path: String) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("open", path: path, errno: .current) }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count >= 0 else { throw SystemError("read", path: path, errno: .current) }
    return String(decoding: buffer[..<count], as: UTF8.self)
}
