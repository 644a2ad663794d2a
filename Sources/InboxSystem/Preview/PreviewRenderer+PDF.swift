import Glibc
import InboxCore

extension GeneratorTool {
    static let pdfunite = GeneratorTool(name: "pdfunite", package: "poppler-utils")
}

// A document as a PDF, for printing (Quick Look's print): made by the same sandboxed generators as its preview.
extension PreviewRenderer {
    /// Pages of monospace text a printed page holds, as `--output` draws them: 80 columns by 50 lines.
    static let printedColumns = 80
    static let printedLines = 50

    /// A PDF of `document` as `generator` sees it: an Office, RTF or OpenDocument file through LibreOffice; an iWork
    /// document's own `QuickLook/Preview.pdf` (else LibreOffice's import); text and tables laid out as their previews
    /// are and drawn by pango-view. The PDF, open for reading (the caller closes it); it lives in the scratch
    /// directory until the renderer is closed. `.unsupported` names the package a missing converter is in.
    public func pdf(of document: PreviewDocument, with generator: PreviewGenerator) -> Result<FileDescriptor, PreviewError> {
        if document.package, generator != .iWork {
            return .failure(.unsupported("is a package (a directory); no converter reads \(document.contentType) packages"))
        }
        switch generator {
        case .office: return officePDF(document)
        case .iWork: return iWorkPDF(document)
        case .text: return readText(document).flatMap { text in
            drawPDF(PreviewPages.text(text.lines, width: Self.printedColumns, height: Self.printedLines))
        }
        case .table(let delimiter): return readText(document).flatMap { text in
            let table = DelimitedTable.parse(text.lines.joined(separator: "\n"), delimiter: delimiter)
            return drawPDF(PreviewPages.table(table, width: Self.printedColumns, height: Self.printedLines))
        }
        case .pdf, .postscript, .image, .thumbnailer, .facts:
            return .failure(.unsupported("no converter to PDF reads \(document.contentType)"))
        }
    }

    /// The PDF the document carries, else LibreOffice's import of a single-file one.
    private func iWorkPDF(_ document: PreviewDocument) -> Result<FileDescriptor, PreviewError> {
        let file = document.descriptor, name = "QuickLook/Preview.pdf"
        if document.package {
            if let member = PreviewInput.openMember(name, in: file) { return .success(member) }
        } else if PreviewInput.isZip(file) {
            switch PreviewInput.zipDirectory(file, size: document.size) {
            case .success(let directory):
                if let entry = directory.entry(named: name) {
                    if entry.uncompressedSize > options.fileSize {
                        return .failure(.refused("carries a preview (\(name)) of \(byteCount(entry.uncompressedSize)), "
                                                 + "more than the \(byteCount(options.fileSize)) a conversion unpacks"))
                    }
                    return extract(name, from: file)
                }
            case .failure(let error):
                return .failure(error)
            }
        }
        let component = Self.officeComponent(document)
        if !document.package, case .success(let soffice) = office(for: document) {
            return convertWithOffice(file, name: document.name, soffice: soffice)
        }
        return .failure(.unsupported("carries no PDF of itself (QuickLook/Preview.pdf), and "
                                     + (document.package ? "LibreOffice imports no package"
                                        : "LibreOffice, which imports some iWork documents, is not installed "
                                          + "(\(component.package))")))
    }

    /// Pages of text drawn by pango-view, one PDF each, joined by pdfunite into one; open.
    private func drawPDF(_ pages: [[String]]) -> Result<FileDescriptor, PreviewError> {
        let pango: String, unite: String
        switch (GeneratorTool.pango.locate(), GeneratorTool.pdfunite.locate()) {
        case (.success(let found), .success(let other)): (pango, unite) = (found, other)
        case (.failure(let error), _), (_, .failure(let error)): return .failure(error)
        }
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        var drawn: [String] = []
        for (number, lines) in (pages.isEmpty ? [[""]] : pages).enumerated() {
            let text: String
            do {
                text = try scratch.writeInput("print-\(run.index)-\(number + 1).txt",
                                              bytes: Array(lines.joined(separator: "\n").utf8) + [0x0A])
            } catch {
                return .failure(.system(error))
            }
            let output = run.directory.child("page-\(number + 1).pdf")
            var process = GeneratorProcess("pango-view", executable: pango, arguments: [
                // An A4 page (595 × 842 points) with half-inch margins; 80 columns of 10-point DejaVu Sans Mono fit.
                "--no-display", "--font=DejaVu Sans Mono 10", "--margin=36", "--width=523", "--height=770",
                "--output=" + output, text,
            ], addressSpace: options.addressSpace, fileSize: options.fileSize)
            process.writable = [run.directory.path]
            if case .failure(let error) = sandbox.run(process) { return .failure(error) }
            drawn.append(output)
        }
        let joined = run.directory.child("document.pdf")
        var process = GeneratorProcess("pdfunite", executable: unite, arguments: drawn + [joined],
                                       addressSpace: options.addressSpace, fileSize: options.fileSize)
        process.writable = [run.directory.path]
        if case .failure(let error) = sandbox.run(process) { return .failure(error) }
        guard let pdf = scratch.collect(Array("document.pdf".utf8), from: run.directory, as: "\(run.index)-print.pdf"),
              let opened = scratch.openCollected(pdf) else {
            return .failure(.failed("pango-view drew no PDF of it"))
        }
        return .success(opened)
    }
}
