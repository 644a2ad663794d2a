/// The Info.plist keys a registration reads, and the Apple keys it knows and deliberately leaves alone: a key in
/// neither list inside a document type or a type declaration is reported (often a misspelling), so nothing is
/// dropped without a word. README, "Info.plist registrations", lists the same.
enum InfoPlistKeys {
    /// Top level: what a registration reads. Other top-level keys are the app's own settings and are ignored,
    /// except one within two edits of these (a likely misspelling) and unknown `Inboxd…` keys, which warn.
    static let topLevel: Set<String> = [
        "CFBundleIdentifier", "CFBundleName", "CFBundleDisplayName", "CFBundleExecutable", "CFBundleDocumentTypes",
        "UTExportedTypeDeclarations", "UTImportedTypeDeclarations", "InboxdHandler",
    ]

    /// Top-level Apple keys that are close in spelling to a read key but are keys of their own.
    static let topLevelIgnored: Set<String> = ["CFBundleIconName", "CFBundleIconFile", "CFBundleIcons"]

    /// One `CFBundleDocumentTypes` entry: what is read.
    static let documentType: Set<String> = [
        "CFBundleTypeName", "CFBundleTypeRole", "LSHandlerRank", "LSItemContentTypes", "CFBundleTypeExtensions",
        "CFBundleTypeMIMETypes", "CFBundleTypeOSTypes", "CFBundleTypeIconFile", "CFBundleTypeIconFiles",
        "LSTypeIsPackage",
    ]

    /// Document-type keys that mean something only to AppKit, UIKit or the Finder.
    static let documentTypeIgnored: Set<String> = [
        "NSDocumentClass", "NSExportableTypes", "NSExportableAs", "NSPersistentStoreTypeKey", "NSIsRelatedItemType",
        "NSUbiquitousDocumentUserActivityType", "LSIsAppleDefaultForType", "CFBundleTypeIconSystemGenerated",
        "CFBundleTypeIconBackgroundName", "CFBundleTypeIconBadgeName", "LSDefaultShareModeCollaboration",
    ]

    /// One `UTExportedTypeDeclarations` or `UTImportedTypeDeclarations` entry: what is read.
    static let typeDeclaration: Set<String> = [
        "UTTypeIdentifier", "UTTypeDescription", "UTTypeConformsTo", "UTTypeTagSpecification", "UTTypeIconFile",
        "UTTypeIconFiles", "UTTypeReferenceURL",
    ]

    /// Type-declaration keys for icons drawn by the system or kept in asset catalogs.
    static let typeDeclarationIgnored: Set<String> = [
        "UTTypeIconName", "UTTypeIcons", "UTTypeSize64IconFile", "UTTypeSize320IconFile", "UTTypeIconBadgeName",
        "UTTypeIconBackgroundName", "UTTypeIconText",
    ]

    /// `UTTypeTagSpecification`: the tags read.
    static let tags: Set<String> = ["public.filename-extension", "public.mime-type"]

    /// Tags with no meaning here: classic Mac OS type codes and pasteboard types.
    static let tagsIgnored: Set<String> = ["com.apple.ostype", "com.apple.nspboard-type", "public.url-scheme"]
}
