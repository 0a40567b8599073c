/*
 * A private tracefs instance for one latscope run.
 *
 * instances/latscope-<pidns>-<pid> (trace/names.h) records with the "mono"
 * clock, so event times are CLOCK_MONOTONIC ns like the probes' own reads, and
 * leaves the top-level trace and anyone else's instances alone.  Without libtracefs at build time
 * every call fails with -ENOTSUP and says "built without tracefs support".
 */
#ifndef LATSCOPE_TRACE_INSTANCE_H
#define LATSCOPE_TRACE_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "trace/eventlist.h"

struct trace_guard;

/* The system call the measured threads sleep in: the exit from it (TRACE_WANT_SLEEP_EXIT)
 * tells when a thread ran where its switch in went untraced. */
enum trace_sleep_call { TRACE_SLEEP_NANOSLEEP, TRACE_SLEEP_READ, TRACE_SLEEP_SIGWAIT };

struct trace_opts {
	struct cpuset cpus;      /* CPUs to record (tracing_cpumask); others get a minimal buffer */
	unsigned buffer_kb;      /* ring buffer per recorded CPU; 0: trace_buffer_kb_for(0, 0) */
	unsigned events;         /* TRACE_WANT_* bits (trace/eventlist.h): what the caller reads; not 0 */
	enum trace_sleep_call sleep_call;
	struct trace_guard *guard; /* told of a tracefs mount the session makes; NULL: none */
};

struct trace_session;

/* Whether this build can trace at all. */
bool trace_supported(void);

/*
 * Create and configure this process's instance, then start recording.
 * Where tracefs is not mounted it is mounted first (trace/mount.h:
 * trace_session_mounted() says so, and trace_session_destroy() unmounts it);
 * then instances of killed runs are removed (trace_remove_stale_instances(),
 * trace/remove.h).
 * On failure err holds a message naming the cause (tracefs not mounted and
 * not mountable, permission denied, 'sys:event' missing, built without
 * tracefs support), no instance and no mount of latscope's is left behind and
 * a negative errno is returned: -ENOTSUP (no support built in), -EINVAL (no
 * events asked for), -ENODEV (tracefs not mounted), -EACCES (not permitted),
 * -EBUSY (this process has an instance already), -ENOENT (an event or the mono
 * clock is missing), others from the kernel.  An optional group whose events
 * this kernel lacks (TRACE_WANT_OPTIONAL) is not an error: the session starts
 * without it (-ENOENT only when nothing asked for is left).
 */
int trace_session_start(const struct trace_opts *o, struct trace_session **ret,
			struct lat_error *err);

/* The TRACE_WANT_* groups the session records: those asked for, less the
 * optional ones this kernel lacks.  0 for NULL. */
unsigned trace_session_events(const struct trace_session *s);

/* Stop recording; the buffers keep what they hold for trace_session_read(). */
int trace_session_stop(struct trace_session *s);

/*
 * Stop and remove the instance, then unmount tracefs when the session
 * mounted it (trace_session_unmounted() says how that went).  Idempotent,
 * and NULL is a no-op, so every exit path can call it; the session memory
 * stays valid until trace_session_free().  Returns 0 or the negative errno
 * of the rmdir.
 */
int trace_session_destroy(struct trace_session *s);

/* Where the session mounted tracefs, tracefs having been unmounted; NULL
 * when it found tracefs mounted (or s is NULL). */
const char *trace_session_mounted(const struct trace_session *s);

/* After trace_session_destroy() of a session that mounted tracefs: 0 when
 * unmounted, -EBUSY (or another -errno) when left mounted, with *note saying
 * which; 1 when there was nothing to unmount (*note ""). */
int trace_session_unmounted(const struct trace_session *s, const char **note);

/* trace_session_destroy() when still needed, then free.  NULL is a no-op. */
void trace_session_free(struct trace_session *s);

/*
 * Give up a session that could not be set up (started, or later by its
 * caller): trace_session_free(), and when a mount the session made has to
 * stay, append to err (which holds the failure's reason; may be NULL) why:
 * latscope changed the system and could not undo it.  Returns r.
 */
int trace_session_abandon(struct trace_session *s, int r, struct lat_error *err);

/* "/sys/kernel/tracing/instances/latscope-4026531836-1234" (for messages and tests). */
const char *trace_session_dir(const struct trace_session *s);

/*
 * Ring buffer size per recorded CPU for a run: duration x expected event rate
 * x bytes per event, with headroom, within [TRACE_BUFFER_KB_MIN,
 * TRACE_BUFFER_KB_MAX].  0 for either means "unknown": the minimum.
 */
#define TRACE_BUFFER_KB_MIN   4096u                  /* 4 MiB */
#define TRACE_BUFFER_KB_MAX   (64u * 1024u)          /* 64 MiB */
#define TRACE_BYTES_PER_EVENT 48u                    /* estimate: sched_switch 72 B with header, hrtimer/irq/syscall 24-48 B */
unsigned trace_buffer_kb_for(uint64_t duration_ns, uint64_t events_per_sec);

#endif
