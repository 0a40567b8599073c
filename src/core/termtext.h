/*
 * Text as a terminal may show it: whatever a stored or imported run, a host
 * name or a task name holds, printing it must not move the cursor, recolour,
 * retitle the window or forge lines.  One escaping for every such string.
 */
#ifndef LATSCOPE_CORE_TERMTEXT_H
#define LATSCOPE_CORE_TERMTEXT_H

#include <stdbool.h>
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

/*
 * A whole document (OpenMetrics, a gnuplot script, JSON) about to reach a
 * terminal, escaped as above but for the newlines and tabs that lay it out;
 * json: every escape as "\uNNNN", which a JSON string holds as the same
 * character, so the document stays JSON.  Malloc'ed, its length in *ret_len;
 * NULL when out of memory.  A file or pipe gets the document as it is.
 */
char *term_escape_doc(const char *text, bool json, size_t *ret_len);

#endif
