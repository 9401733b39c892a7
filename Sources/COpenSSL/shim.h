#ifndef HAPPY_COPENSSL_SHIM_H
#define HAPPY_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>

/* EVP_sha256() returns a const pointer Swift imports fine; this wrapper
 * keeps the call in one place. Returns the digest length, or 0 on failure. */
static inline unsigned int happy_hmac_sha256(const void *key, int key_length,
                                             const unsigned char *data, size_t data_length,
                                             unsigned char *out) {
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), key, key_length, data, data_length, out, &length)) return 0;
    return length;
}

#endif
