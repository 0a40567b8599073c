/* Small /proc and /sys files as text. */
#ifndef LATSCOPE_SYS_TEXTFILE_H
#define LATSCOPE_SYS_TEXTFILE_H

#include <stddef.h>

/* The file's text in buf, cut to fit, trailing whitespace trimmed
 * (available_clocksource ends in " \n").  Device-tree properties hold
 * NUL-separated strings, so the first one is what a caller sees.  On failure
 * buf is "" and -errno is returned, so callers can ignore missing sources. */
int textfile_read(const char *path, char *buf, size_t size);

/* Trailing whitespace removed in place. */
void textfile_trim_end(char *s);

#endif
