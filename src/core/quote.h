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

/*
 * s as one word a POSIX shell reads back as s: as it is when every byte is
 * one a shell takes literally anywhere in a word (letters, digits and
 * %+,-./:=@_), else in single quotes, each ' in it written '\''; the empty
 * word as ''.  Writes at most size bytes with the terminating NUL, as
 * snprintf does, and returns the length of the whole quoted word, which is
 * at most 4 * strlen(s) + 2.
 */
size_t quote_shell(const char *s, char *buf, size_t size);

/* quote_shell(s) in memory of its own, for free(); NULL when none is left. */
char *quote_shell_dup(const char *s);

#endif
