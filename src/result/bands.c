#include "result/bands.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t larger(uint64_t a, uint64_t b)
{
	if (a == RESULT_NO_BAND_MAX)
		return b;
	if (b == RESULT_NO_BAND_MAX)
		return a;
	return a > b ? a : b;
}

static bool is_band(uint64_t band_ns)
{
	if (band_ns < RESULT_BAND_NS || band_ns % RESULT_BAND_NS)
		return false;
	uint64_t k = band_ns / RESULT_BAND_NS;
	return (k & (k - 1u)) == 0;
}

/* Room for n bands, the new ones empty. */
static int grow(struct band_max *b, size_t n)
{
	if (n > b->cap) {
		size_t cap = b->cap ? b->cap : 16u;
		while (cap < n)
			cap *= 2u;
		uint64_t *m = realloc(b->max, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		b->max = m;
		b->cap = cap;
	}
	for (size_t i = b->n; i < n; i++)
		b->max[i] = RESULT_NO_BAND_MAX;
	if (n > b->n)
		b->n = n;
	return 0;
}

/* Twice as long bands, pairs merged. */
static void coarsen(struct band_max *b)
{
	size_t n = (b->n + 1u) / 2u;
	for (size_t i = 0; i < n; i++)
		b->max[i] = larger(b->max[2u * i], 2u * i + 1u < b->n ? b->max[2u * i + 1u] : RESULT_NO_BAND_MAX);
	b->n = n;
	b->band_ns *= 2u;
}

int bands_add(struct band_max *b, uint64_t start_ns, uint64_t max)
{
	if (b->band_ns == 0)
		b->band_ns = RESULT_BAND_NS;
	uint64_t i = start_ns / b->band_ns;
	while (i >= RESULT_BANDS_MAX) {
		coarsen(b);
		i = start_ns / b->band_ns;
	}
	int r = grow(b, (size_t)i + 1u);
	if (r < 0)
		return r;
	b->max[i] = larger(b->max[i], max);
	return 0;
}

int bands_merge(struct band_max *dst, const struct band_max *src)
{
	if (src->n == 0)
		return 0;
	if (!is_band(src->band_ns) || (dst->band_ns && !is_band(dst->band_ns)))
		return -EINVAL;
	if (dst->band_ns == 0)
		dst->band_ns = src->band_ns;
	while (dst->band_ns < src->band_ns)
		coarsen(dst);
	uint64_t per = dst->band_ns / src->band_ns;
	int r = grow(dst, (src->n + per - 1u) / per);
	if (r < 0)
		return r;
	for (size_t i = 0; i < src->n; i++)
		dst->max[i / per] = larger(dst->max[i / per], src->max[i]);
	return 0;
}

int bands_set(struct band_max *b, uint64_t band_ns, const uint64_t *max, size_t n)
{
	if (!is_band(band_ns) || n > RESULT_BANDS_MAX)
		return -EINVAL;
	bands_free(b);
	b->band_ns = band_ns;
	int r = grow(b, n);
	if (r == 0 && n)
		memcpy(b->max, max, n * sizeof(*max));
	return r;
}

void bands_free(struct band_max *b)
{
	free(b->max);
	memset(b, 0, sizeof(*b));
}
