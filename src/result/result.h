/*
 * The result of one run: what was asked, where it ran, and per CPU and merged
 * the statistics, histograms and windows.  Built by the runner, read by sinks.
 */
#ifndef LATSCOPE_RESULT_RESULT_H
#define LATSCOPE_RESULT_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/hist.h"
#include "core/linhist.h"
#include "core/sparse.h"
#include "core/stats.h"
#include "core/cpuset.h"
#include "core/parse.h"
#include "core/window.h"
#include "result/bands.h"
#include "result/fold.h"
#include "sys/procstat.h"
#include "sys/smi.h"
#include "sys/sysdesc.h"

#define RESULT_SCHEMA "latscope.result"
#define RESULT_SCHEMA_VERSION 1
#define RESULT_NOTES_MAX 16
#define RESULT_FINDINGS_MAX 32
#define RESULT_NOTE_LEN 256

/* Derived figures of one metric, filled by result_finalize. */
struct summary {
	uint64_t count;
	uint64_t min, max;
	double mean, stddev;
	uint64_t p50, p90, p99, p999, p9999;
	bool has_warm_max;              /* false when the run had no window after the warm-up */
	uint64_t warm_max;
	uint64_t above;
	double above_pct;
	uint64_t above_ns;              /* the sum of the values above the threshold */
};

/* What else happened on a CPU during a window (see sys/procstat.h). */
struct win_context {
	bool valid;                     /* sampled: the run had context on */
	uint64_t irqs;                  /* hard interrupts */
	uint64_t softirqs;
	uint64_t involuntary;           /* the measuring thread was preempted */
	uint64_t cpu_ns[CPU_TIME_KINDS];  /* where the CPU's time went; steal: the hypervisor ran something else */
	uint64_t smis;                  /* System Management Interrupts; meaningful where result.smi_source is set */
};

/* The same for the whole machine and for latscope itself, per window and in all. */
struct machine_window {
	uint64_t index;
	uint64_t span;                  /* windows it covers from index: 1, or a fold's (result/fold.h) */
	uint64_t cpu_ns[CPU_TIME_KINDS];
	uint64_t irqs, softirqs, switches;
	uint64_t self_user_ns, self_system_ns;  /* latscope's own CPU time (getrusage) */
};

struct machine_context {
	bool valid;
	struct machine_window total;
	size_t nwin, capwin;
	struct machine_window *win;
	struct fold_state fold;
};

#define RESULT_SOURCE_LEN 48

/* Counts by name (interrupt sources, softirq vectors) over the run. */
struct named_count {
	char name[RESULT_SOURCE_LEN];
	uint64_t count;
};

struct named_counts {
	size_t n, cap;
	struct named_count *items;
};

struct result_window {
	struct rec_window w;
	uint64_t span;                  /* windows it covers from w.index: 1, or a fold's (result/fold.h) */
	uint64_t p50[REC_MAX_METRICS];
	uint64_t p99[REC_MAX_METRICS];
	struct sparse_hist hist[REC_MAX_METRICS];   /* owned; what resampling by window needs */
	struct win_context ctx;
};

/* What a long run is judged by: metric 0's spikes (runs of samples above the
 * threshold), how often, and when the worst was.  Filled by result_finalize. */
struct long_run {
	bool counted;                   /* the run counted spikes (result.long_run) */
	uint64_t observed_ns;           /* the time the windows cover */
	double per_hour;                /* spikes an hour of observed time */
	bool has_mtbf;                  /* at least one spike */
	double mtbf_ns;                 /* mean time between spikes: observed time / spikes */
	double mtbf_lo_ns, mtbf_hi_ns;  /* its 95 % interval (exact Poisson), also without a spike:
					 * then hi is INFINITY and lo says how long it is at least */
	bool has_worst;
	uint64_t worst_at_ns;           /* when the largest value happened, from the origin */
};

struct cpu_result {
	int cpu;                        /* -1 for the merged "all" */
	struct stats st[REC_MAX_METRICS];
	struct hist *hist;              /* nmetrics histograms; read-only until result_cpu_hists */
	uint64_t above[REC_MAX_METRICS];
	uint64_t above_ns[REC_MAX_METRICS];
	uint64_t missed;
	struct stats overhead;          /* wakeup to sample recorded */
	struct stats clock_cost;        /* one clock read, measured on this CPU */
	struct summary sum[REC_MAX_METRICS];
	uint64_t spikes;                /* metric 0's, over the run */
	struct long_run lr;
	struct band_max bands;
	struct result_window *win;
	size_t nwin, capwin;
	struct fold_state fold;
	struct stats gwin[REC_MAX_METRICS]; /* global so far, for live lines */
	/* the largest values of metric 0, largest first, with their CPU (for "all") */
	unsigned ntop;
	struct rec_event top[REC_TOP];
	int top_cpu[REC_TOP];
	struct named_counts irqs, softirqs;  /* over the run; empty without context */
	bool has_context;
	int tid;                        /* the measuring thread's kernel id; 0: unknown */
	struct lin_hist *lin;           /* NULL, or cyclictest's histogram (see result_keep_lin);
					 * while measuring, its running figures only */
};

/* What the runner changed on the system, and what it could not. */
struct applied {
	bool rt_policy;                 /* every measuring thread got the asked policy/priority */
	bool memlock;
	bool pm_qos;
	bool timer_slack;
	bool main_moved;                /* main thread kept off measured CPUs */
	char idle_states[512];          /* --deepest-idle-state: which states on which CPUs were disabled, or
					 * "nothing to limit: ..."; "" when not asked */
};

/*
 * A probe whose values are operations (io's reads): how many a second, how
 * many bytes, and what each cost the CPU, over the run.  per_op is set before
 * result_finalize, which derives the rest (result_op_figures) from the count,
 * the elapsed time, params.bs_bytes and the machine's CPU time.
 */
struct op_figures {
	bool per_op;                    /* the probe's values are operations */
	bool valid;                     /* the figures below: per_op, a sample and time elapsed */
	uint64_t bytes_per_op;          /* 0: unknown (no params.bs_bytes) */
	double ops_per_sec;
	double bytes_per_sec;           /* 0 when bytes_per_op is unknown */
	bool has_cpu;                   /* the machine's CPU time was counted (machine.valid) */
	double cpu_ns_per_op[CPU_TIME_KINDS];   /* the whole machine's, by category */
	double self_user_ns_per_op, self_system_ns_per_op;     /* latscope's own */
};

#define RESULT_NAME_LEN 32

struct result {
	char probe[RESULT_NAME_LEN];
	unsigned nmetrics;
	char metric_names[REC_MAX_METRICS][RESULT_NAME_LEN];
	uint64_t threshold_ns;          /* applies to metric 0 */
	bool long_run;                  /* spikes were counted (false: read from an older latscope's file) */
	uint64_t warmup;

	int argc;
	char **argv;                    /* owned copy */
	uint64_t start_realtime_ns;
	uint64_t origin_ns;             /* CLOCK_MONOTONIC at the run's origin */
	uint64_t elapsed_ns;
	bool interrupted;
	bool failed;                    /* a measuring thread stopped on an error (see notes) */
	char stop_reason[32];           /* RESULT_STOP_THRESHOLD: --on-threshold stop; "until": --until decided */
	bool partial;                   /* a checkpoint of a run still measuring (measure/checkpoint.h) */

	struct sysdesc sys;
	json_t *params;                 /* owned; the command's parameters */
	json_t *tool;                   /* owned, or NULL (this latscope): what wrote a result read back */
	json_t *fingerprint;            /* owned, or NULL: the machine as `latscope sys` sees it */
	json_t *findings;               /* owned, or NULL: what sys advises, for this run */
	json_t *trace;                  /* owned, or NULL: --trace's decomposition and explanations */
	json_t *host;                   /* owned, or NULL: --host's agent, clock line-up and answers */
	json_t *on_threshold;           /* owned, or NULL: --on-threshold's trigger, first sample and actions done */
	json_t *until;                  /* owned, or NULL: --until's rule and what was decided (result/until.h) */
	json_t *hwlat;                  /* owned, or NULL: noise --hwlat's samples, the hardware's part (trace/hwlat.h) */
	struct labels labels;
	struct applied applied;
	unsigned nnotes;
	char notes[RESULT_NOTES_MAX][RESULT_NOTE_LEN];
	bool note_is_info[RESULT_NOTES_MAX];    /* worth knowing, not a warning */
	bool note_shown[RESULT_NOTES_MAX];      /* an info note printed beside the warnings all the same */
	bool note_kept[RESULT_NOTES_MAX];       /* an info note only for the result's readers: never printed live */

	size_t ncpus;
	struct cpu_result *cpus;
	struct cpu_result all;
	struct machine_context machine;
	struct op_figures ops;
	/* SMIs beside the windows (sys/smi.h): smi_asked when the run read its
	 * context with a latscope that counts them (an older one's file: false);
	 * then smi_source is where they came from, SMI_SOURCE_NONE: not available
	 * here (a note says why), never a count of 0. */
	bool smi_asked;
	int smi_source;
};

/* SMIs counted on cr over its windows; false when the run had no SMI source. */
bool result_smis(const struct result *res, const struct cpu_result *cr, uint64_t *ret_smis);

#define RESULT_STOP_THRESHOLD "threshold"

static inline bool result_threshold_stopped(const struct result *res)
{
	return res->interrupted && strcmp(res->stop_reason, RESULT_STOP_THRESHOLD) == 0;
}

/* How a report says that the run stopped early: a merge's own reason, "merged",
 * is no reason; its notes name the member that stopped and why. */
static inline const char *result_stopped_text(const struct result *res, char *buf, size_t size)
{
	if (strcmp(res->stop_reason, "merged") == 0)
		snprintf(buf, size,
			 "stopped early (in one of the merged runs; the notes say which)");
	else
		snprintf(buf, size, "stopped early (%s)", res->stop_reason);
	return buf;
}

/* One cpu_result per member of cpus, in order.  -ENOMEM; on failure everything
 * allocated is freed. */
int result_init(struct result *res, const char *probe, unsigned nmetrics,
		const char *const *metric_names, const struct cpuset *cpus);
void result_free(struct result *res);

int result_set_argv(struct result *res, int argc, char *const *argv);

/* cr's histograms, to write into: until then every CPU shares read-only empty
 * ones (a file may list thousands of CPUs without a sample).  NULL: no memory. */
struct hist *result_cpu_hists(const struct result *res, struct cpu_result *cr);

/* Append a finished window and fold it into the CPU's totals.  -ENOMEM. */
int result_add_window(struct result *res, struct cpu_result *cr,
		      const struct rec_window *w, const struct hist *hist);

/* dst += src (nothing when src was not sampled).  -EOVERFLOW when a sum would
 * pass COUNT_MAX (core/count.h): win_context_add says which in *ret_field (0
 * irqs, 1 softirqs, 2 involuntary, 3 + k cpu_ns[k]; may be NULL). */
int win_context_add(struct win_context *dst, const struct win_context *src, int *ret_field);
int machine_window_add(struct machine_window *dst, const struct machine_window *src);
/* Append a machine window (copied; span 0 is 1), as read.  -ENOMEM, -EOVERFLOW (nothing appended). */
int machine_append(struct machine_context *m, const struct machine_window *w);
/* The same while measuring: older windows fold as the CPUs' do, no block
 * across index pin (the warm-up's end).  Also -EOVERFLOW when a fold would overflow. */
int machine_record(struct machine_context *m, const struct machine_window *w, uint64_t pin);
/* Add what else happened during window index to the window that covers it. */
void result_add_context(struct cpu_result *cr, uint64_t index, const struct win_context *ctx);
/* Add count to name in c (a new name is appended).  -ENOMEM, -EOVERFLOW (past COUNT_MAX). */
int named_counts_add(struct named_counts *c, const char *name, uint64_t count);
/* Append a name c does not hold yet (a reader's, whose names are an object's
 * keys): no search.  -ENOMEM, -EINVAL (a count past COUNT_MAX or a long name). */
int named_counts_append(struct named_counts *c, const char *name, uint64_t count);
void named_counts_free(struct named_counts *c);
/* Keep the REC_TOP largest of up to 2 * REC_TOP values (the recorder's, read
 * back from JSON, or two runs' merged), largest first. */
void result_set_top(struct cpu_result *cr, const struct rec_event *ev, unsigned n);

/*
 * dst = the sum of src[0..n-1], rows of res's layout (dst holds no window and
 * no named count yet, else -EINVAL): counts, stats and histograms add up,
 * windows merge by index (percentiles from the merged histogram), named counts
 * by name (in name order).  O(n log n) in the windows and names, whatever
 * their indices.  Stats are added as the JSON text gives them back
 * (result_real_as_written), so a sum is the same from measured rows and from
 * rows read from a file.  -ENOMEM, or -EOVERFLOW when a sum would pass
 * COUNT_MAX (core/count.h), with why (may be NULL) saying which: "cpu 3's
 * sample count would reach 2^63".  On failure dst is part-added: free it.
 */
int cpu_result_sum(const struct result *res, struct cpu_result *dst, const struct cpu_result *const *src, size_t n,
		   struct lat_error *why);

/* Significant digits of the reals (mean_ns, stddev_ns) in a result's JSON. */
#define RESULT_REAL_DIGITS 12
/* v as a reader of the JSON text gets it back. */
double result_real_as_written(double v);

/* Append a window to cr, taking over its histograms.  -ENOMEM (rw still owned by the caller). */
int result_append_window(struct cpu_result *cr, const struct result_window *rw);

/* Also count every CPU's metric 0 the way cyclictest does (in memory only, not
 * in the JSON).  Allocated here, before the run; the runner lends the bins to
 * each measuring thread's recorder and they are back, counted, when it
 * returns.  -ENOMEM or -EINVAL. */
int result_keep_lin(struct result *res, uint64_t unit_ns, uint32_t nbins);

/* Note something worth a warning (a setting not applied...).  Extra notes are dropped. */
void result_note(struct result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Note something merely worth knowing. */
void result_info(struct result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Note something that is no warning but the user must hear of (latscope
 * changed the system for the run): printed like a warning, kept as info. */
void result_info_shown(struct result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Note what the summary already says in its own words ("SMIs not available
 * here"): kept in the result with its why, not printed while running. */
void result_info_kept(struct result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Compute summaries and the merged "all" row.  -ENOMEM, or -EOVERFLOW when the
 * CPUs add up past COUNT_MAX; result_finalize_why says why (as cpu_result_add). */
int result_finalize(struct result *res);
/* res->ops from the finalized figures (when res->ops.per_op; else nothing valid). */
void result_op_figures(struct result *res);
/* Bytes each operation moves: params.bs_bytes, 0 when the params do not say. */
uint64_t result_op_bytes(const struct result *res);
int result_finalize_why(struct result *res, struct lat_error *why);

#endif
