#include "core/suggest.h"

#include <stdbool.h>
#include <string.h>

unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	/* Three rows of the dynamic programme: two back for a swap. */
	unsigned rows[3][SUGGEST_MAX_LEN + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return (unsigned)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned del = prev[j] + 1u, ins = cur[j - 1] + 1u;
			unsigned best = sub < del ? sub : del;
			best = ins < best ? ins : best;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1u < best)
				best = prev2[j - 2] + 1u;
			cur[j] = best;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

long suggest_word(const char *w, size_t len, const char *const *words, size_t n)
{
	unsigned best = (unsigned)-1, limit = (unsigned)(len / 3u);
	long found = -1;
	bool tie = false;

	if (limit == 0)
		limit = 1;
	for (size_t i = 0; i < n; i++) {
		if (!words[i])
			continue;
		unsigned d = edit_distance(w, len, words[i], strlen(words[i]));
		if (d < best) {
			best = d;
			found = (long)i;
			tie = false;
		} else if (d == best) {
			tie = true;
		}
	}
	return found >= 0 && !tie && best <= limit && best > 0 ? found : -1;
}
