#pragma once
#include <nats/nats.h>
// libcrypto's EVP keys: the Ed25519 key of an NKey seed (its public key, its signatures). libnats links libcrypto
// already, so a process that uses the cluster layer maps no library more for it.
#include <openssl/evp.h>
