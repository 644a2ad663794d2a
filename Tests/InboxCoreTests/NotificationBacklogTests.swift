import Testing
@testable import InboxCore

/// What waits for a service manager that does not read: one message per kind, STATUS= coalesced to the newest, the
/// messages it acts on dropped at their deadline, the order they were made kept.
@Suite("Notification backlog")
struct NotificationBacklogTests {
    enum Step {
        case add(ServiceNotification, at: Int)
        case expire(at: Int, dropped: [ServiceNotification.Kind])
    }

    static let ready = ServiceNotification.ready(status: "Watching 1 inbox")
    static let reloading = ServiceNotification.reloading(monotonicUSec: 5, status: "Reloading registrations")

    /// (steps, what is sent once the manager reads: kinds, the last status text, coalesced, dropped). Deadlines are
    /// the add time plus 10 s.
    @Test(arguments: [
        ([Step.add(.status("a"), at: 0), .add(.status("b"), at: 1), .add(.status("c"), at: 2)],
         ["STATUS="], "STATUS=c", 2, 0),
        ([.add(ready, at: 0), .add(.status("a"), at: 1), .add(.status("b"), at: 2)],
         ["READY=1", "STATUS="], "STATUS=b", 1, 0),
        // A message that carries STATUS= makes the status made before it stale.
        ([.add(.status("a"), at: 0), .add(reloading, at: 1), .add(ready, at: 2)],
         ["RELOADING=1", "READY=1"], nil, 1, 0),
        // Two reloads while the manager does not read: the older pair is replaced, the order of the newer kept.
        ([.add(reloading, at: 0), .add(ready, at: 1), .add(reloading, at: 2), .add(ready, at: 3)],
         ["RELOADING=1", "READY=1"], nil, 2, 0),
        ([.add(.watchdog, at: 0), .add(.status("a"), at: 1), .add(.watchdog, at: 2)],
         ["WATCHDOG=1", "STATUS="], "STATUS=a", 1, 0),
        // Past its deadline a message is dropped; a status never expires.
        ([.add(ready, at: 0), .add(.status("a"), at: 5), .expire(at: 10, dropped: [.ready])],
         ["STATUS="], "STATUS=a", 0, 1),
        ([.add(ready, at: 0), .add(.stopping(status: "Stopping"), at: 5), .expire(at: 12, dropped: [.ready])],
         ["STOPPING=1"], nil, 0, 1),
    ] as [([Step], [String], String?, Int, Int)])
    func backlog(steps: [Step], sent: [String], lastStatus: String?, coalesced: Int, dropped: Int) {
        var backlog = NotificationBacklog()
        for step in steps {
            switch step {
            case .add(let notification, let at):
                backlog.add(notification, deadline: .seconds(at + 10))
            case .expire(let at, let kinds):
                #expect(backlog.expire(now: .seconds(at)) == kinds)
            }
        }
        var kinds: [String] = []
        var status: String?
        while let next = backlog.next {
            kinds.append(next.kind.rawValue)
            if next.kind == .status { status = next.message }
            backlog.removeNext()
        }
        #expect(kinds == sent)
        #expect(status == lastStatus)
        #expect(backlog.coalesced == coalesced)
        #expect(backlog.dropped == dropped)
        #expect(backlog.isEmpty)
    }

    @Test func reloadingCarriesTheMonotonicTime() {
        #expect(Self.reloading.message == "RELOADING=1\nMONOTONIC_USEC=5\nSTATUS=Reloading registrations")
    }
}
