import Testing
@testable import InboxCore

@Suite("Which instance inboxctl looks at")
struct AgentInstanceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let request: InstanceChoice.Request
        let isRoot: Bool
        /// The instances that run.
        let running: Set<AgentInstance>
        let expected: AgentInstance
        var testDescription: String { "\(request), root: \(isRoot), running: \(running.map(\.rawValue).sorted())" }
    }

    static let cases: [Case] = [
        // An ordinary user: their own when it runs, else the system's when that runs, else their own.
        Case(request: .automatic, isRoot: false, running: [], expected: .user),
        Case(request: .automatic, isRoot: false, running: [.user], expected: .user),
        Case(request: .automatic, isRoot: false, running: [.system], expected: .system),
        Case(request: .automatic, isRoot: false, running: [.user, .system], expected: .user),
        // Root: the system's, whatever runs.
        Case(request: .automatic, isRoot: true, running: [], expected: .system),
        Case(request: .automatic, isRoot: true, running: [.user], expected: .system),
        Case(request: .automatic, isRoot: true, running: [.user, .system], expected: .system),
        // Asked for: that one, running or not.
        Case(request: .only(.system), isRoot: false, running: [.user], expected: .system),
        Case(request: .only(.system), isRoot: false, running: [], expected: .system),
        Case(request: .only(.user), isRoot: false, running: [.system], expected: .user),
        Case(request: .only(.user), isRoot: true, running: [.system], expected: .user),
    ]

    @Test(arguments: cases)
    func decides(_ test: Case) {
        let choice = InstanceChoice.decide(test.request, isRoot: test.isRoot) { test.running.contains($0) }
        #expect(choice.instance == test.expected)
        #expect(choice.running == test.running.contains(test.expected))
        #expect(choice.otherRunning == test.running.contains(test.expected.other))
    }

    @Test(arguments: [
        (InstanceChoice(instance: .user, running: false, otherRunning: true),
         "This is your user instance, which is not running; the system instance is running: see 'inboxctl status --system'."),
        (InstanceChoice(instance: .user, running: false, otherRunning: false),
         "This is your user instance, which is not running; the system instance is not running either "
            + "('inboxctl status --system' looks there)."),
        (InstanceChoice(instance: .system, running: true, otherRunning: false),
         "This is the system instance; your user instance is not running either ('inboxctl status --user' looks there)."),
        (InstanceChoice(instance: .system, running: false, otherRunning: true),
         "This is the system instance, which is not running; your user instance is running: see 'inboxctl status --user'."),
    ])
    func hintNamesTheOtherInstanceAndItsOption(_ choice: InstanceChoice, _ expected: String) {
        #expect(choice.otherInstanceHint("inboxctl status") == expected)
    }
}
