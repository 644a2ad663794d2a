import Glibc
import InboxSystem
import Testing

/// Real rulesets applied by the real kernel to real children.
@Suite(.enabled(if: LandlockRuleset.abi() >= 2, "the kernel offers no Landlock ABI 2 or later"))
struct LandlockTests {
    @Test func theABIIsReadAndEveryRightOfItIsHandled() throws {
        let abi = LandlockRuleset.abi()
        let ruleset = try LandlockRuleset(abi: abi)
        #expect(ruleset.handled.contains(.refer))
        #expect(ruleset.handled.contains(.truncate) == (abi >= 3))
        #expect(ruleset.handled.contains(.ioctlDev) == (abi >= 5))
        #expect(LandlockAccess.all(abi: 0).isEmpty)
        #expect(LandlockAccess.all(abi: 1).rawValue == (1 << 13) - 1)
    }

    /// A handler's view: read and delete in its Inbox, anything in Documents, nothing else writable.
    @Test func anInboxIsReadAndDeleteOnly() throws {
        let scratch = try ScratchDirectory()
        defer { _ = try? run(["/bin/rm", "-rf", scratch.path]) }
        let inbox = scratch.path("Inbox"), documents = scratch.path("Documents"), other = scratch.path("other")
        for directory in [inbox, documents, other] { #expect(mkdir(directory, 0o755) == 0) }
        let file = try scratch.create("Inbox/file.txt")
        _ = write(file.rawValue, "inbox copy\n", 11)
        file.close()

        let ruleset = try LandlockRuleset(abi: LandlockRuleset.abi())
        try ruleset.allow(.readExecute, beneath: "/")
        try ruleset.allow([.readFile, .writeFile], beneath: "/dev/null")
        try ruleset.allow(.readRemove, beneath: inbox)
        try ruleset.allow(.all(abi: ruleset.abi), beneath: documents)

        let script = """
            I=\(inbox) D=\(documents) O=\(other)
            try() { if (eval "$2") 2>/dev/null; then echo "$1 allowed"; else echo "$1 denied"; fi; }
            try read 'cat $I/file.txt >/dev/null'
            try write 'echo x >> $I/file.txt'
            try truncate ': > $I/file.txt'
            try create 'echo x > $I/new.txt'
            try hardlink 'ln $I/file.txt $I/link.txt'
            try symlink 'ln -s /etc/passwd $I/sym'
            try mkdir 'mkdir $I/dir'
            try mkfifo 'mkfifo $I/fifo'
            try copy 'cp $I/file.txt $D/copy.txt'
            try rename 'perl -e "rename(q($I/file.txt), q($D/moved.txt)) or exit 1"'
            try documents 'echo y > $D/new.txt'
            try other 'echo z > $O/x'
            try tmp 'echo z > /tmp/inboxd-landlock-test-$$'
            try delete 'rm $I/file.txt'
            """
        let outcome = try run(["/bin/sh", "-c", script], environment: ["PATH=/usr/bin:/bin"]) { request in
            request.landlockRuleset = ruleset.descriptor
        }
        #expect(outcome.status == .exited(0))
        let results = Dictionary(uniqueKeysWithValues: outcome.output.split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            return (String(parts[0]), String(parts[1]))
        })
        #expect(results == [
            "read": "allowed", "write": "denied", "truncate": "denied", "create": "denied", "hardlink": "denied",
            "symlink": "denied", "mkdir": "denied", "mkfifo": "denied", "copy": "allowed", "rename": "denied",
            "documents": "allowed", "other": "denied", "tmp": "denied", "delete": "allowed",
        ])
        // The copy is intact; the original was removed by the handler itself.
        #expect(String(decoding: try scratch.read("Documents/copy.txt"), as: UTF8.self) == "inbox copy\n")
        #expect(access(scratch.path("Inbox/file.txt"), F_OK) != 0)
    }

    @Test func aMissingPathGrantsNothingAndIsNotAnError() throws {
        let ruleset = try LandlockRuleset(abi: LandlockRuleset.abi())
        try ruleset.allow(.readExecute, beneath: "/nonexistent/inboxd/path")
    }
}
