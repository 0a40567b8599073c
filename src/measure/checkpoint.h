/*
 * --checkpoint: while a run measures, the result so far is written every
 * interval where the finished one will go (the --json file, replaced
 * atomically, and the store, where the next write of the same run replaces
 * it), marked "partial": a run killed, or cut by a power failure, loses at
 * most one interval.
 *
 * The main thread makes the document between two drains of the recorders
 * (finalize and format, in proportion to the result's size); a thread of its
 * own writes it (the fsyncs, the store's transaction), so that a slow disk
 * never holds up the reading of windows.  One write at a time: a checkpoint
 * due while the last one is still being written waits for it.  The measuring
 * threads see none of this.
 */
#ifndef LATSCOPE_MEASURE_CHECKPOINT_H
#define LATSCOPE_MEASURE_CHECKPOINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/nstime.h"
#include "result/result.h"
#include "store/store.h"

/* Without --checkpoint: every 10 minutes for a run longer than an hour or open-ended. */
#define CHECKPOINT_DEFAULT_NS (10u * 60u * NS_PER_SEC)
#define CHECKPOINT_DEFAULT_ABOVE_NS (3600u * NS_PER_SEC)

/* The interval a run of duration_ns (0: until stopped, or --loops) gets by default; 0: none. */
uint64_t checkpoint_default(uint64_t duration_ns);

/* The first time on the grid due_ns + k * every_ns that is after now_ns (k >= 1):
 * a late checkpoint does not shift the ones after it, missed ones are skipped. */
uint64_t checkpoint_next(uint64_t due_ns, uint64_t every_ns, uint64_t now_ns);

/* How far res's windows reach (from the run's origin): the end of the latest one. */
uint64_t checkpoint_elapsed(const struct result *res);

/*
 * The JSON text of res as it stands, finalized and marked partial (partial,
 * interrupted, stop_reason "checkpoint", elapsed_ns checkpoint_elapsed); res
 * is left as it was but for its summaries and "all" row, which the final
 * result_finalize rebuilds.  malloc'ed, or NULL with err saying why.
 */
char *checkpoint_document(struct result *res, struct lat_error *err);

struct checkpoint {
	const char *cmd;                /* the command, for messages */
	uint64_t every_ns;              /* 0: no checkpoint */
	const char *json_path;          /* NULL: none */
	struct store *st;               /* NULL: none */
	uint64_t due_ns;                /* CLOCK_MONOTONIC of the next one; 0: not set yet */
	uint64_t kept_ns;               /* elapsed of the last one made; nothing new, nothing written */

	/* the write under way: the writer's until it sets done */
	pthread_t writer;
	bool busy;
	atomic_bool done;
	char *text;
	uint64_t at_ns;                 /* its elapsed */
	int file_rc, store_rc;
	struct lat_error store_err;

	/* what it came to */
	unsigned written;               /* partial results put where they were to go */
	uint64_t last_ns;               /* the elapsed of the last one written */
	uint64_t longest_ns;            /* the most one took of the main thread */
};

/* No checkpoint at all when every_ns is 0 or there is nowhere to write. */
void checkpoint_init(struct checkpoint *ck, const char *cmd, uint64_t every_ns, const char *json_path,
		     struct store *st);

/* On the main thread between drains (runner_hooks.tick): take one when due. */
void checkpoint_tick(struct checkpoint *ck, struct result *res);

/* Wait for the write under way, and say in res (when given) what the
 * checkpoints cost; before the final result is written, and on every path
 * before the store is closed.  Again: nothing. */
void checkpoint_end(struct checkpoint *ck, struct result *res);

#endif
