/// What content sniffing has cost since the agent started, by which check answered (SniffPath): files and the
/// microseconds spent on them, reading included. Written to the status file; `inboxctl status` shows it.
public struct SniffCosts: Sendable, Hashable {
    /// One path's tally.
    public struct Tally: Sendable, Hashable {
        public var files: Int = 0
        public var microseconds: Int64 = 0

        public init(files: Int = 0, microseconds: Int64 = 0) {
            self.files = files
            self.microseconds = microseconds
        }

        /// The mean cost of one file, 0 when there was none.
        public var meanMicroseconds: Int64 { files == 0 ? 0 : microseconds / Int64(files) }
    }

    public private(set) var tallies: [SniffPath: Tally] = [:]

    public init(_ tallies: [SniffPath: Tally] = [:]) {
        self.tallies = tallies
    }

    public mutating func add(_ path: SniffPath, microseconds: Int64) {
        tallies[path, default: Tally()].files += 1
        tallies[path, default: Tally()].microseconds += max(0, microseconds)
    }

    public subscript(path: SniffPath) -> Tally { tallies[path] ?? Tally() }

    /// `{"rules":{"files":3,"usec":120},...}`, every path present.
    public func json() -> String {
        "{" + SniffPath.allCases.map { path in
            "\(JSON.quote(path.rawValue)):{\"files\":\(self[path].files),\"usec\":\(self[path].microseconds)}"
        }.joined(separator: ",") + "}"
    }

    /// Reads what `json()` wrote; missing paths are zero.
    public init(_ value: JSONValue?) {
        for path in SniffPath.allCases {
            guard let tally = value?[path.rawValue], let files = tally["files"]?.int, files > 0 else { continue }
            tallies[path] = Tally(files: files, microseconds: Int64(tally["usec"]?.int ?? 0))
        }
    }
}
