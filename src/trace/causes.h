#ifndef LATSCOPE_TRACE_CAUSES_H
#define LATSCOPE_TRACE_CAUSES_H

#include <stddef.h>
#include <stdint.h>

#include "trace/attrib.h"

/*
 * What took the time over many explained events: each event's ranked
 * contributors summed by who they were (kind, id, name), so that one task or
 * interrupt behind hundreds of small gaps shows as one cause, however many
 * larger, rarer ones fill the list of spikes.  Built after the run.
 */
struct trace_causes {
	struct trace_contrib *v;   /* by cause once trace_causes_rank ran: largest ns first */
	size_t n, cap;
	uint64_t other_ns;         /* ranked below every event's top, so not attributed */
};

/* Add one event's occupancy; -ENOMEM: not added. */
int trace_causes_add(struct trace_causes *c, const struct trace_occupancy *occ);
/* Merge the causes and order them, largest first. */
void trace_causes_rank(struct trace_causes *c);
void trace_causes_free(struct trace_causes *c);

#endif
