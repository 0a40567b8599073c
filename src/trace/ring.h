/*
 * A bounded ring of the last seconds of kernel trace events on any CPUs:
 * the kernel's per-CPU buffers record in overwrite mode, and each read moves
 * what they hold into per-CPU histories here that keep the last keep_ns.
 * The spike ring (trace/spikering.h) is its use for timer wakeups; the host
 * agent (src/host/) reads every CPU's switches, migrations and KVM exits.
 */
#ifndef LATSCOPE_TRACE_RING_H
#define LATSCOPE_TRACE_RING_H

#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "core/nstime.h"
#include "trace/ev.h"
#include "trace/history.h"

struct trace_ring;

/* keep_ns 0 means this. */
#define TRACE_RING_KEEP_DEFAULT_NS (5 * NS_PER_SEC)

/*
 * Record events (TRACE_WANT_* bits, trace/eventlist.h; TRACE_WANT_KVM
 * optional) on cpus in this process's tracefs instance
 * ("latscope-<pidns>-<pid>", trace/names.h), in overwrite mode, holding the
 * last keep_ns in memory per CPU, with a guard process that removes the
 * instance if this process is killed; stale instances of killed runs are
 * removed first.  Where tracefs is not mounted it is mounted
 * (trace_ring_mounted() says where) and trace_ring_stop() unmounts it.
 * It forks the guard: call it before other threads start.  One instance per
 * process: -EBUSY when this process has one.  Each CPU's buffer starts at
 * trace_buffer_kb_for(keep_ns, 20000 events/s) and grows when a read sees a
 * higher rate.  Errors as trace_session_start(), which this shares, and
 * -EINVAL for no CPU or one past 255: on failure no mount of latscope's is
 * left, or err also says why it had to stay.
 */
int trace_ring_start(const struct cpuset *cpus, uint64_t keep_ns, unsigned events,
		     struct trace_ring **ret, struct lat_error *err);

/* The groups actually recording: events less the optional ones this kernel lacks. */
unsigned trace_ring_events(const struct trace_ring *r);

/* Move what the kernel holds into the per-CPU histories, while it records
 * on; a CPU's buffer grows when this read saw more events a second than it
 * was sized for.  0 or a negative errno with err set. */
int trace_ring_read(struct trace_ring *r, struct lat_error *err);

/*
 * All held events with ts in [from, to] of every recorded CPU, merged in
 * time order (ties by CPU), malloc'ed (*ret NULL when none).
 * *ret_complete_from is the latest held_from over the CPUs: from there on
 * every CPU's events are complete.  *ret_lost counts the events lost inside
 * [from, to] (the kernel's, or beyond a read's bound; a loss of unknown size
 * counts 1), and a TRACE_EV_LOST marker (arg: its count, 0 unknown) stands
 * in the array where each loss was seen.  Reads nothing from the kernel:
 * trace_ring_read() first.  0 or -ENOMEM.
 */
int trace_ring_collect(const struct trace_ring *r, uint64_t from, uint64_t to,
		       struct trace_ev **ret, size_t *ret_n, uint64_t *ret_complete_from,
		       uint64_t *ret_lost, struct lat_error *err);

/* The events held for cpu, gapless from held_from on; NULL when not recorded. */
const struct spike_history *trace_ring_history(const struct trace_ring *r, unsigned cpu);

/* Where trace_ring_start() mounted tracefs, which was not mounted; else NULL. */
const char *trace_ring_mounted(const struct trace_ring *r);

/* Remove the instance, unmount tracefs when trace_ring_start() mounted it,
 * end the guard, free.  As trace_session_unmounted(): 0 unmounted, -EBUSY
 * (or another -errno) left mounted, note (may be NULL) saying which; 1 when
 * nothing was mounted (note untouched).  NULL is a no-op (1). */
int trace_ring_stop(struct trace_ring *r, struct lat_error *note);

/* ---- the pure part, tested with synthetic events ----------------------- */

/* A loss seen on one CPU: lost events (0: unknown how many) just before ts. */
struct trace_ring_gap {
	uint64_t ts, lost;
};

/* Gaps remembered per CPU; beyond it the oldest is forgotten. */
#define TRACE_RING_GAPS 32

/* One recorded CPU: its history and the losses of the last keep_ns. */
struct trace_ring_cpu {
	struct spike_history h;
	struct trace_ring_gap gap[TRACE_RING_GAPS];
	size_t ngap;
};

/*
 * spike_history_add() of one read (batch of n, lost_total as there), which
 * also notes its losses as gaps: each TRACE_EV_LOST marker, and the kernel's
 * count where it grew by more than the markers say; capped more events that
 * the read did not store (after the last, so all is dropped, from now on).
 * Gaps before now - keep_ns are forgotten.  0 or -ENOMEM.
 */
int trace_ring_cpu_add(struct trace_ring_cpu *c, const struct trace_ev *batch, size_t n,
		       uint64_t lost_total, uint64_t capped, uint64_t now, uint64_t keep_ns);

/* trace_ring_collect() over cpu[0..ncpu), cpu[i] CPU i's or NULL when not recorded. */
int trace_ring_merge(const struct trace_ring_cpu *const *cpu, size_t ncpu, uint64_t from,
		     uint64_t to, struct trace_ev **ret, size_t *ret_n, uint64_t *ret_complete_from,
		     uint64_t *ret_lost);

#endif
