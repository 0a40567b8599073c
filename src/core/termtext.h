/*
 * Text as a terminal may show it: whatever a stored or imported run, a host
 * name or a task name holds, printing it must not move the cursor, recolour,
 * retitle the window or forge lines.  One escaping for every such string.
 */
#ifndef LATSCOPE_CORE_TERMTEXT_H
#define LATSCOPE_CORE_TERMTEXT_H

#include <stddef.h>

/*
 * s with C0 controls (newline and tab too), DEL and bytes that are not UTF-8
 * as "\xNN", and C1 controls and bidirectional overrides as "\uNNNN"; the rest
 * as it is.  Writes at most size bytes, NUL-terminated and never cut inside an
 * escape or a character, and returns the length the whole text needs (as
 * snprintf does), so a caller can size a buffer.
 */
size_t term_escape(const char *s, char *buf, size_t size);

/* The same, malloc'ed (NULL when out of memory). */
char *term_escape_dup(const char *s);

#endif
