/// One `[DocumentType]` section: the types a handler opens, with rank and role (`CFBundleDocumentTypes`).
public struct DocumentType: Sendable, Hashable {
    /// Name=; defaults to the first content type.
    public var name: String
    /// ContentTypes=: UTIs this entry claims; a file matches if its type conforms to one. Empty only with
    /// namePatterns: then any type.
    public var contentTypes: [String]
    /// NamePatterns=: when not empty, the entry claims only files whose name matches one of them (and whose type
    /// conforms to contentTypes, when there are any); such a claim comes before every claim by type alone.
    public var namePatterns: [NamePattern] = []
    /// Rank=; defaults to Default.
    public var rank: HandlerRank
    /// Role=; defaults to Viewer.
    public var role: HandlerRole
    /// IconFiles=.
    public var iconFiles: [String]
    /// The section header's location.
    public var location: SourceLocation
    /// File name extensions claimed without a type (an Info.plist's CFBundleTypeExtensions, lowercase): the loader
    /// adds the type a file so named gets to contentTypes.
    public var extensions: [String] = []
    /// LSTypeIsPackage: the documents are directories (packages). Acted on when the registrations are loaded
    /// (`ClaimResolver`): a type made for an extension conforms to `com.apple.package`, a type the same Info.plist
    /// declares gets it among its parents (`InfoPlistMapper`), and a claimed type that is not a package is a
    /// warning at `packageLocation` (its documents stay files).
    public var isPackage = false
    /// Where LSTypeIsPackage is, when it is set.
    public var packageLocation: SourceLocation?

    /// Creates a document type.
    public init(name: String, contentTypes: [String], rank: HandlerRank = .default, role: HandlerRole = .viewer,
                iconFiles: [String] = [], location: SourceLocation) {
        self.name = name
        self.contentTypes = contentTypes
        self.rank = rank
        self.role = role
        self.iconFiles = iconFiles
        self.location = location
    }
}

/// A parsed `handlers.d/*.handler` file.
public struct HandlerRegistration: Sendable, Hashable {
    /// [Handler] Identifier=, defaults to the file's stem.
    public var identifier: String
    /// Name=, defaults to identifier.
    public var name: String
    /// The parsed Exec=.
    public var exec: ExecCommand
    /// User=.
    public var user: String?
    /// Group=.
    public var group: String?
    /// TimeoutSec=; nil means the agent default, unless timeoutDisabled is set.
    public var timeout: Duration?
    /// True when TimeoutSec=infinity: the handler is never timed out.
    public var timeoutDisabled: Bool
    /// MaxConcurrent=, a positive integer.
    public var maxConcurrent: Int?
    /// Environment= assignments (systemd syntax, repeatable; an empty assignment clears the list).
    public var environment: [String: String]
    /// ReadWritePaths=: absolute paths the handler may write beneath, besides its Documents/ and tmp/.
    public var readWritePaths: [String] = []
    /// Where each ReadWritePaths= path was given (its last), for a warning about it.
    public var readWritePathLocations: [String: SourceLocation] = [:]
    /// RequireLandlock=yes: refuse to run this handler where the kernel cannot sandbox it.
    public var requiresLandlock = false
    /// Limit*= keys (LimitNOFILE=, LimitAS=, ...), one per key, applied to each of its processes.
    public var limits: [HandlerLimit] = []
    /// OutputLimit=: bytes of stdout and stderr forwarded to the journal per delivery; nil means no limit
    /// (`infinity`). The rest is read and discarded, and counted.
    public var outputLimit: Int64? = HandlerRegistration.defaultOutputLimit
    /// Activation=: a process per delivery (`launch`), or instances that stay running and take deliveries as
    /// messages (`resident`).
    public var activation: HandlerActivation = .launch
    /// Instances=: resident instances at most (1).
    public var instances = 1
    /// MaxInFlight=: deliveries one resident instance holds unanswered at most (16).
    public var maxInFlight = 16
    /// IdleExitSec=: how long a resident instance with nothing in flight is kept (60 s); nil: always (`infinity`).
    public var idleExit: Duration? = .seconds(60)
    /// BatchSize=: files per process when Exec= takes a list (%F, %U); 1 otherwise.
    public var batchSize = 1
    /// BatchWindowSec=: how long a batch waits for more files once it has one (0: it takes what is ready).
    public var batchWindow: Duration = .zero
    /// Unit=: a systemd template unit of which each delivery starts an instance, instead of a process of the agent's
    /// own (then `exec` is empty); and the line that says so, for the checks that need the running system.
    public var unit: UnitTemplate?
    public var unitLine: Int?
    /// Print=: a CUPS destination each delivery is printed on (a print hot folder), instead of a program of the
    /// registration's own (then `exec` is empty); and the line that says so.
    public var printer: PrintQueue?
    public var printerLine: Int?
    /// The [DocumentType] sections in file order.
    public var documentTypes: [DocumentType]
    /// The [ExportedType] sections in file order.
    public var exportedTypes: [TypeDeclaration]
    /// The [ImportedType] sections in file order.
    public var importedTypes: [TypeDeclaration]
    /// What the declarations say beyond their TypeDeclaration (icons, a reference URL), by identifier.
    public var typeDetails: [String: TypeDetails] = [:]
    /// The file it came from.
    public var path: String

    /// Creates a registration.
    public init(identifier: String, name: String? = nil, exec: ExecCommand, user: String? = nil, group: String? = nil,
                timeout: Duration? = nil, timeoutDisabled: Bool = false, maxConcurrent: Int? = nil,
                environment: [String: String] = [:], documentTypes: [DocumentType] = [],
                exportedTypes: [TypeDeclaration] = [], importedTypes: [TypeDeclaration] = [], path: String) {
        self.identifier = identifier
        self.name = name ?? identifier
        self.exec = exec
        self.user = user
        self.group = group
        self.timeout = timeout
        self.timeoutDisabled = timeoutDisabled
        self.maxConcurrent = maxConcurrent
        self.environment = environment
        self.documentTypes = documentTypes
        self.exportedTypes = exportedTypes
        self.importedTypes = importedTypes
        self.path = path
    }
}

/// How a handler is started (`Activation=`).
public enum HandlerActivation: String, Sendable, Hashable, CaseIterable {
    /// A process per delivery (per batch with %F or %U): `Exec=` with the file's field codes.
    case launch
    /// Started on its first delivery and kept running; each delivery is a message on fd 3 (docs/handler-protocol.md).
    case resident
}

extension HandlerRegistration {
    /// BatchSize= when Exec= takes a list and the key is not set.
    public static let defaultBatchSize = 64

    /// Deliveries of this handler that may be in flight at once: Instances= × MaxInFlight= for a resident handler,
    /// MaxConcurrent= processes × BatchSize= files for one that takes a list; nil: MaxConcurrent= or the agent's
    /// limit alone.
    public func deliveryCapacity(processes: Int) -> Int {
        switch activation {
        case .resident: instances * maxInFlight
        case .launch: (maxConcurrent ?? processes) * batchSize
        }
    }

    /// What a delivery may write to stdout and stderr together before the rest is dropped: 1 MiB.
    public static let defaultOutputLimit: Int64 = 1 << 20

    /// Parses an OutputLimit= value: bytes, with a K, M, G or T suffix (base 1024), or `infinity` (no limit, the
    /// `.some(nil)`); nil when it is none of these.
    public static func parseOutputLimit(_ text: String) -> Int64?? {
        if text == "infinity" { return .some(nil) }
        var digits = Substring(text)
        var shift: Int64 = 0
        if let last = digits.last, let power = ["K": 10, "M": 20, "G": 30, "T": 40][String(last).uppercased()] {
            shift = Int64(power)
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int64(digits) else {
            return nil
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : .some(product)
    }
}

/// The result of parsing one registration file: a registration only if there were no errors.
public struct RegistrationFile: Sendable {
    /// nil when any diagnostic is an error.
    public var registration: HandlerRegistration?
    /// Every problem found, in line order.
    public var diagnostics: [Diagnostic]
    /// The types the file names and declares, also when it has errors, for the checks that need the type database.
    public var typeReferences: TypeReferences

    /// Creates a result.
    public init(registration: HandlerRegistration?, diagnostics: [Diagnostic], typeReferences: TypeReferences = .init()) {
        self.registration = registration
        self.diagnostics = diagnostics
        self.typeReferences = typeReferences
    }
}

/// What a registration file says about types, collected while it is read, errors or not: each `ContentTypes=`
/// word at the line of its key, and the identifiers its `[ExportedType]`/`[ImportedType]` sections declare. A
/// claim of a type that nothing declares is only found once every registration is loaded (`unknownClaims`).
public struct TypeReferences: Sendable, Equatable {
    /// One word of a `ContentTypes=` line.
    public struct Claim: Sendable, Equatable {
        public let type: String
        public let location: SourceLocation
    }

    public var claims: [Claim] = []
    public var declared: Set<String> = []

    public init() {}

    /// A warning for each claim of a type that neither `database` nor this file declares, nor (for a MIME type)
    /// the host's shared-mime-info knows: probably a typo. It still counts as written. The nearest known name is
    /// suggested. Nothing for MIME types when the database has no MIME types to compare with.
    public func unknownClaims(in database: TypeDatabase) -> [Diagnostic] {
        var seen: Set<String> = []
        return claims.compactMap { claim in
            let token = claim.type
            guard seen.insert(token + "\u{0}" + claim.location.description).inserted else { return nil }
            if token.contains("/") {
                guard !database.mime.knownTypes.isEmpty, database.identifier(forMIMEType: token) == nil,
                      !database.mime.knows(token) else { return nil }
                let close = Spelling.closest(to: token.lowercased(), among: database.mime.knownTypes)
                return Diagnostic(.warning, at: claim.location,
                                  "ContentTypes= names MIME type '\(token)', which no type and no shared-mime-info entry declares"
                                  + (close.map { "; did you mean '\($0)'?" } ?? ""))
            }
            guard !database.contains(token), !declared.contains(token) else { return nil }
            let close = Spelling.closest(to: token, among: database.allIdentifiers + declared.sorted())
            return Diagnostic(.warning, at: claim.location,
                              "ContentTypes= names '\(token)', which no type declares"
                              + (close.map { "; did you mean '\($0)'?" } ?? ""))
        }
    }

    /// The identifiers (not MIME types) `unknownClaims` warns about.
    public func unknownIdentifiers(in database: TypeDatabase) -> Set<String> {
        Set(claims.map(\.type).filter { !$0.contains("/") && !database.contains($0) && !declared.contains($0) })
    }
}
