/* "Did you mean ...?": the nearest of a few known words to a mistyped one. */
#ifndef LATSCOPE_CORE_SUGGEST_H
#define LATSCOPE_CORE_SUGGEST_H

#include <stddef.h>

/*
 * Edit distance (insertions, deletions, substitutions and swaps of two
 * neighbours, each 1) between a[0..la) and b[0..lb); words longer than
 * SUGGEST_MAX_LEN count as far from everything.
 */
#define SUGGEST_MAX_LEN 64
unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb);

/*
 * Index of the word of words[0..n) (NULL entries skipped) nearest to w[0..len),
 * when it is near enough to be what was meant (at most a third of its letters
 * off, and at least one); -1 otherwise or on a tie between two.
 */
long suggest_word(const char *w, size_t len, const char *const *words, size_t n);

#endif
