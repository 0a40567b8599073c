/*
 * Block bootstrap of the ratio b / a of one statistic of two runs.
 *
 * The unit of resampling is the block (a window), not the sample: samples
 * within a window are correlated (one hypervisor burst makes many late
 * wakeups), windows much less so.  Per side:
 *
 *   point estimate  the statistic over all blocks: the mean from the blocks'
 *                   exact stats, count-weighted; a percentile by nearest rank
 *                   on the sum of the blocks' histograms (bucket midpoint),
 *                   clamped to the exact min and max.
 *   replicate       draw as many blocks as the side has, with replacement,
 *                   and compute the statistic the same way on the draw.  Only
 *                   how often each block was drawn matters, so a draw is a
 *                   weight per block: the mean is the weighted mean of the
 *                   blocks' means, a percentile a walk over the weighted
 *                   sum of their histograms (see struct side).
 *   groups          more than BOOT_MAX_GROUPS blocks are first merged into
 *                   BOOT_MAX_GROUPS groups of consecutive blocks (sizes differ
 *                   by at most one), which bounds the cost of a replicate and
 *                   keeps neighbouring windows, the most alike, together.
 *
 * The two sides are drawn independently; the 95 % interval is the 2.5th and
 * 97.5th percentile of the replicate ratios.  A difference is called only
 * when the whole interval lies beyond the drift: the larger of the two sides'
 * spread of the statistic between contiguous parts of their blocks.  Resampling windows measures how
 * well a run pins down its own figure; the drift measures how much the machine
 * moved under it, which is what separates two runs of the same configuration.  With a = 0 the ratio is 1 when
 * b is 0 too and +inf otherwise, so "a never slow, b slow" is still a verdict.
 * Blocks without samples carry no information and are skipped.
 */
#include "core/bootstrap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/count.h"

/*
 * The units (blocks, or groups of blocks) of one side.  Their histograms are
 * kept by bucket: column i lists, for every unit with samples in bucket i, the
 * unit and its count there.  A replicate's percentile then walks buckets from
 * the nearer end and sums only the columns it passes (p99 reads the tail, not
 * every bucket of every drawn block), with the draw counts as weights.
 */
struct side {
	size_t n;                       /* units */
	struct stats *st;               /* per unit */
	uint64_t *total;                /* per unit: samples in its histogram */
	uint32_t *w;                    /* per unit: draws in this replicate */
	uint32_t *col;                  /* HIST_BUCKETS + 1 offsets into unit[] and count[] */
	uint32_t *unit;
	uint64_t *count;
	unsigned lo, hi;                /* non-empty bucket range */
};

/* splitmix64: fast, passes BigCrush, any seed (0 too) is a good one. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n) for n <= BOOT_MAX_GROUPS; bias below n / 2^32, far under the noise. */
static size_t rng_below(uint64_t *s, size_t n)
{
	return (size_t)(((rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

static uint64_t block_samples(const struct block *bl, bool pct)
{
	if (!pct)
		return bl->st.n;
	return bl->hist ? sparse_total(bl->hist) : 0;
}

static int check_set(const struct block_set *set, bool pct)
{
	uint64_t total = 0;

	if (!set || (set->n && !set->blocks))
		return -EINVAL;
	/* A replicate draws n blocks with replacement: its sums reach n times the
	 * largest block at most, which must still count (core/count.h). */
	for (size_t i = 0; i < set->n; i++)
		if (set->blocks[i].st.n > COUNT_MAX / set->n || !count_add(&total, set->blocks[i].st.n))
			return -EOVERFLOW;
	if (!pct)
		return 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct block *bl = &set->blocks[i];
		if (!bl->hist) {
			if (bl->st.n)           /* samples without their histogram */
				return -EINVAL;
			continue;
		}
		if (bl->hist->n && !bl->hist->b)
			return -EINVAL;
		for (uint32_t j = 0; j < bl->hist->n; j++)
			if (bl->hist->b[j].index >= HIST_BUCKETS)
				return -EINVAL;
	}
	return 0;
}

static void side_free(struct side *s)
{
	free(s->st);
	free(s->total);
	free(s->w);
	free(s->col);
	free(s->unit);
	free(s->count);
	*s = (struct side){ 0 };
}

/* Unit u gets bucket idx with count c (c > 0): first counted, then placed. */
static void side_put(struct side *s, bool place, uint32_t u, unsigned idx, uint64_t c)
{
	if (!place) {
		s->col[idx + 1u]++;
		if (idx < s->lo)
			s->lo = idx;
		if (idx > s->hi)
			s->hi = idx;
		return;
	}
	uint32_t k = s->col[idx]++;
	s->unit[k] = u;
	s->count[k] = c;
}

/*
 * One pass over the blocks: sizing the columns (place false, which also merges
 * the units' stats), or filling them.  Blocks with samples map to units in
 * order: used block j goes to unit j * n / used, so groups are consecutive and
 * differ in size by one at most.  A group's histogram is summed in dense (a
 * zeroed scratch histogram, left zeroed) before it goes into the columns.
 */
static void side_fill(struct side *s, const struct block_set *set, size_t used, bool pct, bool place,
		      uint64_t *dense)
{
	bool grouped = s->n < used;
	unsigned glo = HIST_BUCKETS, ghi = 0;
	size_t j = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct block *bl = &set->blocks[i];
		uint64_t samples = block_samples(bl, pct);
		if (!samples)
			continue;
		uint32_t u = (uint32_t)(j * s->n / used);
		bool last = (j + 1u) * s->n / used != u;        /* block of its group */
		j++;
		if (!place) {
			stats_merge(&s->st[u], &bl->st);
			if (pct)
				s->total[u] += samples;
		}
		if (!pct)
			continue;
		for (uint32_t k = 0; k < bl->hist->n; k++) {
			const struct hist_bucket *hb = &bl->hist->b[k];
			if (!hb->count)
				continue;
			if (!grouped) {
				side_put(s, place, u, hb->index, hb->count);
				continue;
			}
			dense[hb->index] += hb->count;
			if (hb->index < glo)
				glo = hb->index;
			if (hb->index > ghi)
				ghi = hb->index;
		}
		if (grouped && last) {
			for (unsigned idx = glo; idx <= ghi; idx++)
				if (dense[idx]) {
					side_put(s, place, u, idx, dense[idx]);
					dense[idx] = 0;
				}
			glo = HIST_BUCKETS;
			ghi = 0;
		}
	}
}

static int side_init(struct side *s, const struct block_set *set, bool pct, uint64_t *dense)
{
	size_t used = 0, entries = 0;

	*s = (struct side){ .lo = HIST_BUCKETS, .hi = 0 };
	for (size_t i = 0; i < set->n; i++)
		if (block_samples(&set->blocks[i], pct)) {
			used++;
			if (pct)
				entries += set->blocks[i].hist->n;
		}
	if (used == 0)
		return 0;
	if (entries > UINT32_MAX)               /* more than the column offsets can hold */
		return -ENOMEM;

	size_t n = used > BOOT_MAX_GROUPS ? BOOT_MAX_GROUPS : used;
	s->st = malloc(n * sizeof(*s->st));
	s->total = calloc(n, sizeof(*s->total));
	s->w = calloc(n, sizeof(*s->w));
	if (pct)
		s->col = calloc(HIST_BUCKETS + 1u, sizeof(*s->col));
	if (!s->st || !s->total || !s->w || (pct && !s->col))
		goto nomem;
	s->n = n;
	for (size_t i = 0; i < n; i++)
		s->st[i] = (struct stats)STATS_INIT;

	side_fill(s, set, used, pct, false, dense);
	if (!pct)
		return 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		s->col[i + 1u] += s->col[i];            /* col[i]: start of bucket i */
	s->unit = malloc(s->col[HIST_BUCKETS] * sizeof(*s->unit));
	s->count = malloc(s->col[HIST_BUCKETS] * sizeof(*s->count));
	if (!s->unit || !s->count)
		goto nomem;
	side_fill(s, set, used, pct, true, dense);      /* col[i]: end of bucket i */
	memmove(s->col + 1, s->col, HIST_BUCKETS * sizeof(*s->col));
	s->col[0] = 0;
	return 0;

nomem:
	side_free(s);
	return -ENOMEM;
}

static void side_draw(struct side *s, uint64_t *rng)
{
	memset(s->w, 0, s->n * sizeof(*s->w));
	for (size_t k = 0; k < s->n; k++)
		s->w[rng_below(rng, s->n)]++;
}

/* Samples in bucket i of the units, each taken w times. */
static uint64_t side_bucket(const struct side *s, unsigned i)
{
	uint64_t c = 0;
	for (uint32_t k = s->col[i]; k < s->col[i + 1u]; k++)
		c += s->w[s->unit[k]] * s->count[k];
	return c;
}

/* The statistic over the units, each taken w times; 0 when there is no sample. */
static double side_stat(const struct side *s, bool pct, double p)
{
	if (!pct) {
		double sum = 0.0;
		uint64_t count = 0;
		for (size_t i = 0; i < s->n; i++) {
			uint64_t c = (uint64_t)s->w[i] * s->st[i].n;
			count += c;
			sum += (double)c * s->st[i].mean;
		}
		return count ? sum / (double)count : 0.0;
	}

	uint64_t total = 0, min = UINT64_MAX, max = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->w[i])
			continue;
		total += s->w[i] * s->total[i];
		if (s->st[i].n && s->st[i].min < min)
			min = s->st[i].min;
		if (s->st[i].n && s->st[i].max > max)
			max = s->st[i].max;
	}
	if (!total)
		return 0.0;

	/* Nearest rank, walking from the nearer end of the histogram. */
	uint64_t rank = hist_rank(p, total), seen = 0;
	if (rank == 0)
		rank = 1;
	if (rank > total)
		rank = total;
	unsigned i;
	if (rank <= total / 2u) {
		for (i = s->lo; i < s->hi; i++) {
			seen += side_bucket(s, i);
			if (seen >= rank)
				break;
		}
	} else {
		uint64_t above = total - rank + 1u;     /* samples at or above the answer */
		for (i = s->hi; i > s->lo; i--) {
			seen += side_bucket(s, i);
			if (seen >= above)
				break;
		}
	}
	uint64_t v = hist_bucket_value(i);
	/* The midpoint may lie outside what was measured: never report beyond it. */
	if (min <= max) {
		if (v < min)
			v = min;
		if (v > max)
			v = max;
	}
	return (double)v;
}

/*
 * How far the statistic wanders within one side: the ratio (>= 1) of the
 * largest to the smallest value it takes over DRIFT_PARTS contiguous parts of
 * the side's blocks (fewer parts for few blocks).  On a machine whose latency
 * moves over seconds and minutes, this is what one run says about where a
 * second run of the same configuration could land.
 */
#define DRIFT_PARTS 4

static double side_drift(struct side *s, bool pct, double p)
{
	size_t parts = s->n >= 2u * DRIFT_PARTS ? DRIFT_PARTS : 2u;
	double lo = (double)INFINITY, hi = 0.0;

	for (size_t k = 0; k < parts; k++) {
		size_t from = s->n * k / parts, to = s->n * (k + 1u) / parts;
		for (size_t i = 0; i < s->n; i++)
			s->w[i] = i >= from && i < to;
		double v = side_stat(s, pct, p);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (lo <= 0.0)
		return hi <= 0.0 ? 1.0 : (double)INFINITY;
	return hi / lo;
}

/* b / a, with 0 / 0 = 1 (no change) and b / 0 = +inf (a never slow, b slow). */
static double ratio_of(double b, double a)
{
	if (a > 0.0)
		return b / a;
	return b > 0.0 ? (double)INFINITY : 1.0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int bootstrap_compare(const struct block_set *a, const struct block_set *b, double stat, unsigned reps,
		      uint64_t seed, struct verdict *ret)
{
	struct side sa = { 0 }, sb = { 0 };
	struct verdict v = { .lo = (double)NAN, .hi = (double)NAN, .drift = 1.0 };
	uint64_t *dense = NULL;                 /* scratch for group histograms */
	double *ratios = NULL;
	bool pct = stat != BOOT_MEAN;
	int r;

	if (!a || !b || !ret || reps == 0)
		return -EINVAL;
	if (pct && !(stat > 0.0 && stat <= 100.0))          /* NaN fails too */
		return -EINVAL;
	r = check_set(a, pct);
	if (r == 0)
		r = check_set(b, pct);
	if (r < 0)
		return r;

	if (pct && (a->n > BOOT_MAX_GROUPS || b->n > BOOT_MAX_GROUPS)) {
		dense = calloc(HIST_BUCKETS, sizeof(*dense));
		if (!dense)
			return -ENOMEM;
	}
	r = side_init(&sa, a, pct, dense);
	if (r == 0)
		r = side_init(&sb, b, pct, dense);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < sa.n; i++)
		sa.w[i] = 1;
	for (size_t i = 0; i < sb.n; i++)
		sb.w[i] = 1;
	v.a = side_stat(&sa, pct, stat);
	v.b = side_stat(&sb, pct, stat);
	v.ratio = ratio_of(v.b, v.a);
	v.enough = sa.n >= BOOT_MIN_BLOCKS && sb.n >= BOOT_MIN_BLOCKS;

	if (v.enough) {
		ratios = malloc(reps * sizeof(*ratios));
		if (!ratios) {
			r = -ENOMEM;
			goto out;
		}
		uint64_t rng = seed;
		for (unsigned k = 0; k < reps; k++) {
			side_draw(&sa, &rng);
			side_draw(&sb, &rng);
			ratios[k] = ratio_of(side_stat(&sb, pct, stat), side_stat(&sa, pct, stat));
		}
		qsort(ratios, reps, sizeof(*ratios), cmp_double);
		/* As many replicates below lo as above hi: 2.5 % each. */
		size_t tail = (size_t)((double)reps * 0.025);
		v.lo = ratios[tail];
		v.hi = ratios[reps - 1u - tail];
		double da = side_drift(&sa, pct, stat), db = side_drift(&sb, pct, stat);
		v.drift = da > db ? da : db;
		v.direction = v.lo > v.drift ? 1 : v.hi < 1.0 / v.drift ? -1 : 0;
	}
	*ret = v;
	r = 0;
out:
	free(ratios);
	side_free(&sa);
	side_free(&sb);
	free(dense);
	return r;
}
