import InboxCore
import InboxSystem

/// What the agent holds in `<state>/failed/` and `<state>/unhandled/`, found by name or delivery id.
struct HeldFiles {
    struct Entry {
        let directory: Directory
        let name: String
    }

    let state: StateDirectories
    /// The line that names the other instance, after every "not found".
    var hint = ""
    var failed: Directory? { state.failed }
    var unhandled: Directory? { state.unhandled }

    init(_ state: StateDirectories) {
        self.state = state
    }

    /// nil, after saying so, when the agent never made failed/ or unhandled/ there.
    init?(state path: String, hint: String = "") {
        let failed = StateDirectories.paths(of: path).failed
        do { _ = try Directory(path: failed) } catch where error.errno == .permissionDenied {
            // The agent's own, closed to its senders: "neither exists" would be untrue.
            Inboxctl.write("inboxctl: cannot read \(failed): \(error.errno); it is the agent's: 'inboxctl list --mine' "
                           + "shows your own files\n", to: 2)
            return nil
        } catch {}
        guard let state = try? StateDirectories(existing: path), state.failed != nil || state.unhandled != nil else {
            Inboxctl.write("inboxctl: neither failed/ nor unhandled/ exists in \(path)\n" + hint, to: 2)
            return nil
        }
        self.state = state
        self.hint = hint
    }

    /// Visible entries (files, package documents and what was moved aside), sorted (names that are not UTF-8 are skipped: they cannot be typed anyway).
    func entries(in directory: Directory?) -> [Entry] {
        guard let directory, let names = try? directory.entries() else { return [] }
        return names.filter { !FileNames.isHidden($0) }.compactMap { String(validating: $0, as: UTF8.self) }.sorted()
            .map { Entry(directory: directory, name: $0) }
    }

    /// The files `id` names; nil (with the message printed, listing what is there) when none. `gone` may explain
    /// a missing one instead (an entry removed after its Keep*Sec=).
    func find(_ id: String, gone: (String) -> String? = { _ in nil }) -> [Entry]? {
        var places = [failed, unhandled].compactMap { $0 }
        var name = id
        for (prefix, directory) in [("failed/", failed), ("unhandled/", unhandled)] where id.hasPrefix(prefix) {
            places = [directory].compactMap { $0 }
            name = String(id.dropFirst(prefix.count))
        }
        // A package's name as listed (NAME/) or completed by a shell names the package.
        while name.count > 1, name.hasSuffix("/") { name.removeLast() }
        if !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") {
            let byName = places.filter { (try? $0.status(of: Array(name.utf8))) != nil }
            if byName.count == 1 { return [Entry(directory: byName[0], name: name)] }
            if byName.count > 1 {
                Inboxctl.write("inboxctl: '\(name)' is in both failed/ and unhandled/; say failed/\(name) or unhandled/\(name)\n",
                               to: 2)
                return nil
            }
        }
        if AgentAttribute.validDeliveryID(id.lowercased()) != nil {
            let wanted = id.lowercased()
            let matches = places.flatMap { entries(in: $0) }.filter { entry in
                guard case .opened(let file) = entry.directory.openHeld(Array(entry.name.utf8)) else { return false }
                defer { file.descriptor.close() }
                return AgentAttribute.delivery(ExtendedAttributes(file.descriptor))?.id == wanted
            }
            if !matches.isEmpty { return matches }
        }
        if let explanation = gone(id) {
            Inboxctl.write("inboxctl: \(explanation)\n", to: 2)
            return nil
        }
        var message = "inboxctl: no file or delivery '\(id)' in failed/ or unhandled/"
        let present = places.flatMap { directory in
            entries(in: directory).map { (directory === failed ? "failed/" : "unhandled/") + $0.name }
        }
        if present.isEmpty {
            message += "; both are empty\n"
        } else {
            message += "; there are:\n" + present.prefix(10).map { "  \($0)\n" }.joined()
            if present.count > 10 { message += "  ... and \(present.count - 10) more\n" }
        }
        Inboxctl.write(message + hint, to: 2)
        return nil
    }
}

extension OpenedFile {
    var isDirectory: Bool { EntryKind(mode: status.st_mode) == .directory }

    /// A directory the agent holds as a package document: it took it (its delivery record) or refused it as one (its
    /// failure record). A directory that is no package the agent moves aside unopened, with neither.
    var isPackage: Bool {
        guard isDirectory else { return false }
        let attributes = ExtendedAttributes(descriptor)
        return AgentAttribute.delivery(attributes) != nil || attributes.readString(AgentAttribute.failure, limit: 4096) != nil
    }
}
