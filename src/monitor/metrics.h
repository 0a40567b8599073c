/*
 * What `latscope monitor` serves on /metrics: cumulative figures since the
 * monitor started, across its periods, kept by the main thread from each
 * finished window and written whole as Prometheus text 0.0.4 or OpenMetrics
 * 1.0.0.  The measuring threads never see any of it.
 *
 * Series per host, for C measured CPUs (doc/latscope-monitor.1, "Series"):
 *
 *   latscope_latency_seconds          histogram on the 1-2-5 ladder (report/omtext.h):
 *                                     OM_LADDER_N + 1 buckets, _sum, _count: 28 series,
 *                                     merged over the CPUs, or per CPU with --per-cpu-histograms
 *   latscope_samples_total, latscope_missed_periods_total, latscope_above_threshold_total,
 *   latscope_spikes_total, latscope_latency_sum_seconds_total      counters, merged: 5
 *   latscope_window_max_seconds, latscope_window_p99_seconds,
 *   latscope_last_5m_max_seconds      gauges per CPU (a CPU without a window yet has none)
 *   latscope_steal_seconds_total, latscope_interrupts_total        counters per CPU (since boot)
 *   latscope_monitor_up, latscope_build_info, latscope_threshold_seconds: 3
 *
 * so 36 + 5 C by default and 8 + 33 C with per-CPU histograms
 * (mon_metrics_series).  The noise probe, when scheduled, has its own
 * histogram, counters, threshold and gauges (probe="noise"): 34 + 3 N more
 * for N CPUs.  Every series has host and probe labels (up, build_info,
 * steal and interrupts: host) and the user's labels as label_KEY.
 */
#ifndef LATSCOPE_MONITOR_METRICS_H
#define LATSCOPE_MONITOR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/parse.h"
#include "core/sparse.h"
#include "core/window.h"

/* The last 5 minutes' max is kept as the max of each 10 s slot. */
#define MON_SLOT_NS (UINT64_C(10) * UINT64_C(1000000000))
#define MON_SLOTS 30u

enum mon_format { MON_PROMETHEUS, MON_OPENMETRICS };

struct mon_identity {
	const char *host;
	const char *probe;              /* "timer" */
	const char *version;            /* latscope's */
	const struct labels *labels;    /* the user's --label pairs */
	uint64_t threshold_ns;
	bool per_cpu_hist;
};

struct mon_metrics;

/* For the CPUs of cpus, in order.  -ENOMEM, -EINVAL (no CPU). */
int mon_metrics_new(const struct cpuset *cpus, const struct mon_identity *id, struct mon_metrics **ret);
void mon_metrics_free(struct mon_metrics *m);

/*
 * Add one finished window of cpu: its samples and histogram (metric 0), its
 * p99, and when it ended (CLOCK_MONOTONIC), for the last 5 minutes' max.
 * Counts stop at COUNT_MAX rather than wrap.  -ENOENT for a CPU not measured.
 */
int mon_metrics_add_window(struct mon_metrics *m, int cpu, const struct rec_window *w, const struct sparse_hist *h,
			   uint64_t p99_ns, uint64_t end_mono_ns);

/* What the kernel counted on cpu since boot: steal time and hard interrupts. */
void mon_metrics_set_context(struct mon_metrics *m, int cpu, uint64_t steal_ns, uint64_t irqs);
/* SMIs counted on cpu since the monitor started (sys/smi.h); a CPU never set has no series. */
void mon_metrics_set_smis(struct mon_metrics *m, int cpu, uint64_t smis);

/*
 * --trace-spikes: latscope_spike_causes_total{kind} counts the spikes
 * explained, by the kind of what held the CPU; kinds[0..n-1] (at most
 * MON_CAUSE_KINDS, kept by pointer) are its label values, all written from the
 * start.  Without this call the family is not exported.
 */
#define MON_CAUSE_KINDS 8u
void mon_metrics_set_cause_kinds(struct mon_metrics *m, const char *const *kinds, size_t n);
/* One more spike explained as kinds[kind]; a kind out of range is ignored. */
void mon_metrics_add_cause(struct mon_metrics *m, size_t kind);

/* --host: latscope_spike_host_causes_total{cause} counts the explained spikes
 * by what the VM's host did, causes[0..n-1] its label values, as above. */
void mon_metrics_set_host_causes(struct mon_metrics *m, const char *const *causes, size_t n);
void mon_metrics_add_host_cause(struct mon_metrics *m, size_t cause);

/* latscope_monitor_up: 1 while measuring. */
void mon_metrics_set_up(struct mon_metrics *m, bool up);

/* The exposition of n probes (ms[0] the timer's, whose CPUs give the host's
 * steal and interrupts) as of now_mono_ns (the 5-minute max is read at that
 * time), malloc'ed, NUL-terminated; NULL when out of memory or n is 0. */
char *mon_metrics_render(const struct mon_metrics *const *ms, size_t n, enum mon_format f, uint64_t now_mono_ns);

/* One CPU's figures, for the HTML page. */
struct mon_cpu_view {
	int cpu;
	uint64_t samples, missed, above, spikes;
	bool has_window;
	uint64_t win_max, win_p99;
	bool has_5m;
	uint64_t max_5m;
	bool has_context;
	uint64_t steal_ns, irqs;
};

size_t mon_metrics_ncpus(const struct mon_metrics *m);
bool mon_metrics_up(const struct mon_metrics *m);
/* The i-th CPU (in the order of the set) as of now_mono_ns. */
void mon_metrics_view(const struct mon_metrics *m, size_t i, uint64_t now_mono_ns, struct mon_cpu_view *ret);

/* The series of one host whose one probe measures C CPUs: 36 + 5 C, or 8 +
 * 33 C with per-CPU histograms; C more where SMIs are counted.  A second
 * probe (noise, on N CPUs) adds 34 + 3 N (or 6 + 31 N). */
size_t mon_metrics_series(size_t ncpus, bool per_cpu_hist);

#endif
