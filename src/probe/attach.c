/*
 * The attach probe: a reader per home CPU (attachsrc.h) takes the calls of
 * its threads a few times a period, without waking on each: the times are
 * the kernel's (uprobes) or the program's (loop.h), taken when the cycle
 * began, so when the reader runs does not change them.  It waits on the
 * process's pidfd, so a program that ends ends the run.
 */
#include "probe/attach.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nstime.h"
#include "probe/attachsrc.h"
#include "probe/cyclegrid.h"
#include "probe/loopring.h"
#include "probe/uprobe.h"
#include "trace/eventlist.h"

/* How often a reader takes its calls: every READ_PERIODS periods (a quarter of the smaller
 * ring, loop.h's), between these.  Seldom: each read is a wakeup on the program's CPU. */
#define READ_PERIODS 1024u
#define READ_MIN_NS  (1u * NS_PER_MS)
#define READ_MAX_NS  (20u * NS_PER_MS)
/* Wake times taken from a loop's slot at a time. */
#define LOOP_BATCH 256u

struct reader_thread {
	pid_t tid;
	size_t slot;
	struct cyclegrid g;
};

struct reader {
	struct probe_thread *t;
	struct attach_src *src;
	struct ring_buffer *rb;
	size_t n;
	struct reader_thread th[ATTACH_THREADS];
	uint64_t buf[LOOP_BATCH], due[LOOP_BATCH];
	uint64_t lost;
	uint64_t read_ns;
};

static void take(struct reader *r, struct reader_thread *th, uint64_t entry, uint64_t ret,
		 uint64_t due, uint64_t woke, bool runtime)
{
	struct probe_thread *t = r->t;
	struct cyclegrid_call c;

	if (entry >= t->end_ns)
		return;
	/* Calls before the origin place the grid; those after are measured. */
	if (!cyclegrid_call(&th->g, entry, due, &c) || entry < t->origin_ns)
		return;
	/* The cycle began when its sleep returned, when that was seen: the probe's own trap is not in it. */
	const uint64_t began = woke && woke >= c.from_ns && woke <= entry ? woke : entry;
	if (began != entry)
		c.late_ns = began - c.from_ns;
	const uint64_t rt = ret > entry ? ret - entry : REC_NO_VALUE;
	/* Two calls: in each the metric count is a constant, so rec_sample's loop unrolls. */
	if (runtime)
		rec_sample(&t->rec, &(const struct rec_sample){ .now_ns = began,
								.v = { c.late_ns, rt },
								.nv = 2,
								.at_ns = began,
								.keeps = REC_KEEP_SPANS,
								.from_ns = c.from_ns,
								.missed = c.missed,
								.period_ns = th->g.period,
								.gaps = true,
								.untimed = true });
	else
		rec_sample(&t->rec, &(const struct rec_sample){ .now_ns = began,
								.v = { c.late_ns },
								.nv = 1,
								.at_ns = began,
								.keeps = REC_KEEP_SPANS,
								.from_ns = c.from_ns,
								.missed = c.missed,
								.period_ns = th->g.period,
								.untimed = true });
}

static struct reader_thread *thread_of(struct reader *r, pid_t tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->th[i].tid == tid)
			return &r->th[i];
	return NULL;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct reader *r = ctx;
	struct uprobe_call c;

	(void)size;
	uprobe_decode(data, &c);
	struct reader_thread *th = thread_of(r, c.tid);
	if (th)
		take(r, th, c.entry_ns, c.ret_ns, c.due_ns, c.woke_ns, true);
	return 0;
}

static void drain(struct reader *r)
{
	if (r->rb) {
		uprobe_consume(r->rb);
		return;
	}
	for (size_t i = 0; i < r->n; i++) {
		size_t got;
		do {
			got = loopring_read_due(r->src->lr, r->th[i].slot, r->buf, r->due,
						LOOP_BATCH, &r->lost);
			for (size_t k = 0; k < got; k++)
				take(r, &r->th[i], r->buf[k], 0, r->due[k], 0, false);
		} while (got == LOOP_BATCH);
	}
}

static int attach_setup(struct probe_thread *t)
{
	const struct attach_params *p = t->pp;
	struct attach_src *s = p->src;
	const int idx = s ? attachsrc_worker(s, t->cpu) : -1;
	struct reader *r = calloc(1, sizeof(*r));

	if (!r || idx < 0) {
		free(r);
		snprintf(t->err, sizeof(t->err), "%s",
			 r ? "no thread to read on this CPU" : "out of memory");
		return r ? -EINVAL : -ENOMEM;
	}
	r->t = t;
	r->src = s;
	r->read_ns = s->period_ns < READ_MAX_NS / READ_PERIODS ? s->period_ns * READ_PERIODS
							       : READ_MAX_NS;
	if (r->read_ns < READ_MIN_NS)
		r->read_ns = READ_MIN_NS;
	if (r->read_ns > READ_MAX_NS)
		r->read_ns = READ_MAX_NS;
	for (size_t i = 0; i < s->n; i++) {
		if (s->th[i].worker != (unsigned)idx)
			continue;
		struct reader_thread *th = &r->th[r->n++];
		th->tid = s->th[i].tid;
		th->slot = s->th[i].slot;
		cyclegrid_init(&th->g, s->period_ns);
		if (!t->measured_tid)
			t->measured_tid = th->tid;
	}
	if (!s->loop && !(r->rb = uprobe_reader(s->up, (unsigned)idx, on_record, r))) {
		snprintf(t->err, sizeof(t->err), "cannot read the calls of cpu %u: %s", t->cpu,
			 strerror(errno));
		free(r);
		return -EIO;
	}
	t->priv = r;
	return 0;
}

static void attach_run(struct probe_thread *t)
{
	struct reader *r = t->priv;
	struct pollfd pfd = { .fd = r->src->pidfd, .events = POLLIN };

	for (;;) {
		const uint64_t now = mono_ns();
		const bool last =
			now >= t->end_ns || atomic_load_explicit(t->stop, memory_order_relaxed);
		drain(r);
		if (last)
			return;
		uint64_t wait = r->read_ns;
		if (t->end_ns - now < wait)
			wait = t->end_ns - now;
		const struct timespec ts = { .tv_sec = (time_t)(wait / NS_PER_SEC),
					     .tv_nsec = (long)(wait % NS_PER_SEC) };
		/* The wait: the process's end, or the next read. */
		if (ppoll(&pfd, 1, &ts, NULL) == 1) {
			drain(r);
			uint64_t none = 0;
			atomic_compare_exchange_strong(&r->src->ended_ns, &none, mono_ns());
			return;
		}
	}
}

static void attach_teardown(struct probe_thread *t)
{
	struct reader *r = t->priv;
	if (!r)
		return;
	if (r->rb)
		uprobe_reader_free(r->rb);
	free(r);
	t->priv = NULL;
}

static unsigned attach_metrics_for(const void *pp)
{
	const struct attach_params *p = pp;
	return p->loop ? 1u : 2u;
}

static const char *const attach_metric_names[] = { "lateness", "runtime" };

static const struct probe_trace attach_trace = {
	.kind = PROBE_TRACE_PARTS,
	/* as the timer probe's: the program's thread sleeps on an hrtimer too */
	.events = TRACE_WANT_TIMER | TRACE_WANT_SCHED | TRACE_WANT_IRQ | TRACE_WANT_SLEEP_EXIT,
	.events_per_sec = 10000,
};

const struct probe_ops attach_probe = {
	.name = "attach",
	.title = "program cycle lateness",
	.about = "a running program's cycles: how late each call of its periodic function began "
		 "after its "
		 "period's start, and how long the call ran",
	.nmetrics = 2,
	.metric_names = attach_metric_names,
	.metrics_for = attach_metrics_for,
	.min_metrics = 1,
	.unit_ns = 1000,
	.trace = &attach_trace,
	.setup = attach_setup,
	.run = attach_run,
	.teardown = attach_teardown,
};
