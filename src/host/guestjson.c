#include "host/guestjson.h"

#include <errno.h>
#include <stdio.h>

#include <jansson.h>

#include "core/units.h"
#include "host/explain_json.h"

const char *host_cause_name(enum host_cause c)
{
	static const char *const names[HOST_CAUSES] = { "not_running", "in_host", "halted", "none",
							"unsupported" };
	return (unsigned)c < HOST_CAUSES ? names[c] : "?";
}

static enum host_cause cause_of(const struct host_answer *a)
{
	const uint64_t *ns = a->state_ns;
	const uint64_t hosts = ns[HOST_ST_PREEMPTED] + ns[HOST_ST_STOPPED] + ns[HOST_ST_OFF];
	if (hosts > 0 && hosts >= ns[HOST_ST_HALTED] && hosts >= a->in_host_ns)
		return HOST_CAUSE_NOT_RUNNING;
	if (ns[HOST_ST_HALTED] > 0 && ns[HOST_ST_HALTED] >= a->in_host_ns)
		return HOST_CAUSE_HALTED;
	return a->in_host_ns > 0 ? HOST_CAUSE_IN_HOST : HOST_CAUSE_NONE;
}

json_t *host_match_json(const struct host_match *m, unsigned vcpu, uint64_t min_ns,
			enum host_cause *ret_cause)
{
	char line[512], b[32], l[32];
	enum host_cause cause;

	if (!m->supported) {
		cause = HOST_CAUSE_UNSUPPORTED;
		fmt_duration(m->bound_ns, b, sizeof(b));
		fmt_duration(m->host_to - m->host_from, l, sizeof(l));
		snprintf(
			line, sizeof(line),
			"the host: no answer: the clocks line up only to +-%s, no better than this "
			"spike's %s",
			b, l);
	} else if (m->ep) {
		cause = cause_of(&m->ep->a);
		host_answer_line(&m->ep->a, line, sizeof(line));
	} else {
		cause = HOST_CAUSE_NONE;
		fmt_duration(min_ns, b, sizeof(b));
		snprintf(line, sizeof(line),
			 "the host: vCPU %u was not held (off its CPU or in the host) for %s or "
			 "more",
			 vcpu, b);
	}
	*ret_cause = cause;
	json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I}", "line", line, "cause",
			      host_cause_name(cause), "host_from_ns", (json_int_t)m->host_from,
			      "host_to_ns", (json_int_t)m->host_to, "bound_ns",
			      (json_int_t)m->bound_ns, "overlap_ns", (json_int_t)m->overlap_ns);
	if (o && m->ep && m->supported &&
	    json_object_set_new(o, "episode", host_answer_to_json(&m->ep->a)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

struct tally {
	uint64_t n[HOST_CAUSES];
	uint64_t matched;
	int bad;
};

/* The answer for vcpu over [from, to] of guest time put in o as "host". */
static void answer_into(json_t *o, const struct host_timeline *tl, unsigned vcpu, uint64_t from,
			uint64_t to, uint64_t min_ns, struct tally *t)
{
	struct host_match m;
	enum host_cause cause;

	if (host_timeline_match(tl, vcpu, from, to, &m) < 0)
		return; /* never lined up: the "host" object says so */
	json_t *a = host_match_json(&m, vcpu, min_ns, &cause);
	if (!a || json_object_set_new(o, "host", a) < 0) {
		t->bad = 1;
		return;
	}
	t->n[cause]++;
	t->matched++;
}

/* trace.cpus[].spikes[]: at_ns (from the run's origin) is the timer's deadline, or a noise gap's start;
 * latency_ns how late it woke, or gap_ns how long the gap was. */
static void spikes(const struct host_timeline *tl, uint64_t min_ns, struct result *res,
		   struct tally *t)
{
	json_t *cpus = json_object_get(res->trace, "cpus"), *c;
	size_t i, j;

	json_array_foreach(cpus, i, c)
	{
		const json_int_t cpu = json_integer_value(json_object_get(c, "cpu"));
		json_t *s;
		json_array_foreach(json_object_get(c, "spikes"), j, s)
		{
			const uint64_t at =
				(uint64_t)json_integer_value(json_object_get(s, "at_ns"));
			const json_t *len = json_object_get(s, "latency_ns");
			const uint64_t lat = (uint64_t)json_integer_value(
				len ? len : json_object_get(s, "gap_ns"));
			answer_into(s, tl, (unsigned)cpu, res->origin_ns + at,
				    res->origin_ns + at + lat, min_ns, t);
		}
	}
}

/* Each CPU's largest samples: the value is taken as ending at the sample's time. */
static json_t *largest(const struct host_timeline *tl, uint64_t min_ns, const struct result *res,
		       struct tally *t)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		for (unsigned k = 0; k < cr->ntop; k++) {
			const struct rec_event *e = &cr->top[k];
			const uint64_t to = res->origin_ns + e->at_ns,
				       from = to - (e->value < to ? e->value : to);
			json_t *o =
				json_pack("{s:i,s:I,s:I}", "cpu", cr->cpu, "at_ns",
					  (json_int_t)e->at_ns, "value_ns", (json_int_t)e->value);
			if (!o || json_array_append_new(arr, o) < 0) {
				t->bad = 1;
				break;
			}
			struct tally none = { { 0 } }; /* counted with the spikes only */
			answer_into(o, tl, (unsigned)cr->cpu, from, to, min_ns, &none);
			t->bad |= none.bad;
		}
	}
	return arr;
}

static json_t *sync_json(const struct host_sync *sync)
{
	struct host_sync_status st;
	if (host_sync_status(sync, &st) < 0)
		return json_null();
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:I,s:I}", "offset_ns", st.offset_ns, "bound_ns",
			 st.bound_ns, "drift_ppm", st.drift_ppm, "drift_bound_ppm",
			 st.drift_bound_ppm, "exchanges", (json_int_t)st.exchanges, "seconds",
			 (json_int_t)st.seconds, "steps", (json_int_t)st.steps);
}

int host_guest_annotate(const struct host_timeline *tl, const struct host_sync *sync,
			const struct host_guest_info *info, struct result *res)
{
	struct tally t = { { 0 } };

	if (res->trace)
		spikes(tl, info->min_ns, res, &t);
	json_t *big = largest(tl, info->min_ns, res, &t);
	json_t *causes = json_object();
	for (int c = 0; causes && c < HOST_CAUSES; c++)
		t.bad |= json_object_set_new(causes, host_cause_name((enum host_cause)c),
					     json_integer((json_int_t)t.n[c]));
	json_t *h = json_pack(
		"{s:s,s:{s:I,s:s},s:s,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "agent", info->spec,
		"vm", "pid", (json_int_t)info->vm_pid, "name", info->vm_name, "found_by",
		info->found_by, "sync", sync_json(sync), "min_ns", (json_int_t)info->min_ns,
		"asked", (json_int_t)info->asked, "answered", (json_int_t)info->answered,
		"episodes", (json_int_t)tl->nep, "episodes_dropped", (json_int_t)tl->dropped,
		"spikes_answered", (json_int_t)t.matched, "causes", causes, "largest", big);
	if (h && info->lost)
		t.bad |= json_object_set_new(h, "lost", json_string(info->lost));
	if (!h || t.bad) {
		json_decref(h);
		return -ENOMEM;
	}
	json_decref(res->host);
	res->host = h;
	return 0;
}
