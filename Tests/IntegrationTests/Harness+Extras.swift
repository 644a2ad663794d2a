import Foundation
import Testing

/// Helpers the newer suites share: handler scripts of their own, registrations with any Exec=,
/// journal look-ups by event kind, and drops under names that are not valid UTF-8.
extension AgentHarness {
    /// MESSAGE_ID of the registrations-loaded entry (one at start-up, one per reload).
    static let registrationsLoadedMessageID = "3b0a2c9d6e1f4a7b8c5d2e0f1a3b4c5a"

    /// Writes an executable `/bin/sh` script into the world's root.
    @discardableResult
    func script(_ name: String, _ body: String) throws -> URL {
        let url = root.appendingPathComponent(name)
        try ("#!/bin/sh\n" + body + "\n").write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url
    }

    /// The text of a registration running `exec`, with OUTPUT_DIR (and `environment`) in its environment
    /// and writable under its sandbox.
    func registrationText(_ identifier: String, exec: String, contentTypes: String, rank: String = "Default",
                          environment: String = "", extraHandler: String = "", extraSections: String = "") -> String {
        """
        [Handler]
        Identifier=\(identifier)
        Exec=\(exec)
        Environment=OUTPUT_DIR=\(output.path) \(environment)
        ReadWritePaths=\(output.path)
        \(extraHandler)

        [DocumentType]
        Name=Test documents
        ContentTypes=\(contentTypes)
        Rank=\(rank)

        \(extraSections)
        """
    }

    /// Writes `<directory>/<identifier>.handler` (handlers.d by default) running `exec`.
    func register(_ identifier: String, exec: String, contentTypes: String, rank: String = "Default",
                  extraHandler: String = "", extraSections: String = "", in directory: URL? = nil) throws {
        let text = registrationText(identifier, exec: exec, contentTypes: contentTypes, rank: rank,
                                    extraHandler: extraHandler, extraSections: extraSections)
        try write(text, to: (directory ?? handlers).appendingPathComponent("\(identifier).handler"))
    }

    func handlerFile(_ identifier: String) -> URL { handlers.appendingPathComponent("\(identifier).handler") }

    /// This agent's entries for one event kind (`INBOX_EVENT=`), plus any further matches.
    func events(_ kind: String, _ matches: [String] = []) -> [[String: Any]] {
        journal(["INBOX_EVENT=\(kind)"] + matches)
    }

    /// Waits for `count` entries of one event kind from this agent.
    @discardableResult
    func waitForEvents(_ kind: String, _ matches: [String] = [], count: Int = 1,
                       timeout: TimeInterval = 30) throws -> [[String: Any]] {
        try Journal.wait(for: ["_PID=\(pid)", "INBOX_EVENT=\(kind)"] + matches, count: count, timeout: timeout)
    }

    /// Waits until this agent has logged `count` registrations-loaded entries (start-up is the first).
    @discardableResult
    func waitForRegistrationLoads(_ count: Int) throws -> [[String: Any]] {
        try Journal.wait(for: ["_PID=\(pid)", "MESSAGE_ID=\(Self.registrationsLoadedMessageID)"], count: count)
    }

    /// Drops a file whose name is arbitrary bytes: written under a hidden name, renamed into place.
    func drop(rawName: [UInt8], contents: [UInt8]) throws {
        let hidden = inbox.appendingPathComponent(".raw-\(UUID().uuidString).part")
        try AgentHarness.writeClosingOnExec(contents, to: hidden)
        let target = (Array(inbox.path.utf8) + [UInt8(ascii: "/")] + rawName + [0]).map { CChar(bitPattern: $0) }
        guard rename(hidden.path, target) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Lines of a file the handlers append to, in the output directory.
    func lines(_ name: String) -> [String] {
        let text = (try? String(contentsOf: output.appendingPathComponent(name), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}

extension Dictionary where Key == String, Value == Any {
    /// A journal field as text (journalctl prints binary-unsafe fields as byte arrays; those are nil here).
    subscript(field name: String) -> String? { self[name] as? String }
}
