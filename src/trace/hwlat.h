/*
 * The kernel's hwlat tracer (Documentation/trace/hwlat_detector.rst) beside
 * a noise run: it spins on each chosen CPU in turn with interrupts off and
 * records every gap it sees, inner (between two reads of a pair) and outer
 * (between pairs), with the NMIs that came in.  What it finds the kernel did
 * not do: that is the hardware's (and firmware's) part of the noise.  It is
 * the top tracing instance's tracer, so it is saved and put back.
 */
#ifndef LATSCOPE_TRACE_HWLAT_H
#define LATSCOPE_TRACE_HWLAT_H

#include <jansson.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"

/* One line of the tracer's trace. */
struct hwlat_sample {
	int cpu;
	uint64_t seqnum;	     /* "#N": samples above tracing_thresh so far */
	uint64_t inner_ns, outer_ns; /* printed in us */
	uint64_t ts_ns;		     /* when (CLOCK_REALTIME, "ts:") */
	uint64_t count; /* gaps above the threshold in that window ("count:"; 0 before 5.7) */
	bool has_nmi_total;
	uint64_t nmi_total_ns; /* time in NMIs (printed in us; absent with a generic sched_clock) */
	uint64_t nmi_count;
};

/*
 * A line of the trace as the kernel prints it ("<...>-1729  [001] d...
 * 678.473449: #1     inner/outer(us):   11/12    ts:1581527483.343962693
 * count:6", with " nmi-total:7 nmi-count:1" after it when NMIs came).
 * -ENOENT for a comment or a line that is no hwlat sample, -EINVAL for one
 * that is but cannot be read.  ret is untouched on failure.
 */
int hwlat_parse_line(const char *line, struct hwlat_sample *ret);

/* Every sample of a trace's text into {"samples": [...], "max_inner_ns",
 * "max_outer_ns", "nmi_count", "lines_unread"}; NULL without memory. */
json_t *hwlat_samples_json(const char *text);

struct hwlat_run;

/*
 * The tracing directory: sysroot's sys/kernel/tracing when sysroot is given
 * (a copied or fake tree), else where libtracefs finds tracefs.  Into buf;
 * -ENODEV when tracefs is not mounted (or latscope was built without it).
 */
int hwlat_tracing_dir(const char *sysroot, char *buf, size_t size);
/* Whether dir's available_tracers offers hwlat: 0, or -ENOENT with why ("the
 * kernel offers no hwlat tracer (available_tracers: blk function nop)"). */
int hwlat_available(const char *dir, struct lat_error *err);
/* Save the top instance's tracer, CPU mask and tracing_on, then run hwlat on
 * cpus with a cleared trace.  -errno with why (nothing left changed). */
int hwlat_start(struct hwlat_run **ret, const char *dir, const struct cpuset *cpus,
		struct lat_error *err);
/* Stop it, read its samples (hwlat_samples_json), put the saved settings
 * back; once (later calls give NULL).  NULL h is fine (NULL result).
 * *ret_doc NULL when the trace could not be read, with why in err. */
void hwlat_stop(struct hwlat_run *h, json_t **ret_doc, struct lat_error *err);
/* The settings back if hwlat_stop did not run, then h freed; NULL is fine. */
void hwlat_free(struct hwlat_run *h);

#endif
