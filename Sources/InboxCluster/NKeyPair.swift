import CNats
import InboxCore
import InboxSystem

/// The Ed25519 key an NKey seed stands for, held by libcrypto: its public key, and signatures made with it.
///
/// The seed is a secret: it is read with a bounded read, the buffers it passed through are zeroed, and no error or
/// description quotes it. libcrypto keeps its own copy until the pair goes (`EVP_PKEY_free` clears it).
public final class NKeyPair {
    /// libcrypto's key.
    private let key: OpaquePointer
    /// The public key, in the seed's role.
    public let publicKey: NKeyPublicKey

    /// The largest seed file read: a seed is 58 characters, `nsc`'s decorated files a few hundred bytes.
    public static let seedFileLimit = 4096

    /// The key of `seed`; nil when libcrypto refuses it (it takes any 32 bytes as an Ed25519 seed).
    public init?(seed: NKeySeed) {
        guard let key = seed.bytes.withUnsafeBytes({ sys_EVP_PKEY_new_raw_private_key_ed25519($0) }) else { return nil }
        var bytes = [UInt8](repeating: 0, count: NKeys.keyByteCount)
        guard bytes.withUnsafeMutableBytes({ sys_EVP_PKEY_get_raw_public_key(key, $0) }) == NKeys.keyByteCount,
              let publicKey = NKeyPublicKey(role: seed.role, bytes: bytes) else {
            sys_EVP_PKEY_free(key)
            return nil
        }
        self.key = key
        self.publicKey = publicKey
    }

    deinit { sys_EVP_PKEY_free(key) }

    /// The pair of the seed in the file at `path` (a bare seed, or `nk`'s and `nsc`'s files), which must be a seed of
    /// `role`. A file that cannot be read, is over `seedFileLimit`, or holds no such seed is an error naming the path.
    public static func read(seedFile path: String, role: NKeyRole = .user) throws(NatsError) -> NKeyPair {
        let what = "read NKey seed file \(path)"
        var bytes: [UInt8]
        switch readBounded(path, limit: seedFileLimit) {
        case .success(let read): bytes = read
        case .failure(let error): throw NatsError(operation: what, status: NATS_INVALID_ARG, detail: error.description)
        }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        var seed: NKeySeed
        switch NKeySeed.parse(file: bytes) {
        case .success(let parsed): seed = parsed
        case .failure(let error): throw NatsError(operation: what, status: NATS_INVALID_ARG, detail: "it \(error)")
        }
        defer { seed.clear() }
        guard seed.role == role else {
            throw NatsError(operation: what, status: NATS_INVALID_ARG,
                            detail: "it holds the seed of a key whose role is \(seed.role), not \(role)")
        }
        guard let pair = NKeyPair(seed: seed) else {
            throw NatsError(operation: what, status: NATS_INVALID_ARG, detail: "libcrypto refused its Ed25519 seed")
        }
        return pair
    }

    /// The Ed25519 signature (64 bytes) of `message`, as NATS checks a nonce's or a JWT's.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        guard let context = sys_EVP_MD_CTX_new() else { fatalError("libcrypto: EVP_MD_CTX_new failed (out of memory)") }
        defer { sys_EVP_MD_CTX_free(context) }
        // An Ed25519 key always signs: a failure here is libcrypto broken, not a runtime condition.
        guard sys_EVP_DigestSignInit(context, key) else { fatalError("libcrypto: EVP_DigestSignInit refused an Ed25519 key") }
        var signature = [UInt8](repeating: 0, count: 64)
        let length = signature.withUnsafeMutableBytes { out in message.withUnsafeBytes { sys_EVP_DigestSign(context, out, $0) } }
        guard length == 64 else { fatalError("libcrypto: EVP_DigestSign gave no 64-byte Ed25519 signature") }
        return signature
    }
}

extension NatsCredentials {
    /// An NKey user from its seed file alone: the public key libnats also needs is derived from the seed here.
    public static func nkey(seedFile: String) throws(NatsError) -> NatsCredentials {
        .nkey(publicKey: try NKeyPair.read(seedFile: seedFile).publicKey.description, seedFile: seedFile)
    }
}
