import Testing

@Test func placeholderInboxSystemTests() { #expect(Bool(true)) }
