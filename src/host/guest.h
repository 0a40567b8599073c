/*
 * A guest run's side of `--host`: connect to latscope host before the run,
 * then, from a thread of its own (never a measuring one), once a second line
 * the clocks up and ask for the episodes of the run's vCPUs that began since
 * the last question; after the run, match each spike --trace explained (in
 * guest time) against them and write the host's answer into the result.
 * The link is lost, the run goes on: the guest says once why.
 */
#ifndef LATSCOPE_HOST_GUEST_H
#define LATSCOPE_HOST_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/error.h"
#include "host/guestjson.h"
#include "result/result.h"

struct host_guest;

struct host_guest_opts {
	const char *spec;      /* host/link.h's forms */
	const uint8_t *secret; /* NULL: none */
	size_t secret_len;
	struct cpuset vcpus; /* the run's CPUs: the guest's CPU N is vCPU N */
	uint64_t min_ns;     /* the shortest episode worth asking about */
	bool keep_trying;    /* a daemon's (the monitor): reach the host again when it is gone */
};

/* Connect, say hello and start the thread: 0, or -errno with err (the run
 * goes on without the host; the caller notes err).  With keep_trying a host
 * out of reach is 1, err saying why: the thread tries again every 5 s. */
int host_guest_start(const struct host_guest_opts *o, struct host_guest **ret,
		     struct lat_error *err);

/* After the run: the last question (once the host has seen the run's end),
 * the thread ended, the link closed; then the answers into res (its trace's
 * spikes gain "host", res gains its "host" object) and notes.  0 or -ENOMEM. */
int host_guest_finish(struct host_guest *g, struct result *res);

/* While it runs: the host's answer for vcpu over [from_ns, to_ns] of guest
 * time, its line (beginning "the host: ") into line and its cause.  0;
 * -EAGAIN when the host has not been asked that far yet (ask again later);
 * -ENOENT before the clocks were first lined up. */
int host_guest_answer(struct host_guest *g, unsigned vcpu, uint64_t from_ns, uint64_t to_ns,
		      char *line, size_t size, enum host_cause *ret_cause);

void host_guest_free(struct host_guest *g);

#endif
