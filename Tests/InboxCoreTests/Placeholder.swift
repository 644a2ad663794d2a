import Testing

@Test func placeholderInboxCoreTests() { #expect(Bool(true)) }
