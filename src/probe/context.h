/*
 * Beside every window, what else happened on each measured CPU: interrupts,
 * softirqs, preemptions of the measuring thread, steal time and SMIs.  Sampled by
 * the main thread at window boundaries, attached to the windows as soon as
 * every CPU has handed over the window a sample belongs to (context_apply),
 * so that what is pending stays bounded however long the run.
 */
#ifndef LATSCOPE_PROBE_CONTEXT_H
#define LATSCOPE_PROBE_CONTEXT_H

#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"
#include "result/result.h"
#include "sys/smi.h"

struct run_context;

/* Take the starting counts for cpus, whose measuring threads are tids (in the
 * order of the set), with the SMI counter smi finds (NULL: this machine's;
 * none found is no failure: context_smi says so).  -errno when /proc cannot
 * be read. */
int context_start(struct run_context **ret, const struct cpuset *cpus, const pid_t *tids, const struct smi_env *smi);
/* Where the SMIs come from into res (smi_asked, smi_source), and when from
 * nowhere, why in a note: "SMIs: not available here (...)". */
void context_smi(const struct run_context *c, struct result *res);
/* The counts since the last sample belong to window index. */
int context_sample(struct run_context *c, uint64_t index);
/* Attach the samples whose windows every CPU of res has handed over (and,
 * should a CPU lag far behind, the oldest anyway).  -ENOMEM, -EOVERFLOW. */
int context_apply(struct run_context *c, struct result *res);
/* The k-th thread has ended with this many preemptions: /proc no longer has them. */
void context_thread_ended(struct run_context *c, size_t k, uint64_t involuntary);
/* The last window's counts, then everything into res: per-window context and
 * per-run counts by source. */
int context_finish(struct run_context *c, struct result *res, uint64_t last_index);
void context_free(struct run_context *c);

#endif
