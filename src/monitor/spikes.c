#include "monitor/spikes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"
#include "core/units.h"

int spikes_start(const struct cpuset *cpus, uint64_t above_ns, struct spikes **ret,
		 struct lat_error *err)
{
	struct spikes *sp = calloc(1, sizeof(*sp));
	int r;

	if (!sp)
		return err_set(err, -ENOMEM, "out of memory");
	if ((r = spike_ring_start(cpus, 0, &sp->ring, err)) < 0) {
		free(sp);
		return r;
	}
	sp->above_ns = above_ns;
	*ret = sp;
	return 0;
}

int spikes_stop(struct spikes *sp, struct lat_error *note)
{
	if (!sp)
		return 1;
	host_guest_free(sp->host);
	int r = spike_ring_stop(sp->ring, note);
	free(sp);
	return r;
}

const char *const *spike_kinds(void)
{
	static const char *kinds[SPIKE_KINDS];

	for (size_t k = 0; k < SPIKE_KINDS; k++)
		kinds[k] = spike_kind_name((enum spike_kind)k);
	return kinds;
}

void spikes_offer(struct spikes *sp, int cpu, pid_t tid, uint64_t max_ns, uint64_t from_ns,
		  uint64_t to_ns)
{
	if (max_ns <= sp->above_ns)
		return;
	if (sp->nqueue == SPIKES_QUEUE) {
		sp->dropped++;
		return;
	}
	sp->queue[sp->nqueue++] =
		(struct spike_job){ .cpu = cpu, .tid = tid, .from_ns = from_ns, .to_ns = to_ns };
}

static void note_one(struct spikes *sp, const struct spike_job *j, const struct spike_cause *c,
		     uint64_t origin_ns)
{
	char lat[32], share[32], at[32];

	fmt_duration(c->latency_ns, lat, sizeof(lat));
	fmt_duration(c->share_ns, share, sizeof(share));
	fmt_duration(c->deadline_ns > origin_ns ? c->deadline_ns - origin_ns : 0, at, sizeof(at));
	snprintf(sp->noted[sp->nnoted++], RESULT_NOTE_LEN,
		 "spike on cpu %d at %s: %s, %s (%s of it)%s", j->cpu, at, lat, c->name, share,
		 c->flags & SPIKE_F_LOST ? "; the trace lost events in it" : "");
}

bool spikes_explain_one(struct spikes *sp, struct mon_metrics *metrics, uint64_t origin_ns)
{
	struct spike_cause c;
	struct lat_error err = { { 0 } };

	if (!sp->nqueue)
		return false;
	struct spike_job j = sp->queue[0];
	memmove(sp->queue, sp->queue + 1, (sp->nqueue - 1u) * sizeof(sp->queue[0]));
	sp->nqueue--;
	if (!sp->ring || spike_ring_explain(sp->ring, (unsigned)j.cpu, j.tid, j.from_ns, j.to_ns,
					    sp->above_ns, &c, &err) < 0) {
		sp->unexplained++;
		return true;
	}
	sp->explained++;
	sp->by_kind[c.kind]++;
	mon_metrics_add_cause(metrics, c.kind);
	if (sp->nnoted < SPIKES_NOTED)
		note_one(sp, &j, &c, origin_ns);
	if (sp->host && sp->nhq < SPIKES_QUEUE)
		sp->hq[sp->nhq++] = (struct spike_host_job){ .cpu = j.cpu,
							     .from_ns = c.deadline_ns,
							     .to_ns = c.deadline_ns + c.latency_ns,
							     .queued_ns = mono_ns() };
	else if (sp->host)
		sp->host_missing++;
	return true;
}

void spikes_host_turn(struct spikes *sp, struct mon_metrics *metrics, uint64_t origin_ns)
{
	const uint64_t now = mono_ns();
	size_t keep = 0;

	for (size_t i = 0; i < sp->nhq; i++) {
		const struct spike_host_job *j = &sp->hq[i];
		char line[RESULT_NOTE_LEN / 2], at[32];
		enum host_cause cause;
		int r = sp->host ? host_guest_answer(sp->host, (unsigned)j->cpu, j->from_ns,
						     j->to_ns, line, sizeof(line), &cause)
				 : -ENOENT;
		if (r == -EAGAIN || (r == -ENOENT && now - j->queued_ns < SPIKES_HOST_WAIT_NS)) {
			if (now - j->queued_ns < SPIKES_HOST_WAIT_NS) {
				sp->hq[keep++] = *j;
				continue;
			}
		}
		if (r < 0) {
			sp->host_missing++;
			continue;
		}
		sp->host_by[cause]++;
		mon_metrics_add_host_cause(metrics, cause);
		if (sp->nnoted < SPIKES_NOTED) {
			fmt_duration(j->from_ns > origin_ns ? j->from_ns - origin_ns : 0, at,
				     sizeof(at));
			snprintf(sp->noted[sp->nnoted++], RESULT_NOTE_LEN,
				 "spike on cpu %d at %s: %s", j->cpu, at, line);
		}
	}
	sp->nhq = keep;
}

void spikes_note(struct spikes *sp, struct result *res)
{
	char dur[32];

	fmt_duration(sp->above_ns, dur, sizeof(dur));
	if (sp->ring && spike_ring_mounted(sp->ring))
		result_info(res,
			    "tracefs was not mounted: latscope mounted it at '%s' for the monitor",
			    spike_ring_mounted(sp->ring));
	result_info(res,
		    "--trace-spikes %s: %u window%s explained (irq %u, softirq %u, task %u, no "
		    "event %u), %u not "
		    "held by the ring, %u not queued",
		    dur, sp->explained, sp->explained == 1 ? "" : "s", sp->by_kind[SPIKE_IRQ],
		    sp->by_kind[SPIKE_SOFTIRQ], sp->by_kind[SPIKE_TASK],
		    sp->by_kind[SPIKE_NO_EVENT], sp->unexplained, sp->dropped);
	if (sp->host)
		result_info(res,
			    "--host: spikes by the host's cause: not_running %u, in_host %u, "
			    "halted %u, none %u, "
			    "unsupported %u, no answer %u",
			    sp->host_by[HOST_CAUSE_NOT_RUNNING], sp->host_by[HOST_CAUSE_IN_HOST],
			    sp->host_by[HOST_CAUSE_HALTED], sp->host_by[HOST_CAUSE_NONE],
			    sp->host_by[HOST_CAUSE_UNSUPPORTED], sp->host_missing);
	for (unsigned i = 0; i < sp->nnoted; i++)
		result_info(res, "%s", sp->noted[i]);
	sp->explained = sp->unexplained = sp->dropped = sp->nnoted = sp->host_missing = 0;
	memset(sp->by_kind, 0, sizeof(sp->by_kind));
	memset(sp->host_by, 0, sizeof(sp->host_by));
}
