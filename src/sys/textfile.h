/* Small /proc and /sys files as text, and the two ways the kernel marks words in them. */
#ifndef LATSCOPE_SYS_TEXTFILE_H
#define LATSCOPE_SYS_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The file's text in buf, cut to fit, trailing whitespace trimmed
 * (available_clocksource ends in " \n").  Device-tree properties hold
 * NUL-separated strings, so the first one is what a caller sees.  On failure
 * buf is "" and -errno is returned, so callers can ignore missing sources. */
int textfile_read(const char *path, char *buf, size_t size);

/* Trailing whitespace removed in place. */
void textfile_trim_end(char *s);

/* word (which may hold blanks: "PREEMPT RT") is in s, delimited by blanks or
 * the ends of s: "tsc" is in "kvm-clock tsc hpet", "PREEMPT" is not in "PREEMPT_RT". */
bool textfile_has_word(const char *s, const char *word);

/*
 * The choice a kernel file marks among its options, open and close being the
 * marks: '[' ']' for "always [madvise] never" (sysfs), '(' ')' for
 * "none voluntary (full) lazy" (debugfs).  -EINVAL when nothing is marked,
 * -ERANGE when the choice does not fit in size (better none than cut short);
 * buf is "" on failure.
 */
int textfile_choice(const char *text, char open, char close, char *buf, size_t size);

#endif
