@testable import InboxCore

/// An XML Info.plist: line 1 the declaration, 2 `<plist>`, 3 the top `<dict>`, the given lines from 4 on.
func infoPlist(_ body: String...) -> [UInt8] {
    Array((["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<plist version=\"1.0\">", "<dict>"] + body
           + ["</dict>", "</plist>", ""]).joined(separator: "\n").utf8)
}

/// Property-list values built in code, every node and key at one location.
func entry(_ key: String, _ value: PropertyListValue, at location: PropertyListLocation = .line(1)) -> PropertyListEntry {
    PropertyListEntry(key: key, at: location, value: PropertyListNode(value, at: location))
}

func dict(_ pairs: [(String, PropertyListValue)], at location: PropertyListLocation = .line(1)) -> PropertyListValue {
    .dict(pairs.map { entry($0.0, $0.1, at: location) })
}

func root(_ pairs: [(String, PropertyListValue)], at location: PropertyListLocation = .line(1)) -> PropertyListNode {
    PropertyListNode(dict(pairs, at: location), at: location)
}
