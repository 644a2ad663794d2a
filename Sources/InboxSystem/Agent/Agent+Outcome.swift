import Glibc
import InboxCore

extension Agent {
    /// Applies the retry policy to a finished attempt and cleans up after it.
    func conclude(_ delivery: Delivery, outcome: DeliveryOutcome, started: Duration?) {
        let decision = settings.retryPolicy.decide(outcome, attempt: max(delivery.attempts, 1))
        let container = containers[delivery.handler]
        let path = container?.inbox.child(delivery.fileName) ?? delivery.fileName
        let duration = started.map { String((EventLoop.now() - $0).microseconds) }
        let status = Self.describe(outcome)
        let exitStatus: String? = if case .exited(let code) = outcome { String(code) } else { nil }
        switch decision {
        case .complete:
            let removeError = container?.inbox.remove(Array(delivery.fileName.utf8)) ?? nil
            if delivery.hasSidecar { container?.inbox.removeSidecar(of: Array(delivery.fileName.utf8)) }
            logger.log(.info, "\(delivery.handler) handled \(delivery.fileName)", event: .finished, fields: [
                "INBOX_FILE": path, "INBOX_DELIVERY_ID": delivery.id, "INBOX_HANDLER": delivery.handler,
                "INBOX_CONTENT_TYPE": delivery.contentType, "INBOX_TYPE_SOURCE": delivery.typeSource.rawValue, "INBOX_SOURCE_APP": delivery.sourceApp,
                "INBOX_SOURCE_UID": String(delivery.sourceUID), "INBOX_EXIT_STATUS": exitStatus,
                "INBOX_DURATION_USEC": duration, "INBOX_ATTEMPT": String(delivery.attempts),
                "INBOX_CHOSEN_BY": delivery.chosenBy])
            if let removeError {
                logger.log(.warning, "Cannot remove \(path) after its handler finished: \(removeError)", fields: ["INBOX_FILE": path])
            }
        case .retry(let delay):
            logger.log(.warning, "\(delivery.handler) \(status) on \(delivery.fileName); retrying in \(Self.describe(delay))",
                       event: .retry, fields: [
                "INBOX_FILE": path, "INBOX_DELIVERY_ID": delivery.id, "INBOX_HANDLER": delivery.handler,
                "INBOX_CONTENT_TYPE": delivery.contentType, "INBOX_TYPE_SOURCE": delivery.typeSource.rawValue, "INBOX_SOURCE_APP": delivery.sourceApp,
                "INBOX_EXIT_STATUS": exitStatus, "INBOX_DURATION_USEC": duration,
                "INBOX_ATTEMPT": String(delivery.attempts), "INBOX_REASON": status])
            // Failed attempts survive a restart; the attempt count is only written when one fails.
            if let container, case .opened(let file) = container.inbox.openRegular(Array(delivery.fileName.utf8)) {
                ExtendedAttributes(file.descriptor).write(AgentAttribute.attempts, String(delivery.attempts))
                file.descriptor.close()
            }
            guard phase == .running else { return }
            retryTimers[delivery.id] = try? loop.addTimer(after: delay, accuracy: .milliseconds(10)) { [unowned self] in
                self.retryTimers[delivery.id] = nil
                var again = delivery
                self.nextSequence += 1
                again.sequence = self.nextSequence
                self.queue.append(again)
                self.launchReady()
            }
        case .fail(let reason):
            moveToFailed(delivery, reason: reason, exitStatus: exitStatus, duration: duration)
        }
    }

    /// Gives up on a delivery: the file goes to failed/ with the reason in an attribute and the journal.
    func moveToFailed(_ delivery: Delivery, reason: String, exitStatus: String?, duration: String?) {
        let container = containers[delivery.handler]
        let path = container?.inbox.child(delivery.fileName) ?? delivery.fileName
        var movedTo: String?
        if let container {
            let name = Array(delivery.fileName.utf8)
            if case .opened(let file) = container.inbox.openRegular(name) {
                ExtendedAttributes(file.descriptor).write(AgentAttribute.failure, reason)
                file.descriptor.close()
            }
            if case .success(let newName) = container.inbox.moveUnique(name, to: failed, preferred: delivery.fileName) {
                container.inbox.moveSidecar(of: name, to: failed, as: newName)
                movedTo = failed.child(newName)
            }
        }
        logger.log(.warning, "\(delivery.handler) failed on \(delivery.fileName): \(reason)", event: .failed, fields: [
            "INBOX_FILE": movedTo ?? path, "INBOX_DELIVERY_ID": delivery.id, "INBOX_HANDLER": delivery.handler,
            "INBOX_CONTENT_TYPE": delivery.contentType, "INBOX_TYPE_SOURCE": delivery.typeSource.rawValue,
            "INBOX_SOURCE_APP": delivery.sourceApp, "INBOX_SOURCE_UID": String(delivery.sourceUID),
            "INBOX_EXIT_STATUS": exitStatus, "INBOX_DURATION_USEC": duration, "INBOX_ATTEMPT": String(delivery.attempts),
            "INBOX_REASON": reason, "INBOX_CHOSEN_BY": delivery.chosenBy])
    }

    /// A queued delivery whose handler is gone: route the file again from its container.
    func reroute(_ delivery: Delivery) {
        guard let container = containers[delivery.handler] else { return }
        let name = Array(delivery.fileName.utf8)
        guard case .opened(let file) = container.inbox.openRegular(name) else { return }
        defer { file.descriptor.close() }
        route(name, file: file, from: container.inbox, fresh: false)
    }

    static func describe(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .exited(75): "asked to retry (exit status 75)"
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "was killed by signal \(signal)"
        case .timedOut: "timed out"
        case .spawnFailed(let reason): "could not be started (\(reason))"
        }
    }

    static func describe(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }
}
