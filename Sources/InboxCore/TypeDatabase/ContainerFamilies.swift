/// Generic containers: formats that many others are made of, whose name from libmagic says only "some file of this
/// kind of container" (an OLE2 compound file, a ZIP archive, a gzip stream, an MPEG-4 file).
///
/// Such an answer cannot overturn a name whose type is a kind of the container (a `.ppt` read as an OLE2 file is
/// still a PowerPoint file). In some containers libmagic tells the kinds apart by details several kinds share — the
/// stream names of an OLE2 directory (MS Works `.xlr` files hold an Excel "Workbook" stream), the brand of an MPEG-4
/// file (an `.m4r` ringtone is branded M4A) — so two kinds of one of those are siblings where the name, which is
/// specific, decides. ZIP-based kinds are not: libmagic reads which one a ZIP archive is from its members.
extension TypeDatabase {
    /// The containers, as the host's MIME database names them.
    public static let containerMIMETypes: [String] = [
        "application/x-ole-storage", "application/zip", "application/gzip", "application/x-bzip2", "application/x-xz",
        "video/mp4", "application/ogg",
    ]

    /// Members of a container that the host's `subclasses` leaves out (shared-mime-info has Word and Works files
    /// subclass `application/x-ole-storage`, but not Excel or PowerPoint ones, whose magic it matches otherwise).
    static let containerMembers: [String: String] = [
        "application/vnd.ms-excel": "application/x-ole-storage",
        "application/vnd.ms-powerpoint": "application/x-ole-storage",
        "application/vnd.ms-outlook": "application/x-ole-storage",
        "application/vnd.ms-project": "application/x-ole-storage",
        "audio/mp4": "video/mp4",
    ]

    /// The container a MIME type names, if it is one (after alias resolution).
    public func container(named mimeType: String) -> String? {
        let canonical = mime.canonical(mimeType)
        return Self.containerMIMETypes.contains(canonical) ? canonical : nil
    }

    /// True when the type is a kind of the container and not the container itself: it conforms to the container's
    /// UTI, or one of its MIME types descends from the container (the host's subclasses, or `containerMembers`).
    public func isKind(_ identifier: String, ofContainer container: String) -> Bool {
        let containerIdentifier = typeIdentifier(forMIMEType: container)
        if identifier == containerIdentifier { return false }
        if let containerIdentifier, conforms(identifier, to: containerIdentifier) { return true }
        for type in declaration(for: identifier)?.mimeTypes ?? [] {
            let canonical = mime.canonical(type)
            guard canonical != container else { continue }
            if mime.descends(canonical, from: container) { return true }
            if Self.containerMembers[canonical] == container { return true }
            if mime.parents(of: canonical).contains(where: { Self.containerMembers[$0] == container }) { return true }
        }
        return false
    }

    /// The containers whose kinds libmagic cannot reliably tell apart (see above).
    public static let siblingContainerMIMETypes: [String] = ["application/x-ole-storage", "video/mp4", "application/ogg"]

    /// The container of `siblingContainerMIMETypes` both types are kinds of, if any: they are siblings in its family.
    public func sharedContainer(_ a: String, _ b: String) -> String? {
        Self.siblingContainerMIMETypes.first { isKind(a, ofContainer: $0) && isKind(b, ofContainer: $0) }
    }

    /// True for a type whose files cannot be text: images, audio and video, archives, executables, fonts, binary
    /// documents and the kinds of the generic containers, unless the type conforms to `public.text` (SVG is XML,
    /// JavaScript source is an executable). Text content contradicts such a claim outright.
    public func cannotBeText(_ identifier: String) -> Bool {
        if conforms(identifier, to: "public.text") { return false }
        if Self.binaryKinds.contains(where: { conforms(identifier, to: $0) }) { return true }
        return Self.containerMIMETypes.contains { conforms(identifier, to: typeIdentifier(forMIMEType: $0) ?? "")
            || isKind(identifier, ofContainer: $0) }
    }

    /// The abstract kinds whose files are binary (see `cannotBeText`).
    static let binaryKinds = [
        "public.image", "public.audiovisual-content", "public.archive", "public.executable", "public.font",
        "public.composite-content", "public.spreadsheet", "public.presentation",
    ]
}
