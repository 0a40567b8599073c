/*
 * --trace: a kernel trace beside the run, and after it, where each sample's
 * time went.  The timer probe's samples are split into parts (interrupt
 * delay, handler, wakeup to running, return to user); every sample above the
 * spike threshold, and every noise event, is explained by what held the CPU.
 * The outcome goes into the result as its "trace" object.
 */
#ifndef LATSCOPE_PROBE_TRACERUN_H
#define LATSCOPE_PROBE_TRACERUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "probe/params.h"
#include "probe/probe.h"
#include "probe/recorder.h"
#include "probe/tracethread.h"
#include "result/result.h"

struct trace_run;

/* How the run's note begins when --trace could not trace, followed by why;
 * one wording, which a front end may look for (latscope rtla says so). */
#define TRACERUN_NOT_TRACED "not traced: "

/* Before any thread is started (it forks the guard of trace/guard.h, which
 * must see a single-threaded process).  0 or -ENOMEM. */
int tracerun_prepare(struct trace_run **ret);
/* Start recording on rp's CPUs what ops->trace asks for, with the backend
 * rp->trace_backend says: auto takes BPF for the timer's samples where the
 * kernel allows it (th: the n threads, started, whose tids the collector
 * filters by) and tracefs otherwise.  On failure (or for a probe without a
 * trace description) why says what was missing; the run goes on untraced
 * (tracerun_active false). */
int tracerun_start(struct trace_run *tr, const struct run_params *rp, const struct probe_ops *ops,
		   const struct tracerun_thread *th, size_t n, struct lat_error *why);
/* "bpf" or "tracefs" once started; NULL before or when neither. */
const char *tracerun_backend(const struct trace_run *tr);
/* Why auto did not use BPF when it tried and tracefs served; else NULL. */
const char *tracerun_fallback(const struct trace_run *tr);
/* Where tracerun_start() mounted tracefs, which was not mounted; else NULL. */
const char *tracerun_mounted(const struct trace_run *tr);
/* Recording started, so tracerun_finish has a trace to read. */
bool tracerun_active(const struct trace_run *tr);
/* After the threads have ended: read the trace, explain every logged span,
 * and set res->trace.  -errno with why filled when nothing could be read. */
int tracerun_finish(struct trace_run *tr, const struct tracerun_thread *threads, size_t n, struct result *res,
		    struct lat_error *why);
/* Remove the tracefs instance (every exit path), unmount tracefs when
 * tracerun_start() mounted it, noting in res (may be NULL) how that went,
 * and free.  NULL is a no-op. */
void tracerun_free(struct trace_run *tr, struct result *res);

/* The notes of a tracefs mount latscope made (mounted_at NULL: none), and of
 * its unmount as trace_session_unmounted() and spike_ring_stop() return it:
 * done (0) is information, left mounted (< 0) a note; 1, nothing mounted. */
void tracerun_note_mount(struct result *res, const char *mounted_at);
void tracerun_note_unmount(struct result *res, int r, const char *note);

/* Spans to keep per thread: every sample of the timer, the events of noise. */
size_t tracerun_log_cap(const struct run_params *rp, uint64_t samples_per_sec);

#endif
