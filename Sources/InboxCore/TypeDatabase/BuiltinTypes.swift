/// The built-in type table, kept as data in `Resources/BuiltinTypes.types` and compiled into the binary.
///
/// The file uses the registration syntax: one `[Type]` section per identifier with the keys of `[ExportedType]`.
enum BuiltinTypes {
    /// The name the resource's diagnostics carry.
    static let path = "BuiltinTypes.types"

    /// The table's declarations, in file order; a broken table is a build defect that the tests catch.
    static let declarations: [TypeDeclaration] = parse(PackageResources.BuiltinTypes_types, path: path).declarations

    /// Reads a type table: `[Type]` sections only; every problem is a diagnostic with its line.
    static func parse(_ bytes: [UInt8], path: String) -> (declarations: [TypeDeclaration], diagnostics: [Diagnostic]) {
        let document = INILexer.lex(bytes, path: path, maximumSize: bytes.count)
        var sink = DiagnosticSink(path: path, diagnostics: document.diagnostics)
        var declarations: [TypeDeclaration] = []
        for section in document.sections {
            guard section.name == "Type" else {
                sink.error(section.line, "unknown section [\(section.name)] in the type table")
                continue
            }
            if let declaration = SectionReader.readTypeDeclaration(section, origin: { _ in .builtin }, sink: &sink) {
                declarations.append(declaration)
            }
        }
        return (declarations, sink.sorted)
    }
}
