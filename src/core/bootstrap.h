/*
 * Is a difference between two runs real?  A block bootstrap over each run's
 * windows (blocks), widened where batch means (contiguous parts of the run
 * taken as repetitions of it) say more, and a verdict only beyond the drift
 * between parts: windows of one run are not independent on a noisy machine,
 * its parts are closer to it.  Blocks may hold different numbers of samples
 * (windows folded into longer ones): units and parts are cut by sample count.
 */
#ifndef LATSCOPE_CORE_BOOTSTRAP_H
#define LATSCOPE_CORE_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sparse.h"
#include "core/stats.h"

/* One block: its exact statistics and its histogram. */
struct block {
	struct stats st;
	const struct sparse_hist *hist;
};

struct block_set {
	size_t n;
	const struct block *blocks;
};

/* What to compare: the mean (exact, from the blocks' stats) or a percentile. */
#define BOOT_MEAN (-1.0)

#define BOOT_MIN_BLOCKS 5           /* fewer units and a verdict is not given */
#define BOOT_MAX_GROUPS 2000        /* more blocks are resampled in this many units of about equal size */
#define BOOT_MAX_BATCHES 16         /* parts of a side taken as repetitions of the run */

/*
 * The level of each interval when verdicts on `statistics` statistics of the
 * same two runs are read together and must all hold with 95 % (Bonferroni):
 * two runs judged at the mean and p99 are wrongly called different at either
 * in at most 5 % of pairs, not up to 10 %.
 */
static inline double boot_level(unsigned statistics)
{
	return 1.0 - 0.05 / (double)(statistics ? statistics : 1u);
}

/*
 * A ratio with a = 0 is 1 when b is 0 too and +INFINITY otherwise (a noise
 * percentile can be 0): ratio, lo and hi may be infinite.
 */
struct verdict {
	bool enough;                    /* both sides have BOOT_MIN_BLOCKS units (blocks with samples, or groups) or more */
	double a, b;                    /* the statistic over all of each side, in ns (0 for no sample) */
	double ratio;                   /* b / a */
	double lo, hi;                  /* confidence interval of b / a at the level asked; NaN unless enough */
	double drift;                   /* >= 1: the larger within-side spread (max/min) over contiguous parts */
	int direction;                  /* +1 b is slower (lo > drift), -1 faster (hi < 1 / drift), 0 no significant difference or not enough */
};

/*
 * Compare side b against side a on stat (BOOT_MEAN, or a percentile in
 * (0, 100]) with an interval at level (0.5 to < 1, such as 0.95 or
 * boot_level(2)) from reps resamples (1000 or more) drawn from a fixed seed,
 * so the same input always gives the same verdict.  Blocks are laid into
 * units of about equal sample count, contiguous (at most BOOT_MAX_GROUPS).
 * Blocks without samples are skipped.  A percentile needs the histogram of
 * every block with samples.
 * 0, or -ENOMEM / -EINVAL (NULL argument, stat or level out of range, reps 0,
 * a block with samples but no histogram, a bucket index out of range) /
 * -EOVERFLOW (a side whose resampled counts could pass COUNT_MAX); ret
 * untouched on failure.
 */
int bootstrap_compare(const struct block_set *a, const struct block_set *b, double stat, double level,
		      unsigned reps, uint64_t seed, struct verdict *ret);

#endif
