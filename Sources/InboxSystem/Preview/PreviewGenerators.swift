import Glibc
import InboxCore

/// How a generator reads a document: as /dev/stdin, a fresh open of the caller's own descriptor (as the caller), or a
/// copy in the scratch directory (as another identity, or for a tool that needs a name with its extension).
struct GeneratorInput {
    var path: String
    /// The descriptor to give as stdin; nil for a copy.
    var standardInput: FileDescriptor?
}

// The generators, one method each; the renderer's file holds its state and the public entry points. Every method reads
// the document by the descriptor it is given and nothing else.
extension PreviewRenderer {
    /// The copies a generator is shown (`in/document.docx`, 0440), or the descriptor itself.
    func provide(_ file: FileDescriptor, name: String, needsName: Bool) -> Result<GeneratorInput, PreviewError> {
        guard needsName || identity != nil else { return .success(GeneratorInput(path: "/dev/stdin", standardInput: file)) }
        do { return .success(GeneratorInput(path: try scratch.copyIn(file, name: name), standardInput: nil)) } catch {
            return .failure(.system(error))
        }
    }

    /// A process for `tool` with the renderer's bounds, reading `input`, writing in `run`.
    private func process(_ tool: GeneratorTool, _ arguments: [String], input: GeneratorInput? = nil,
                         run: Directory? = nil) -> Result<GeneratorProcess, PreviewError> {
        tool.locate().map { path in
            var process = GeneratorProcess(tool.name, executable: path, arguments: arguments,
                                           addressSpace: options.addressSpace, fileSize: options.fileSize)
            process.input = input?.standardInput
            process.writable = run.map { [$0.path] } ?? []
            return process
        }
    }

    /// Moves the pictures a run made (`page-N.png`, any padding of N) out of its reach, in page order.
    private func collectPages(_ run: (directory: Directory, index: Int)) -> [String] {
        let names = (try? run.directory.entries()) ?? []
        let numbered: [(Int, [UInt8])] = names.compactMap { name in
            let text = String(decoding: name, as: UTF8.self)
            guard text.hasPrefix("page-"), text.hasSuffix(".png"),
                  let number = Int(text.dropFirst(5).dropLast(4)), number > 0 else { return nil }
            return (number, name)
        }
        return numbered.sorted { $0.0 < $1.0 }.compactMap { number, name in
            scratch.collect(name, from: run.directory, as: "\(run.index)-page-\(number).png")
        }
    }

    // MARK: PDF and PostScript

    /// pdfinfo for the page count, then pdftoppm for the first `maximumPages` pages.
    func renderPDF(_ file: FileDescriptor, notes: [String] = []) -> Result<RenderedPreview, PreviewError> {
        let input: GeneratorInput
        switch provide(file, name: "document.pdf", needsName: false) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let info: FileDescriptor
        do { info = try scratch.makeLog("pdfinfo-output") } catch { return .failure(.system(error)) }
        defer { info.close() }
        var pdfinfo: GeneratorProcess
        switch process(.pdfinfo, [input.path], input: input) {
        case .success(let made): pdfinfo = made
        case .failure(let error): return .failure(error)
        }
        pdfinfo.output = info
        if case .failure(let error) = sandbox.run(pdfinfo) { return .failure(error) }
        let said = String(decoding: (try? PreviewInput.read(info, count: 1 << 16).get()) ?? [], as: UTF8.self)
        guard let pages = Self.pageCount(pdfinfo: said), pages > 0 else {
            return .failure(.failed("pdfinfo did not say how many pages it has"))
        }
        let last = min(pages, options.maximumPages)
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        let pdftoppm: GeneratorProcess
        switch process(.pdftoppm, ["-png", "-scale-to", "\(options.size)", "-f", "1", "-l", "\(last)", input.path,
                                   run.directory.child("page")], input: input, run: run.directory) {
        case .success(let made): pdftoppm = made
        case .failure(let error): return .failure(error)
        }
        if case .failure(let error) = sandbox.run(pdftoppm) { return .failure(error) }
        let pictures = collectPages(run)
        guard !pictures.isEmpty else { return .failure(.failed("pdftoppm drew no pages")) }
        var notes = notes
        if pictures.count < pages {
            notes.append("pages \(pictures.count + 1)–\(pages) of \(pages) were left out "
                         + "(a preview draws at most \(options.maximumPages))")
        }
        return .success(RenderedPreview(content: .pictures(pictures), pageCount: pages, notes: notes))
    }

    /// The number on pdfinfo's `Pages:` line.
    static func pageCount(pdfinfo output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix("Pages:") {
            return Int(line.dropFirst("Pages:".count).filter { $0 != " " && $0 != "\t" })
        }
        return nil
    }

    /// The resolution that makes an A4 page's long side (842 points) `size` pixels: PostScript says its page size
    /// only as it runs, so the page is assumed to be A4 or Letter (792 points, a little smaller).
    var postScriptResolution: Int { max(10, min(600, options.size * 72 / 842)) }

    /// Ghostscript (-dSAFER) to PNG pages, the first `maximumPages`.
    func renderPostScript(_ file: FileDescriptor) -> Result<RenderedPreview, PreviewError> {
        let input: GeneratorInput
        switch provide(file, name: "document.ps", needsName: false) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        var gs: GeneratorProcess
        // The output is named relative to the run directory (its working directory): Ghostscript reads a `%` in the
        // whole -sOutputFile= as a format, and the scratch path is the caller's TMPDIR.
        switch process(.ghostscript, ["-dSAFER", "-dBATCH", "-dNOPAUSE", "-dQUIET", "-sDEVICE=png16m",
                                      "-dTextAlphaBits=4", "-dGraphicsAlphaBits=4",
                                      "-dLastPage=\(options.maximumPages)", "-r\(postScriptResolution)",
                                      "-sOutputFile=page-%03d.png", input.path], input: input, run: run.directory) {
        case .success(let made): gs = made
        case .failure(let error): return .failure(error)
        }
        gs.workingDirectory = run.directory.path
        if case .failure(let error) = sandbox.run(gs) { return .failure(error) }
        let pictures = collectPages(run)
        guard !pictures.isEmpty else { return .failure(.failed("Ghostscript drew no pages")) }
        var notes: [String] = []
        if pictures.count >= options.maximumPages {
            notes.append("a preview draws at most \(options.maximumPages) pages; the document may have more")
        }
        return .success(RenderedPreview(content: .pictures(pictures), pageCount: pictures.count, notes: notes))
    }

    // MARK: Pictures

    /// The header's size against `maximumPixels`, then gdk-pixbuf-thumbnailer: scaled down to `size`, never up.
    func renderImage(_ file: FileDescriptor, name: String, notes: [String] = []) -> Result<RenderedPreview, PreviewError> {
        let header: ImageHeader?
        switch PreviewInput.read(file, count: 1 << 16) {
        case .success(let bytes): header = ImageHeader.read(bytes)
        case .failure(let error): return .failure(.system(SystemError("pread", errno: error)))
        }
        if let header, header.pixels > options.maximumPixels {
            return .failure(.refused("is \(PreviewInput.grouped(header.width)) × \(PreviewInput.grouped(header.height)) "
                                     + "pixels, more than the \(PreviewInput.grouped(options.maximumPixels)) a preview decodes"))
        }
        let ext = PreviewInput.safeExtension(of: name)
        let input: GeneratorInput
        switch provide(file, name: ext.isEmpty ? "picture" : "picture." + ext, needsName: false) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        // gdk-pixbuf-thumbnailer scales small pictures up to -s: a small one keeps its own size.
        let side = max(1, header.map { min(options.size, max($0.width, $0.height)) } ?? options.size)
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        let thumbnailer: GeneratorProcess
        switch process(.pixbuf, ["-s", "\(side)", input.path, run.directory.child("page-1.png")], input: input,
                       run: run.directory) {
        case .success(let made): thumbnailer = made
        case .failure(let error): return .failure(error)
        }
        if case .failure(let error) = sandbox.run(thumbnailer) { return .failure(error) }
        let pictures = collectPages(run)
        guard !pictures.isEmpty else { return .failure(.failed("gdk-pixbuf-thumbnailer drew no picture")) }
        return .success(RenderedPreview(content: .pictures(pictures), pageCount: 1, notes: notes))
    }

    // MARK: Text

    /// The first `maximumTextBytes`, decoded.
    func readText(_ document: PreviewDocument) -> Result<DecodedText, PreviewError> {
        switch PreviewInput.read(document.descriptor, count: options.maximumTextBytes) {
        case .success(let bytes):
            return .success(TextDecoding.decode(bytes, truncated: document.size > Int64(bytes.count)))
        case .failure(let error):
            return .failure(.system(SystemError("pread", path: document.name, errno: error)))
        }
    }

    func textNotes(_ text: DecodedText, _ document: PreviewDocument) -> [String] {
        // UTF-8 goes without saying; any other encoding was a guess the person should know of.
        var notes = text.encoding == .utf8 ? [] : ["decoded as \(text.encoding.rawValue)"]
        if text.truncated {
            notes.append("only the first \(byteCount(UInt64(options.maximumTextBytes))) of "
                         + "\(byteCount(UInt64(max(0, document.size)))) are shown")
        }
        return notes
    }

    // MARK: Office and iWork

    /// The LibreOffice component a type needs: its Debian package, its library, its name.
    static func officeComponent(_ document: PreviewDocument) -> (package: String, library: String, name: String) {
        let words = ([document.contentType] + document.mimeTypes).joined(separator: " ").lowercased()
        if ["spreadsheet", "excel", "sheet", "numbers", "calc"].contains(where: words.contains) {
            return ("libreoffice-calc-nogui", "libsclo.so", "Calc")
        }
        if ["presentation", "powerpoint", "slide", "keynote", "impress"].contains(where: words.contains) {
            return ("libreoffice-impress-nogui", "libsdlo.so", "Impress")
        }
        return ("libreoffice-writer-nogui", "libswlo.so", "Writer")
    }

    /// soffice, with the component the document needs; `.unsupported` naming the package otherwise.
    func office(for document: PreviewDocument) -> Result<String, PreviewError> {
        let component = Self.officeComponent(document)
        guard let soffice = GeneratorTool.locate("soffice") else {
            return .failure(.unsupported("LibreOffice is not installed; install \(component.package) to preview it"))
        }
        // Debian's soffice is core alone: each component is its own package, with its own library.
        let program = "/usr/lib/libreoffice/program"
        if (try? FileSystem.status(program)) != nil, (try? FileSystem.status(program + "/" + component.library)) == nil {
            return .failure(.unsupported("LibreOffice \(component.name) is not installed; install \(component.package)"))
        }
        return .success(soffice)
    }

    /// A PDF by LibreOffice headless (`officePDF`), shown as a PDF is.
    func renderOffice(_ document: PreviewDocument) -> Result<RenderedPreview, PreviewError> {
        officePDF(document).flatMap { pdf in
            defer { pdf.close() }
            return renderPDF(pdf, notes: ["converted to PDF by LibreOffice"])
        }
    }

    /// Zip-based formats are checked against the zip-bomb bounds first; then LibreOffice headless makes a PDF of a
    /// copy (it needs the extension); the PDF, open.
    func officePDF(_ document: PreviewDocument) -> Result<FileDescriptor, PreviewError> {
        let file = document.descriptor
        let zipBased = ["org.openxmlformats.", "org.oasis-open.opendocument"].contains { document.contentType.hasPrefix($0) }
        if zipBased && !PreviewInput.isZip(file) {
            // Its name (or attribute) says Office Open XML or OpenDocument, both ZIP archives; LibreOffice would take
            // whatever it is for text and show that.
            return .failure(.refused("is not a ZIP archive, as every \(document.contentType) document is"))
        }
        if PreviewInput.isZip(file) {
            switch PreviewInput.zipDirectory(file, size: document.size) {
            case .success(let directory):
                if let refusal = PreviewInput.checkUnpackedSize(directory, maximum: options.maximumUnpackedSize) {
                    return .failure(refusal)
                }
            case .failure(let error):
                return .failure(error)
            }
        }
        return office(for: document).flatMap { soffice in convertWithOffice(file, name: document.name, soffice: soffice) }
    }

    /// A PDF of the document by LibreOffice headless, with a profile of its own in HOME; the PDF, open.
    func convertWithOffice(_ file: FileDescriptor, name: String,
                                   soffice: String) -> Result<FileDescriptor, PreviewError> {
        let ext = PreviewInput.safeExtension(of: name)
        let input: GeneratorInput
        switch provide(file, name: ext.isEmpty ? "document" : "document." + ext, needsName: true) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        var process = GeneratorProcess("soffice", executable: soffice, arguments: [
            "--headless", "--norestore", "--nologo", "--nolockcheck",
            "-env:UserInstallation=" + PreviewInput.fileURI(scratch.home + "/libreoffice"),
            "--convert-to", "pdf", "--outdir", run.directory.path, input.path,
        ], addressSpace: options.officeAddressSpace, fileSize: options.fileSize)
        process.writable = [run.directory.path]
        // LibreOffice binds its single-instance pipe in /tmp whatever TMPDIR says (osl/unx/pipe.cxx), and will not
        // start without it: it may make that socket there, nothing else (no removal: /tmp holds the caller's files),
        // and we remove the one it leaves. On its first start it makes its profile and starts itself again, and that
        // second instance finds the first one's pipe, which it cannot remove, and gives up: with the profile made, a
        // second run is one instance.
        process.sockets = ["/tmp"]
        let before = Self.officePipes(ownedBy: identity?.uid ?? CurrentProcess.userID)
        var ran = sandbox.run(process)
        let leftPipe = removeOfficePipes(except: before)
        if case .failure(.failed) = ran, leftPipe {
            ran = sandbox.run(process)
            removeOfficePipes(except: before)
        }
        let said: String
        switch ran {
        case .success(let output): said = output
        case .failure(let error): return .failure(error)
        }
        let placed = lastPathComponent(input.path)
        let stem = placed.lastIndex(of: ".").map { String(placed[..<$0]) } ?? placed
        guard let pdf = scratch.collect(Array((stem + ".pdf").utf8), from: run.directory, as: "\(run.index)-office.pdf"),
              let opened = scratch.openCollected(pdf) else {
            let last = GeneratorSandbox.lastLine(said)
            return .failure(.failed("LibreOffice made no PDF of it" + (last.isEmpty ? "" : ": " + last)))
        }
        return .success(opened)
    }

    /// LibreOffice's pipes in /tmp (`OSL_PIPE_<uid>_SingleOfficeIPC_<hash>`): sockets of `uid`, by name.
    static func officePipes(ownedBy uid: uid_t) -> Set<[UInt8]> {
        guard let tmp = try? Directory(path: "/tmp") else { return [] }
        let names = ((try? tmp.entries()) ?? []).filter { name in
            name.starts(with: Array("OSL_PIPE_".utf8)) && String(decoding: name, as: UTF8.self).contains("SingleOfficeIPC_")
        }
        return Set(names.filter { name in
            guard let st = try? tmp.status(of: name) else { return false }
            return (st.st_mode & S_IFMT) == S_IFSOCK && st.st_uid == uid
        })
    }

    /// Removes the pipes a LibreOffice run left in /tmp: sockets of the generator's uid that were not there before.
    /// Whether there was one.
    @discardableResult
    private func removeOfficePipes(except before: Set<[UInt8]>) -> Bool {
        let uid = identity?.uid ?? CurrentProcess.userID
        guard let tmp = try? Directory(path: "/tmp") else { return false }
        var removed = false
        for name in Self.officePipes(ownedBy: uid).subtracting(before) {
            // Checked again just before: a socket of that uid (/tmp is sticky; only it or root could put another there).
            guard let st = try? tmp.status(of: name), (st.st_mode & S_IFMT) == S_IFSOCK, st.st_uid == uid else { continue }
            removed = tmp.remove(name) == nil || removed
        }
        return removed
    }

    /// The previews an iWork document carries, best first.
    static let iWorkPreviews = ["QuickLook/Preview.pdf", "QuickLook/Thumbnail.jpg", "preview.jpg",
                                "QuickLook/Thumbnail.png"]

    /// The preview it carries (a package's member opened beneath it, a zip's member extracted by unzip), else
    /// LibreOffice's import.
    func renderIWork(_ document: PreviewDocument) -> Result<RenderedPreview, PreviewError> {
        let file = document.descriptor
        func show(_ member: FileDescriptor, _ name: String) -> Result<RenderedPreview, PreviewError> {
            let notes = ["the preview the document carries (\(name))"]
            return name.hasSuffix(".pdf") ? renderPDF(member, notes: notes) : renderImage(member, name: name, notes: notes)
        }
        if document.package {
            for name in Self.iWorkPreviews {
                guard let member = PreviewInput.openMember(name, in: file) else { continue }
                defer { member.close() }
                return show(member, name)
            }
        } else if PreviewInput.isZip(file) {
            let directory: ZipDirectory
            switch PreviewInput.zipDirectory(file, size: document.size) {
            case .success(let read): directory = read
            case .failure(let error): return .failure(error)
            }
            for name in Self.iWorkPreviews {
                guard let entry = directory.entry(named: name) else { continue }
                if entry.uncompressedSize > options.fileSize {
                    return .failure(.refused("carries a preview (\(name)) of \(byteCount(entry.uncompressedSize)), more "
                                             + "than the \(byteCount(options.fileSize)) a preview unpacks"))
                }
                return extract(name, from: file).flatMap { member in
                    defer { member.close() }
                    return show(member, name)
                }
            }
        }
        let component = Self.officeComponent(document)
        if !document.package, case .success(let soffice) = office(for: document) {
            return convertWithOffice(file, name: document.name, soffice: soffice).flatMap { pdf in
                defer { pdf.close() }
                return renderPDF(pdf, notes: ["imported by LibreOffice (it carries no preview of its own)"])
            }
        }
        return .failure(.unsupported("carries no Quick Look preview (QuickLook/Preview.pdf), and "
                                     + (document.package ? "LibreOffice imports no package"
                                        : "LibreOffice, which imports some iWork documents, is not installed "
                                          + "(\(component.package))")))
    }

    /// One member of a zip, unpacked by unzip into a file of ours (RLIMIT_FSIZE bounds a bomb); open.
    func extract(_ member: String, from file: FileDescriptor) -> Result<FileDescriptor, PreviewError> {
        let input: GeneratorInput
        switch provide(file, name: "document.zip", needsName: false) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let output: FileDescriptor
        do { output = try scratch.makeLog("member") } catch { return .failure(.system(error)) }
        // unzip reads member names as patterns: these have no wildcard, and -p writes the member alone to stdout.
        switch process(.unzip, ["-p", "-qq", input.path, member], input: input) {
        case .success(var unzip):
            unzip.output = output
            if case .failure(let error) = sandbox.run(unzip) {
                output.close()
                return .failure(error)
            }
            return .success(output)
        case .failure(let error):
            output.close()
            return .failure(error)
        }
    }

    // MARK: Desktop thumbnailers

    /// A `.thumbnailer` registration's Exec= on a copy with the name's extension; a PNG is expected at `%o`.
    func renderThumbnailer(_ entry: ThumbnailerEntry, _ document: PreviewDocument) -> Result<RenderedPreview, PreviewError> {
        if let program = entry.tryExec, GeneratorTool.locate(program) == nil {
            return .failure(.unsupported("its thumbnailer (\(entry.path)) needs \(program), which is not installed"))
        }
        let ext = PreviewInput.safeExtension(of: document.name)
        let input: GeneratorInput
        switch provide(document.descriptor, name: ext.isEmpty ? "document" : "document." + ext, needsName: true) {
        case .success(let provided): input = provided
        case .failure(let error): return .failure(error)
        }
        let run: (directory: Directory, index: Int)
        do { run = try scratch.makeRunDirectory() } catch { return .failure(.system(error)) }
        let arguments = entry.arguments(input: input.path, uri: PreviewInput.fileURI(input.path),
                                        output: run.directory.child("page-1.png"), size: options.size)
        guard let program = arguments.first, let executable = GeneratorTool.locate(program) else {
            return .failure(.unsupported("its thumbnailer (\(entry.path)) runs "
                                         + "\(arguments.first ?? "nothing"), which is not installed"))
        }
        var process = GeneratorProcess(lastPathComponent(program), executable: executable, arguments: [],
                                       addressSpace: options.addressSpace, fileSize: options.fileSize)
        process.arguments = arguments
        process.writable = [run.directory.path]
        if case .failure(let error) = sandbox.run(process) { return .failure(error) }
        guard let picture = collectPages(run).first else {
            return .failure(.failed("\(process.name) made no picture"))
        }
        guard let opened = scratch.openCollected(picture) else { return .failure(.failed("\(process.name) made no picture")) }
        defer { opened.close() }
        guard (try? PreviewInput.read(opened, count: 8).get()) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
            return .failure(.failed("\(process.name) made something other than a PNG picture"))
        }
        return .success(RenderedPreview(content: .pictures([picture]), pageCount: 1,
                                        notes: ["drawn by \(lastPathComponent(entry.path))"]))
    }
}
