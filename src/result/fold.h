/*
 * Folding a run's windows so that a run of any length fits in bounded memory
 * (the scheme: RESULT_RECENT_WINDOWS below).  Written once for the CPUs'
 * windows and the machine's: the caller says how to read, place and merge one.
 */
#ifndef LATSCOPE_RESULT_FOLD_H
#define LATSCOPE_RESULT_FOLD_H

#include <stddef.h>
#include <stdint.h>

/*
 * Windows in bounded memory, whatever the run's length: the newest
 * RESULT_RECENT_WINDOWS stay as measured; older ones are folded into blocks of
 * `span` windows (a power of two, 2 or more, the same for all of them) aligned
 * on their index (index % span == 0), at most RESULT_OLD_WINDOWS of them: one
 * more and the span doubles, pairs merging.  No block holds windows from both
 * sides of the warm-up's end (the warm max skips the warm-up), so the blocks
 * next to it are cut there.
 * A fold merges exactly: counts, sums, extremes, histograms, context.
 */
#define RESULT_RECENT_WINDOWS 128u
#define RESULT_OLD_WINDOWS 128u
#define RESULT_FOLD_BATCH 32u           /* recent windows folded at once: one move for them all */

/* Which windows are folded: win[0..nold - 1], in blocks of span (0 before the first fold). */
struct fold_state {
	size_t nold;
	uint64_t span;
};

struct fold_ops {
	size_t size;                    /* of one item */
	uint64_t pin;                   /* no block holds items from both sides of this index (the warm-up's end) */
	uint64_t (*index)(const void *item);
	uint64_t (*span)(const void *item);
	/* the item now stands for the block [index, index + span) */
	void (*place)(void *item, uint64_t index, uint64_t span);
	/* dst absorbs src, the next item in time; src's resources are dst's or freed.
	 * On failure (-ENOMEM, -EOVERFLOW) both are untouched. */
	int (*absorb)(void *ctx, void *dst, void *src);
	void *ctx;
};

/*
 * After an item was appended to items[0..*n - 1], sorted by index: when the
 * recent part is full, fold its oldest RESULT_FOLD_BATCH into the old part,
 * and double the old part's span while it holds more than RESULT_OLD_WINDOWS.
 * Each item is moved a bounded number of times: O(1) amortized an append.
 * 0, or absorb's failure (the items stay sorted and owned once; an item that
 * could not be absorbed stays as it was, beside the block that covers it).
 */
int fold_items(void *items, size_t *n, struct fold_state *fs, const struct fold_ops *ops);

#endif
