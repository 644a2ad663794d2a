import CNats

// libcrypto's EVP calls for an NKey's Ed25519 key (evp.h; EVP_PKEY_new_raw_private_key(3), EVP_DigestSign(3)), one
// wrapper per call. Ed25519 signs the whole message in one call (no digest of its own), so there is no update step.

func sys_EVP_PKEY_new_raw_private_key_ed25519(_ seed: UnsafeRawBufferPointer) -> OpaquePointer? {
    EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                 seed.count)
}

func sys_EVP_PKEY_get_raw_public_key(_ key: OpaquePointer, _ out: UnsafeMutableRawBufferPointer) -> Int? {
    var length = out.count
    let ok = EVP_PKEY_get_raw_public_key(key, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
    return ok == 1 ? length : nil
}

func sys_EVP_PKEY_free(_ key: OpaquePointer) { EVP_PKEY_free(key) }

func sys_EVP_MD_CTX_new() -> OpaquePointer? { EVP_MD_CTX_new() }

func sys_EVP_MD_CTX_free(_ context: OpaquePointer) { EVP_MD_CTX_free(context) }

func sys_EVP_DigestSignInit(_ context: OpaquePointer, _ key: OpaquePointer) -> Bool {
    EVP_DigestSignInit(context, nil, nil, nil, key) == 1
}

func sys_EVP_DigestSign(_ context: OpaquePointer, _ signature: UnsafeMutableRawBufferPointer,
                        _ message: UnsafeRawBufferPointer) -> Int? {
    var length = signature.count
    let ok = EVP_DigestSign(context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), &length,
                            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
    return ok == 1 ? length : nil
}
