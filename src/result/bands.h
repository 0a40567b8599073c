/* Metric 0's maximum in each band of time, kept beside a result's windows. */
#ifndef LATSCOPE_RESULT_BANDS_H
#define LATSCOPE_RESULT_BANDS_H

#include <stddef.h>
#include <stdint.h>

/* The OSADL long-term view: the maximum of every 5 minutes (of metric 0),
 * kept beside the windows; past RESULT_BANDS_MAX bands the band doubles. */
#define RESULT_BAND_NS (UINT64_C(300) * UINT64_C(1000000000))
#define RESULT_BANDS_MAX 4096u
#define RESULT_NO_BAND_MAX UINT64_MAX   /* a band without a sample */

/* Metric 0's maximum in each band of band_ns since the run's origin (by window start). */
struct band_max {
	uint64_t band_ns;               /* RESULT_BAND_NS, doubled as bands fold; 0 before the first */
	size_t n, cap;
	uint64_t *max;                  /* RESULT_NO_BAND_MAX for a band without a sample */
};

/* A window starting at start_ns with max (and samples) into its band.  -ENOMEM. */
int bands_add(struct band_max *b, uint64_t start_ns, uint64_t max);
/* dst = the larger of dst and src band by band, at the coarser of their bands
 * (each RESULT_BAND_NS times a power of two).  -ENOMEM, -EINVAL (bands that are not). */
int bands_merge(struct band_max *dst, const struct band_max *src);
/* Set b from n maxima of band_ns (a reader's).  -ENOMEM, -EINVAL. */
int bands_set(struct band_max *b, uint64_t band_ns, const uint64_t *max, size_t n);
void bands_free(struct band_max *b);

#endif
