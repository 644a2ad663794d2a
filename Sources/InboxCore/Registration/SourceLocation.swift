/// A position in a configuration or registration file, printed as `file:line`; in a file without lines (a binary
/// property list), as `file: position`.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file path as given to the parser.
    public let file: String
    /// The 1-based line number; 0 when the file has no lines.
    public let line: Int
    /// In a file without lines, where: a key path (`CFBundleDocumentTypes[0].LSHandlerRank`) or a byte offset
    /// (`offset 4096`); empty for the file as a whole. nil in files with lines.
    public let position: String?

    /// Creates a location.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
        self.position = nil
    }

    /// Creates a location in a file without lines.
    public init(file: String, position: String) {
        self.file = file
        self.line = 0
        self.position = position
    }

    /// `file:line`, `file: position`, or `file` for a file without lines as a whole.
    public var description: String {
        guard let position else { return "\(file):\(line)" }
        return position.isEmpty ? file : "\(file): \(position)"
    }
}

/// A problem found while reading a file, with the place it was found.
public struct Diagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    /// Errors reject the file; warnings are reported and the file is still used; a notice says something worth
    /// knowing that is not wrong (a claim on a type nobody declares).
    public enum Severity: Sendable, Hashable {
        case error, warning, notice
    }

    /// How bad the problem is.
    public let severity: Severity
    /// Where the problem is.
    public let location: SourceLocation
    /// A short phrase describing the problem.
    public let message: String

    /// Creates a diagnostic.
    public init(_ severity: Severity, at location: SourceLocation, _ message: String) {
        self.severity = severity
        self.location = location
        self.message = message
    }

    /// True for `.error`.
    public var isError: Bool { severity == .error }

    /// `file:line: message`, or `file:line: warning: message` (`notice:`) for warnings and notices.
    public var description: String {
        switch severity {
        case .error: "\(location): \(message)"
        case .warning: "\(location): warning: \(message)"
        case .notice: "\(location): notice: \(message)"
        }
    }
}

extension Sequence where Element == Diagnostic {
    /// True if any diagnostic is an error.
    public var containsError: Bool { contains { $0.isError } }
}
