#include "core/quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte that continues a UTF-8 character: no cut goes before it. */
static int continues(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* A byte a shell takes as itself anywhere in a word. */
static bool literal(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("%+,-./:=@_", c));
}

static void put(char *buf, size_t size, size_t *len, char c)
{
	if (*len + 1 < size)
		buf[*len] = c;
	(*len)++;
}

size_t quote_shell(const char *s, char *buf, size_t size)
{
	size_t len = 0;
	bool plain = s[0] != '\0';

	for (const char *p = s; *p && plain; p++)
		plain = literal((unsigned char)*p);
	if (!plain)
		put(buf, size, &len, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'') { /* close the quotes, a quoted ', open them again */
			put(buf, size, &len, '\'');
			put(buf, size, &len, '\\');
			put(buf, size, &len, '\'');
		}
		put(buf, size, &len, *p);
	}
	if (!plain)
		put(buf, size, &len, '\'');
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}

char *quote_shell_dup(const char *s)
{
	size_t need = quote_shell(s, NULL, 0) + 1;
	char *buf = malloc(need);
	if (buf)
		quote_shell(s, buf, need);
	return buf;
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
