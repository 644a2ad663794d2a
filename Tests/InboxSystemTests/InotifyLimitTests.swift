import Glibc
import InboxSystem
import Testing

/// When inotify runs out, the error names the sysctl to raise (inotify(7), /proc interfaces).
@Suite("Inotify limit hints")
struct InotifyLimitTests {
    struct Case: Sendable, CustomStringConvertible {
        let operation: String
        let errno: Errno
        let hint: String?
        let line: Int
        var description: String { "\(operation) \(errno.rawValue) (line \(line))" }
    }

    static let cases: [Case] = [
        Case(operation: "inotify_add_watch", errno: .noSpace,
             hint: "the user's inotify watches are used up: raise the sysctl fs.inotify.max_user_watches", line: #line),
        Case(operation: "inotify_init1", errno: .tooManyOpenFiles,
             hint: "the user's inotify instances are used up: raise the sysctl fs.inotify.max_user_instances "
                + "(or the process has too many open files: raise its RLIMIT_NOFILE, LimitNOFILE=)", line: #line),
        Case(operation: "inotify_init1", errno: .tooManyOpenFilesInSystem,
             hint: "the system's open files are used up: raise the sysctl fs.file-max", line: #line),
        // Not about a limit: no advice.
        Case(operation: "inotify_add_watch", errno: .noSuchFile, hint: nil, line: #line),
        Case(operation: "inotify_add_watch", errno: .permissionDenied, hint: nil, line: #line),
        Case(operation: "inotify_init1", errno: .noSpace, hint: nil, line: #line),
        Case(operation: "inotify_add_watch", errno: .tooManyOpenFiles, hint: nil, line: #line),
        Case(operation: "open", errno: .noSpace, hint: nil, line: #line),
    ]

    @Test(arguments: cases)
    func hint(_ c: Case) {
        #expect(Inotify.limitHint(operation: c.operation, errno: c.errno) == c.hint, "line \(c.line)")
    }

    @Test func theHintEndsTheErrorsText() {
        let error = SystemError("inotify_add_watch", path: "/srv/Inbox", errno: .noSpace,
                                hint: Inotify.limitHint(operation: "inotify_add_watch", errno: .noSpace))
        #expect(error.description == "inotify_add_watch /srv/Inbox: \(Errno.noSpace) (the user's inotify watches are "
            + "used up: raise the sysctl fs.inotify.max_user_watches)")
        #expect(SystemError("open", path: "/x", errno: .noSpace).description == "open /x: \(Errno.noSpace)")
    }
}
