/* Metric 0's maximum in each band of time (struct band_max, result.h). */
#ifndef LATSCOPE_RESULT_BANDS_H
#define LATSCOPE_RESULT_BANDS_H

#include "result/result.h"

/* A window starting at start_ns with max (and samples) into its band.  -ENOMEM. */
int bands_add(struct band_max *b, uint64_t start_ns, uint64_t max);
/* dst = the larger of dst and src band by band, at the coarser of their bands
 * (each RESULT_BAND_NS times a power of two).  -ENOMEM, -EINVAL (bands that are not). */
int bands_merge(struct band_max *dst, const struct band_max *src);
/* Set b from n maxima of band_ns (a reader's).  -ENOMEM, -EINVAL. */
int bands_set(struct band_max *b, uint64_t band_ns, const uint64_t *max, size_t n);
void bands_free(struct band_max *b);

#endif
