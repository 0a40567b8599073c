/* HMAC-SHA256 (src/host/hmac.c) against the test vectors of RFC 4231, section 4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "host/hmac.h"

struct vector {
	uint8_t key_byte;               /* the key: key_len of these, unless key_text */
	size_t key_len;
	const char *key_text;
	const char *data;
	uint8_t data_byte;              /* data: data_len of these, unless data */
	size_t data_len;
	const char *mac;                /* hex; shorter for the truncated case */
};

static const struct vector rfc4231[] = {
	{ 0x0b, 20, NULL, "Hi There", 0, 0, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
	{ 0, 0, "Jefe", "what do ya want for nothing?", 0, 0,
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	{ 0xaa, 20, NULL, NULL, 0xdd, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
	{ 0x0c, 20, NULL, "Test With Truncation", 0, 0, "a3b6167473100ee06e0c796c2955552b" },
	{ 0xaa, 131, NULL, "Test Using Larger Than Block-Size Key - Hash Key First", 0, 0,
	  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
	{ 0xaa, 131, NULL, "This is a test using a larger than block-size key and a larger than block-size data. The key "
	  "needs to be hashed before being used by the HMAC algorithm.", 0, 0,
	  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
};

static void check(const uint8_t *key, size_t key_len, const uint8_t *data, size_t data_len, const char *want)
{
	uint8_t mac[HMAC_SHA256_BYTES];
	char hex[2 * HMAC_SHA256_BYTES + 1];

	hmac_sha256(key, key_len, data, data_len, mac);
	for (size_t i = 0; i < sizeof(mac); i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	hex[strlen(want)] = '\0';
	assert_string_equal(hex, want);
}

static void test_hmac_sha256_gives_the_macs_of_rfc_4231(void **state)
{
	(void)state;
	uint8_t key[131], data[64];

	for (size_t i = 0; i < ARRAY_SIZE(rfc4231); i++) {
		const struct vector *v = &rfc4231[i];
		size_t key_len = v->key_text ? strlen(v->key_text) : v->key_len;
		if (v->key_text)
			memcpy(key, v->key_text, key_len);
		else
			memset(key, v->key_byte, key_len);
		memset(data, v->data_byte, sizeof(data));
		check(key, key_len, v->data ? (const uint8_t *)v->data : data, v->data ? strlen(v->data) : v->data_len,
		      v->mac);
	}
}

static void test_hmac_sha256_of_test_case_4_with_its_counting_key(void **state)
{
	(void)state;
	uint8_t key[25], data[50];

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i + 1);
	memset(data, 0xcd, sizeof(data));
	check(key, sizeof(key), data, sizeof(data), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

static void test_hmac_equal_tells_equal_from_different_at_any_byte(void **state)
{
	(void)state;
	uint8_t a[32] = { 0 }, b[32] = { 0 };

	assert_true(hmac_equal(a, b, sizeof(a)));
	for (size_t i = 0; i < sizeof(a); i++) {
		b[i] = 1;
		assert_false(hmac_equal(a, b, sizeof(a)));
		b[i] = 0;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac_sha256_gives_the_macs_of_rfc_4231),
		cmocka_unit_test(test_hmac_sha256_of_test_case_4_with_its_counting_key),
		cmocka_unit_test(test_hmac_equal_tells_equal_from_different_at_any_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
