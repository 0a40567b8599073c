#include "host/record.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "core/cpuset.h"
#include "sys/cpus.h"
#include "host/episodes.h"
#include "trace/eventlist.h"
#include "trace/ring.h"

#define HOST_EVENTS                                                                   \
	(TRACE_WANT_SCHED | TRACE_WANT_WAKEUP | TRACE_WANT_IRQ | TRACE_WANT_MIGRATE | \
	 TRACE_WANT_KVM)

/* Events before an episode that tell its states: what ran, who woke whom. */
#define LOOKBACK_NS (1000000000ull)

struct host_record {
	struct trace_ring *ring;
	int read_rc; /* the last tick's, kept for the next question */
	struct lat_error read_err;
};

int host_record_start(uint64_t keep_ns, struct host_record **ret, struct lat_error *err)
{
	struct cpuset cpus;
	int rc = cpus_online(&cpus);
	if (rc < 0)
		return err_set(err, rc, "cannot read the online CPUs");
	struct host_record *r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = trace_ring_start(&cpus, keep_ns ? keep_ns : HOST_KEEP_DEFAULT_NS, HOST_EVENTS,
				   &r->ring, err)) < 0) {
		free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

bool host_record_kvm(const struct host_record *r)
{
	return trace_ring_events(r->ring) & TRACE_WANT_KVM;
}

void host_record_tick(void *ctx)
{
	struct host_record *r = ctx;
	r->read_rc = trace_ring_read(r->ring, &r->read_err);
}

/* The trace has each task's priority but not its policy: read it from the task, if it is still there. */
static void fill_policies(struct host_answer *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < a[i].nran; k++) {
			struct host_ran *r = &a[i].ran[k];
			if (r->policy != HOST_POLICY_UNKNOWN ||
			    (r->kind != HOST_RAN_TASK && r->kind != HOST_RAN_VCPU) || r->id <= 0)
				continue;
			const int p = sched_getscheduler(r->id);
			if (p >= 0)
				r->policy = p & ~SCHED_RESET_ON_FORK;
		}
}

static int episodes(void *ctx, const struct host_episodes_query *q, struct host_answer *ret,
		    size_t max, size_t *ret_n, size_t *ret_more, uint64_t *ret_complete_from,
		    struct lat_error *err)
{
	struct host_record *r = ctx;
	struct trace_ev *ev = NULL;
	size_t n = 0;
	uint64_t complete_from = 0, lost = 0;

	host_record_tick(r);
	if (r->read_rc < 0)
		return err_set(err, r->read_rc, "cannot read the host's trace: %s",
			       r->read_err.msg);
	int rc = trace_ring_collect(r->ring, q->from > LOOKBACK_NS ? q->from - LOOKBACK_NS : 0,
				    UINT64_MAX, &ev, &n, &complete_from, &lost, err);
	if (rc < 0)
		return rc;
	struct host_episodes_query eq = *q;
	eq.complete_from = complete_from;
	rc = host_episodes(ev, n, &eq, ret, max, ret_n, ret_more);
	free(ev);
	if (rc < 0)
		return err_set(err, rc, "'to_ns' is before 'from_ns'");
	fill_policies(ret, *ret_n);
	*ret_complete_from = complete_from;
	return 0;
}

struct host_source host_record_source(struct host_record *r)
{
	return (struct host_source){ .episodes = episodes, .ctx = r };
}

const char *host_record_mounted(const struct host_record *r)
{
	return r ? trace_ring_mounted(r->ring) : NULL;
}

int host_record_stop(struct host_record *r, struct lat_error *note)
{
	if (!r)
		return 1;
	int rc = trace_ring_stop(r->ring, note);
	free(r);
	return rc;
}
