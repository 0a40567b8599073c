/*
 * Is a difference between two runs real?  A block bootstrap: each run is a set
 * of blocks (its windows), resampled with replacement, so the variation
 * between windows (hypervisor bursts, a noisy neighbour) is part of the
 * uncertainty, as it would be between two runs.  Samples inside a window are
 * not independent; windows are much closer to it.
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

#define BOOT_MIN_BLOCKS 5           /* fewer and a verdict is not given */
#define BOOT_MAX_GROUPS 2000        /* more blocks are resampled in this many groups */

/*
 * A ratio with a = 0 is 1 when b is 0 too and +INFINITY otherwise (a noise
 * percentile can be 0): ratio, lo and hi may be infinite.
 */
struct verdict {
	bool enough;                    /* both sides have BOOT_MIN_BLOCKS blocks with samples or more */
	double a, b;                    /* the statistic over all of each side, in ns (0 for no sample) */
	double ratio;                   /* b / a */
	double lo, hi;                  /* 95 % confidence interval of b / a; NaN unless enough */
	double drift;                   /* >= 1: the larger within-side spread (max/min) over contiguous parts */
	int direction;                  /* +1 b is slower (lo > drift), -1 faster (hi < 1 / drift), 0 no significant difference or not enough */
};

/*
 * Compare side b against side a on stat (BOOT_MEAN, or a percentile in
 * (0, 100]) with reps resamples (1000 or more for a 95 % interval) from a
 * fixed seed, so the same input always gives the same verdict.  Sides with
 * more than BOOT_MAX_GROUPS blocks are resampled in contiguous groups of
 * blocks.  Blocks without samples are skipped.  A percentile needs the
 * histogram of every block with samples.
 * 0, or -ENOMEM / -EINVAL (NULL argument, stat out of range, reps 0, a block
 * with samples but no histogram, a bucket index out of range) / -EOVERFLOW (a
 * side whose resampled counts could pass COUNT_MAX); ret untouched on failure.
 */
int bootstrap_compare(const struct block_set *a, const struct block_set *b, double stat, unsigned reps,
		      uint64_t seed, struct verdict *ret);

#endif
