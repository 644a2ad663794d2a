@testable import InboxSystem
import Testing

/// NOTIFY_SOCKET as sd_notify(3) reads it: a path, or `@` and a name in the abstract namespace.
@Suite struct NotifyAddressTests {
    @Test(arguments: [
        ("/run/systemd/notify", NotifyAddress.path("/run/systemd/notify")),
        ("@/org/freedesktop/systemd1/notify/123", .abstract("/org/freedesktop/systemd1/notify/123")),
        ("@x", .abstract("x")),
        ("@", nil),
        ("", nil),
        ("relative/notify", nil),
        ("vsock:2:1234", nil),
    ] as [(String, NotifyAddress?)])
    func address(text: String, expected: NotifyAddress?) {
        #expect(NotifyAddress(text) == expected)
    }
}
