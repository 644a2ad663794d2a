import Glibc
import InboxSystem
import Testing

@Suite struct SpawnTests {
    @Test func argumentsArriveExactly() throws {
        // The shell prints its own argv from /proc; `; true` keeps it from exec'ing cat in its place.
        let arguments = [
            "/bin/sh", "-c", "cat /proc/$$/cmdline; true", "handler-name",
            "two words", "", "ünïcødé ✓", "line\nbreak", "--open=%f", "'quoted' \"double\" $HOME *",
        ]
        let outcome = try run(arguments)
        #expect(outcome.status == .exited(0))
        #expect(outcome.stdout == nulTerminated(arguments))
    }

    @Test(arguments: [
        [],
        ["INBOX_FILE=/var/lib/inboxd/containers/x/Inbox/a b.png", "EMPTY=", "UNICODE=ü", "MULTI=a\nb"],
        ["INBOX_ANNOTATION={\"k\":[1,2]}", "PATH=/usr/bin:/bin", "NOEQUALS"],
    ])
    func environmentArrivesExactly(environment: [String]) throws {
        let outcome = try run(["/bin/cat", "/proc/self/environ"], environment: environment)
        #expect(outcome.status == .exited(0))
        #expect(outcome.stdout == nulTerminated(environment))
    }

    @Test func standardOutputAndErrorGoToTheirDescriptors() throws {
        let outcome = try run(["/bin/sh", "-c", "printf out; printf err >&2; printf more"])
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "outmore")
        #expect(outcome.errorOutput == "err")
    }

    @Test func standardOutputAndErrorMayShareOneDescriptor() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let both = try scratch.create("both")
        defer { both.close() }
        let null = try openNullDevice()
        defer { null.close() }
        let process = try spawn(SpawnRequest(
            executablePath: "/bin/sh", arguments: ["sh", "-c", "printf a; printf b >&2; printf c"],
            standardInput: null, standardOutput: both, standardError: both))
        defer { process.pidfd.close() }
        #expect(waitForExit(process) == .exited(0))
        #expect(try scratch.read("both") == Array("abc".utf8))
    }

    @Test func standardDescriptorsMayComeFromZeroToTwo() throws {
        // Our stderr as the child's stdin and our stdin as its stderr: a naive dup2 sequence would copy
        // the first onto both. The child only names the files, so it neither reads nor writes them.
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let output = try scratch.create("stdout")
        defer { output.close() }
        let process = try spawn(SpawnRequest(
            executablePath: "/bin/sh", arguments: ["sh", "-c", "readlink /proc/$$/fd/0 /proc/$$/fd/2"],
            standardInput: FileDescriptor(rawValue: 2), standardOutput: output,
            standardError: FileDescriptor(rawValue: 0)))
        defer { process.pidfd.close() }
        #expect(waitForExit(process) == .exited(0))
        let expected = try ["/proc/self/fd/2", "/proc/self/fd/0"].map { try linkTarget($0) + "\n" }.joined()
        #expect(String(decoding: try scratch.read("stdout"), as: UTF8.self) == expected)
    }

    @Test(arguments: [0, 1, 4096, 200 * 1024])
    func standardInputFromMemoryFileArrivesWhole(size: Int) throws {
        // 200 KiB is more than a pipe holds (64 KiB): with a pipe, this write would block the agent.
        let document = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let outcome = try run(["/bin/cat"], input: document)
        #expect(outcome.status == .exited(0))
        #expect(outcome.stdout.count == size)
        #expect(outcome.stdout == document)
    }

    @Test func memoryFileIsSealedAndStartsAtOffsetZero() throws {
        let file = try makeMemoryFile(name: "document.json", contents: Array("{\"a\":1}".utf8))
        defer { file.close() }
        #expect(lseek(file.rawValue, 0, SEEK_CUR) == 0)
        let written = write(file.rawValue, "x", 1)
        #expect(written == -1 && Errno.current == .notPermitted)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { read(file.rawValue, $0.baseAddress, $0.count) }
        #expect(Array(buffer[..<max(count, 0)]) == Array("{\"a\":1}".utf8))
        #expect(fcntl(file.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test(arguments: [0, 1, 75, 255])
    func exitStatusIsReported(code: Int32) throws {
        let outcome = try run(["/bin/sh", "-c", "exit \(code)"])
        #expect(outcome.status == .exited(code))
    }

    @Test func terminatingSignalIsReported() throws {
        let outcome = try run(["/bin/sh", "-c", "kill -TERM $$; sleep 10"])
        #expect(outcome.status == .signaled(SIGTERM))
    }

    @Test func missingExecutableFailsAtExecve() throws {
        let error = try withTrivialRequest { request in
            request.executablePath = "/nonexistent/inboxd-handler"
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "execve")
        #expect(error?.errno == .noSuchFile)
        #expect(error?.path == "/nonexistent/inboxd-handler")
        #expect(error?.description == "execve /nonexistent/inboxd-handler: No such file or directory")
    }

    @Test func missingWorkingDirectoryFailsAtChdir() throws {
        let error = try withTrivialRequest { request in
            request.workingDirectory = "/nonexistent/documents"
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "chdir")
        #expect(error?.errno == .noSuchFile)
        #expect(error?.description == "chdir /nonexistent/documents: No such file or directory")
    }

    @Test func workingDirectoryAndUmaskApply() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let outcome = try run(["/bin/sh", "-c", "pwd; umask"]) { request in
            request.workingDirectory = scratch.path
            request.umask = 0o027
        }
        #expect(outcome.output == "\(scratch.path)\n0027\n")
    }

    @Test(arguments: ["argv", "envp", "path"])
    func nulInsideAStringIsRefused(field: String) throws {
        let error = try withTrivialRequest { request in
            switch field {
            case "argv": request.arguments.append("a\0b")
            case "envp": request.environment.append("A=\0")
            default: request.executablePath = "/bin/true\0/evil"
            }
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == field)
        #expect(error?.errno == .invalidArgument)
    }

    @Test(
        .enabled(if: runningAsRoot, "changing uid and gid needs root"),
        arguments: [nil, [], [100, 65534]] as [[UInt32]?])
    func privilegesDropToAnotherUser(groups: [UInt32]?) throws {
        let outcome = try run([
            "/bin/sh", "-c", "id -u; id -g; id -G; grep -E '^(Uid|Gid|CapPrm|CapEff|NoNewPrivs):' /proc/self/status",
        ]) { request in
            request.uid = 65534
            request.gid = 65534
            request.supplementaryGroups = groups
        }
        let supplementary = (groups ?? []).filter { $0 != 65534 }.map { " \($0)" }.joined()
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == """
            65534
            65534
            65534\(supplementary)
            Uid:\t65534\t65534\t65534\t65534
            Gid:\t65534\t65534\t65534\t65534
            CapPrm:\t0000000000000000
            CapEff:\t0000000000000000
            NoNewPrivs:\t1

            """)
    }

    @Test(.enabled(if: runningAsRoot, "needs root to own a directory the other user cannot enter"))
    func workingDirectoryIsEnteredAsTheNewUser() throws {
        let scratch = try ScratchDirectory()  // mode 0700, owned by root
        defer { scratch.remove() }
        let error = try withTrivialRequest { request in
            request.uid = 65534
            request.gid = 65534
            request.workingDirectory = scratch.path
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "chdir")
        #expect(error?.errno == .permissionDenied)
        #expect(error?.path == scratch.path)
    }

    @Test func noNewPrivsIsSet() throws {
        let outcome = try run(["/bin/grep", "^NoNewPrivs:", "/proc/self/status"])
        #expect(outcome.output == "NoNewPrivs:\t1\n")
    }

    @Test func childLeadsItsOwnSession() throws {
        let outcome = try run(["/bin/cat", "/proc/self/stat"])
        // pid (comm) state ppid pgrp session ...
        let fields = outcome.output.split(separator: ")").last!.split(separator: " ")
        #expect(fields.count > 4)
        #expect(Int32(fields[1]) == getpid())
        #expect(Int32(fields[2]) == outcome.pid)
        #expect(Int32(fields[3]) == outcome.pid)
    }

    @Test func onlyStandardDescriptorsSurvive() throws {
        // An fd without O_CLOEXEC, as a careless library might open, must not leak into the handler.
        let leaked = open("/dev/null", O_RDONLY)
        #expect(leaked > 2)
        defer { close(leaked) }
        let outcome = try run(["/bin/sh", "-c", "ls /proc/$$/fd; true"])
        #expect(outcome.output == "0\n1\n2\n")
    }

    @Test func descriptor3ArrivesAsItIsWithNothingInTheEnvironment() throws {
        // How inboxctl hands its X clipboard's owner the connection: fd 3, and no LISTEN_* variable (no activation).
        let passed = open("/dev/null", O_RDONLY | O_CLOEXEC)
        #expect(passed > 2)
        defer { close(passed) }
        let outcome = try run(["/bin/sh", "-c", "ls /proc/$$/fd; readlink /proc/$$/fd/3; cat /proc/$$/environ; true"],
                              environment: ["A=b"]) { $0.descriptor3 = FileDescriptor(rawValue: passed) }
        #expect(outcome.status == .exited(0))
        #expect(outcome.output == "0\n1\n2\n3\n/dev/null\nA=b\0")
    }

    @Test func descriptor3AndAListenSocketAreRefusedTogether() throws {
        let error = try withTrivialRequest { request in
            request.listenSocket = request.standardInput
            request.descriptor3 = request.standardInput
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "fd 3")
        #expect(error?.errno == .invalidArgument)
    }

    @Test func signalMaskIsEmptyAndNothingIsIgnored() throws {
        // Ignored signals survive execve unless reset; SIGPIPE is the one daemons usually ignore.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let outcome = try run(["/bin/grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"])
        #expect(outcome.output == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n")
    }

    @Test func pidfdSignalKillsASleepingChild() throws {
        let null = try openNullDevice()
        defer { null.close() }
        let process = try spawn(SpawnRequest(
            executablePath: "/bin/sleep", arguments: ["sleep", "1000"],
            standardInput: null, standardOutput: null, standardError: null))
        defer { process.pidfd.close() }
        #expect(reap(process) == nil)
        try sendSignal(SIGKILL, to: process)
        #expect(waitForExit(process) == .signaled(SIGKILL))
        let error = #expect(throws: SystemError.self) { try sendSignal(SIGTERM, to: process) }
        #expect(error?.errno == .noSuchProcess)
    }

    @Test func parentDeathSignalIsSentWhenTheSpawningThreadExits() throws {
        let null = try openNullDevice()
        defer { null.close() }
        var request = SpawnRequest(
            executablePath: "/bin/sleep", arguments: ["sleep", "1000"],
            standardInput: null, standardOutput: null, standardError: null)
        request.parentDeathSignal = SIGKILL
        let process = try spawnOnShortLivedThread(request)
        defer { process.pidfd.close() }
        // The agent is still running, but the thread that spawned the child is gone: PR_SET_PDEATHSIG fires.
        #expect(waitForExit(process) == .signaled(SIGKILL))
    }

    @Test func badParentDeathSignalFailsInTheChild() throws {
        let error = try withTrivialRequest { request in
            request.parentDeathSignal = 1000
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "prctl(PR_SET_PDEATHSIG)")
        #expect(error?.errno == .invalidArgument)
    }

    @Test(.enabled(if: landlockIsAvailable(), "the kernel has no Landlock"))
    func landlockRulesetStaysOpenUntilItIsApplied() throws {
        // /dev/null is not a ruleset: EBADFD proves the fd was still open after close_range (a closed
        // one gives EBADF). Making real rulesets is the Landlock facility's business.
        let notARuleset = try openNullDevice()
        defer { notARuleset.close() }
        let error = try withTrivialRequest { request in
            request.landlockRuleset = notARuleset
            return #expect(throws: SpawnError.self) { try spawn(request) }
        }
        #expect(error?.step == "landlock_restrict_self")
        #expect(error?.errno == Errno(rawValue: EBADFD))
    }

    @Test func concurrentSpawnsDoNotInterfere() async throws {
        try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
            for index in 0..<24 {
                group.addTask {
                    (index, try run(["/bin/sh", "-c", "printf %s \"$0\"; exit $1", "child-\(index)", "\(index)"]))
                }
            }
            for try await (index, outcome) in group {
                #expect(outcome.output == "child-\(index)")
                #expect(outcome.status == .exited(Int32(index)))
            }
        }
    }
}

/// Spawns from a fresh pthread that exits right after, and returns the child.
private func spawnOnShortLivedThread(_ request: SpawnRequest) throws -> SpawnedProcess {
    // Written by the thread before it exits, read after pthread_join: the join orders the two.
    final class Handoff: @unchecked Sendable {
        let request: SpawnRequest
        var result: Result<SpawnedProcess, SpawnError>?
        init(_ request: SpawnRequest) { self.request = request }
    }
    let handoff = Handoff(request)
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { context in
        let handoff = Unmanaged<Handoff>.fromOpaque(context!).takeRetainedValue()
        handoff.result = Result { () throws(SpawnError) in try spawn(handoff.request) }
        return nil
    }, Unmanaged.passRetained(handoff).toOpaque())
    guard created == 0 else { throw SystemError("pthread_create", errno: Errno(rawValue: created)) }
    pthread_join(thread, nil)
    return try handoff.result!.get()
}

private func linkTarget(_ path: String) throws -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink(path, &buffer, buffer.count)
    guard count >= 0 else { throw SystemError("readlink", path: path, errno: .current) }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Whether landlock_restrict_self exists: a non-ruleset fd fails with EBADFD there, EOPNOTSUPP or ENOSYS otherwise.
private func landlockIsAvailable() -> Bool {
    do {
        try withTrivialRequest { request in
            let null = try openNullDevice()
            defer { null.close() }
            request.landlockRuleset = null
            let process = try spawn(request)
            process.pidfd.close()
        }
        return true
    } catch let error as SpawnError {
        return error.errno != .notSupported && error.errno != .noSys
    } catch {
        return false
    }
}
