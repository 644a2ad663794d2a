/// Package documents: directories that are one document (docs/types.md, "Package documents").
///
/// A directory is a package when its name's extension belongs to a type conforming to `com.apple.package` (built in,
/// or declared by a registration); the type is the name's, checked against the format's marker where it has one
/// (`PackageMarker.table`). Nothing inside a package is sniffed: the names at its top level decide the marker.
extension TypeDatabase {
    /// The type every package document conforms to.
    public static let packageType = "com.apple.package"

    /// True when documents of `identifier` are directories: it conforms to `com.apple.package` (built in, a
    /// registration's exported or imported type, or an Info.plist document type with `LSTypeIsPackage`).
    public func isPackage(_ identifier: String) -> Bool {
        identifier == TypeDatabase.packageType || conforms(identifier, to: TypeDatabase.packageType)
    }

    /// The package type a directory called `name` is a document of, by its extension; nil when it is not one
    /// (a plain directory, moved aside).
    ///
    /// The extension is found as a file's is (the longest dotted suffix any type declares, without regard to case:
    /// `Report.RTFD`, `x.tar.rtfd` are RTFDs); it names a package when a package type claims it. Where a file type
    /// claims it too (`.pages`: the single-file `com.apple.iwork.pages.sffpages` and the package
    /// `com.apple.iwork.pages.pages`), a directory is the package form. Of several package types, the most specific
    /// (one that conforms to another) comes first, then the tags' order: exported, imported, built in.
    public func packageIdentifier(forDirectoryNamed name: String) -> String? {
        packageCandidates(forDirectoryNamed: name).first
    }

    /// Every package type the name's extension allows, the most specific first (see `packageIdentifier`).
    func packageCandidates(forDirectoryNamed name: String) -> [String] {
        let base = name.lastIndex(of: "/").map { String(name[name.index(after: $0)...]) } ?? name
        guard let declared = declaredExtension(of: base) else { return [] }
        var remaining = (extensionClaimants[declared.suffix] ?? []).filter { packageIdentifiers.contains($0) }
        var ordered: [String] = []
        while !remaining.isEmpty {
            // The first that no other remaining candidate conforms to.
            let index = remaining.firstIndex { candidate in
                !remaining.contains { $0 != candidate && conforms($0, to: candidate) }
            } ?? 0
            ordered.append(remaining.remove(at: index))
        }
        return ordered
    }
}

/// What marks a package format from the inside: names at the package's top level, any one of which is enough
/// (`TXT.rtf` in an RTFD; `Index/`, `Index.zip` or `index.xml` in an iWork package). A format without an entry in
/// `table` has no marker: its name alone decides.
public struct PackageMarker: Sendable, Hashable {
    /// One top-level entry that marks the format.
    public enum Entry: Sendable, Hashable {
        /// A regular file of this name (exactly: case matters, as it does to the apps that read the format).
        case file(String)
        /// A directory of this name.
        case directory(String)

        /// `TXT.rtf`, `Index/`.
        public var description: String {
            switch self {
            case .file(let name): name
            case .directory(let name): name + "/"
            }
        }
    }

    /// Any one of these marks the format.
    public let entries: [Entry]

    public init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// True when one of the entries is among `topLevel`.
    public func isFound(in topLevel: [(name: String, isDirectory: Bool)]) -> Bool {
        topLevel.contains { item in
            entries.contains { entry in
                switch entry {
                case .file(let name): !item.isDirectory && item.name == name
                case .directory(let name): item.isDirectory && item.name == name
                }
            }
        }
    }

    /// "TXT.rtf", "Index/, Index.zip, index.xml or index.xml.gz".
    public var description: String {
        let names = entries.map(\.description)
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }

    /// iWork since 2013: an `Index/` directory (or `Index.zip`) of the document's archives; iWork '09 and before: an
    /// `index.xml`, perhaps gzipped.
    private static let iWork: [Entry] = [.directory("Index"), .file("Index.zip"), .file("index.xml"),
                                         .file("index.xml.gz")]

    /// The formats with a marker, by type. A type without an entry of its own takes that of the nearest type it
    /// conforms to that has one (`marker(for:in:)`), so that a registration's kind of RTFD needs a `TXT.rtf` too.
    public static let table: [String: PackageMarker] = [
        "com.apple.rtfd": PackageMarker([.file("TXT.rtf")]),
        "com.apple.iwork.pages.pages": PackageMarker(iWork),
        "com.apple.iwork.pages.template": PackageMarker(iWork),
        "com.apple.iwork.numbers.numbers": PackageMarker(iWork),
        "com.apple.iwork.numbers.template": PackageMarker(iWork),
        // Keynote '09 and before called its index `index.apxl`.
        "com.apple.iwork.keynote.key": PackageMarker(iWork + [.file("index.apxl"), .file("index.apxl.gz")]),
        "com.apple.iwork.keynote.kth": PackageMarker(iWork + [.file("index.apxl"), .file("index.apxl.gz")]),
        // Keynote 1's presentation.
        "com.apple.keynote.key": PackageMarker([.file("presentation.apxl"), .file("presentation.apxl.gz")]),
    ]

    /// The marker a package of `identifier` must have: its own, else the nearest ancestor's; nil when none has one.
    public static func marker(for identifier: String, in database: TypeDatabase) -> PackageMarker? {
        if let own = table[identifier] { return own }
        return database.ancestorsByDistance(of: identifier).lazy.compactMap { table[$0.identifier] }.first
    }
}

extension TypeResolver {
    /// The type of a package called `name` whose top-level entries are `topLevel`, with `explicit` from its
    /// content-type attribute: by extension, checked against the format's marker where it has one (`TXT.rtf` in an
    /// RTFD, `Index/` or `index.xml` in an iWork package); a package without its marker is a mismatch and gets
    /// `com.apple.package` alone.
    ///
    /// The attribute decides, as for a file, when it names a package type the name does not contradict: one the
    /// name's type conforms to (an abstract `com.apple.package` is refined by the name's `com.apple.rtfd`, source
    /// `.extension`), one that conforms to the name's, or any when the name names none. An attribute naming another
    /// package type than the name's loses to the name, and one naming a type that is not a package is ignored; each
    /// is a mismatch. Where an extension has several package types (`.key`: Keynote, Keynote 1), the first whose
    /// marker is there is taken.
    public static func decidePackage(name: String, explicit: String?, topLevel: [(name: String, isDirectory: Bool)],
                                     in database: TypeDatabase) -> ResolvedType {
        let candidates = database.packageCandidates(forDirectoryNamed: name)
        // The name's type: the first candidate whose marker is there (or that has none), else the first.
        let named = candidates.first { PackageMarker.marker(for: $0, in: database)?.isFound(in: topLevel) ?? true }
            ?? candidates.first
        var diagnostics: [String] = []
        var claim: (identifier: String, source: Source)? = named.map { ($0, .extension) }
        // An attribute that lost, and why: the mismatch, unless a missing marker is one already.
        var rejected: (identifier: String, reason: String)?
        if let explicit, case let trimmed = explicit.trimmingINIWhitespace(), !trimmed.isEmpty {
            if trimmed.utf8.count > MetadataLimits.contentTypeBytes {
                diagnostics.append("content-type attribute is longer than \(MetadataLimits.contentTypeBytes) bytes; "
                    + "using the directory's name")
            } else if let attributed = database.knownIdentifier(trimmed) {
                if !database.isPackage(attributed) {
                    rejected = (attributed, "is not a package type")
                } else if let named, attributed != named, database.conforms(named, to: attributed) {
                    // An abstract attribute (com.apple.package, com.apple.plugin): the name's type is a kind of it.
                } else if let named, !database.conforms(attributed, to: named) {
                    rejected = (attributed, "is not the package type its name gives (\(named))")
                } else {
                    claim = (attributed, .attribute)
                }
            } else {
                diagnostics.append("content-type attribute '\(trimmed.abbreviated)' is not a known type; "
                    + "using the directory's name")
            }
        }
        let claimed = claim?.identifier ?? TypeDatabase.packageType
        let source = claim?.source ?? .fallback
        func mimeType(_ identifier: String) -> String {
            database.preferredMIMEType(of: identifier) ?? "inode/directory"
        }
        var mismatch: ResolvedType.Mismatch?
        var decided = claimed
        var decidedSource = source
        if let marker = PackageMarker.marker(for: claimed, in: database), !marker.isFound(in: topLevel) {
            decided = TypeDatabase.packageType
            decidedSource = .content
            diagnostics.append("\(claimed) needs \(marker.description) at its top level, which this package lacks: "
                + "typed \(decided)")
            mismatch = ResolvedType.Mismatch(claimed: claimed, claimSource: source, content: TypeDatabase.packageType,
                                             contentWon: true, decided: decided)
        }
        if let rejected, mismatch != nil {
            diagnostics.append("content-type attribute '\(rejected.identifier)' \(rejected.reason); typed \(decided)")
        } else if let rejected {
            mismatch = ResolvedType.Mismatch(claimed: rejected.identifier, claimSource: .attribute, content: decided,
                                             contentWon: true, decided: decided)
        }
        return ResolvedType(identifier: decided, source: decidedSource, mimeType: mimeType(decided),
                            mismatch: mismatch, diagnostics: diagnostics)
    }
}
