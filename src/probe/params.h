/* What every measurement needs: where, how long, at what priority, what to
 * count as above the threshold, what else to read beside it.  Where the result
 * goes and how it is shown are the command's (measure/measure.h, measure_extras). */
#ifndef LATSCOPE_PROBE_PARAMS_H
#define LATSCOPE_PROBE_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/parse.h"
#include "probe/actions.h"

enum sched_policy_kind { POLICY_FIFO, POLICY_RR, POLICY_OTHER, POLICY_DEADLINE };

/* "SCHED_FIFO", "SCHED_RR", "SCHED_OTHER", "SCHED_DEADLINE": how the kernel and people name the policy. */
const char *sched_policy_name(int kind);

/* SCHED_DEADLINE's reservation (sched(7)): runtime_ns of CPU in every period_ns,
 * used by deadline_ns after the period's start; 0 while the policy is another. */
struct run_deadline {
	uint64_t runtime_ns;
	uint64_t deadline_ns;
	uint64_t period_ns;
};

/* --trace-backend: where --trace's events are gathered (probe/tracerun.c). */
enum trace_backend {
	TRACE_BACKEND_AUTO,             /* BPF where the kernel and the probe allow, else tracefs */
	TRACE_BACKEND_BPF,
	TRACE_BACKEND_TRACEFS,
	TRACE_BACKEND_BOTH,             /* BPF's result, checked sample by sample against tracefs's */
	TRACE_BACKENDS
};

struct run_params {
	struct cpuset cpus;
	int policy;                     /* enum sched_policy_kind */
	uint64_t priority;              /* 0 under POLICY_OTHER and POLICY_DEADLINE */
	struct run_deadline dl;         /* POLICY_DEADLINE */
	uint64_t duration_ns;           /* 0: until loops or a signal */
	uint64_t loops;                 /* 0: unlimited */
	uint64_t threshold_ns;
	uint64_t window_ns;
	uint64_t warmup;                /* windows left out of warm max */
	bool no_pm_qos;
	bool no_context;                /* do not read /proc beside every window */
	const char *sysroot;            /* where the SMI counter is looked up (sys/smi.h); NULL: "/" */
	bool strict;                    /* refuse to run when a setting cannot be applied */
	bool trace;                     /* --trace: kernel trace events beside the run */
	uint64_t trace_above_ns;        /* spikes to explain; 0: the threshold */
	size_t trace_log_cap;           /* spans each thread keeps for the trace */
	unsigned trace_buffer_kb;       /* the trace's ring per CPU; 0: sized from the duration (tracerun) */
	int trace_backend;              /* enum trace_backend */
	uint64_t trace_rate;            /* samples a second each thread takes: the BPF ring's size */
	bool trace_sleeps_mono;         /* each logged deadline is a clock_nanosleep on CLOCK_MONOTONIC,
					 * which the BPF collector follows (timer: --mode nanosleep, --clock monotonic) */
	int trace_sleep_call;           /* enum trace_sleep_call: what each thread sleeps in (tracefs sees
					 * it run by the exit); 0: clock_nanosleep */
	int trace_thread_prio;          /* the measured thread's kernel prio when it is not the runner's
					 * (attach: the program's): 99 - rtprio or 120 + nice; 0: the runner's */
	bool period_signal;             /* SIGUSR1 ends the run as a stop signal does (latscope
					 * monitor: the period ends, the next begins); the caller blocks it */
	uint64_t timer_slack_ns;        /* the measuring threads' timer slack; 0 is read as 1 (run_timer_slack) */
	/* --on-threshold: what the main thread does when a sample of metric 0 is
	 * above the trigger (0: the threshold), exec, trace and signal at most once per
	 * action_interval_ns.  Parsed by the command from measure_extras.on_threshold,
	 * where a front end adds its own (cyclictest -b N: "stop" with trigger_ns N). */
	uint64_t trigger_ns;
	struct action_list on_threshold;
	uint64_t action_interval_ns;
	bool limit_idle;                /* --deepest-idle-state was given (a zeroed struct limits nothing) */
	uint64_t deepest_idle_state;    /* with limit_idle: idle states deeper than this are disabled while measuring */
};

/* The value a sample must exceed for --on-threshold. */
static inline uint64_t run_trigger(const struct run_params *rp)
{
	return rp->trigger_ns ? rp->trigger_ns : rp->threshold_ns;
}

/* The slack the measuring threads get: prctl reads 0 as "back to the default
 * 50 us", so a caller that left the field zero still gets the smallest, 1 ns. */
static inline uint64_t run_timer_slack(const struct run_params *rp)
{
	return rp->timer_slack_ns ? rp->timer_slack_ns : 1u;
}

#endif
