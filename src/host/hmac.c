/* Written from RFC 2104, section 2: H(K ^ opad, H(K ^ ipad, text)). */
#include "host/hmac.h"

#include <string.h>

#define BLOCK 64                        /* SHA-256's block, in bytes */

void hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len, uint8_t out[HMAC_SHA256_BYTES])
{
	uint8_t k[BLOCK] = { 0 }, pad[BLOCK], inner[SHA256_BYTES];
	struct sha256 c;

	if (key_len > BLOCK) {
		sha256_init(&c);
		sha256_add(&c, key, key_len);
		sha256_end(&c, k);
	} else if (key_len) {
		memcpy(k, key, key_len);
	}
	for (size_t i = 0; i < BLOCK; i++)
		pad[i] = k[i] ^ 0x36u;
	sha256_init(&c);
	sha256_add(&c, pad, BLOCK);
	sha256_add(&c, msg, msg_len);
	sha256_end(&c, inner);
	for (size_t i = 0; i < BLOCK; i++)
		pad[i] = k[i] ^ 0x5cu;
	sha256_init(&c);
	sha256_add(&c, pad, BLOCK);
	sha256_add(&c, inner, sizeof(inner));
	sha256_end(&c, out);
	memset(k, 0, sizeof(k));
	memset(pad, 0, sizeof(pad));
}

bool hmac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t diff = 0;

	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}
