import InboxCore

/// A registration that is an app bundle: a directory `NAME.app/` (or `NAME.bundle/`) in handlers.d with its
/// Info.plist (in `Contents/`, as macOS lays bundles out, or at the top, as iOS does) and the programs that
/// `CFBundleExecutable` may name (in `Contents/MacOS/`, or beside the Info.plist). Only names are gathered here;
/// the Info.plist is read, and the chosen program checked, with the trust rules of any registration.
public enum RegistrationBundle {
    /// The directory suffixes that make a bundle.
    public static let suffixes = [".app", ".bundle"]

    /// True for a name a bundle may have.
    public static func isBundleName(_ name: String) -> Bool {
        suffixes.contains { name.hasSuffix($0) && name.count > $0.count }
    }

    /// The bundle's Info.plist path and what the mapper needs to know of it; nil when it has no Info.plist.
    public static func layout(_ path: String) -> (infoPlist: String, bundle: InfoPlistBundle)? {
        let contents = path + "/Contents"
        for (plistDirectory, programDirectories) in [(contents, [contents + "/MacOS", contents]), (path, [path])] {
            let plist = plistDirectory + "/Info.plist"
            guard isEntry(plist, .regular) else { continue }
            var programs: [String: String] = [:]
            for directory in programDirectories {
                for raw in FileSystem.entries(atPath: directory) {
                    guard let name = String(validating: raw, as: UTF8.self), programs[name] == nil, name != "Info.plist",
                          isEntry(directory + "/" + name, .regular) else { continue }
                    programs[name] = directory + "/" + name
                }
            }
            return (plist, InfoPlistBundle(path: path, programs: programs))
        }
        return nil
    }

    /// True when `path` is a directory, or a symlink to one (`/etc/inboxd/handlers.d/Viewer.app -> /opt/Viewer.app`).
    public static func isDirectory(_ path: String) -> Bool { isEntry(path, .directory) }

    /// Links are followed here: this only finds names. Reading the Info.plist and accepting the program walk
    /// every link on the way with the trust rules (`RegistrationTrust.walk`).
    private static func isEntry(_ path: String, _ kind: EntryKind) -> Bool {
        guard let status = try? FileSystem.status(path, followingLinks: true) else { return false }
        return EntryKind(mode: status.st_mode) == kind
    }
}
