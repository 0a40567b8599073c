/*
 * A value as an error message quotes it: whole when short, else its head and
 * tail around "…" and its length, so a message about a 600-byte value still
 * fits struct lat_error with its reason and closing quote.
 */
#ifndef LATSCOPE_CORE_QUOTE_H
#define LATSCOPE_CORE_QUOTE_H

#include <stddef.h>

/* Bytes of the value kept at each end of a shortened one. */
#define QUOTE_KEEP 60
/* Room for any quoted value: both ends, the quotes, "…" and " (N bytes)". */
#define QUOTE_MAX (2 * QUOTE_KEEP + 40)

/*
 * s in buf as 'text', or as 'head…tail' (N bytes) when it is longer than
 * 2 * QUOTE_KEEP + 8 bytes; never cut inside a UTF-8 character.  Returns buf.
 */
const char *quote_short(const char *s, char buf[QUOTE_MAX]);

#endif
