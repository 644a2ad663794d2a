/// Why an Exec= line is not usable.
public struct ExecCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A short phrase, e.g. "unknown field code '%x' in Exec=".
    public let message: String
    /// The message.
    public var description: String { message }
}

/// The values substituted for Exec= field codes.
public struct ExecFields: Sendable {
    /// %f: the file's path.
    public var path: String
    /// %t: the file's UTI.
    public var contentType: String
    /// %s: the claimed source application, empty if none.
    public var sourceApp: String?

    /// Creates field values.
    public init(path: String, contentType: String, sourceApp: String?) {
        self.path = path
        self.contentType = contentType
        self.sourceApp = sourceApp
    }
}

/// A parsed Exec= command line: an absolute program path and arguments, never run through a shell.
public struct ExecCommand: Sendable, Hashable, CustomStringConvertible {
    /// The words of the command line after quote and escape processing, field codes still in place.
    public let arguments: [String]

    /// Field codes that may follow a `%`.
    public static let fieldCodes: Set<Character> = ["f", "u", "t", "s", "F", "U", "%"]
    /// Field codes that stand for one file: meaningless for a process that serves many (resident) or a batch.
    public static let singleFileCodes: Set<Character> = ["f", "u", "t", "s"]
    /// Field codes that stand for the list of a batch's files (Desktop Entry `%F`, `%U`), each an argument of its own.
    public static let listCodes: Set<Character> = ["F", "U"]

    /// No command: a registration whose handler is a systemd unit (Unit=) runs the unit's ExecStart=.
    public static let none = ExecCommand(arguments: [], fieldCodes: [])

    private init(arguments: [String], fieldCodes: Set<Character>) {
        self.arguments = arguments
        self.fieldCodes = fieldCodes
    }

    /// Splits and checks an Exec= value: quotes, escapes, known field codes, absolute program path.
    public init(parsing text: String) throws(ExecCommandError) {
        let words: [String]
        do {
            words = try WordSplitter.split(text)
        } catch {
            throw ExecCommandError(message: "bad quoting in Exec=: \(error.message)")
        }
        guard let program = words.first else { throw ExecCommandError(message: "Exec= is empty") }
        guard program.hasPrefix("/") else {
            throw ExecCommandError(message: "Exec= program '\(program.abbreviated)' is not an absolute path")
        }
        for word in words {
            var characters = word.makeIterator()
            while let character = characters.next() {
                guard character == "%" else { continue }
                guard let code = characters.next() else {
                    throw ExecCommandError(message: "incomplete field code '%' at the end of '\(word.abbreviated)'")
                }
                guard Self.fieldCodes.contains(code) else {
                    throw ExecCommandError(message: "unknown field code '%\(code)' in Exec=")
                }
            }
        }
        if program.contains("%f") || program.contains("%u") || program.contains("%t") || program.contains("%s")
            || program.contains("%F") || program.contains("%U") {
            throw ExecCommandError(message: "Exec= program path cannot contain field codes")
        }
        let codes = Self.codes(in: words)
        if !codes.isDisjoint(with: Self.listCodes) {
            // As the Desktop Entry specification has it: a list code stands alone, and at most one is used.
            if let word = words.first(where: { ($0.contains("%F") || $0.contains("%U")) && $0 != "%F" && $0 != "%U" }) {
                throw ExecCommandError(message: "%F and %U must stand alone as an argument, not in '\(word.abbreviated)'")
            }
            if words.filter({ $0 == "%F" || $0 == "%U" }).count > 1 {
                throw ExecCommandError(message: "Exec= may hold only one %F or %U")
            }
            if let code = codes.intersection(Self.singleFileCodes).sorted().first {
                throw ExecCommandError(message: "%\(code) names one file and cannot be used with %F or %U in Exec=")
            }
        }
        self.arguments = words
        self.fieldCodes = codes
    }

    /// The field codes used (without `%%`).
    public let fieldCodes: Set<Character>

    /// Exec= takes a list of files (`%F` or `%U`): one process is started for a batch of them.
    public var takesFileList: Bool { !fieldCodes.isDisjoint(with: Self.listCodes) }

    /// The field codes used that name one file (`%f %u %t %s`), sorted.
    public var singleFileFieldCodes: [Character] { fieldCodes.intersection(Self.singleFileCodes).sorted() }

    private static func codes(in words: [String]) -> Set<Character> {
        var codes: Set<Character> = []
        for word in words {
            var characters = word.makeIterator()
            while let character = characters.next() {
                guard character == "%", let code = characters.next() else { continue }
                if code != "%" { codes.insert(code) }
            }
        }
        return codes
    }

    /// Expands the command for a batch: `%F` becomes one argument per path, `%U` one per file:// URL, `%%` a `%`.
    public func expand(batch paths: [String]) -> [String] {
        arguments.flatMap { argument -> [String] in
            switch argument {
            case "%F": return paths
            case "%U": return paths.map(fileURL(forPath:))
            default: return [argument.replacingPercentLiterals()]
            }
        }
    }

    /// Expands field codes in each argument: %f path, %u file:// URL, %t UTI, %s source app, %% a literal %.
    ///
    /// An argument that is exactly "%s" with no source application becomes an empty argument; it is not dropped,
    /// so argument positions stay fixed.
    public func expand(_ fields: ExecFields) -> [String] {
        arguments.map { argument in
            guard argument.contains("%") else { return argument }
            var result = ""
            var characters = argument.makeIterator()
            while let character = characters.next() {
                guard character == "%", let code = characters.next() else {
                    result.append(character)
                    continue
                }
                switch code {
                case "f": result += fields.path
                case "u": result += fileURL(forPath: fields.path)
                case "t": result += fields.contentType
                case "s": result += fields.sourceApp ?? ""
                case "%": result += "%"
                // A list code outside a batch (a preview, `inboxctl open`): the one file is the list.
                case "F": result += fields.path
                case "U": result += fileURL(forPath: fields.path)
                default: result += "%" + String(code)
                }
            }
            return result
        }
    }

    /// The arguments joined by spaces, each quoted if it needs to be, for messages.
    public var description: String {
        arguments.map { argument in
            let plain = !argument.isEmpty && !argument.contains { " \t\n\"'\\".contains($0) }
            guard !plain else { return argument }
            let escaped = argument.map { "\"\\".contains($0) ? "\\" + String($0) : String($0) }.joined()
            return "\"" + escaped + "\""
        }.joined(separator: " ")
    }
}

extension String {
    /// `%%` as `%`: the one field code that means the same in every kind of launch.
    fileprivate func replacingPercentLiterals() -> String {
        guard contains("%%") else { return self }
        var result = ""
        var characters = makeIterator()
        while let character = characters.next() {
            result.append(character)
            if character == "%", let next = characters.next(), next != "%" { result.append(next) }
        }
        return result
    }
}
