import Testing
@testable import InboxCore

@Suite("Exec command lines")
struct ExecCommandTests {
    @Test(arguments: [
        ("/bin/echo a b", ["/bin/echo", "a", "b"]),
        ("  /bin/echo   a\tb  ", ["/bin/echo", "a", "b"]),
        ("/bin/echo \"two words\" 'single quoted'", ["/bin/echo", "two words", "single quoted"]),
        ("/bin/echo \"\" ''", ["/bin/echo", "", ""]),
        ("/bin/echo a\"b c\"d", ["/bin/echo", "ab cd"]),
        ("/bin/echo \"say \\\"hi\\\"\"", ["/bin/echo", "say \"hi\""]),
        ("/bin/echo it\\'s", ["/bin/echo", "it's"]),
        ("/bin/echo a\\ b", ["/bin/echo", "a b"]),
        ("/bin/echo \\t\\n\\\\ \\x41\\101\\u00e9", ["/bin/echo", "\t\n\\", "AA\u{E9}"]),
        ("/bin/echo \"%f\" --url=%u %t %s 100%%", ["/bin/echo", "%f", "--url=%u", "%t", "%s", "100%%"]),
    ])
    func splitting(_ line: String, _ expected: [String]) throws {
        #expect(try ExecCommand(parsing: line).arguments == expected)
    }

    @Test(arguments: [
        ("", "Exec= is empty"),
        ("   ", "Exec= is empty"),
        ("echo hi", "Exec= program 'echo' is not an absolute path"),
        ("./run", "Exec= program './run' is not an absolute path"),
        ("/bin/echo \"open", "bad quoting in Exec=: unterminated \" quote"),
        ("/bin/echo 'open", "bad quoting in Exec=: unterminated ' quote"),
        ("/bin/echo trailing\\", "bad quoting in Exec=: trailing backslash"),
        ("/bin/echo \\q", "bad quoting in Exec=: invalid escape '\\q'"),
        ("/bin/echo \\x0", "bad quoting in Exec=: invalid escape '\\x0'"),
        ("/bin/echo \\x00", "bad quoting in Exec=: invalid escape '\\x00'"),
        ("/bin/echo %x", "unknown field code '%x' in Exec="),
        ("/bin/echo %D", "unknown field code '%D' in Exec="),
        ("/bin/echo 50%", "incomplete field code '%' at the end of '50%'"),
        ("/usr/bin/%f", "Exec= program path cannot contain field codes"),
    ])
    func rejected(_ line: String, _ message: String) {
        #expect(throws: ExecCommandError(message: message)) { try ExecCommand(parsing: line) }
    }

    static let fields = ExecFields(path: "/var/lib/inboxd/containers/v/Inbox/My Photo é.png",
                                   contentType: "public.png", sourceApp: "com.example.sender")

    @Test(arguments: [
        ("/bin/h %f", ["/bin/h", "/var/lib/inboxd/containers/v/Inbox/My Photo é.png"]),
        ("/bin/h %u", ["/bin/h", "file:///var/lib/inboxd/containers/v/Inbox/My%20Photo%20%C3%A9.png"]),
        ("/bin/h %t", ["/bin/h", "public.png"]),
        ("/bin/h %s", ["/bin/h", "com.example.sender"]),
        ("/bin/h 100%%", ["/bin/h", "100%"]),
        ("/bin/h %%f", ["/bin/h", "%f"]),
        ("/bin/h --type=%t --from=%s", ["/bin/h", "--type=public.png", "--from=com.example.sender"]),
        ("/bin/h \"%t %t\"", ["/bin/h", "public.png public.png"]),
    ])
    func expansion(_ line: String, _ expected: [String]) throws {
        #expect(try ExecCommand(parsing: line).expand(Self.fields) == expected)
    }

    @Test func missingSourceAppExpandsToAnEmptyArgument() throws {
        let fields = ExecFields(path: "/i/a", contentType: "public.data", sourceApp: nil)
        #expect(try ExecCommand(parsing: "/bin/h %s --from=%s %f").expand(fields) == ["/bin/h", "", "--from=", "/i/a"])
    }

    @Test(arguments: [
        ("/a/b.txt", "file:///a/b.txt"),
        ("/with space/x", "file:///with%20space/x"),
        ("/caf\u{E9}/\u{65E5}\u{672C}", "file:///caf%C3%A9/%E6%97%A5%E6%9C%AC"),
        ("/q?x#y%z", "file:///q%3Fx%23y%25z"),
        ("/keep-._~!$&'()*+,;=:@", "file:///keep-._~!$&'()*+,;=:@"),
        ("/\"<>\\^`{|}[]", "file:///%22%3C%3E%5C%5E%60%7B%7C%7D%5B%5D"),
        ("/tab\there\n", "file:///tab%09here%0A"),
    ])
    func fileURLs(_ path: String, _ url: String) {
        #expect(fileURL(forPath: path) == url)
    }

    @Test func descriptionQuotesWhatNeedsIt() throws {
        #expect(try ExecCommand(parsing: "/bin/h 'a b' \"\" plain").description == "/bin/h \"a b\" \"\" plain")
    }
}
