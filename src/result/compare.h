/*
 * The figures `latscope compare` puts in a row (one run, or a group of runs
 * summed up) and its verdict on whether two rows differ: kept apart from any
 * printing so that compare and report judge runs the same way.
 */
#ifndef LATSCOPE_RESULT_COMPARE_H
#define LATSCOPE_RESULT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bootstrap.h"
#include "core/expr.h"
#include "result/result.h"
#include "result/tail.h"

#define CMP_BOOT_REPS 2000
/* compare judges the mean and p99 together: each interval is at 97.5 % so that
 * both verdicts hold with 95 % (core/bootstrap.h, boot_level). */
#define CMP_STATS_JUDGED 2u
#define CMP_LEVEL boot_level(CMP_STATS_JUDGED)
#define CMP_BOOT_SEED UINT64_C(0x6c617473636f7065)   /* fixed: the same runs always get the same verdict */

struct cmp_row {
	struct stats st;
	struct hist *hist;              /* owned */
	uint64_t above, missed;
	uint64_t spikes, observed_ns;   /* the leading metric's over the runs (long_run) */
	bool spikes_unknown;            /* a run did not count them, or another metric */
	uint64_t smis;                  /* SMIs over the runs (cmp_row_add_smis) */
	bool smis_unknown;              /* a run had no SMI source: its 0 would be no count */
	bool has_warm_max;
	uint64_t warm_max;
	struct block *blocks;           /* every window of every run added; they point into the results */
	size_t nblocks;
	/* a run of operations' figures (cmp_row_add_ops), summed over the runs */
	size_t ops_runs;                /* runs added with them */
	bool ops_unknown, bytes_unknown, cpu_unknown;   /* a run without them */
	double ops, op_secs, op_bytes;
	double op_cpu_ns[CPU_TIME_KINDS];
	/* the tail (result/tail.h) of the leading metric: its windows' maxima (of
	 * unfolded windows) and the time the runs observed */
	uint64_t *win_max;
	size_t nwin_max;
	uint64_t tail_observed_ns;
	bool tail_unknown;              /* a block of another metric: no tail */
};

/* compare's tail verdicts: the once-an-hour and once-a-day levels. */
#define CMP_TAIL_LEVELS 2u
extern const unsigned cmp_tail_periods[CMP_TAIL_LEVELS];

/* What compare says of one level of two rows' tails. */
struct cmp_tail_verdict {
	bool judged;                    /* both fits are there and reliable */
	struct tail_interval a, b;      /* the levels, ns */
	double ratio, lo, hi;           /* b / a with its 95 % interval */
	int direction;                  /* +1 b higher (lo > 1), -1 lower (hi < 1), 0 no significant difference */
	char why[200];                  /* not judged: why */
};

/* An empty row.  -ENOMEM. */
int cmp_row_init(struct cmp_row *w);
/* Add one run's block (a CPU or "all") for metric; the result must outlive the row.  -ENOMEM. */
int cmp_row_add(struct cmp_row *w, const struct cpu_result *cr, unsigned metric);
/* The SMIs of res's block cr into w, or w's SMIs unknown from now on. */
void cmp_row_add_smis(struct cmp_row *w, const struct result *res, const struct cpu_result *cr);
void cmp_row_free(struct cmp_row *w);
/* Add one run's throughput and CPU time per operation (of the whole run:
 * res->ops, finalized); a run without them leaves the row without them. */
void cmp_row_add_ops(struct cmp_row *w, const struct result *res);

/* True for the statistics that are times (ns). */
bool cmp_stat_is_time(enum expr_stat s);
/* A figure of the row; *ret_none when it has no value (no sample, or no window after the warm-up). */
double cmp_row_stat(const struct cmp_row *w, enum expr_stat s, bool *ret_none);

/* v as compare shows it: a time in the probe's unit (unit_ns 1000: us, with a
 * decimal; 1: ns), or raw: times in ns and other figures with more digits. */
void cmp_stat_text(enum expr_stat s, double v, bool raw, double unit_ns, char *buf, size_t size);
/* v's change from base in percent; from 0: 0 when v is 0 too, else +infinity. */
double cmp_change_pct(double v, double base);

/* The row's tail fit: 0 with ret filled (its status says whether there are
 * levels), or -errno with err. */
int cmp_row_tail(const struct cmp_row *w, struct tail_fit *ret, struct lat_error *err);

/* b's level at tail period `period` against a's, from the fits' intervals
 * (independent fits: the log ratio's variance is the sum of theirs). */
void cmp_tail_judge(const struct tail_fit *a, const struct tail_fit *b, unsigned period,
		    struct cmp_tail_verdict *ret);
/* "run 9 is higher than run 1 once an hour: 4.6ms (..) against 1.2ms (..), x3.8 (95% CI x2.4..x6.1)" */
void cmp_tail_text(const char *bname, const char *aname, unsigned period, const struct cmp_tail_verdict *v,
		   char *buf, size_t size);

/* Row b judged against row a at BOOT_MEAN or a percentile.  0, -ENOMEM or -EINVAL. */
int cmp_judge(const struct cmp_row *a, const struct cmp_row *b, double stat, struct verdict *ret);
/* The verdict as a sentence: "run 9 is slower than run 1 at p99 by +12.0% (95% CI ...)". */
void cmp_verdict_text(const char *bname, const char *aname, const char *what, const struct verdict *v, char *buf,
		      size_t size);

#endif
