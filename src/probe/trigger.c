#include "probe/trigger.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "core/nstime.h"
#include "core/units.h"
#include "probe/actions.h"

#define DONE_MAX 64     /* actions kept in the result; later ones are only counted */

struct done {
	int action;     /* index in on_threshold */
	unsigned cpu;
	uint64_t latency_ns, at_ns;
	pid_t pid;      /* exec: the child, 0 once reaped */
	bool status_known;
	int status;
	bool explained;         /* trace: cause holds the explanation */
	struct spike_cause cause;
	char error[160];
};

struct trigger_watch {
	const struct run_params *rp;
	struct spike_ring *ring;
	char why_not[160];
	uint64_t origin_ns;
	bool stop_asked;
	bool have_first;
	struct rec_trigger first;
	unsigned first_cpu;
	uint64_t next_ns[ACTIONS_MAX];  /* exec and signal: not again before this */
	uint64_t skipped;               /* held back by --action-interval */
	uint64_t dropped;               /* done past DONE_MAX */
	unsigned ndone;
	struct done done[DONE_MAX];
	/* exec children started past DONE_MAX: reaped, not kept (or they would
	 * stay zombies); when all are still running, no more is started */
	unsigned nunkept;
	pid_t unkept[DONE_MAX];
};

int trigger_watch_start(struct trigger_watch **ret, const struct run_params *rp, uint64_t origin_ns,
			struct spike_ring *ring, const char *why_not)
{
	*ret = NULL;
	if (rp->on_threshold.n == 0)
		return 0;
	struct trigger_watch *tw = calloc(1, sizeof(*tw));
	if (!tw)
		return -ENOMEM;
	tw->rp = rp;
	tw->ring = ring;
	snprintf(tw->why_not, sizeof(tw->why_not), "%.150s", why_not ? why_not : "not traced");
	tw->origin_ns = origin_ns;
	*ret = tw;
	return 0;
}

static void reap(struct trigger_watch *tw)
{
	int status;

	for (unsigned i = 0; i < tw->ndone; i++) {
		struct done *d = &tw->done[i];
		if (d->pid > 0 && waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			d->status_known = true;
			d->status = action_exit_code(status);
		}
	}
	for (unsigned i = 0; i < tw->nunkept;)
		if (waitpid(tw->unkept[i], &status, WNOHANG) == tw->unkept[i])
			tw->unkept[i] = tw->unkept[--tw->nunkept];
		else
			i++;
}

/* The kernel's view of the sample from the ring: its deadline, as the
 * hrtimer was armed (the slack may put the expiry a little after it). */
#define TRACE_MATCH_NS 1000u

static int explain(struct trigger_watch *tw, const struct rec_trigger *t, unsigned cpu, pid_t tid,
		   struct spike_cause *ret, struct lat_error *why)
{
	if (!tw->ring)
		return err_set(why, -ENOENT, "%s", tw->why_not);
	if (!t->from_ns)
		return err_set(why, -ENOENT, "the probe gave the sample no deadline");
	return spike_ring_explain(tw->ring, cpu, tid, t->from_ns, t->from_ns + TRACE_MATCH_NS, 0, ret, why);
}

static void act(struct trigger_watch *tw, int i, const struct rec_trigger *t, unsigned cpu, pid_t tid,
		uint64_t now)
{
	const struct action *a = &tw->rp->on_threshold.a[i];
	struct lat_error why = { { 0 } };
	struct spike_cause cause;
	pid_t pid = 0;
	int r = 0;

	if (a->kind == ACTION_STOP) {
		if (tw->stop_asked)
			return;
		tw->stop_asked = true;
	} else {
		if (now < tw->next_ns[i]) {
			tw->skipped++;
			return;
		}
		tw->next_ns[i] = now + tw->rp->action_interval_ns;
		if (a->kind == ACTION_EXEC) {
			const struct action_env env = { .run_id = "", .cpu = (int)cpu, .latency_ns = t->value };
			if (tw->ndone == DONE_MAX) {
				reap(tw);
				if (tw->nunkept == DONE_MAX) {
					tw->dropped++;  /* not started: every earlier one still runs */
					return;
				}
			}
			r = action_spawn(a, &env, &pid, &why);
			if (r == 0 && tw->ndone == DONE_MAX)
				tw->unkept[tw->nunkept++] = pid;
		} else if (a->kind == ACTION_TRACE) {
			r = explain(tw, t, cpu, tid, &cause, &why);
		} else {
			r = action_signal(a, &why);
		}
	}
	if (tw->ndone == DONE_MAX) {
		tw->dropped++;
		return;
	}
	struct done *d = &tw->done[tw->ndone++];
	*d = (struct done){ .action = i, .cpu = cpu, .latency_ns = t->value,
			    .at_ns = now > tw->origin_ns ? now - tw->origin_ns : 0, .pid = r == 0 ? pid : 0 };
	if (r < 0)
		snprintf(d->error, sizeof(d->error), "%.150s", why.msg);
	if (r == 0 && a->kind == ACTION_TRACE) {
		d->explained = true;
		d->cause = cause;
	}
}

bool trigger_watch_poll(struct trigger_watch *tw, struct recorder *rec, unsigned cpu, pid_t tid)
{
	struct rec_trigger t;

	if (!tw)
		return false;
	reap(tw);
	if (!rec_trigger_take(rec, &t))
		return false;
	if (!tw->have_first || t.at_ns < tw->first.at_ns) {
		tw->have_first = true;
		tw->first = t;
		tw->first_cpu = cpu;
	}
	const bool stopped = tw->stop_asked;
	const uint64_t now = mono_ns();
	for (unsigned i = 0; i < tw->rp->on_threshold.n; i++)
		act(tw, (int)i, &t, cpu, tid, now);
	return tw->stop_asked && !stopped;
}

/* Nanoseconds from the run's origin; null when before it or unknown. */
static json_t *since_origin(const struct trigger_watch *tw, uint64_t t)
{
	return t >= tw->origin_ns ? json_integer((json_int_t)(t - tw->origin_ns)) : json_null();
}

static json_t *done_json(const struct trigger_watch *tw, const struct done *d)
{
	const struct action *a = &tw->rp->on_threshold.a[d->action];
	json_t *o = json_pack("{s:s, s:I, s:i, s:I}", "action", action_kind_name(a->kind), "at_ns",
			      (json_int_t)d->at_ns, "cpu", (int)d->cpu, "latency_ns", (json_int_t)d->latency_ns);
	if (!o)
		return NULL;
	if (a->kind == ACTION_EXEC) {
		json_object_set_new(o, "command", json_string(a->cmd));
		json_object_set_new(o, "exit_status", d->status_known ? json_integer(d->status) : json_null());
	}
	if (a->kind == ACTION_SIGNAL) {
		json_object_set_new(o, "pid", json_integer(a->pid));
		json_object_set_new(o, "signal", json_integer(a->sig));
	}
	if (d->explained)
		json_object_set_new(o, "cause", json_pack("{s:s, s:s, s:I, s:I, s:o, s:b, s:b}", "kind",
							  spike_kind_name(d->cause.kind), "name", d->cause.name,
							  "share_ns", (json_int_t)d->cause.share_ns, "latency_ns",
							  (json_int_t)d->cause.latency_ns, "deadline_ns",
							  since_origin(tw, d->cause.deadline_ns), "lost",
							  (d->cause.flags & SPIKE_F_LOST) != 0, "unpaired",
							  (d->cause.flags & SPIKE_F_UNPAIRED) != 0));
	if (d->error[0])
		json_object_set_new(o, "error", json_string(d->error));
	return o;
}

void trigger_watch_finish(struct trigger_watch *tw, struct result *res, uint64_t above)
{
	if (!tw)
		return;
	reap(tw);
	json_t *first = json_null(), *done = json_array(), *actions = json_array();
	for (unsigned i = 0; actions && i < tw->rp->on_threshold.n; i++)
		json_array_append_new(actions, json_stringn(tw->rp->on_threshold.a[i].text,
							    tw->rp->on_threshold.a[i].text_len));
	if (tw->have_first)
		first = json_pack("{s:i, s:I, s:o, s:o}", "cpu", (int)tw->first_cpu, "latency_ns",
				  (json_int_t)tw->first.value, "at_ns", since_origin(tw, tw->first.at_ns),
				  "deadline_ns", tw->first.from_ns ? since_origin(tw, tw->first.from_ns) : json_null());
	for (unsigned i = 0; done && i < tw->ndone; i++)
		json_array_append_new(done, done_json(tw, &tw->done[i]));
	json_t *o = json_pack("{s:o*, s:I, s:I, s:I, s:o*, s:o*, s:I, s:I, s:b}", "actions", actions, "trigger_ns",
			      (json_int_t)run_trigger(tw->rp), "action_interval_ns", (json_int_t)tw->rp->action_interval_ns,
			      "above", (json_int_t)above, "first", first, "done", done, "skipped", (json_int_t)tw->skipped,
			      "not_kept", (json_int_t)tw->dropped, "stopped", result_threshold_stopped(res));
	json_decref(res->on_threshold);
	res->on_threshold = o;
	if (result_threshold_stopped(res) && tw->have_first) {
		char lat[32], trig[32];
		fmt_duration(tw->first.value, lat, sizeof(lat));
		fmt_duration(run_trigger(tw->rp), trig, sizeof(trig));
		result_info(res, "stopped by --on-threshold stop: cpu %u had a sample of %s, above the trigger %s",
			    tw->first_cpu, lat, trig);
	}
	for (unsigned i = 0; i < tw->ndone; i++) {
		const struct done *d = &tw->done[i];
		char lat[32], share[32];
		if (d->error[0])
			result_note(res, "--on-threshold %s: %s", action_kind_name(tw->rp->on_threshold.a[d->action].kind),
				    d->error);
		if (!d->explained)
			continue;
		fmt_duration(d->latency_ns, lat, sizeof(lat));
		fmt_duration(d->cause.share_ns, share, sizeof(share));
		result_info(res, "--on-threshold trace: the sample of %s on cpu %u: %s (%s of it)", lat, d->cpu,
			    d->cause.name, share);
	}
	if (tw->skipped)
		result_info(res, "--on-threshold: %llu action%s held back by --action-interval",
			    (unsigned long long)tw->skipped, tw->skipped == 1 ? "" : "s");
}

void trigger_watch_free(struct trigger_watch *tw)
{
	free(tw);
}
