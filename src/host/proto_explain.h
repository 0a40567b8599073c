/*
 * The agent's answer to explain (doc/host-protocol.md): the vCPU's episodes
 * (host/episodes.h) that began in the interval asked about, each a host
 * answer (host/explain_json.h).  One line of at most HOST_LINE_MAX bytes: the
 * shortest episodes give way, counted in `more`, when they would not fit.
 */
#ifndef LATSCOPE_HOST_PROTO_EXPLAIN_H
#define LATSCOPE_HOST_PROTO_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "host/episodes.h"

struct host_explain_reply {
	bool has_seq;
	uint64_t seq;
	unsigned vcpu;
	uint64_t from_ns, to_ns, min_ns;
	uint64_t complete_from_ns; /* the agent's events are complete from here */
	size_t n, more;
	struct host_answer ep[HOST_EPISODES_MAX]; /* the longest first */
};

/* 0, -ENOMEM; episodes that would pass the line's limit are dropped into r->more. */
int host_encode_explain_reply(struct host_explain_reply *r, char **ret_line);

/* 0, or -EINVAL with the reason (not an explain answer, a member missing or mistyped). */
int host_decode_explain_reply(const char *line, size_t len, struct host_explain_reply *ret,
			      struct lat_error *err);

#endif
