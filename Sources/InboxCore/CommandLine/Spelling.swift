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

    /// Levenshtein distance over Characters.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in 1...b.count {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return row[b.count]
    }
}
