/// SHA-256 (FIPS 180-4), fed in pieces of any size: the digest the JetStream object store names each object by
/// (`SHA-256=<base64url>`), computed as its chunks are sent or read, so that no object is ever held whole.
///
/// `update` as often as the bytes come, then `finish` once; `SHA256.digest(_:)` does both for bytes in hand.
public struct SHA256: Sendable {
    /// The hash value H(0)…H(7) after the blocks taken so far (FIPS 180-4, 5.3.3 for the start).
    private var state: [UInt32] = [0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A,
                                   0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19]
    /// The bytes of a block not complete yet (fewer than 64).
    private var pending: [UInt8] = []
    /// Every byte given so far, for the padding's length field.
    private var count: UInt64 = 0
    /// The message schedule W(0)…W(63), kept between blocks so that no block allocates.
    private var schedule = [UInt32](repeating: 0, count: 64)

    /// The length of a digest in bytes.
    public static let byteCount = 32

    /// A hash of nothing yet.
    public init() {}

    /// The digest of `bytes` at once.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finish()
    }

    /// Takes the next bytes of the message.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Takes the next bytes of the message from memory the caller holds for the length of the call.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        count &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            offset = taken
            guard pending.count == 64 else { return }
            let block = pending
            block.withUnsafeBytes { compress($0, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= 64 {
            compress(bytes, at: offset)
            offset += 64
        }
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    /// The 32-byte digest of everything given: the padding (0x80, zeros to 56 mod 64, the length in bits big-endian,
    /// FIPS 180-4, 5.1.1), then H(0)…H(7) big-endian. The hash is spent: a new one starts with `SHA256()`.
    public mutating func finish() -> [UInt8] {
        let bits = count &* 8
        var tail = pending
        tail.append(0x80)
        tail.append(contentsOf: [UInt8](repeating: 0, count: (119 - pending.count) % 64))
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        tail.withUnsafeBytes { tail in
            for block in stride(from: 0, to: tail.count, by: 64) { compress(tail, at: block) }
        }
        pending.removeAll()
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } }
    }

    /// One 64-byte block at `offset` into the hash value (FIPS 180-4, 6.2.2).
    private mutating func compress(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        var value = state
        schedule.withUnsafeMutableBufferPointer { w in
            value.withUnsafeMutableBufferPointer { Self.compress(bytes, at: offset, schedule: w, value: $0) }
        }
        state = value
    }

    /// The block's rounds, with the schedule's memory and the hash value passed in.
    private static func compress(_ bytes: UnsafeRawBufferPointer, at offset: Int, schedule w: UnsafeMutableBufferPointer<UInt32>,
                                 value: UnsafeMutableBufferPointer<UInt32>) {
        for t in 0..<16 {
            let at = offset + t * 4
            w[t] = UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        for t in 16..<64 {
            let s0 = rotate(w[t - 15], 7) ^ rotate(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotate(w[t - 2], 17) ^ rotate(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d) = (value[0], value[1], value[2], value[3])
        var (e, f, g, h) = (value[4], value[5], value[6], value[7])
        constants.withUnsafeBufferPointer { k in
            for t in 0..<64 {
                let sum1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ sum1 &+ choice &+ k[t] &+ w[t]
                let sum0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                (h, g, f, e) = (g, f, e, d &+ t1)
                (d, c, b, a) = (c, b, a, t1 &+ sum0 &+ majority)
            }
        }
        value[0] &+= a
        value[1] &+= b
        value[2] &+= c
        value[3] &+= d
        value[4] &+= e
        value[5] &+= f
        value[6] &+= g
        value[7] &+= h
    }

    /// Rotation right by `count` bits (ROTR, FIPS 180-4, 3.2).
    @inline(__always)
    private static func rotate(_ word: UInt32, _ count: UInt32) -> UInt32 { word >> count | word << (32 - count) }

    /// K(0)…K(63): the first 32 bits of the fractional parts of the cube roots of the first 64 primes (4.2.2).
    private static let constants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
}
