import Foundation
import Testing

/// Which instance an inboxctl without flags looks at, through the real default places: a system instance whose
/// status file is in /run/inboxd (in a private mount namespace with a tmpfs over /run, so the host's /run is never
/// touched) and, for part of it, a user instance of nobody's in its $XDG_RUNTIME_DIR. inboxctl runs as nobody (and
/// once as root), with no place given on its command line.
@Suite(.enabled(if: getuid() == 0, "a mount namespace and switching to nobody need root"),
       .enabled(if: nobodyCanRunTheAgent, "the built binaries are not executable by nobody (uid 65534) from here"))
struct InstanceChoiceTests {
    /// One inboxctl run inside the namespace, as the script wrote it down.
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `steps` (shell lines; `ctl NAME ARGS...` runs inboxctl as nobody, `rootctl NAME ARGS...` as root) in a
    /// private mount namespace after a system agent started there with its status in /run/inboxd; returns each
    /// named run and the work directory.
    static func inNamespace(_ steps: String, work: URL, home: URL) throws -> [String: Outcome] {
        let script = """
            set -u
            W=\(work.path); H=\(home.path)
            mount -t tmpfs -o mode=0755 tmpfs /run || exit 90
            ready() { for _ in $(seq 1 400); do [ -s "$1" ] && return 0; sleep 0.025; done; return 1; }
            ctl() { name=$1; shift
                setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/env -i HOME=$H XDG_RUNTIME_DIR=$H/run \\
                    PATH=/usr/bin:/bin \(Binaries.inboxctl.path) "$@" >$W/$name.out 2>$W/$name.err
                echo $? >$W/$name.rc; }
            rootctl() { name=$1; shift
                /usr/bin/env -i HOME=/root XDG_RUNTIME_DIR=$H/run PATH=/usr/bin:/bin \(Binaries.inboxctl.path) "$@" \\
                    >$W/$name.out 2>$W/$name.err
                echo $? >$W/$name.rc; }
            \(Binaries.inboxd.path) --inbox $W/inbox --state $W/state --handlers $W/handlers --runtime-dir /run/inboxd \\
                --log-target stderr 2>$W/system.log &
            system=$!
            echo $system >$W/system.pid
            ready /run/inboxd/status.json || { kill $system; exit 91; }
            \(steps)
            kill $system; wait $system
            exit 0
            """
        let result = try run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/bash", "-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        var outcomes: [String: Outcome] = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.hasSuffix(".rc") }
        for file in names {
            let name = String(file.dropLast(3))
            func read(_ suffix: String) -> String {
                (try? String(contentsOfFile: work.path + "/" + name + suffix, encoding: .utf8)) ?? ""
            }
            outcomes[name] = Outcome(status: Int32(read(".rc").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1,
                                     stdout: read(".out"), stderr: read(".err"))
        }
        return outcomes
    }

    /// A work directory (the system agent's Inbox, state and handlers) and a home for nobody.
    static func places() throws -> (work: URL, home: URL) {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("inboxd-instances-\(UUID().uuidString)")
        let work = base.appendingPathComponent("work"), home = base.appendingPathComponent("home")
        for directory in [work, home, home.appendingPathComponent("run"), work.appendingPathComponent("handlers")] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try """
            [Handler]
            Exec=/bin/true
            [DocumentType]
            ContentTypes=public.png
            """.write(to: work.appendingPathComponent("handlers/test.png-only.handler"), atomically: true, encoding: .utf8)
        try "words\n".write(to: home.appendingPathComponent("note.txt"), atomically: true, encoding: .utf8)
        _ = try run("/bin/chmod", ["0755", base.path, work.path])
        _ = try run("/bin/chown", ["-R", "65534:65534", home.path])
        return (work, home)
    }

    @Test func anOrdinaryUserWithoutAnInstanceOfTheirOwnFindsTheSystemInstance() throws {
        let (work, home) = try Self.places()
        defer { try? FileManager.default.removeItem(at: work.deletingLastPathComponent()) }
        let runs = try Self.inNamespace("""
            ctl status status --json
            ctl user status --user
            ctl send send $H/note.txt
            ctl list list unhandled --user
            ctl force open --with test.png-only --force $H/note.txt
            ctl both status --system --user
            """, work: work, home: home)
        let systemPID = try String(contentsOf: work.appendingPathComponent("system.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let status = try #require(runs["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("\"pid\":\(systemPID),"), "\(status.stdout)")

        let user = try #require(runs["user"])
        #expect(user.status == 1)
        #expect(user.stderr == """
            inboxd is not running (no status file: \(home.path)/run/inboxd/status.json: cannot open: No such file or directory)
            This is your user instance, which is not running; the system instance is running: see 'inboxctl status --system'.

            """)

        // The system instance's Inbox, as its status file names it (not the user's ~/.local/share/inboxd/Inbox).
        let send = try #require(runs["send"])
        #expect(send.status == 0, "\(send.stderr)")
        #expect(send.stdout == "\(work.path)/inbox/note.txt\n", "\(send.stdout)")

        let list = try #require(runs["list"])
        #expect(list.status == 0)
        #expect(list.stdout.hasSuffix("""
            is empty
            This is your user instance, which is not running; the system instance is running: see 'inboxctl list unhandled --system'.

            """), "\(list.stdout)")

        // The system agent (root) would refuse an override from nobody into failed/: refused here, nothing sent.
        let force = try #require(runs["force"])
        #expect(force.status == 1)
        #expect(force.stdout.isEmpty)
        #expect(force.stderr.contains("the agent (uid 0) takes --force only from root or its own user, not from uid 65534"),
                "\(force.stderr)")

        let both = try #require(runs["both"])
        #expect(both.status == 2)
        #expect(both.stderr == """
            Error: '--system' and '--user' cannot be used together
            Usage: inboxctl status [FILE|ID] [--cluster] [--json] [--runtime-dir DIR] [agent options]
              See 'inboxctl help status'.

            """)
    }

    @Test func aUserInstanceThatRunsIsTheUsersDefaultAndRootsIsTheSystems() throws {
        let (work, home) = try Self.places()
        defer { try? FileManager.default.removeItem(at: work.deletingLastPathComponent()) }
        let runs = try Self.inNamespace("""
            setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/env -i HOME=$H XDG_RUNTIME_DIR=$H/run \\
                PATH=/usr/bin:/bin \(Binaries.inboxd.path) --log-target stderr 2>$W/user.log &
            user=$!
            echo $user >$W/user.pid
            ready $H/run/inboxd/status.json || { kill $user; kill $system; exit 92; }
            ctl mine status --json
            ctl system status --json --system
            rootctl root status --json
            kill $user; wait $user
            """, work: work, home: home)
        func pid(_ name: String) throws -> String {
            try String(contentsOf: work.appendingPathComponent("\(name).pid"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (systemPID, userPID) = (try pid("system"), try pid("user"))
        #expect(runs["mine"]?.stdout.contains("\"pid\":\(userPID),") == true, "\(String(describing: runs["mine"]))")
        #expect(runs["system"]?.stdout.contains("\"pid\":\(systemPID),") == true, "\(String(describing: runs["system"]))")
        // Root's default is the system instance even where a user instance runs in its $XDG_RUNTIME_DIR.
        #expect(runs["root"]?.stdout.contains("\"pid\":\(systemPID),") == true, "\(String(describing: runs["root"]))")
    }
}
