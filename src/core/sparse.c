#include "core/sparse.h"

#include <errno.h>
#include <stdlib.h>

#include "core/count.h"

int sparse_from_hist(const struct hist *h, struct sparse_hist *ret)
{
	uint32_t n = 0;
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u))
		n++;
	struct hist_bucket *b = n ? malloc(n * sizeof(*b)) : NULL;
	if (n && !b)
		return -ENOMEM;
	uint32_t k = 0;
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u))
		b[k++] = (struct hist_bucket){ .index = i, .count = h->counts[i] };
	ret->n = n;
	ret->b = b;
	return 0;
}

int sparse_merge(struct sparse_hist *dst, const struct sparse_hist *src)
{
	uint64_t total = 0;
	if (src->n == 0)
		return 0;
	/* When the totals fit, so does every bucket's sum. */
	for (uint32_t i = 0; i < dst->n; i++)
		if (!count_add(&total, dst->b[i].count))
			return -EOVERFLOW;
	for (uint32_t i = 0; i < src->n; i++)
		if (!count_add(&total, src->b[i].count))
			return -EOVERFLOW;
	struct hist_bucket *out = malloc(((size_t)dst->n + src->n) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	uint32_t i = 0, j = 0, k = 0;
	while (i < dst->n || j < src->n) {
		if (j >= src->n || (i < dst->n && dst->b[i].index < src->b[j].index))
			out[k++] = dst->b[i++];
		else if (i >= dst->n || src->b[j].index < dst->b[i].index)
			out[k++] = src->b[j++];
		else {
			out[k] = dst->b[i++];
			out[k++].count += src->b[j++].count;
		}
	}
	free(dst->b);
	dst->b = out;
	dst->n = k;
	return 0;
}

static int by_bucket(const void *a, const void *b)
{
	const struct hist_bucket *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

int sparse_sum(const struct sparse_hist *const *src, size_t n, struct sparse_hist *ret)
{
	size_t total = 0, k = 0;
	uint64_t count = 0;

	for (size_t i = 0; i < n; i++) {
		total += src[i]->n;
		for (uint32_t j = 0; j < src[i]->n; j++)
			if (!count_add(&count, src[i]->b[j].count))
				return -EOVERFLOW;      /* then no bucket's sum can pass it either */
	}
	struct hist_bucket *b = total ? malloc(total * sizeof(*b)) : NULL;
	if (total && !b)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < src[i]->n; j++)
			b[k++] = src[i]->b[j];
	if (total)
		qsort(b, total, sizeof(*b), by_bucket);
	size_t out = 0;
	for (size_t i = 0; i < total; i++) {
		if (out && b[out - 1u].index == b[i].index)
			b[out - 1u].count += b[i].count;
		else
			b[out++] = b[i];
	}
	ret->n = (uint32_t)out;         /* at most HIST_BUCKETS */
	ret->b = b;
	return 0;
}

uint64_t sparse_percentile(const struct sparse_hist *s, double p)
{
	uint64_t total = sparse_total(s), seen = 0;
	if (total == 0)
		return 0;
	if (!(p > 0.0))
		p = 0.0;
	if (p > 100.0)
		p = 100.0;
	uint64_t rank = hist_rank(p, total);
	if (rank == 0)
		rank = 1;
	for (uint32_t i = 0; i < s->n; i++) {
		seen += s->b[i].count;
		if (seen >= rank)
			return hist_bucket_value(s->b[i].index);
	}
	return hist_bucket_value(s->b[s->n - 1u].index);
}

void sparse_add_to(const struct sparse_hist *src, struct hist *dst)
{
	for (uint32_t i = 0; i < src->n; i++) {
		dst->counts[src->b[i].index] += src->b[i].count;
		dst->total += src->b[i].count;
	}
}

uint64_t sparse_total(const struct sparse_hist *s)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < s->n; i++)
		t += s->b[i].count;
	return t;
}

void sparse_free(struct sparse_hist *s)
{
	free(s->b);
	s->b = NULL;
	s->n = 0;
}
