/*
 * HMAC-SHA256 (RFC 2104) over the store's SHA-256: what proves, in the host
 * agent's hello, that a client holds the shared secret without sending it.
 */
#ifndef LATSCOPE_HOST_HMAC_H
#define LATSCOPE_HOST_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/sha256.h"

#define HMAC_SHA256_BYTES SHA256_BYTES

/* The MAC of msg under key (any length: a key longer than a block is hashed first). */
void hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len, uint8_t out[HMAC_SHA256_BYTES]);

/* a and b hold the same n bytes, in a time that does not depend on where they differ. */
bool hmac_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
