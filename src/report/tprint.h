/*
 * printf for text meant for a terminal: every %s argument is shown through
 * term_escape (core/termtext.h), so a host name, note, command line or task
 * name from a stored, imported or traced run prints as harmless text.  The
 * format itself is ours and printed as written.  Text output (report/text.c,
 * tracetext.c, the store commands) prints through these, never fprintf.
 */
#ifndef LATSCOPE_REPORT_TPRINT_H
#define LATSCOPE_REPORT_TPRINT_H

#include <stdarg.h>
#include <stdio.h>

int tprintf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tvprintf(FILE *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* The same into a buffer, as snprintf. */
int tsnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
