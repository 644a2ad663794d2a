import Glibc
import InboxCore

/// The content sniffer's side of the channel: `inboxd --content-sniffer`, started by the agent (SnifferProcess).
///
/// libmagic parses untrusted bytes, so it does not run in the agent. The worker runs unprivileged (nobody, when
/// the agent is root), loads the magic database, then takes every filesystem right from itself with Landlock:
/// from then on it can read nothing and write nothing, only answer on its channel (fd 0, a SOCK_SEQPACKET socket).
///
/// Before it sandboxes itself it also reads shared-mime-info's `magic` files from the MIME directories named on
/// its command line (`--content-sniffer [directory ...]`, most important first), which it asks before libmagic.
///
/// Messages: the worker first says `ready <extent> <sections> <skipped> <libmagic version>` (`extent`: how many
/// bytes the rules can look at) or `error <reason>`; then each request is a tag byte followed by up to
/// `ContentSniffer.byteLimit` bytes of a file. `S` asks for the content's type: the answer is `ok <path> <MIME
/// type>` (`path` a SniffPath: rules, libmagic, both or quick) or `error <reason>`. `C` asks the same for a file
/// whose claim stands against content only libmagic's database would name: binary that neither the rules nor
/// libmagic's built-in checks name is then `ok quick application/octet-stream` (ContentSniffer.sniff,
/// `namingBinary: false`). `s` and `c` ask as `S` and `C` for a file whose decision no kind of text beyond
/// libmagic's built-in checks (JSON, CSV) can change: text they do not name is `ok quick text/plain`, without
/// libmagic's database (ContentSniffer.sniff, `classifyingText: false`). `Q` asks the rules alone: `ok rules
/// <MIME type>`, or `more` when they are not the last word (the agent then sends up to `byteLimit` bytes as `S`).
/// A request for more bytes than one message holds (up to `ContentSniffer.extendedByteLimit`) sends its first
/// parts as `A` messages, which get no answer, and its last as the `S`. The agent closing the channel ends the
/// worker.
public enum SnifferWorker {
    /// The hidden command-line argument that runs the worker instead of the agent.
    public static let argument = "--content-sniffer"

    /// Serves requests until the channel closes; returns the exit status.
    public static func run(mimeDirectories: [String] = []) -> Int32 {
        let channel: CInt = 0
        let sniffer: ContentSniffer
        do {
            sniffer = try ContentSniffer()
        } catch {
            answer(channel, "error \(error)")
            return 1
        }
        sniffer.rules = MIMEDatabaseLoader.loadMagic(directories: mimeDirectories).rules
        let abi = LandlockRuleset.abi()
        if abi > 0 {
            do {
                try LandlockRuleset(abi: abi).restrictSelf()
            } catch {
                answer(channel, "error cannot sandbox the sniffer: \(error)")
                return 1
            }
        }
        let rules = sniffer.rules
        answer(channel, "ready \(rules.extent) \(rules.sections.count) \(rules.skippedSections) \(sniffer.version)")
        var request = [UInt8](repeating: 0, count: ContentSniffer.byteLimit + 1)
        // The first parts of a long request; bounded, and dropped with an error past the bound.
        var pending: [UInt8] = []
        var overlong = false
        while true {
            let count: Int
            switch request.withUnsafeMutableBytes({ bytes in retryingErrno { sys_recv(channel, bytes) } }) {
            case .success(0): return 0
            case .success(let received): count = received
            case .failure: return 1
            }
            switch request[0] {
            case UInt8(ascii: "A"):
                overlong = overlong || pending.count + count - 1 > ContentSniffer.extendedByteLimit
                if !overlong { pending += request[1..<count] }
                continue
            case UInt8(ascii: "S"), UInt8(ascii: "C"), UInt8(ascii: "s"), UInt8(ascii: "c"):
                break
            case UInt8(ascii: "Q"):
                pending = []
                overlong = false
                let decided = request.withUnsafeBytes { sniffer.sniffByRules(UnsafeRawBufferPointer(rebasing: $0[1..<count])) }
                answer(channel, decided.map { "ok rules \($0)" } ?? "more")
                continue
            default:
                pending = []
                overlong = false
                answer(channel, "error malformed request")
                continue
            }
            let namingBinary = request[0] == UInt8(ascii: "S") || request[0] == UInt8(ascii: "s")
            let classifyingText = request[0] == UInt8(ascii: "S") || request[0] == UInt8(ascii: "C")
            let result: Result<(String, SniffPath), SniffError>
            if overlong || pending.count + count - 1 > ContentSniffer.extendedByteLimit {
                result = .failure(SniffError("request longer than \(ContentSniffer.extendedByteLimit) bytes"))
            } else if pending.isEmpty {
                result = request.withUnsafeBytes {
                    sniffer.sniff(UnsafeRawBufferPointer(rebasing: $0[1..<count]), namingBinary: namingBinary,
                                  classifyingText: classifyingText)
                }
            } else {
                pending += request[1..<count]
                result = pending.withUnsafeBytes {
                    sniffer.sniff($0, namingBinary: namingBinary, classifyingText: classifyingText)
                }
            }
            pending = []
            overlong = false
            switch result {
            case .success(let (mimeType, path)): answer(channel, "ok \(path.rawValue) \(mimeType)")
            case .failure(let error): answer(channel, "error \(error)")
            }
        }
    }

    private static func answer(_ channel: CInt, _ text: String) {
        var message = text
        _ = message.withUTF8 { bytes in retryingErrno { sys_send(channel, UnsafeRawBufferPointer(bytes)) } }
    }
}
