/*
 * What oslat (rt-tests 2.4) prints, from a latscope noise result whose CPUs
 * kept a linear histogram of 1 us bins (result_keep_lin): its header lines,
 * its per-core table and its --json document, so that tools written for
 * oslat read latscope unchanged.
 *
 * oslat's figures are whole microseconds: a gap of [k, k+1) us counts as k+1
 * us.  Bucket j holds the gaps of k+1 == bias+j+1 us, the first also those
 * below (bias), the last also those above (its overflows).
 */
#ifndef LATSCOPE_REPORT_OSLAT_H
#define LATSCOPE_REPORT_OSLAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

#define OSLAT_VERSION "2.40"
#define OSLAT_BUCKETS_DEFAULT 32u
#define OSLAT_BUCKETS_MIN 5u            /* oslat refuses 4 and below, whatever its help says */
#define OSLAT_BUCKETS_MAX 1024u

/* The header oslat prints before it measures. */
struct oslat_header {
	uint64_t runtime_s;
	unsigned rtprio;                /* 0: default */
	const char *cpu_list;           /* as given, or "all" */
	unsigned main_cpu;
	const char *workload;           /* "no" */
	uint64_t workload_mem_kib;      /* 0 without a workload that needs memory */
	unsigned preheat_cores;
};

void oslat_print_header(FILE *out, const struct oslat_header *h);

/* How the table is drawn. */
struct oslat_view {
	uint32_t bucket_size;
	uint64_t bias_us;               /* 0: no bias */
	bool zero_omit;                 /* -z */
	unsigned counter_mhz;
};

/* One core's figures as oslat works them out. */
struct oslat_core {
	int cpu;
	uint64_t buckets[OSLAT_BUCKETS_MAX];
	uint64_t count;
	uint64_t min_us, max_us;        /* min UINT64_MAX without a sample, as oslat's */
	double average_us;
	double duration_s;
};

/*
 * cr's figures; cr->lin has bins of 1 us, at least bucket_size + bias_us of
 * them (else -EINVAL).  duration_s is the time the gaps add up to.
 */
int oslat_core_figures(const struct cpu_result *cr, const struct oslat_view *v, struct oslat_core *ret);

/* The per-core table, as oslat's write_summary: -EIO when out failed. */
int oslat_print_table(FILE *out, const struct oslat_view *v, const struct oslat_core *cores, size_t n);

/* What the --json file says beside the cores. */
struct oslat_run {
	const char *cmdline;
	const char *version;            /* rt_test_version */
	uint64_t start_realtime_ns, end_realtime_ns;
	int return_code;
	int64_t stored_id;              /* latscope's run id; 0: not stored */
};

/* oslat's --json document (rt-tests' common keys, then the threads), or NULL (out of memory). */
json_t *oslat_json(const struct result *res, const struct oslat_view *v, const struct oslat_core *cores, size_t n,
		   const struct oslat_run *run);

#endif
