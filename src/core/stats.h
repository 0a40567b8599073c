/*
 * Running count, min, max, mean and variance (Welford), mergeable (Chan et al.)
 * so per-window statistics combine into exact per-run ones.
 */
#ifndef LATSCOPE_CORE_STATS_H
#define LATSCOPE_CORE_STATS_H

#include <stdint.h>

struct stats {
	uint64_t n;
	uint64_t min;           /* UINT64_MAX while n == 0 */
	uint64_t max;
	double mean;
	double m2;              /* sum of squared deviations from the mean */
};

#define STATS_INIT { .n = 0, .min = UINT64_MAX, .max = 0, .mean = 0.0, .m2 = 0.0 }

static inline void stats_reset(struct stats *s)
{
	*s = (struct stats)STATS_INIT;
}

static inline void stats_add(struct stats *s, uint64_t v)
{
	s->n++;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	double x = (double)v;
	double delta = x - s->mean;
	s->mean += delta / (double)s->n;
	s->m2 += delta * (x - s->mean);
}

/* dst absorbs src as if every value of src had been added to dst.  -EOVERFLOW,
 * dst unchanged, when the count would pass COUNT_MAX (core/count.h). */
int stats_merge(struct stats *dst, const struct stats *src);

/*
 * The stats of n values with these figures (as a file gives them): m2 from the
 * population deviation sd, capped at (max - min) / 2, past which no values in
 * [min, max] spread (a writer's rounding would otherwise grow it each round trip).
 */
void stats_from_figures(struct stats *st, uint64_t n, uint64_t min, uint64_t max, double mean, double sd);

/* Population standard deviation (divides by n); 0 for fewer than two values. */
double stats_stddev(const struct stats *s);

/* min, or 0 when empty (for printing and JSON). */
static inline uint64_t stats_min(const struct stats *s)
{
	return s->n ? s->min : 0;
}

#endif
