#include "core/parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/nstime.h"
#include "core/utf8.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int parse_u64(const char *text, uint64_t *ret)
{
	uint64_t v = 0;
	bool overflow = false;          /* -ERANGE only once the text is known to be of the form */

	if (!text || !is_digit(*text))
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (overflow || v > (UINT64_MAX - d) / 10u) {
			overflow = true;
			continue;
		}
		v = v * 10u + d;
	}
	if (overflow)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_size(const char *text, uint64_t *ret_bytes)
{
	static const char units[] = "kmgt";
	const char *p = text;
	uint64_t v = 0, mult = 1;
	bool overflow = false;

	if (!text || !is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		overflow |= v > (UINT64_MAX - d) / 10u;
		v = v * 10u + d;
	}
	if (*p) {
		char c = (char)(*p | 0x20);
		const char *u = c ? strchr(units, c) : NULL;
		if (!u)
			return -EINVAL;
		for (const char *k = units; k <= u; k++)
			mult *= 1024u;
		p++;
		if (strcmp(p, "iB") != 0 && strcmp(p, "B") != 0 && *p != '\0')
			return -EINVAL;
	}
	uint64_t bytes;
	if (overflow || __builtin_mul_overflow(v, mult, &bytes))
		return -ERANGE;
	*ret_bytes = bytes;
	return 0;
}

int parse_i64(const char *text, int64_t *ret)
{
	bool neg = text && *text == '-';
	uint64_t mag;
	int r = parse_u64(neg ? text + 1 : text, &mag);

	if (r < 0)
		return r;
	if (neg ? mag > (uint64_t)INT64_MAX + 1u : mag > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return 0;
}

__extension__ typedef unsigned __int128 u128;

static const struct {
	const char *name;
	uint64_t ns;
} duration_units[] = {
	{ "ns", 1 },
	{ "us", NS_PER_US },
	{ "ms", NS_PER_MS },
	{ "s", NS_PER_SEC },
	{ "m", 60u * NS_PER_SEC },
	{ "h", 3600u * NS_PER_SEC },
	{ "d", 86400u * NS_PER_SEC },
};

static int mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t *ret)
{
	uint64_t m;
	if (__builtin_mul_overflow(a, b, &m) || __builtin_add_overflow(m, c, &m))
		return -ERANGE;
	*ret = m;
	return 0;
}

int parse_duration(const char *text, uint64_t default_unit, uint64_t *ret_ns)
{
	const char *p = text;
	uint64_t whole = 0, frac = 0, frac_scale = 1;
	size_t frac_digits = 0;
	bool overflow = false;          /* -ERANGE only once the text is known to be of the form */

	if (!text || !is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++)
		if (!overflow && mul_add(whole, 10u, (uint64_t)(*p - '0'), &whole) < 0)
			overflow = true;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return -EINVAL;
		for (; is_digit(*p); p++) {
			if (frac_digits >= 18) {       /* beyond 1e-18 nothing can matter but zeros */
				if (*p != '0')
					return -EINVAL;
				continue;
			}
			frac = frac * 10u + (uint64_t)(*p - '0');
			frac_scale *= 10u;
			frac_digits++;
		}
	}

	uint64_t unit = default_unit;
	if (*p) {
		unit = 0;
		for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++)
			if (strcmp(p, duration_units[i].name) == 0)
				unit = duration_units[i].ns;
		if (!unit)
			return -EINVAL;
	}
	if (unit == 0)
		return -EINVAL;
	if (overflow)
		return -ERANGE;

	uint64_t ns;
	if (__builtin_mul_overflow(whole, unit, &ns))
		return -ERANGE;
	if (frac) {
		/* frac/frac_scale * unit must be a whole number of ns. */
		u128 part = (u128)frac * unit;
		if (part % frac_scale)
			return -EINVAL;
		uint64_t add = (uint64_t)(part / frac_scale);
		if (__builtin_add_overflow(ns, add, &ns))
			return -ERANGE;
	}
	*ret_ns = ns;
	return 0;
}

static bool key_char(char c, bool first)
{
	bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	if (first)
		return alpha;
	return alpha || is_digit(c) || c == '_' || c == '-' || c == '.';
}

int parse_label(const char *text, struct label *ret)
{
	const char *eq = text ? strchr(text, '=') : NULL;

	if (!eq || eq == text || eq[1] == '\0')
		return -EINVAL;
	size_t klen = (size_t)(eq - text), vlen = strlen(eq + 1);
	for (size_t i = 0; i < klen; i++)
		if (!key_char(text[i], i == 0))
			return -EINVAL;
	for (const unsigned char *v = (const unsigned char *)eq + 1; *v; v++)
		if (*v < 0x20 || *v == 0x7f)
			return -EINVAL;
	if (!utf8_valid(eq + 1))
		return -EINVAL;
	if (klen >= LABEL_KEY_MAX || vlen >= LABEL_VALUE_MAX)
		return -E2BIG;
	memcpy(ret->key, text, klen);
	ret->key[klen] = '\0';
	memcpy(ret->value, eq + 1, vlen + 1);
	return 0;
}

size_t labels_format(const struct labels *ls, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < ls->n && len + 1u < size; i++) {
		int w = snprintf(buf + len, size - len, "%s%s=%s", i ? " " : "", ls->items[i].key, ls->items[i].value);
		len = w < 0 ? len : len + (size_t)w >= size ? size - 1u : len + (size_t)w;
	}
	return len;
}
