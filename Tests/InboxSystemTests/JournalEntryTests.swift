@testable import InboxSystem
import Testing

/// journald's native protocol as `JournalEntry` writes it (systemd.journal-fields(7)): `KEY=value` lines, and a value
/// with a newline in the binary form, so that a message of several lines is one field.
@Suite struct JournalEntryTests {
    @Test(arguments: [
        ([("MESSAGE", "hello"), ("PRIORITY", "6")], Array("MESSAGE=hello\nPRIORITY=6\n".utf8)),
        ([("MESSAGE", "")], Array("MESSAGE=\n".utf8)),
        ([("MESSAGE", "two\nlines"), ("INBOX_FILE", "a=b")],
         Array("MESSAGE\n".utf8) + [9, 0, 0, 0, 0, 0, 0, 0] + Array("two\nlines\nINBOX_FILE=a=b\n".utf8)),
    ] as [([(String, String)], [UInt8])])
    func wireFormat(fields: [(String, String)], expected: [UInt8]) {
        var entry = JournalEntry()
        for (key, value) in fields { entry.append(key, value) }
        #expect(entry.bytes == expected)
    }
}
