import Testing
@testable import InboxCore

/// The Thumbnail Managing Standard's names: the MD5 of the URI, as the spec's own example gives it.
@Suite("Thumbnail naming")
struct ThumbnailNamingTests {
    @Test(arguments: [
        // The standard's example (Thumbnail Managing Standard, "Thumbnail Saving").
        ("file:///home/jens/photos/me.png", "c6ee772d9e49320e97ec29a7eb5b1697.png"),
        // The URI as given, escaped: the name is made from its bytes, never from a decoded path.
        ("file:///tmp/caf%C3%A9%20menu.pdf", "21cc422d2de5c8cd4614acb8866e394a.png"),
        ("file:///", "03f0716f0d219f8b767d0e5ac6c3da37.png"),
    ])
    func fileName(uri: String, expected: String) {
        #expect(FreedesktopThumbnail.fileName(forURI: uri) == expected)
    }

    @Test func annotateWritesTheStandardKeys() throws {
        let png = try #require(FreedesktopThumbnail.annotate(PNGFileTests.tiny, uri: "file:///a.pdf",
                                                              modified: 1_700_000_000, size: 4096,
                                                              mimeType: "application/pdf"))
        let text = PNGFile.text(of: png)
        #expect(text.map(\.key) == ["Thumb::URI", "Thumb::MTime", "Thumb::Size", "Thumb::Mime", "Software"])
        #expect(text.map(\.value) == ["file:///a.pdf", "1700000000", "4096", "application/pdf", "inboxd"])
        let bare = try #require(FreedesktopThumbnail.annotate(PNGFileTests.tiny, uri: "file:///b", modified: -1,
                                                               size: nil, mimeType: nil))
        #expect(PNGFile.text(of: bare).map(\.key) == ["Thumb::URI", "Thumb::MTime", "Software"])
        #expect(FreedesktopThumbnail.annotate(Array("not a png".utf8), uri: "file:///b", modified: 0, size: nil,
                                              mimeType: nil) == nil)
    }
}
