/* What every measuring command shares: where, how long, how to judge, where to write. */
#ifndef LATSCOPE_PROBE_PARAMS_H
#define LATSCOPE_PROBE_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/parse.h"

enum sched_policy_kind { POLICY_FIFO, POLICY_RR, POLICY_OTHER };

/* "SCHED_FIFO", "SCHED_RR", "SCHED_OTHER": how the kernel and people name the policy. */
const char *sched_policy_name(int kind);

/* The statistic --fail-above compares. */
enum fail_stat { FAIL_MAX, FAIL_WARM_MAX, FAIL_P99, FAIL_P999, FAIL_P9999, FAIL_MEAN };

struct run_params {
	struct cpuset cpus;
	int policy;                     /* enum sched_policy_kind */
	uint64_t priority;
	uint64_t duration_ns;           /* 0: until loops or a signal */
	uint64_t loops;                 /* 0: unlimited */
	uint64_t threshold_ns;
	uint64_t window_ns;
	uint64_t warmup;                /* windows left out of warm max */
	uint64_t fail_above_ns;         /* 0: off */
	int fail_stat;                  /* enum fail_stat */
	const char *json_path;          /* NULL: none */
	const char *db_path;            /* --db; NULL: $LATSCOPE_DB or the default store */
	bool no_store;
	struct labels labels;
	bool quiet;
	bool live;                      /* window lines even when stdout is not a terminal */
	bool no_pm_qos;
	bool no_context;                /* do not read /proc beside every window */
	bool strict;                    /* refuse to run when a setting cannot be applied */
	struct strlist load;            /* --load specs, as given */
	const char *load_cmd;           /* --load-cmd; NULL: none */
	bool trace;                     /* --trace: kernel trace events beside the run */
	uint64_t trace_above_ns;        /* spikes to explain; 0: the threshold */
	size_t trace_log_cap;           /* spans each thread keeps for the trace */
};

#endif
