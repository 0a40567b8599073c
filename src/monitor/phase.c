/*
 * The phase thread: the measure function runs here, and the runner's hooks
 * only hand over what the engine's loop works on (under the engine's lock),
 * so that the loop, not the runner's tick, decides what happens next.
 */
#include "monitor/state.h"

#include "core/nstime.h"

/* The runner is set up; its origin follows: the gap since the last period ends about here. */
static void on_prepared(void *ctx, const struct result *res)
{
	struct mon_engine *e = ctx;

	(void)res;
	pthread_mutex_lock(&e->lock);
	if (e->period_end_ns) {
		uint64_t gap = mono_ns() - e->period_end_ns;
		if (gap > e->longest_gap_ns)
			e->longest_gap_ns = gap;
	}
	pthread_mutex_unlock(&e->lock);
}

/* A window folded into the figures now (the runner may merge it away later); a spike queued. */
static void on_window(void *ctx, const struct result *res, const struct cpu_result *cr, const struct result_window *w)
{
	struct mon_engine *e = ctx;
	const bool period = e->phase == MON_PERIOD;

	pthread_mutex_lock(&e->lock);
	e->origin_ns = res->origin_ns;
	if (mon_metrics_add_window(period ? e->metrics : e->noise, cr->cpu, &w->w, &w->hist[0], w->p99[0],
				   res->origin_ns + w->w.end_ns) == 0)
		e->dirty = true;
	if (e->spikes && period && w->w.m[0].st.n)
		spikes_offer(e->spikes, cr->cpu, cr->tid, w->w.m[0].st.max, res->origin_ns + w->w.start_ns,
			     res->origin_ns + w->w.end_ns);
	pthread_mutex_unlock(&e->lock);
}

/* The runner has drained its windows: the loop's turn when there is something new. */
static void on_tick(void *ctx, const struct result *res)
{
	struct mon_engine *e = ctx;

	(void)res;
	pthread_mutex_lock(&e->lock);
	if (e->dirty || (e->spikes && e->spikes->nqueue)) {
		e->news = true;
		pthread_cond_signal(&e->wake);
	}
	pthread_mutex_unlock(&e->lock);
}

/* The period's result, before it is stored: the loop notes its spikes in it, then it goes on. */
static void on_finished(void *ctx, struct result *res)
{
	struct mon_engine *e = ctx;

	pthread_mutex_lock(&e->lock);
	e->finishing = res;
	pthread_cond_signal(&e->wake);
	while (e->finishing)
		pthread_cond_wait(&e->noted, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

static void *phase_main(void *arg)
{
	struct mon_engine *e = arg;
	const bool period = e->phase == MON_PERIOD;
	const struct mon_hooks hooks = { .prepared = period ? on_prepared : NULL, .window = on_window, .tick = on_tick,
					 .finished = period && e->spikes ? on_finished : NULL, .ctx = e };
	struct mon_measured out = { 0 };

	e->c.measure(e->c.measure_ctx, e->phase, e->phase_ns, e->periods > 0, &hooks, &out);
	pthread_mutex_lock(&e->lock);
	e->out = out;
	e->done = true;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int mon_phase_start(struct mon_engine *e)
{
	e->done = false;
	e->origin_ns = 0;
	int r = pthread_create(&e->thread, NULL, phase_main, e);
	if (r != 0)
		return -r;
	e->running = true;
	return 0;
}
