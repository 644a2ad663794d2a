import Glibc
import InboxCore

/// The registrations in force: parsed from the handlers.d search path, first file name wins,
/// a symlink to /dev/null masks the name further down.
public struct LoadedRegistrations: Sendable {
    public var registrations: [HandlerRegistration] = []
    public var database: TypeDatabase = .builtin
    /// The document types by content type, for choosing handlers.
    public var index = SelectionIndex([])
    public var diagnostics: [Diagnostic] = []
    public var masked: [String] = []
    /// Files that had errors and were skipped.
    public var rejected: [String] = []
    /// The directories of the bundles found (each bundle, its Contents/ and Contents/MacOS/): watched like the
    /// handlers.d directories, so that an edit inside a bundle reloads too.
    public var bundleDirectories: [String] = []
    /// The directories searched, in order, and those of them that do not exist.
    public var searched: [String] = []
    public var missingDirectories: [String] = []

    public func registration(_ identifier: String) -> HandlerRegistration? {
        registrations.first { $0.identifier == identifier }
    }

    /// The icons and reference URL of a declared type, from the registration whose declaration is in force.
    public func typeDetails(of identifier: String) -> TypeDetails? {
        guard let file = database.declaration(for: identifier)?.origin.location?.file else { return nil }
        return registrations.first { $0.path == file && $0.typeDetails[identifier] != nil }?.typeDetails[identifier]
    }
}

public enum RegistrationLoader {
    /// Registration files: unit syntax, or an Info.plist (XML or binary).
    public static let suffixes = [".handler", ".plist"]

    /// Reads every `*.handler` and `*.plist` in the search path; types resolve against the built-in table, the registrations'
    /// declarations and the host's MIME database. Never throws: each problem is a diagnostic.
    /// A file, a directory above it or the program it names that someone else could have written is refused
    /// (`RegistrationTrust`).
    /// `unitsRefusal`: why a `Unit=` registration cannot work here (no systemd as PID 1), reported at its line.
    public static func load(directories: [String], mime: MIMEDatabase = .empty,
                            trust: RegistrationTrust = .current,
                            unitsRefusal: String? = ServiceManager.unitRefusal) -> LoadedRegistrations {
        var loaded = LoadedRegistrations()
        var seen: Set<String> = []
        var files: [String] = []
        loaded.searched = directories
        for directory in directories {
            if FileSystem.accessError(directory) == .noSuchFile { loaded.missingDirectories.append(directory) }
            guard let dir = try? Directory(path: directory), let names = try? dir.entries() else { continue }
            let candidates = names.compactMap { String(validating: $0, as: UTF8.self) }
                .filter { name in
                    !name.hasPrefix(".") && (suffixes.contains { name.hasSuffix($0) } || RegistrationBundle.isBundleName(name))
                }
                .sorted()
            for name in candidates where !seen.contains(name) {
                seen.insert(name)
                let path = dir.child(name)
                if isMask(path) {
                    loaded.masked.append(path)
                } else if RegistrationBundle.isBundleName(name) {
                    // Only a directory is a bundle; a file so named is none of ours.
                    guard RegistrationBundle.isDirectory(path) else { continue }
                    files.append(path)
                    loaded.bundleDirectories += [path, path + "/Contents", path + "/Contents/MacOS"]
                } else {
                    files.append(path)
                }
            }
        }
        var identifiers: [String: String] = [:]
        var declarations: [TypeDeclaration] = []
        var references: [TypeReferences] = []
        for path in files.sorted(by: { lastPathComponent($0) < lastPathComponent($1) }) {
            let parsed: RegistrationFile
            switch parse(path, trust: trust) {
            case .success(let file):
                parsed = file
            case .failure(let diagnostic):
                loaded.diagnostics.append(diagnostic)
                loaded.rejected.append(path)
                continue
            }
            loaded.diagnostics += parsed.diagnostics
            references.append(parsed.typeReferences)
            guard let registration = parsed.registration else {
                loaded.rejected.append(path)
                continue
            }
            if let refusal = unitRefusal(registration, why: unitsRefusal) {
                loaded.diagnostics.append(refusal)
                loaded.rejected.append(path)
                continue
            }
            if let refusal = programRefusal(registration, trust: trust) {
                loaded.diagnostics.append(refusal)
                loaded.rejected.append(path)
                continue
            }
            if let other = identifiers[registration.identifier] {
                loaded.diagnostics.append(Diagnostic(
                    .error, at: SourceLocation(file: path, line: 1),
                    "handler identifier '\(registration.identifier)' is already registered by \(other)"))
                loaded.rejected.append(path)
                continue
            }
            identifiers[registration.identifier] = path
            loaded.registrations.append(registration)
            declarations += registration.exportedTypes + registration.importedTypes
        }
        var (database, typeDiagnostics) = TypeDatabase.builtin.attaching(mime).adding(declarations)
        // A ContentTypes= word that no type declares (and no MIME database knows) is probably misspelt: a warning at
        // its line, for rejected files too, since their other errors are fixed first and this one would come next.
        loaded.diagnostics += references.flatMap { $0.unknownClaims(in: database) }
        // ContentTypes= may name MIME types and dynamic identifiers: each stands for the identifier the database
        // gives it (as for a content-type attribute); a misspelt one still counts as written.
        for index in loaded.registrations.indices {
            for typeIndex in loaded.registrations[index].documentTypes.indices {
                loaded.registrations[index].documentTypes[typeIndex].contentTypes =
                    loaded.registrations[index].documentTypes[typeIndex].contentTypes.map { token in
                        database.knownIdentifier(token)
                            ?? (token.contains("/") ? database.typeIdentifier(forMIMEType: token) : nil) ?? token
                    }
            }
        }
        let claims = ClaimResolver.resolve(&loaded.registrations, database: database,
                                           alreadyReported: references.reduce(into: []) { $0.formUnion($1.unknownIdentifiers(in: database)) })
        loaded.diagnostics += claims.diagnostics
        if !claims.declarations.isEmpty { database = database.adding(claims.declarations).database }
        loaded.database = database
        loaded.index = SelectionIndex(loaded.registrations)
        loaded.diagnostics += typeDiagnostics
        return loaded
    }

    /// Reads and parses one registration: a `.handler` or `.plist` file, or a bundle directory (its Info.plist,
    /// with its programs for CFBundleExecutable). A file `trust` refuses, or a bundle without an Info.plist, is one
    /// error for the whole.
    public static func parse(_ path: String, trust: RegistrationTrust = .current) -> Result<RegistrationFile, Diagnostic> {
        guard RegistrationBundle.isBundleName(lastPathComponent(path)), RegistrationBundle.isDirectory(path) else {
            return read(path, trust: trust).map { RegistrationParser.parse($0, path: path) }
        }
        guard let (plist, bundle) = RegistrationBundle.layout(path) else {
            return .failure(Diagnostic(.error, at: SourceLocation(file: path, position: ""),
                                       "a bundle needs an Info.plist in Contents/ or at its top"))
        }
        return read(plist, trust: trust).map { RegistrationParser.parse($0, path: plist, bundle: bundle) }
    }

    /// The bytes of a registration file that `trust` accepts: the path walked (directories, symlinks, the file),
    /// then the opened file's own fstat(2), so that a file swapped in after the walk is refused too.
    /// A refusal is an error for the file as a whole (`file: reason`).
    public static func read(_ path: String, trust: RegistrationTrust = .current) -> Result<[UInt8], Diagnostic> {
        let whole = SourceLocation(file: path, position: "")
        if case .refused(let reason) = trust.walk(path, last: "registration") {
            return .failure(Diagnostic(.error, at: whole, "refused: \(reason)"))
        }
        switch readBounded(path, limit: RegistrationParser.maximumSize, accepting: { trust.objection(to: $0, "the file") }) {
        case .success(let file): return .success(file.bytes)
        case .failure(.refused(let reason)): return .failure(Diagnostic(.error, at: whole, "refused: \(reason)"))
        case .failure(let error): return .failure(Diagnostic(.error, at: SourceLocation(file: path, line: 1), error.description))
        }
    }

    /// Why the program the registration's Exec= names may not be run: it, a directory on its path or a symlink on
    /// the way (resolved) is not `trust`ed. A program that does not exist is not refused here (starting it fails).
    public static func programRefusal(_ registration: HandlerRegistration, trust: RegistrationTrust = .current) -> Diagnostic? {
        guard let program = registration.exec.arguments.first,
              case .refused(let reason) = trust.walk(program, last: "program") else { return nil }
        return Diagnostic(.error, at: SourceLocation(file: registration.path, position: ""),
                          "refused: Exec= program \(program): \(reason)")
    }

    /// Why the registration's Unit= cannot be started here (`why`: no systemd as PID 1), at the line of its Unit=.
    public static func unitRefusal(_ registration: HandlerRegistration,
                                   why: String? = ServiceManager.unitRefusal) -> Diagnostic? {
        guard let line = registration.unitLine, registration.unit != nil, let why else { return nil }
        return Diagnostic(.error, at: SourceLocation(file: registration.path, line: line), why)
    }

    /// A warning for each directory of `loaded.missingDirectories` that was named (a `--handlers` or
    /// `HandlersDirectory=`), not one of the default search path, where a missing directory is normal.
    public static func missingDirectoryWarnings(_ loaded: LoadedRegistrations, defaults: [String]) -> [Diagnostic] {
        loaded.missingDirectories.filter { !defaults.contains($0) }.map { directory in
            Diagnostic(.warning, at: SourceLocation(file: directory, position: ""),
                       "handlers directory does not exist; no registrations are read from it")
        }
    }

    /// A symlink to /dev/null (systemd's masking convention).
    static func isMask(_ path: String) -> Bool {
        FileSystem.linkTarget(path) == "/dev/null"
    }
}
