#include "core/termtext.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

/* Code points a terminal acts on, or that reorder what follows ("Trojan source"). */
static bool invisible(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t term_escape(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, out = 0;
	bool full = false;

	while (*p) {
		char esc[8];
		const char *piece = esc;
		uint32_t cp = 0;
		size_t n = *p < 0x20 || *p == 0x7f ? 0 : utf8_decode(p, &cp), len;
		if (n == 0) {
			len = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p);
			n = 1;
		} else if (invisible(cp)) {
			len = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
		} else {
			piece = (const char *)p;
			len = n;
		}
		/* Whole pieces only: the text is never cut inside an escape or a character. */
		if (!full && out + len < size) {
			memcpy(buf + out, piece, len);
			out += len;
		} else {
			full = true;
		}
		need += len;
		p += n;
	}
	if (size)
		buf[out] = '\0';
	return need;
}

char *term_escape_dup(const char *s)
{
	size_t need = term_escape(s, NULL, 0) + 1u;
	char *buf = malloc(need);
	if (buf)
		term_escape(s, buf, need);
	return buf;
}
