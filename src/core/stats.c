#include "core/stats.h"

#include <math.h>

void stats_merge(struct stats *dst, const struct stats *src)
{
	if (src->n == 0)
		return;
	if (dst->n == 0) {
		*dst = *src;
		return;
	}
	double na = (double)dst->n, nb = (double)src->n, n = na + nb;
	double delta = src->mean - dst->mean;
	dst->mean += delta * nb / n;
	dst->m2 += src->m2 + delta * delta * na * nb / n;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double stats_stddev(const struct stats *s)
{
	if (s->n < 2 || s->m2 <= 0.0)
		return 0.0;
	return sqrt(s->m2 / (double)s->n);
}
