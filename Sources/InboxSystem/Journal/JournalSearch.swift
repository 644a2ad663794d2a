import CSystemd
import Glibc

/// Reads the local journal (sd-journal(3)) for what inboxctl needs to tell a user: the latest entry matching exact
/// `FIELD=value` matches. Nothing when there is no journal or the caller may not read it.
public enum JournalSearch {
    /// The requested fields of the newest entry that matches every one of `matches`; nil when none does.
    public static func latest(matching matches: [String], fields: [String]) -> [String: String]? {
        var opened: OpaquePointer?
        guard sys_sd_journal_open(&opened, CInt(SD_JOURNAL_LOCAL_ONLY)) >= 0, let journal = opened else { return nil }
        defer { sys_sd_journal_close(journal) }
        for match in matches { guard sys_sd_journal_add_match(journal, match) >= 0 else { return nil } }
        guard sys_sd_journal_seek_tail(journal) >= 0, sys_sd_journal_previous(journal) > 0 else { return nil }
        var found: [String: String] = [:]
        for field in fields {
            var data: UnsafeRawPointer?
            var length = 0
            guard sys_sd_journal_get_data(journal, field, &data, &length) >= 0, let data else { continue }
            // "FIELD=value", not NUL-terminated.
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            found[field] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
        }
        return found
    }
}
