#include "core/linhist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int lin_hist_init(struct lin_hist *h, uint64_t unit_ns, uint32_t nbins)
{
	memset(h, 0, sizeof(*h));
	if (unit_ns == 0 || nbins > LINHIST_MAX_BINS)
		return -EINVAL;
	h->unit_ns = unit_ns;
	h->nbins = nbins;
	atomic_init(&h->cycles, 0);
	atomic_init(&h->min, LINHIST_NO_MIN);
	atomic_init(&h->max, 0);
	atomic_init(&h->last, 0);
	atomic_init(&h->sum, 0);
	if (nbins == 0)
		return 0;
	/* calloc may hand back untouched zero pages: write them. */
	h->bins = malloc(nbins * sizeof(*h->bins));
	h->outliers = malloc(nbins * sizeof(*h->outliers));
	if (!h->bins || !h->outliers) {
		lin_hist_free(h);
		return -ENOMEM;
	}
	memset(h->bins, 0, nbins * sizeof(*h->bins));
	memset(h->outliers, 0, nbins * sizeof(*h->outliers));
	return 0;
}

void lin_hist_free(struct lin_hist *h)
{
	free(h->bins);
	free(h->outliers);
	h->bins = h->outliers = NULL;
	h->nbins = 0;
}

void lin_hist_copy_figures(struct lin_hist *dst, const struct lin_hist *src)
{
	atomic_store_explicit(&dst->cycles, lin_load(&src->cycles), memory_order_relaxed);
	atomic_store_explicit(&dst->min, lin_load(&src->min), memory_order_relaxed);
	atomic_store_explicit(&dst->max, lin_load(&src->max), memory_order_relaxed);
	atomic_store_explicit(&dst->last, lin_load(&src->last), memory_order_relaxed);
	atomic_store_explicit(&dst->sum, lin_load(&src->sum), memory_order_relaxed);
}

void lin_hist_move(struct lin_hist *dst, struct lin_hist *src)
{
	dst->unit_ns = src->unit_ns;
	dst->nbins = src->nbins;
	dst->bins = src->bins;
	dst->outliers = src->outliers;
	dst->noutliers = src->noutliers;
	dst->overflow = src->overflow;
	lin_hist_copy_figures(dst, src);
	src->nbins = 0;
	src->bins = src->outliers = NULL;
	src->noutliers = src->overflow = 0;
}

double lin_hist_mean(const struct lin_hist *h)
{
	uint64_t n = lin_load(&h->cycles);
	return n ? (double)lin_load(&h->sum) / (double)n : 0.0;
}
