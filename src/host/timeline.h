/*
 * What a guest run learned from its host, kept for after the run: the clock
 * line-up once a second (host = guest + offset, within a bound) and the
 * vCPUs' episodes in host time (host/episodes.h).  After the run each spike,
 * in guest time, is carried into host time through the line-up of its own
 * moment (not the window's at the end, which a long run has left behind) and
 * matched against the episodes of its vCPU.  Pure and bounded: at most
 * HOST_TIMELINE_EPISODES episodes (the least held give way, counted) and one
 * line-up point a second.
 */
#ifndef LATSCOPE_HOST_TIMELINE_H
#define LATSCOPE_HOST_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/explain.h"

#define HOST_TIMELINE_EPISODES 4096u
#define HOST_TIMELINE_POINTS   (8u * 24u * 3600u) /* a week of seconds */

struct host_offset_pt {
	uint64_t guest_ns;
	int64_t offset_ns; /* host - guest */
	uint64_t bound_ns;
};

struct host_episode {
	unsigned vcpu;
	uint64_t held_ns;     /* what it was kept by (the line's largest share) */
	struct host_answer a; /* a.q.from, a.q.to: host time */
};

struct host_timeline {
	struct host_offset_pt *pt;
	size_t npt, cappt;
	struct host_episode *ep;
	size_t nep, capep;
	uint64_t dropped; /* episodes that gave way to more held ones */
};

/* One line-up point, in guest time order (an older one is ignored): 0 or -ENOMEM. */
int host_timeline_offset(struct host_timeline *t, uint64_t guest_ns, int64_t offset_ns,
			 uint64_t bound_ns);
/* One episode of vcpu: 0 or -ENOMEM. */
int host_timeline_episode(struct host_timeline *t, unsigned vcpu, const struct host_answer *a);
void host_timeline_free(struct host_timeline *t);

/* The host time of guest_ns and its bound, between the points around it (the
 * nearest one's outside them): -ENOENT when there is no point. */
int host_timeline_host_of(const struct host_timeline *t, uint64_t guest_ns, uint64_t *ret_host_ns,
			  uint64_t *ret_bound_ns);

struct host_match {
	uint64_t host_from, host_to; /* the guest interval in host time, not widened */
	uint64_t bound_ns;
	bool supported; /* the bound is below the interval's length */
	const struct host_episode
		*ep; /* the episode overlapping it most (widened by the bound), or NULL */
	uint64_t overlap_ns;
};

/* What the host did to vcpu over [guest_from, guest_to]: -ENOENT with no line-up point. */
int host_timeline_match(const struct host_timeline *t, unsigned vcpu, uint64_t guest_from,
			uint64_t guest_to, struct host_match *ret);

#endif
