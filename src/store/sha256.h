/* SHA-256 (FIPS 180-4): what a merged run's identity is a digest of. */
#ifndef LATSCOPE_STORE_SHA256_H
#define LATSCOPE_STORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

struct sha256 {
	uint32_t h[8];
	uint64_t len;                   /* bytes hashed so far */
	uint8_t block[64];
	size_t used;                    /* bytes waiting in block */
};

void sha256_init(struct sha256 *c);
void sha256_add(struct sha256 *c, const void *data, size_t len);
void sha256_end(struct sha256 *c, uint8_t out[SHA256_BYTES]);

#endif
