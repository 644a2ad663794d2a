import Glibc

/// The content sniffer's side of the channel: `inboxd --content-sniffer`, started by the agent (SnifferProcess).
///
/// libmagic parses untrusted bytes, so it does not run in the agent. The worker runs unprivileged (nobody, when
/// the agent is root), loads the magic database, then takes every filesystem right from itself with Landlock:
/// from then on it can read nothing and write nothing, only answer on its channel (fd 0, a SOCK_SEQPACKET socket).
///
/// Messages: the worker first says `ready <libmagic version>` or `error <reason>`; then each request is the byte
/// `S` followed by up to `ContentSniffer.byteLimit` bytes of a file, and each answer is `ok <MIME type>` or
/// `error <reason>`. A request for more bytes than one message holds (up to `ContentSniffer.extendedByteLimit`)
/// sends its first parts as `A` messages, which get no answer, and its last as the `S`. The agent closing the
/// channel ends the worker.
public enum SnifferWorker {
    /// The hidden command-line argument that runs the worker instead of the agent.
    public static let argument = "--content-sniffer"

    /// Serves requests until the channel closes; returns the exit status.
    public static func run() -> Int32 {
        let channel: CInt = 0
        let sniffer: ContentSniffer
        do {
            sniffer = try ContentSniffer()
        } catch {
            answer(channel, "error \(error)")
            return 1
        }
        let abi = LandlockRuleset.abi()
        if abi > 0 {
            do {
                try LandlockRuleset(abi: abi).restrictSelf()
            } catch {
                answer(channel, "error cannot sandbox the sniffer: \(error)")
                return 1
            }
        }
        answer(channel, "ready \(sniffer.version)")
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
            case UInt8(ascii: "S"):
                break
            default:
                pending = []
                overlong = false
                answer(channel, "error malformed request")
                continue
            }
            let result: Result<String, SniffError>
            if overlong || pending.count + count - 1 > ContentSniffer.extendedByteLimit {
                result = .failure(SniffError("request longer than \(ContentSniffer.extendedByteLimit) bytes"))
            } else if pending.isEmpty {
                result = sniffer.sniff(request[1..<count])
            } else {
                pending += request[1..<count]
                result = sniffer.sniff(pending)
            }
            pending = []
            overlong = false
            switch result {
            case .success(let mimeType): answer(channel, "ok \(mimeType)")
            case .failure(let error): answer(channel, "error \(error)")
            }
        }
    }

    private static func answer(_ channel: CInt, _ text: String) {
        var message = text
        _ = message.withUTF8 { bytes in retryingErrno { sys_send(channel, UnsafeRawBufferPointer(bytes)) } }
    }
}
