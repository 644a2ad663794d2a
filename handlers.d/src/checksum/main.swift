// A resident handler written with InboxHandlerKit (com.example.checksum.handler): it stays running and, for each
// file it is given, appends "delivery-id <TAB> name <TAB> size <TAB> CRC-32" to checksums.tsv in its Documents/.
import InboxHandlerKit

let log = try DocumentFile(appendingTo: "checksums.tsv")
for delivery in Inbox.deliveries {
    do {
        let bytes = try delivery.read()
        try log.append("\(delivery.id)\t\(delivery.name)\t\(bytes.count)\t\(crc32(bytes))\n")
        delivery.finish(.done)
    } catch {
        delivery.finish(.retry, reason: "\(error)")
    }
}

/// CRC-32 (IEEE), as zlib computes it.
func crc32(_ bytes: [UInt8]) -> String {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    let hex = String(~crc, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
}
