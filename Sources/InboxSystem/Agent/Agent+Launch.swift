import CShims
import Glibc
import InboxCore

extension Agent {
    /// Starts queued deliveries while the global and per-handler limits allow, oldest first.
    func launchReady() {
        guard phase == .running else { return }
        while running.count < settings.maxConcurrent {
            guard let delivery = queue.popNext(where: { [unowned self] handler in
                self.runningPerHandler[handler, default: 0] < self.limit(for: handler)
            }) else { break }
            launch(delivery)
        }
        if queue.count <= lowWater { updateIntakePump() }
        writeStatusSoon()
    }

    func limit(for handler: String) -> Int {
        registrations.registration(handler)?.maxConcurrent ?? settings.maxConcurrent
    }

    func launch(_ queued: Delivery) {
        var delivery = queued
        guard let registration = registrations.registration(delivery.handler),
              let container = containers[delivery.handler] ?? (try? container(for: delivery.handler)) else {
            reroute(delivery)
            return
        }
        let path = container.inbox.child(delivery.fileName)
        // The container Inbox is the agent's. A file intake placed there was checked and its identity
        // taken after the move; any other (a retry, a recovered file) is looked at again with one lstat.
        if delivery.justMoved {
            delivery.justMoved = false
        } else {
            switch try? container.inbox.status(of: Array(delivery.fileName.utf8)) {
            case let st? where EntryKind(mode: st.st_mode) == .regular:
                delivery.identity = FileIdentity(st)
            case let st?:
                moveAside(Array(delivery.fileName.utf8), from: container.inbox, kind: EntryKind(mode: st.st_mode))
                return
            default:
                logger.log(.warning, "\(path) vanished before its handler started", event: .removed,
                           fields: ["INBOX_FILE": path, "INBOX_HANDLER": delivery.handler, "INBOX_DELIVERY_ID": delivery.id])
                return
            }
        }
        delivery.attempts += 1

        let metadata = DeliveryMetadata(
            deliveryID: delivery.id, path: path, name: delivery.fileName, contentType: delivery.contentType,
            contentTypes: conformanceChain(of: delivery.contentType),
            sourceApp: delivery.sourceApp, sourceUID: delivery.sourceUID, annotation: delivery.annotation,
            attempt: delivery.attempts, documents: container.documents, handler: delivery.handler)
        var identity: Identity?
        switch identities[delivery.handler] {
        case .success(let resolved)?: identity = resolved
        case .failure(let error)?:
            conclude(delivery, outcome: DeliveryOutcome.spawnFailed(error.description), started: nil)
            return
        case nil: break
        }

        var ruleset: LandlockRuleset?
        if landlockABI > 0 {
            do throws(SystemError) {
                ruleset = try sandbox(for: registration, in: container)
            } catch {
                conclude(delivery, outcome: .spawnFailed("cannot build its Landlock ruleset: \(error)"), started: nil)
                return
            }
        } else if settings.landlock == .require || registration.requiresLandlock {
            let why = registration.requiresLandlock ? "its registration says RequireLandlock=yes" : "Landlock=require"
            moveToFailed(delivery, reason: "refused: \(why), and Landlock is not available", exitStatus: nil, duration: nil)
            return
        }

        let started = EventLoop.now()
        let process: SpawnedProcess
        do {
            let stdin = try makeStandardInput(name: "inboxd-delivery", contents: metadata.stdinDocument())
            defer { stdin.close() }
            let output = logger.outputStream(for: delivery.handler)
            var request = SpawnRequest(handler: registration, metadata: metadata, tmp: container.tmp, identity: identity,
                                       standardInput: stdin, output: output)
            request.workingDirectory = container.documents
            request.landlockRuleset = ruleset?.descriptor
            process = try spawn(request)
        } catch {
            conclude(delivery, outcome: .spawnFailed("\(error)"), started: started)
            return
        }
        // The event loop watches the child through a pidfd of its own; ours is not needed.
        process.pidfd.close()
        let run = RunningDelivery(delivery: delivery, pid: process.pid, started: started)
        do {
            let source = try loop.addChild(pid: process.pid) { [unowned self] status in
                self.childExited(delivery.id, status: status)
            }
            source.setPriority(Priority.childExit)
            run.childSource = source
        } catch {
            // Without a child source we could never learn the outcome: stop it now and treat it as failed.
            _ = kill(process.pid, SIGKILL)
            var status: CInt = 0
            _ = waitpid(process.pid, &status, 0)
            conclude(delivery, outcome: .spawnFailed("\(error)"), started: started)
            return
        }
        // TimeoutSec=infinity in the registration turns the agent's default off for this handler.
        if let timeout = registration.timeoutDisabled ? nil : registration.timeout ?? settings.defaultTimeout {
            run.timeoutSource = try? loop.addTimer(after: timeout) { [unowned self, unowned run] in
                self.timedOut(run, after: timeout)
            }
        }
        running[delivery.id] = run
        runningPerHandler[delivery.handler, default: 0] += 1
        if logger.isEnabled(.debug) {
            logger.log(.debug, "Dispatched \(delivery.fileName) to \(delivery.handler)", event: .dispatched, fields: [
                "INBOX_FILE": path, "INBOX_DELIVERY_ID": delivery.id, "INBOX_HANDLER": delivery.handler,
                "INBOX_CONTENT_TYPE": delivery.contentType, "INBOX_SOURCE_APP": delivery.sourceApp,
                "INBOX_SOURCE_UID": String(delivery.sourceUID), "INBOX_ATTEMPT": String(delivery.attempts),
                "INBOX_PID": String(process.pid)])
        }
    }

    /// Stops what a finished handler left running once nothing else of its identity runs: with an
    /// identity of its own, every process of that uid; otherwise the orphans the agent inherited (as a
    /// subreaper) that run as its user. Those orphans are then reaped through the event loop.
    func killLeftovers(of run: RunningDelivery) {
        // Anything a handler left running has an ancestor that is now the agent's child (it is a
        // subreaper): with no such child, nothing was left, and no /proc scan is needed.
        // The content sniffer is the agent's own child, not something a handler left.
        let tracked = Set(running.values.map(\.pid)).union([run.pid]).union(sniffer.map { [$0.process.pid] } ?? [])
        let inherited = Leftovers.children().filter { !tracked.contains($0) }
        guard !inherited.isEmpty else { return }
        let uid = (try? identities[run.delivery.handler]?.get())?.uid ?? geteuid()
        let sharing = running.values.contains { other in
            ((try? identities[other.delivery.handler]?.get())?.uid ?? geteuid()) == uid
        }
        var killed = 0
        if !sharing {
            if DynamicIdentity.contains(uid) {
                killed = Leftovers.kill(uid: uid)
            } else {
                for pid in inherited where Leftovers.realUID(of: pid) == uid && kill(pid, SIGKILL) == 0 { killed += 1 }
            }
        }
        // Reaped through the event loop, whoever they belonged to.
        for pid in inherited where orphans[pid] == nil {
            orphans[pid] = try? loop.addChild(pid: pid) { [unowned self] _ in self.orphans[pid] = nil }
        }
        if killed > 0 {
            logger.log(.notice, "Killed \(killed) process(es) \(run.delivery.handler) left running",
                       fields: ["INBOX_HANDLER": run.delivery.handler, "INBOX_DELIVERY_ID": run.delivery.id])
        }
    }

    /// TimeoutSec= passed: SIGTERM to the handler's process group, SIGKILL if it is still there 5 s later.
    func timedOut(_ run: RunningDelivery, after timeout: Duration) {
        run.timedOut = true
        run.signalGroup(SIGTERM)
        run.timeoutSource = try? loop.addTimer(after: .seconds(5)) { [unowned run] in
            run.signalGroup(SIGKILL)
        }
    }

    func childExited(_ id: String, status: ExitStatus) {
        guard let run = running.removeValue(forKey: id) else { return }
        runningPerHandler[run.delivery.handler, default: 1] -= 1
        run.timeoutSource = nil
        // Whatever the handler left running in its group goes with it; with an identity of its own and
        // no other delivery of it running, so does every process of that identity (a daemon too).
        run.signalGroup(SIGKILL)
        killLeftovers(of: run)
        let outcome: DeliveryOutcome
        if run.timedOut {
            outcome = .timedOut
        } else {
            switch status {
            case .exited(let code): outcome = .exited(code)
            case .signaled(let signal): outcome = .signaled(signal)
            }
        }
        if let change = integrityViolation(run.delivery) {
            reportViolation(run.delivery, change: change, outcome: outcome, started: run.started)
        } else if phase == .draining, case .signaled = outcome {
            // Stopped by our own shutdown: not the handler's failure. It runs again at the next start.
        } else {
            conclude(run.delivery, outcome: outcome, started: run.started)
        }
        run.childSource = nil
        launchReady()
        finishDrainingIfDone()
        trimWhenIdle()
    }

    /// After a burst the heap holds memory the queue no longer needs; a second after the agent falls idle it is
    /// given back (malloc_trim(3)), so an idle agent stays small. Once per idle spell, never in the middle of work.
    func trimWhenIdle() {
        guard trimTimer == nil, running.isEmpty, queue.count == 0 else { return }
        trimTimer = try? loop.addTimer(after: .seconds(1), accuracy: .milliseconds(250)) { [unowned self] in
            self.trimTimer = nil
            if self.running.isEmpty && self.queue.count == 0 && self.pendingNames.isEmpty {
                _ = inbox_malloc_trim()
            }
        }
    }

    /// The handler's Landlock ruleset: read and run everything, read and remove in its Inbox, full access
    /// to its Documents/ and tmp/ (each on its own: the container root holds the Inbox) and to ReadWritePaths=.
    func sandbox(for registration: HandlerRegistration, in container: Container) throws(SystemError) -> LandlockRuleset {
        if let ruleset = rulesets[registration.identifier] { return ruleset }
        let ruleset = try LandlockRuleset(abi: landlockABI)
        let all = LandlockAccess.all(abi: landlockABI)
        try ruleset.allow(.readExecute, beneath: "/")
        // Scripts say 2>/dev/null; writing there harms nobody.
        try ruleset.allow([.readFile, .writeFile], beneath: "/dev/null")
        try ruleset.allow(.readRemove, beneath: container.inbox.path)
        try ruleset.allow(all, beneath: container.documents)
        try ruleset.allow(all, beneath: container.tmp)
        for path in registration.readWritePaths { try ruleset.allow(all, beneath: path) }
        rulesets[registration.identifier] = ruleset
        return ruleset
    }

    /// How the Inbox copy changed while its handler ran, if it is still there and did.
    func integrityViolation(_ delivery: Delivery) -> String? {
        guard let before = delivery.identity, let container = containers[delivery.handler],
              let st = try? container.inbox.status(of: Array(delivery.fileName.utf8)) else { return nil }
        let after = FileIdentity(st)
        return after == before ? nil : before.differences(from: after)
    }

    /// The handler changed what it may only read and delete: the file is kept in failed/ as evidence.
    func reportViolation(_ delivery: Delivery, change: String, outcome: DeliveryOutcome, started: Duration) {
        let container = containers[delivery.handler]
        let name = Array(delivery.fileName.utf8)
        let reason = "its handler changed the Inbox copy: \(change)"
        var movedTo: String?
        if let container {
            if case .opened(let file) = container.inbox.openRegular(name) {
                ExtendedAttributes(file.descriptor).write(AgentAttribute.failure, "violation: " + reason)
                file.descriptor.close()
            }
            if case .success(let newName) = container.inbox.moveUnique(name, to: failed, preferred: delivery.fileName) {
                container.inbox.moveSidecar(of: name, to: failed, as: newName)
                movedTo = failed.child(newName)
            }
        }
        let exitStatus: String? = if case .exited(let code) = outcome { String(code) } else { nil }
        logger.log(.warning, "\(delivery.handler) modified \(delivery.fileName), which it may only read and delete",
                   event: .violation, fields: [
            "INBOX_FILE": movedTo ?? container?.inbox.child(delivery.fileName), "INBOX_DELIVERY_ID": delivery.id,
            "INBOX_HANDLER": delivery.handler, "INBOX_CONTENT_TYPE": delivery.contentType,
            "INBOX_SOURCE_APP": delivery.sourceApp, "INBOX_SOURCE_UID": String(delivery.sourceUID),
            "INBOX_EXIT_STATUS": exitStatus, "INBOX_DURATION_USEC": String((EventLoop.now() - started).microseconds),
            "INBOX_ATTEMPT": String(delivery.attempts), "INBOX_REASON": reason])
    }

    /// Conformance chains by type, computed once per registration load.
    func conformanceChain(of type: String) -> [String] {
        if let chain = chainCache[type] { return chain }
        let chain = registrations.database.conformanceChain(of: type)
        chainCache[type] = chain
        return chain
    }

}
