/// The last component of a path as given (`/a/b.png` → `b.png`); a path without one is returned whole.
public func lastPathComponent(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}

/// The directory part of a path as given (`/a/b.png` → `/a`, `/b.png` → `/`, `b.png` → `.`).
public func parentPath(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
