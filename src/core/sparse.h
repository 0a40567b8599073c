/*
 * A histogram kept as its non-empty buckets only (same layout as struct hist):
 * what a window or a stored result needs, at a fraction of the dense size.
 */
#ifndef LATSCOPE_CORE_SPARSE_H
#define LATSCOPE_CORE_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "core/hist.h"

struct hist_bucket {
	uint32_t index;                 /* as hist_index() */
	uint64_t count;
};

struct sparse_hist {
	uint32_t n;                     /* buckets, in increasing index order */
	struct hist_bucket *b;
};

/* ret gets the non-empty buckets of h.  -ENOMEM; ret untouched on failure. */
int sparse_from_hist(const struct hist *h, struct sparse_hist *ret);
/* dst += src, keeping the order.  -ENOMEM, or -EOVERFLOW when the total would
 * pass COUNT_MAX (core/count.h); dst untouched on failure. */
int sparse_merge(struct sparse_hist *dst, const struct sparse_hist *src);
/* *ret = the sum of src[0..n-1], whose buckets are sorted together: O(b log b)
 * in all their buckets.  -ENOMEM, -EOVERFLOW (a total past COUNT_MAX). */
int sparse_sum(const struct sparse_hist *const *src, size_t n, struct sparse_hist *ret);
/* As hist_percentile on the dense histogram, in O(buckets). */
uint64_t sparse_percentile(const struct sparse_hist *s, double p);
/* dst (dense) += src. */
void sparse_add_to(const struct sparse_hist *src, struct hist *dst);
uint64_t sparse_total(const struct sparse_hist *s);
void sparse_free(struct sparse_hist *s);

#endif
