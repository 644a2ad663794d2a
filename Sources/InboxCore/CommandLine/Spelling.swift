/// Suggestions for mistyped command-line words ("did you mean ...?").
public enum Spelling {
    /// The candidate within `maximumDistance` edits of `word`, the nearest first; nil when none is close.
    public static func closest(to word: String, among candidates: some Sequence<String>,
                               maximumDistance: Int = 2) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(candidate, word)
            guard distance <= maximumDistance else { continue }
            if let current = best, current.distance < distance || (current.distance == distance && current.candidate < candidate) {
                continue
            }
            best = (candidate, distance)
        }
        return best?.candidate
    }

    /// Edit distance over Characters: insertions, deletions, substitutions and, as one edit, two neighbours swapped
    /// (optimal string alignment), so that `image/pgn` is nearer `image/png` than `image/cgm`.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], before[j - 2] + 1)
                }
            }
            (before, previous, row) = (previous, row, before)
        }
        return previous[b.count]
    }
}
