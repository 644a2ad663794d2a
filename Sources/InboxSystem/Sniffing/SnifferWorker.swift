import Glibc

/// The content sniffer's side of the channel: `inboxd --content-sniffer`, started by the agent (SnifferProcess).
///
/// libmagic parses untrusted bytes, so it does not run in the agent. The worker runs unprivileged (nobody, when
/// the agent is root), loads the magic database, then takes every filesystem right from itself with Landlock:
/// from then on it can read nothing and write nothing, only answer on its channel (fd 0, a SOCK_SEQPACKET socket).
///
/// Messages: the worker first says `ready <libmagic version>` or `error <reason>`; then each request is the byte
/// `S` followed by up to `ContentSniffer.byteLimit` bytes of a file, and each answer is `ok <MIME type>` or
/// `error <reason>`. The agent closing the channel ends the worker.
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
        while true {
            let count = request.withUnsafeMutableBytes { sys_recv(channel, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return count == 0 ? 0 : 1 }
            guard request[0] == UInt8(ascii: "S") else {
                answer(channel, "error malformed request")
                continue
            }
            switch sniffer.sniff(request[1..<count]) {
            case .success(let mimeType): answer(channel, "ok \(mimeType)")
            case .failure(let error): answer(channel, "error \(error)")
            }
        }
    }

    private static func answer(_ channel: CInt, _ text: String) {
        var message = text
        _ = message.withUTF8 { sys_send(channel, $0.baseAddress, $0.count) }
    }
}
