#include "report/omtext.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/nstime.h"
#include "core/utf8.h"

const struct om_bound om_ladder[OM_LADDER_N] = {
	{ UINT64_C(1000), "1e-06" },             { UINT64_C(2000), "2e-06" },
	{ UINT64_C(5000), "5e-06" },             { UINT64_C(10000), "1e-05" },
	{ UINT64_C(20000), "2e-05" },            { UINT64_C(50000), "5e-05" },
	{ UINT64_C(100000), "0.0001" },          { UINT64_C(200000), "0.0002" },
	{ UINT64_C(500000), "0.0005" },          { UINT64_C(1000000), "0.001" },
	{ UINT64_C(2000000), "0.002" },          { UINT64_C(5000000), "0.005" },
	{ UINT64_C(10000000), "0.01" },          { UINT64_C(20000000), "0.02" },
	{ UINT64_C(50000000), "0.05" },          { UINT64_C(100000000), "0.1" },
	{ UINT64_C(200000000), "0.2" },          { UINT64_C(500000000), "0.5" },
	{ UINT64_C(1000000000), "1.0" },         { UINT64_C(2000000000), "2.0" },
	{ UINT64_C(5000000000), "5.0" },         { UINT64_C(10000000000), "10.0" },
	{ UINT64_C(20000000000), "20.0" },       { UINT64_C(50000000000), "50.0" },
	{ UINT64_C(100000000000), "100.0" },
};

size_t om_ladder_slot(uint64_t high_ns)
{
	size_t lo = 0, hi = OM_LADDER_N;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2u;
		if (om_ladder[mid].ns < high_ns)
			lo = mid + 1u;
		else
			hi = mid;
	}
	return lo;
}

static int put_bytes(FILE *out, const char *s, size_t len)
{
	return len && fwrite(s, 1, len, out) != len ? -1 : 0;
}

int om_put_label_value(FILE *out, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	int r = 0;

	while (*s && r == 0) {
		uint32_t cp;
		size_t n = utf8_decode(s, &cp);
		if (n == 0) {
			r = put_bytes(out, "\xef\xbf\xbd", 3);
			s++;
		} else if (*s == '\\') {
			r = put_bytes(out, "\\\\", 2);
			s++;
		} else if (*s == '"') {
			r = put_bytes(out, "\\\"", 2);
			s++;
		} else if (*s == '\n') {
			r = put_bytes(out, "\\n", 2);
			s++;
		} else {
			r = put_bytes(out, (const char *)s, n);
			s += n;
		}
	}
	return r;
}

void om_make_name(char *dst, size_t size, const char *prefix, const char *src)
{
	size_t n = (size_t)snprintf(dst, size, "%s", prefix);

	for (; *src && n + 1 < size; src++, n++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		dst[n] = ok ? c : '_';
	}
	dst[n < size ? n : size - 1] = '\0';
}

const char *om_secs(uint64_t ns, char *buf, size_t size)
{
	int len = snprintf(buf, size, "%" PRIu64 ".%09" PRIu64, ns / NS_PER_SEC, ns % NS_PER_SEC);

	while (len > 2 && buf[len - 1] == '0' && buf[len - 2] != '.')
		buf[--len] = '\0';
	return buf;
}

const char *om_secs_double(double ns, char *buf, size_t size)
{
	if (!(ns >= 0.0))
		ns = 0.0;
	/* Below 2^64 the nearest integer is as exact as the double, and prints
	 * exactly; round(), not llround(): a long stops at 2^63. */
	if (ns < 18446744073709549568.0)
		return om_secs((uint64_t)round(ns), buf, size);
	snprintf(buf, size, "%.17g", ns / 1e9);
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", size - strlen(buf) - 1);
	return buf;
}

