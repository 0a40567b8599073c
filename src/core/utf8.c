#include "core/utf8.h"

size_t utf8_decode(const unsigned char *s, uint32_t *ret)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;
	uint32_t cp;

	if (c < 0x80) {
		*ret = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1fu;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0fu;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07u;
	} else {
		return 0;
	}
	/* The second byte rules out overlongs, surrogates and values past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	*ret = cp;
	return n;
}

bool utf8_valid(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	uint32_t cp;

	while (*s) {
		size_t n = utf8_decode(s, &cp);
		if (n == 0)
			return false;
		s += n;
	}
	return true;
}
