/* UTF-8 as text that ends up in JSON, XML and metric labels must be. */
#ifndef LATSCOPE_CORE_UTF8_H
#define LATSCOPE_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed UTF-8 sequence at s (1 to 4) and its code point;
 * 0 for a malformed one (overlong, surrogate, past U+10FFFF, cut short).
 * s must be NUL-terminated: a NUL ends any sequence as malformed.
 */
size_t utf8_decode(const unsigned char *s, uint32_t *ret);

/* The whole NUL-terminated text is well-formed UTF-8. */
bool utf8_valid(const char *text);

#endif
