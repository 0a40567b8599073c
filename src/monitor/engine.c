/*
 * The engine's loop.  Each turn, in order:
 *
 *   1. when no phase measures: a stop signal ends the loop, else the
 *      schedule names the next phase (a period, or a noise run) and a
 *      thread starts measuring it;
 *   2. wait for news from that thread (windows drained, its result
 *      finished, its end) or for what is due next;
 *   3. a period's result finished: the rest of its spikes explained and
 *      noted in it, before it is stored;
 *   4. otherwise the queued spikes explained;
 *   5. the reporter, once ended: its file served on /report;
 *   6. the scrapes: the texts made and published when a window came, or
 *      every MON_REFRESH_NS (the 5-minute max moves on);
 *   7. a phase ended: counted; after a period, old runs removed (--keep),
 *      the next report started and the texts published.
 */
#include "monitor/engine.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/nstime.h"
#include "core/units.h"
#include "monitor/publish.h"
#include "monitor/signals.h"
#include "monitor/state.h"

/* Without a new window, /metrics is made again this often (the 5-minute max moves on). */
#define MON_REFRESH_NS (5u * NS_PER_SEC)
/* With spikes queued or a reporter running, the loop turns at least this often. */
#define MON_TURN_NS (250u * NS_PER_MS)

void mon_say(const struct mon_engine *e, enum mon_say level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	e->c.say(level, line);
}

static void read_context(struct mon_engine *e)
{
	uint64_t steal[CPUSET_MAX], smis[CPUSET_MAX];
	size_t n = mon_metrics_ncpus(e->metrics);

	if (!e->have_ctx || n > CPUSET_MAX)
		return;
	if (proc_read_interrupts(&e->ctx, NULL) < 0 || proc_read_steal(&e->ctx, steal, NULL) < 0)
		return;
	for (size_t k = 0; k < e->ctx.ncpus; k++)
		mon_metrics_set_context(e->metrics, e->ctx.cpus[k], steal[k], proc_table_total(&e->ctx, k));
	if (e->smi && smi_read(e->smi, smis) == 0)
		for (size_t k = 0; k < e->ctx.ncpus; k++)
			mon_metrics_set_smis(e->metrics, e->ctx.cpus[k], smis[k]);
}

void mon_publish_now(struct mon_engine *e)
{
	const uint64_t now = mono_ns();
	const struct mon_page_info info = { .host = e->c.period_id->host, .monitor_id = e->c.id, .store = e->c.store,
					    .periods = e->stored, .last_run = e->last_run,
					    .rotate_ns = e->c.rotate_ns, .report = e->report_served };
	const struct mon_metrics *probes[] = { e->metrics, e->noise };
	int r = 0;

	if (e->server) {
		read_context(e);
		r = mon_publish(e->server, probes, e->noise ? 2u : 1u, &info, now);
	}
	if (r < 0 && !e->warned_publish) {
		/* the last texts stay served; said once, not every second */
		mon_say(e, MON_WARN, "cannot update /metrics: %s", strerror(-r));
		e->warned_publish = true;
	}
	e->dirty = false;
	e->next_render_ns = now + MON_REFRESH_NS;
}

/* 1. The next phase, or the end (1); -errno when its thread cannot start. */
static int next_phase(struct mon_engine *e)
{
	if (mon_stop_pending())
		return 1;
	mon_drop_usr1();
	e->phase = mon_schedule_next(&e->schedule, mono_ns(), &e->phase_ns);
	int r = mon_phase_start(e);
	if (r < 0)
		mon_say(e, MON_WARN, "cannot start measuring: %s", strerror(-r));
	return r;
}

/* 2. Until the phase thread has news, or what is due next. */
static void wait_turn(struct mon_engine *e)
{
	uint64_t until = e->next_render_ns;

	if ((e->spikes && (e->spikes->nqueue || e->spikes->nhq)) || e->reporter.pid)
		until = mono_ns() + MON_TURN_NS < until ? mono_ns() + MON_TURN_NS : until;
	const struct timespec ts = ns_to_ts(until);
	while (!e->news && !e->finishing && !e->done && mono_ns() < until)
		if (pthread_cond_timedwait(&e->wake, &e->lock, &ts) == ETIMEDOUT)
			break;
	e->news = false;
}

/* 3. and 4. */
static void explain_spikes(struct mon_engine *e)
{
	if (!e->spikes)
		return;
	if (!e->finishing) {
		/* every queued window, oldest first: the ring holds each for only its
		 * last seconds, and a turn may come only every MON_TURN_NS */
		while (spikes_explain_one(e->spikes, e->metrics, e->origin_ns))
			;
		spikes_host_turn(e->spikes, e->metrics, e->origin_ns);
		return;
	}
	while (spikes_explain_one(e->spikes, e->metrics, e->finishing->origin_ns))
		;
	spikes_host_turn(e->spikes, e->metrics, e->finishing->origin_ns);
	spikes_note(e->spikes, e->finishing);
	e->finishing = NULL;
	pthread_cond_signal(&e->noted);
}

/* 5. */
static void collect_report(struct mon_engine *e)
{
	char *text;
	size_t len;

	if (!reporter_collect(&e->reporter, false, &text, &len) || !text)
		return;
	/* its errors went to our stderr; a file it wrote is served */
	if (metrics_server_publish_report(e->server, text, len) == 0 && !e->report_served) {
		e->report_served = true;
		e->dirty = true;
	}
	free(text);
}

/* 7. After a period: --keep, and the next report of the periods stored so far. */
static void after_period(struct mon_engine *e)
{
	struct lat_error err = { { 0 } };
	size_t removed;

	if (e->c.keep && e->c.store) {
		if (keep_prune(e->c.store, e->c.store_trust, e->c.keep, realtime_ns(), &removed, &err) < 0)
			mon_say(e, MON_WARN, "%s", err.msg);
		else if (removed)
			mon_say(e, MON_INFO, "--keep %s: removed %zu monitor run%s", e->c.keep_text, removed,
			    removed == 1 ? "" : "s");
	}
	if (e->c.report && e->last_run) {
		int r = reporter_start(&e->reporter, e->c.id, e->c.store ? e->c.store : "");
		if (r != 0)
			mon_say(e, MON_WARN, "option '--report': cannot start latscope report: %s", strerror(r));
	}
	mon_publish_now(e);
}

/* 7. The phase thread is done: whether the loop goes on. */
static bool end_phase(struct mon_engine *e, int *code)
{
	const struct mon_measured *o = &e->out;
	const bool period = e->phase == MON_PERIOD;

	pthread_join(e->thread, NULL);
	e->running = e->done = false;
	if (!period) {
		mon_schedule_noise_done(&e->schedule, mono_ns());
		if (o->code != 0)
			*code = o->code;        /* not stored, kept in a file; or nothing measured */
		e->period_end_ns = 0;           /* a noise run is no gap */
		return o->measured && !o->stopped;
	}
	if (!o->measured) {
		*code = o->code;                /* could not measure at all: nothing to go on with */
		return false;
	}
	if (o->code != 0)
		*code = o->code;                /* kept in a file; the next period may be stored */
	e->period_end_ns = o->end_ns;
	e->periods++;
	if (o->stored_id > 0) {
		e->stored++;
		e->last_run = o->stored_id;
	}
	after_period(e);
	return !o->stopped;
}

int mon_engine_run(struct mon_engine *e)
{
	char every[32], gap[32];
	int code = 0;

	fmt_duration(e->c.rotate_ns, every, sizeof(every));
	mon_say(e, MON_INFO, "monitor=%s, a period every %s%s%s", e->c.id, every,
		e->c.store ? ", stored in " : ", not stored", e->c.store ? e->c.store : "");
	mon_schedule_init(&e->schedule, e->c.rotate_ns, e->c.noise_id ? e->c.noise_every_ns : 0, e->c.noise_for_ns,
			  mono_ns());
	pthread_mutex_lock(&e->lock);
	for (;;) {
		int r = e->running ? 0 : next_phase(e);         /* 1. signals, the schedule */
		if (r != 0) {
			code = r < 0 ? r : code;
			break;
		}
		wait_turn(e);                                   /* 2. news, or what is due */
		explain_spikes(e);                              /* 3. and 4. */
		collect_report(e);                              /* 5. */
		if (e->dirty || mono_ns() >= e->next_render_ns)
			mon_publish_now(e);                     /* 6. the scrapes' texts */
		if (e->done && !end_phase(e, &code))            /* 7. counted, --keep, --report */
			break;
	}
	pthread_mutex_unlock(&e->lock);
	mon_metrics_set_up(e->metrics, false);
	mon_publish_now(e);
	fmt_duration(e->longest_gap_ns, gap, sizeof(gap));
	if (e->periods > 1)
		mon_say(e, MON_INFO, "%u periods; the longest gap between two was %s", e->periods, gap);
	return code;
}
