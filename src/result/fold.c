#include "result/fold.h"

#include <string.h>

static void *at(void *items, const struct fold_ops *ops, size_t i)
{
	return (char *)items + i * ops->size;
}

/* The block of span that index falls in, cut at the pin: no block holds windows from both sides. */
static void block_of(const struct fold_ops *ops, uint64_t index, uint64_t span, uint64_t *ret_start,
		     uint64_t *ret_span)
{
	uint64_t start = index - index % span, end = start + span;
	if (start < ops->pin && end > ops->pin) {
		if (index < ops->pin)
			end = ops->pin;
		else
			start = ops->pin;
	}
	*ret_start = start;
	*ret_span = end - start;
}

/* Items [from, to) into blocks of span, written from `from` on; items past to move down behind them. */
static int compact(void *items, size_t *n, size_t from, size_t to, uint64_t span, const struct fold_ops *ops,
		   size_t *ret_end)
{
	size_t w = from, r = from;
	int err = 0;

	for (; r < to; r++) {
		void *item = at(items, ops, r);
		uint64_t idx = ops->index(item), start, len;
		block_of(ops, idx, span, &start, &len);
		/* w - 1 is folded already (this pass's, or the old part's last) */
		void *last = w > 0 ? at(items, ops, w - 1u) : NULL;
		if (last && ops->index(last) == start) {
			if ((err = ops->absorb(ops->ctx, last, item)) < 0)
				break;  /* r stays: moved below with the rest */
			ops->place(last, start, len);   /* whole again, if it was cut short (below) */
			continue;
		}
		memmove(at(items, ops, w), item, ops->size);
		ops->place(at(items, ops, w++), start, len);
	}
	if (w < r) {
		memmove(at(items, ops, w), at(items, ops, r), (*n - r) * ops->size);
		*n -= r - w;
	}
	*ret_end = w + (to - r);        /* what was not reached stays where the pass stopped */
	/* A block the pass left part-filled ends where the next window begins: a
	 * window's span never covers another window (the next pass makes it whole). */
	if (w > 0 && w < *n) {
		void *last = at(items, ops, w - 1u);
		uint64_t next = ops->index(at(items, ops, w)), idx = ops->index(last);
		if (idx + ops->span(last) > next)
			ops->place(last, idx, next - idx);
	}
	return err;
}

int fold_items(void *items, size_t *n, struct fold_state *fs, const struct fold_ops *ops)
{
	int r;

	if (*n - fs->nold < RESULT_RECENT_WINDOWS + RESULT_FOLD_BATCH)
		return 0;
	if (fs->span == 0)
		fs->span = 2;
	if ((r = compact(items, n, fs->nold, fs->nold + RESULT_FOLD_BATCH, fs->span, ops, &fs->nold)) < 0)
		return r;
	while (fs->nold > RESULT_OLD_WINDOWS) {
		fs->span *= 2u;
		if ((r = compact(items, n, 0, fs->nold, fs->span, ops, &fs->nold)) < 0)
			return r;
	}
	return 0;
}
