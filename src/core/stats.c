#include "core/stats.h"

#include <errno.h>
#include <math.h>

#include "core/count.h"

int stats_merge(struct stats *dst, const struct stats *src)
{
	uint64_t count = dst->n;
	if (src->n == 0)
		return 0;
	if (!count_add(&count, src->n))
		return -EOVERFLOW;
	if (dst->n == 0) {
		*dst = *src;
		return 0;
	}
	double na = (double)dst->n, nb = (double)src->n, n = na + nb;
	double delta = src->mean - dst->mean;
	dst->mean += delta * nb / n;
	dst->m2 += src->m2 + delta * delta * na * nb / n;
	dst->n = count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

void stats_from_figures(struct stats *st, uint64_t n, uint64_t min, uint64_t max, double mean, double sd)
{
	double sd_max = ((double)max - (double)min) / 2.0;
	stats_reset(st);
	if (n == 0)
		return;
	if (sd > sd_max)
		sd = sd_max;
	st->n = n;
	st->min = min;
	st->max = max;
	st->mean = mean;
	st->m2 = sd * sd * (double)n;
}

double stats_stddev(const struct stats *s)
{
	if (s->n < 2 || s->m2 <= 0.0)
		return 0.0;
	return sqrt(s->m2 / (double)s->n);
}
