#include "core/quote.h"

#include <stdio.h>
#include <string.h>

/* A byte that continues a UTF-8 character: no cut goes before it. */
static int continues(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

const char *quote_short(const char *s, char buf[QUOTE_MAX])
{
	const size_t len = strlen(s);
	size_t head = QUOTE_KEEP, tail = len - QUOTE_KEEP;

	/* A few bytes more are shown whole rather than cut to save nothing. */
	if (len <= 2 * QUOTE_KEEP + 8) {
		snprintf(buf, QUOTE_MAX, "'%s'", s);
		return buf;
	}
	while (head > 0 && continues((unsigned char)s[head]))
		head--;
	while (tail < len && continues((unsigned char)s[tail]))
		tail++;
	snprintf(buf, QUOTE_MAX, "'%.*s\u2026%s' (%zu bytes)", (int)head, s, s + tail, len);
	return buf;
}
