/*
 * The host's answers written into a guest run's result: each spike of its
 * trace (trace.cpus[].spikes[]) and each CPU's largest samples matched
 * against the episodes (host/timeline.h), and the result's "host" object
 * (doc/result-schema.md): the agent, the clock line-up, what was asked and
 * the spikes counted by host cause.
 */
#ifndef LATSCOPE_HOST_GUESTJSON_H
#define LATSCOPE_HOST_GUESTJSON_H

#include <stdint.h>

#include "host/sync.h"
#include "host/timeline.h"
#include "result/result.h"

/* What a spike's answer says, counted in the result's host.causes. */
enum host_cause {
	HOST_CAUSE_NOT_RUNNING, /* preempted or stopped on the host */
	HOST_CAUSE_IN_HOST,	/* running, but in the host (exits) */
	HOST_CAUSE_HALTED,	/* the guest halted */
	HOST_CAUSE_NONE,	/* no episode: the host did not hold the vCPU */
	HOST_CAUSE_UNSUPPORTED, /* the clocks line up worse than the spike's length */
	HOST_CAUSES
};

/* "not_running", "in_host", "halted", "none", "unsupported". */
const char *host_cause_name(enum host_cause c);

struct host_guest_info {
	const char *spec;
	long vm_pid;
	const char *vm_name, *found_by;
	uint64_t min_ns, asked, answered;
	const char *lost; /* NULL: the link held to the end */
};

/* One answer: its line (beginning "the host: "), its cause, and as JSON (a new reference, NULL out of memory). */
json_t *host_match_json(const struct host_match *m, unsigned vcpu, uint64_t min_ns,
			enum host_cause *ret_cause);

/* Write every answer and the "host" object into res: 0 or -ENOMEM. */
int host_guest_annotate(const struct host_timeline *tl, const struct host_sync *sync,
			const struct host_guest_info *info, struct result *res);

#endif
