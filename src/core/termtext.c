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

/* How a piece is escaped: a line of text, or a whole document, kept JSON or not. */
enum style { LINE, DOC, DOC_JSON };

static size_t escape(const char *s, char *buf, size_t size, enum style style)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, out = 0;
	bool full = false;

	while (*p) {
		char esc[8];
		const char *piece = esc;
		uint32_t cp = 0;
		const bool layout = style != LINE && (*p == '\n' || *p == '\t');
		size_t n = (*p < 0x20 && !layout) || *p == 0x7f ? 0 : utf8_decode(p, &cp), len;
		if (n == 0) {
			/* In JSON only a string can hold such a byte, and \u00NN keeps it one. */
			len = (size_t)snprintf(esc, sizeof(esc), style == DOC_JSON ? "\\u%04x" : "\\x%02x", *p);
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

size_t term_escape(const char *s, char *buf, size_t size)
{
	return escape(s, buf, size, LINE);
}

char *term_escape_doc(const char *text, bool json, size_t *ret_len)
{
	const enum style style = json ? DOC_JSON : DOC;
	size_t need = escape(text, NULL, 0, style) + 1u;
	char *buf = malloc(need);

	if (buf)
		*ret_len = escape(text, buf, need, style);
	return buf;
}

char *term_escape_dup(const char *s)
{
	size_t need = term_escape(s, NULL, 0) + 1u;
	char *buf = malloc(need);
	if (buf)
		term_escape(s, buf, need);
	return buf;
}
