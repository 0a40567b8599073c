#include "probe/tracerun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hist.h"
#include "core/linhist.h"
#include "core/stats.h"
#include "result/quiet.h"
#include "sys/procstat.h"
#include "probe/tracecross.h"
#include "probe/tracesplit.h"
#include "trace/attrib.h"
#include "trace/bpfcol.h"
#include "trace/causes.h"
#include "trace/events.h"
#include "trace/evbuf.h"
#include "trace/guard.h"
#include "trace/instance.h"
#include "trace/names.h"
#include "trace/remove.h"

#define SPIKES_MAX 10           /* explained spikes kept per CPU, largest first */
#define LOG_CAP_MAX (UINT64_C(8) << 20)
/* The parts are differences of points on one clock: they add up exactly.
 * The tolerance covers a part clamped at zero by a skew the tracer flagged. */
#define ADD_UP_TOL_NS 1000u

struct trace_run {
	struct trace_guard guard;       /* removes the instance if latscope is killed */
	struct trace_session *s;        /* the tracefs backend; NULL when BPF gathers */
	struct bpf_collector *bpf;      /* the BPF backend (a killed process's programs go with it) */
	const struct probe_ops *ops;    /* whose trace description says what to record and explain */
	bool parts;                     /* each sample split into its parts; else the gaps above explained */
	uint64_t above_ns;              /* spikes to explain (timer) */
	int thread_prio;                /* the measuring threads' kernel prio: 99 - rtprio, or 120 */
	unsigned buffer_kb;
	char fallback[256];             /* why BPF was not used when it was tried; "" */
};

size_t tracerun_log_cap(const struct run_params *rp, uint64_t samples_per_sec)
{
	/* Without a duration the log keeps the first LOG_CAP_MAX spans; the rest are counted. */
	uint64_t secs = rp->duration_ns ? rp->duration_ns / NS_PER_SEC + 2u : UINT64_MAX / 2u;
	uint64_t want = rp->loops ? rp->loops + 16u : secs > LOG_CAP_MAX / (samples_per_sec + 1u)
								  ? LOG_CAP_MAX
								  : secs * (samples_per_sec + 1u);
	return (size_t)(want < LOG_CAP_MAX ? want : LOG_CAP_MAX);
}

int tracerun_prepare(struct trace_run **ret)
{
	struct trace_run *tr = calloc(1, sizeof(*tr));
	char name[64];

	*ret = NULL;
	if (!tr)
		return -ENOMEM;
	tr->guard = (struct trace_guard){ .pid = 0, .fd = -1 };
	/* Without a guard the instance is still removed on every exit but SIGKILL,
	 * and after a SIGKILL by the next traced run. */
	if (trace_instance_name(trace_pidns(), (long)getpid(), name, sizeof(name)) == 0)
		trace_guard_start(&tr->guard, name);
	*ret = tr;
	return 0;
}

/* Samples this much earlier than the spikes to explain bring their events
 * too: the collector judges at the switch in, before the return to user. */
static uint64_t detail_ns(uint64_t above_ns)
{
	return above_ns - above_ns / 8u;
}

static int start_bpf(struct trace_run *tr, const struct run_params *rp, const struct tracerun_thread *th, size_t n,
		     struct lat_error *why)
{
	unsigned *cpu = calloc(n ? n : 1, sizeof(*cpu));
	pid_t *tid = calloc(n ? n : 1, sizeof(*tid));
	int r;

	if (!cpu || !tid) {
		r = err_set(why, -ENOMEM, "out of memory");
	} else {
		for (size_t i = 0; i < n; i++) {
			cpu[i] = th[i].cpu;
			tid[i] = th[i].tid;
		}
		struct bpfcol_opts o = { .cpu = cpu, .tid = tid, .n = n, .detail_ns = detail_ns(tr->above_ns),
					 .samples_cap = rp->trace_log_cap, .samples_per_sec = rp->trace_rate,
					 .stream = !tr->parts };
		if (o.stream)   /* noise: every event of the CPU, as the probe's description counts them */
			o.samples_per_sec = tr->ops->trace->events_per_sec;
		r = bpfcol_start(&o, &tr->bpf, why);
	}
	free(cpu);
	free(tid);
	return r;
}

static int start_tracefs(struct trace_run *tr, const struct run_params *rp, const struct probe_ops *ops,
			 struct lat_error *why)
{
	struct trace_opts o = { .cpus = rp->cpus, .guard = &tr->guard };

	tr->buffer_kb = rp->trace_buffer_kb ? rp->trace_buffer_kb
					    : trace_buffer_kb_for(rp->duration_ns, ops->trace->events_per_sec);
	o.buffer_kb = tr->buffer_kb;
	o.events = ops->trace->events;
	o.sleep_call = (enum trace_sleep_call)rp->trace_sleep_call;
	return trace_session_start(&o, &tr->s, why);
}

int tracerun_start(struct trace_run *tr, const struct run_params *rp, const struct probe_ops *ops,
		   const struct tracerun_thread *th, size_t n, struct lat_error *why)
{
	struct lat_error bpf_why;

	if (!ops->trace) {
		return err_set(why, -ENOTSUP, "%s samples have no trace explanation", ops->name);
	}
	tr->ops = ops;
	tr->parts = ops->trace->kind == PROBE_TRACE_PARTS;
	tr->above_ns = rp->trace_above_ns ? rp->trace_above_ns : rp->threshold_ns;
	tr->thread_prio = rp->trace_thread_prio ? rp->trace_thread_prio
			: rp->policy == POLICY_OTHER ? 120 : 99 - (int)rp->priority;
	tr->fallback[0] = '\0';
	/* The collector follows a timer thread's clock_nanosleep on CLOCK_MONOTONIC,
	 * or (noise) streams every event of the CPU; both compares timer samples. */
	const char *unfit = !tr->parts && rp->trace_backend == TRACE_BACKEND_BOTH
				    ? "both compares the split of timer samples; noise gaps have none"
			    : !tr->parts                    ? NULL
			    : rp->policy == POLICY_DEADLINE ? "the BPF collector follows timers, and deadline threads "
							      "wait on none"
			    : !rp->trace_sleeps_mono        ? "the BPF collector follows clock_nanosleep on "
							      "CLOCK_MONOTONIC (--mode nanosleep, --clock monotonic)"
							    : NULL;
	if (rp->trace_backend == TRACE_BACKEND_TRACEFS)
		return start_tracefs(tr, rp, ops, why);
	if (rp->trace_backend == TRACE_BACKEND_BPF || rp->trace_backend == TRACE_BACKEND_BOTH) {
		const char *opt = rp->trace_backend == TRACE_BACKEND_BPF ? "bpf" : "both";
		if (unfit)
			return err_set(why, -ENOTSUP, "--trace-backend %s: %s", opt, unfit);
		int r = start_bpf(tr, rp, th, n, why);
		if (r < 0)
			return err_prefix(why, r, "--trace-backend %s: ", opt);
		if (rp->trace_backend == TRACE_BACKEND_BPF)
			return 0;
		if ((r = start_tracefs(tr, rp, ops, why)) < 0) {
			bpfcol_free(tr->bpf);
			tr->bpf = NULL;
			return err_prefix(why, r, "--trace-backend both: ");
		}
		return 0;
	}
	if (unfit) {
		snprintf(tr->fallback, sizeof(tr->fallback), "%.200s", unfit);
		return start_tracefs(tr, rp, ops, why);
	}
	if (start_bpf(tr, rp, th, n, &bpf_why) == 0)
		return 0;
	snprintf(tr->fallback, sizeof(tr->fallback), "%.200s", bpf_why.msg);
	int r = start_tracefs(tr, rp, ops, why);
	if (r < 0)
		err_prefix(why, r, "BPF: %.200s; tracefs: ", bpf_why.msg);
	return r;
}

const char *tracerun_backend(const struct trace_run *tr)
{
	return !tr ? NULL : tr->bpf ? "bpf" : tr->s ? "tracefs" : NULL;
}

const char *tracerun_fallback(const struct trace_run *tr)
{
	return tr && tr->s && !tr->bpf && tr->fallback[0] ? tr->fallback : NULL;
}

const char *tracerun_mounted(const struct trace_run *tr)
{
	return tr ? trace_session_mounted(tr->s) : NULL;
}

bool tracerun_active(const struct trace_run *tr)
{
	return tr && (tr->s || tr->bpf);
}

void tracerun_note_mount(struct result *res, const char *mounted_at)
{
	if (mounted_at)
		result_info_shown(res, "tracefs was not mounted: latscope mounted it at '%s' for this run", mounted_at);
}

void tracerun_note_unmount(struct result *res, int r, const char *note)
{
	if (r < 0)
		result_note(res, "%s", note);   /* latscope changed the system and could not undo it */
	else if (r == 0)
		result_info(res, "%s", note);
}

void tracerun_free(struct trace_run *tr, struct result *res)
{
	const char *note;

	if (!tr)
		return;
	unsigned removed;
	if (tr->bpf && !tr->s)
		trace_remove_stale_instances(&removed);    /* what killed tracefs runs left: tidied after a BPF run too */
	bpfcol_free(tr->bpf);
	trace_session_destroy(tr->s);
	int r = trace_session_unmounted(tr->s, &note);
	if (res)
		tracerun_note_unmount(res, r, note);
	trace_session_free(tr->s);
	trace_guard_release(&tr->guard);        /* after the instance is gone */
	free(tr);
}

/* ---- the result's "trace" object ---------------------------------------- */

struct part_acc {
	struct stats st;
	struct hist h;
};

static json_t *summary_json(const struct stats *st, const struct hist *h)
{
	json_t *o = json_object(), *buckets = json_array();
	json_object_set_new(o, "count", json_integer((json_int_t)st->n));
	if (st->n) {
		json_object_set_new(o, "min_ns", json_integer((json_int_t)st->min));
		json_object_set_new(o, "mean_ns", json_real(st->mean));
		json_object_set_new(o, "max_ns", json_integer((json_int_t)st->max));
		json_object_set_new(o, "p50_ns", json_integer((json_int_t)hist_percentile(h, 50.0)));
		json_object_set_new(o, "p99_ns", json_integer((json_int_t)hist_percentile(h, 99.0)));
		json_object_set_new(o, "p99.9_ns", json_integer((json_int_t)hist_percentile(h, 99.9)));
	}
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u)) {
		json_t *b = json_array();
		json_array_append_new(b, json_integer((json_int_t)hist_bucket_low(i)));
		json_array_append_new(b, json_integer((json_int_t)hist_bucket_high(i)));
		json_array_append_new(b, json_integer((json_int_t)h->counts[i]));
		json_array_append_new(buckets, b);
	}
	json_object_set_new(o, "histogram", buckets);
	return o;
}

/*
 * rtla's three stages of a sample, each from the deadline D: "irq" to the
 * timer's expiry, "thread" to the switch to the thread (expiry, handler and
 * wakeup), "user" to the clock read (the whole latency).  Cumulative, so each
 * is at least the one before and at most the latency, whatever a skew did to
 * a part.  With a front end's linear histogram kept (result_keep_lin, lent to
 * the thread while measuring: tracerun_thread.lin), each
 * stage is also counted in its unit and bins, so the front end prints exact
 * buckets (latscope rtla).
 */
enum { STAGE_IRQ, STAGE_THREAD, STAGE_USER, STAGES };
static const char *const stage_names[STAGES] = { "irq", "thread", "user" };

struct stage_acc {
	struct part_acc a;
	uint64_t *lin;                  /* NULL: no linear histogram */
	uint64_t over, sum;             /* values at or past the bins; sum of whole units */
};

static void stage_values(const struct trace_timer_sample *smp, uint64_t total, uint64_t v[STAGES])
{
	int64_t irq = smp->part[TRACE_PART_IRQ_DELAY];
	int64_t thr = irq + smp->part[TRACE_PART_HANDLER] + smp->part[TRACE_PART_WAKEUP];
	v[STAGE_IRQ] = irq <= 0 ? 0 : (uint64_t)irq > total ? total : (uint64_t)irq;
	v[STAGE_THREAD] = thr <= 0 ? 0 : (uint64_t)thr > total ? total : (uint64_t)thr;
	if (v[STAGE_THREAD] < v[STAGE_IRQ])
		v[STAGE_THREAD] = v[STAGE_IRQ];
	v[STAGE_USER] = total;
}

static void stage_add(struct stage_acc *sa, const struct lin_hist *lin, uint64_t v)
{
	stats_add(&sa->a.st, v);
	hist_record(&sa->a.h, v);
	if (!sa->lin)
		return;
	uint64_t u = v / lin->unit_ns;
	sa->sum += u;
	if (u < lin->nbins)
		sa->lin[u]++;
	else
		sa->over++;
}

static json_t *stage_json(const struct stage_acc *sa, const struct lin_hist *lin)
{
	json_t *o = summary_json(&sa->a.st, &sa->a.h);
	if (!sa->lin)
		return o;
	json_t *bins = json_array();
	for (uint32_t i = 0; i < lin->nbins; i++)
		if (sa->lin[i])
			json_array_append_new(bins, json_pack("[I, I]", (json_int_t)i, (json_int_t)sa->lin[i]));
	json_object_set_new(o, "linear", json_pack("{s:I, s:I, s:I, s:o}", "unit_ns", (json_int_t)lin->unit_ns, "over",
						   (json_int_t)sa->over, "sum_units", (json_int_t)sa->sum, "bins", bins));
	return o;
}

static json_t *contrib_json(const struct trace_contrib *c)
{
	json_t *e = json_object();
	json_object_set_new(e, "kind", json_string(trace_occ_kind_name((enum trace_occ_kind)c->kind)));
	if (c->name[0])
		json_object_set_new(e, "name", json_string(c->name));
	if (c->kind == TRACE_OCC_TASK || c->kind == TRACE_OCC_IRQ || c->kind == TRACE_OCC_SOFTIRQ)
		json_object_set_new(e, "id", json_integer(c->id));
	if (c->kind == TRACE_OCC_TASK)
		json_object_set_new(e, "prio", json_integer(c->prio));
	json_object_set_new(e, "ns", json_integer((json_int_t)c->ns));
	json_object_set_new(e, "count", json_integer(c->count));
	return e;
}

static json_t *occupancy_json(const struct trace_occupancy *occ)
{
	json_t *o = json_object(), *top = json_array(), *kinds = json_object();
	for (unsigned i = 0; i < occ->ntop; i++)
		json_array_append_new(top, contrib_json(&occ->top[i]));
	for (unsigned k = 0; k < TRACE_OCC_KINDS; k++)
		json_object_set_new(kinds, trace_occ_kind_name((enum trace_occ_kind)k),
				    json_integer((json_int_t)occ->kind_ns[k]));
	json_object_set_new(o, "by", top);
	json_object_set_new(o, "other_ns", json_integer((json_int_t)occ->other_ns));
	json_object_set_new(o, "by_kind_ns", kinds);
	if (occ->flags & TRACE_F_LOST)
		json_object_set_new(o, "events_lost", json_true());
	return o;
}

/* The context of the window holding absolute time t on this CPU; NULL unknown
 * (also for a folded window: its counts are many windows'). */
static const struct win_context *window_ctx(const struct result *res, const struct cpu_result *cr, uint64_t t)
{
	if (!cr || t < res->origin_ns)
		return NULL;
	uint64_t rel = t - res->origin_ns;
	for (size_t i = 0; i < cr->nwin; i++) {
		const struct result_window *w = &cr->win[i];
		if (rel >= w->w.start_ns && rel < w->w.end_ns && w->ctx.valid)
			return w->span == 1 ? &w->ctx : NULL;
	}
	return NULL;
}

struct spike {
	uint64_t value, at;
	json_t *doc;
};

/* Keep the SPIKES_MAX largest, largest first, with their window's steal and SMIs; takes doc. */
static void keep_spike(struct spike *sp, unsigned *n, const struct result *res, const struct cpu_result *cr,
		       const struct rec_span *s, json_t *doc)
{
	uint64_t value = s->to_ns - s->from_ns, at = s->from_ns;
	const struct win_context *ctx = window_ctx(res, cr, s->from_ns);
	if (ctx) {
		/* what the window counted, for time no kernel event covers */
		json_object_set_new(doc, "window_steal_ns", json_integer((json_int_t)ctx->cpu_ns[CPU_STEAL]));
		if (res->smi_asked && res->smi_source != SMI_SOURCE_NONE)
			json_object_set_new(doc, "window_smis", json_integer((json_int_t)ctx->smis));
		json_object_set_new(doc, "window_quiet_cause", json_string(quiet_cause_name(quiet_cause_of(res, ctx))));
	}
	unsigned i = *n < SPIKES_MAX ? (*n)++ : SPIKES_MAX;
	if (i == SPIKES_MAX) {
		if (value <= sp[SPIKES_MAX - 1u].value) {
			json_decref(doc);
			return;
		}
		json_decref(sp[SPIKES_MAX - 1u].doc);
		i = SPIKES_MAX - 1u;
	}
	for (; i > 0 && sp[i - 1u].value < value; i--)
		sp[i] = sp[i - 1u];
	sp[i] = (struct spike){ value, at, doc };
}

static json_t *spikes_json(struct spike *sp, unsigned n)
{
	json_t *a = json_array();
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, sp[i].doc);
	return a;
}

static json_t *explain_json(const struct trace_cpu_events *ce, unsigned cpu, pid_t tid, uint64_t start,
			    uint64_t end, uint64_t kind_total[TRACE_OCC_KINDS], struct trace_causes *causes)
{
	struct trace_occupancy occ;
	if (trace_explain(ce->ev, ce->n, cpu, (int32_t)tid, start, end, &occ) < 0)
		return NULL;
	for (unsigned k = 0; k < TRACE_OCC_KINDS; k++)
		kind_total[k] += occ.kind_ns[k];
	if (trace_causes_add(causes, &occ) < 0)
		causes->other_ns += occ.end - occ.start;   /* out of memory: counted, not named */
	return occupancy_json(&occ);
}

#define CAUSES_KEPT 10

static json_t *causes_json(struct trace_causes *c)
{
	json_t *a = json_array();
	uint64_t rest = c->other_ns;

	trace_causes_rank(c);
	for (size_t i = 0; i < c->n; i++) {
		if (i < CAUSES_KEPT)
			json_array_append_new(a, contrib_json(&c->v[i]));
		else
			rest += c->v[i].ns;
	}
	json_t *o = json_object();
	json_object_set_new(o, "by", a);
	json_object_set_new(o, "other_ns", json_integer((json_int_t)rest));
	return o;
}

/*
 * Before the expiry the timer interrupt had not arrived: how much of that
 * was an interrupt not delivered, trace_undelivered_ns() says.  After the
 * expiry, whatever held the CPU delayed the wakeup.
 */
static void explain_timer_spike(const struct trace_run *tr, struct splitter *sp, const struct rec_span *s,
				const struct trace_timer_sample *smp, json_t *d)
{
	const struct tracerun_thread *th = sp->th;
	struct trace_occupancy occ;
	uint64_t expiry = smp->expiry_ts > s->from_ns ? smp->expiry_ts : s->from_ns;
	uint64_t end = smp->switch_ts > expiry ? smp->switch_ts : s->to_ns;
	const struct trace_ev *ev;
	size_t n;

	sp->events(sp, s, &ev, &n);
	if (!n)
		return;
	if (expiry > s->from_ns && trace_explain(ev, n, th->cpu, (int32_t)th->tid, s->from_ns, expiry, &occ) == 0) {
		uint64_t undelivered = trace_undelivered_ns(&occ, tr->thread_prio, smp->part[TRACE_PART_IRQ_DELAY]);
		json_t *o = occupancy_json(&occ);
		json_object_set_new(o, "interrupt_not_delivered_ns", json_integer((json_int_t)undelivered));
		json_object_set_new(d, "before_expiry", o);
	}
	if (end > expiry && trace_explain(ev, n, th->cpu, (int32_t)th->tid, expiry, end, &occ) == 0)
		json_object_set_new(d, "after_expiry", occupancy_json(&occ));
}

static json_t *timer_cpu(const struct trace_run *tr, struct splitter *sp, const struct result *res,
			 const struct cpu_result *cr)
{
	const struct tracerun_thread *th = sp->th;
	struct part_acc *acc = calloc(TRACE_PARTS, sizeof(*acc));
	struct stage_acc *stg = calloc(STAGES, sizeof(*stg));
	const struct lin_hist *lin = th->lin && th->lin->unit_ns && th->lin->nbins ? th->lin : NULL;
	struct spike spk[SPIKES_MAX];
	unsigned nsp = 0;
	uint64_t matched = 0, add_up = 0, unmatched = 0, inferred = 0;
	json_t *o = json_object();
	bool ok = acc && stg && o;

	for (unsigned g = 0; ok && lin && g < STAGES; g++)
		ok = (stg[g].lin = calloc(lin->nbins, sizeof(*stg[g].lin))) != NULL;
	if (!ok) {
		for (unsigned g = 0; stg && g < STAGES; g++)
			free(stg[g].lin);
		free(stg);
		free(acc);
		json_decref(o);
		return NULL;
	}
	for (unsigned p = 0; p < TRACE_PARTS; p++)
		stats_reset(&acc[p].st);
	for (unsigned g = 0; g < STAGES; g++)
		stats_reset(&stg[g].a.st);
	for (size_t i = 0; i < th->log->n; i++) {
		const struct rec_span *s = &th->log->spans[i];
		struct trace_timer_sample smp;
		if (sp->split(sp, s, &smp) < 0) {
			unmatched++;
			continue;
		}
		matched++;
		inferred += (smp.flags & TRACE_F_SWITCH_INFERRED) != 0;
		int64_t sum = 0;
		for (unsigned p = 0; p < TRACE_PARTS; p++) {
			uint64_t v = smp.part[p] > 0 ? (uint64_t)smp.part[p] : 0;
			sum += smp.part[p];
			stats_add(&acc[p].st, v);
			hist_record(&acc[p].h, v);
		}
		int64_t total = (int64_t)(s->to_ns - s->from_ns);
		add_up += (sum > total ? sum - total : total - sum) <= ADD_UP_TOL_NS;
		uint64_t sv[STAGES];
		stage_values(&smp, s->to_ns - s->from_ns, sv);
		for (unsigned g = 0; g < STAGES; g++)
			stage_add(&stg[g], lin, sv[g]);
		if (s->to_ns - s->from_ns <= tr->above_ns)
			continue;
		json_t *d = json_object(), *parts = json_object();
		json_object_set_new(d, "at_ns", json_integer((json_int_t)(s->from_ns - res->origin_ns)));
		json_object_set_new(d, "latency_ns", json_integer(total));
		for (unsigned p = 0; p < TRACE_PARTS; p++)
			json_object_set_new(parts, trace_part_name((enum trace_part)p), json_integer(smp.part[p]));
		json_object_set_new(d, "parts", parts);
		explain_timer_spike(tr, sp, s, &smp, d);
		keep_spike(spk, &nsp, res, cr, s, d);
	}
	json_t *parts = json_object();
	for (unsigned p = 0; p < TRACE_PARTS; p++)
		json_object_set_new(parts, trace_part_name((enum trace_part)p), summary_json(&acc[p].st, &acc[p].h));
	free(acc);
	json_t *stages = json_object();
	for (unsigned g = 0; g < STAGES; g++) {
		json_object_set_new(stages, stage_names[g], stage_json(&stg[g], lin));
		free(stg[g].lin);
	}
	free(stg);
	json_object_set_new(o, "samples", json_integer((json_int_t)(th->log->n + th->log->dropped)));
	json_object_set_new(o, "samples_not_logged", json_integer((json_int_t)th->log->dropped));
	json_object_set_new(o, "matched", json_integer((json_int_t)matched));
	json_object_set_new(o, "unmatched", json_integer((json_int_t)unmatched));
	json_object_set_new(o, "add_up", json_integer((json_int_t)add_up));
	json_object_set_new(o, "switch_inferred", json_integer((json_int_t)inferred));
	json_object_set_new(o, "parts", parts);
	json_object_set_new(o, "stages", stages);
	json_object_set_new(o, "spikes_above_ns", json_integer((json_int_t)tr->above_ns));
	json_object_set_new(o, "spikes", spikes_json(spk, nsp));
	return o;
}

static json_t *noise_cpu(const struct trace_cpu_events *ce, const struct tracerun_thread *th, const struct result *res,
			 const struct cpu_result *cr)
{
	struct spike sp[SPIKES_MAX];
	unsigned nsp = 0;
	uint64_t kind_total[TRACE_OCC_KINDS] = { 0 }, explained = 0;
	struct trace_causes causes = { 0 };
	json_t *o = json_object();

	for (size_t i = 0; i < th->log->n; i++) {
		const struct rec_span *s = &th->log->spans[i];
		json_t *occ = explain_json(ce, th->cpu, th->tid, s->from_ns, s->to_ns, kind_total, &causes);
		if (!occ)
			continue;
		explained++;
		json_t *d = json_object();
		json_object_set_new(d, "at_ns", json_integer((json_int_t)(s->from_ns - res->origin_ns)));
		json_object_set_new(d, "gap_ns", json_integer((json_int_t)(s->to_ns - s->from_ns)));
		json_object_set_new(d, "occupied_by", occ);
		keep_spike(sp, &nsp, res, cr, s, d);
	}
	json_t *kinds = json_object();
	for (unsigned k = 0; k < TRACE_OCC_KINDS; k++)
		json_object_set_new(kinds, trace_occ_kind_name((enum trace_occ_kind)k), json_integer((json_int_t)kind_total[k]));
	json_object_set_new(o, "events", json_integer((json_int_t)(th->log->n + th->log->dropped)));
	json_object_set_new(o, "events_not_logged", json_integer((json_int_t)th->log->dropped));
	json_object_set_new(o, "explained", json_integer((json_int_t)explained));
	json_object_set_new(o, "by_kind_ns", kinds);
	json_object_set_new(o, "causes", causes_json(&causes));
	trace_causes_free(&causes);
	json_object_set_new(o, "spikes", spikes_json(sp, nsp));
	return o;
}

/* The ring buffer is read once, at the end: a run longer than it holds keeps
 * only its last part, and the samples before are not split.  Said, not hidden. */
static void note_lost(const struct trace_run *tr, const json_t *doc, uint64_t lost, struct result *res)
{
	json_int_t samples = 0, matched = 0;
	size_t i;
	json_t *c;

	if (!lost || !tr->parts)
		return;
	json_array_foreach(json_object_get(doc, "cpus"), i, c) {
		samples += json_integer_value(json_object_get(c, "samples"));
		matched += json_integer_value(json_object_get(c, "matched"));
	}
	result_note(res, "the trace's ring buffer (%u KiB a CPU) overflowed and lost %llu events: %lld of %lld samples "
		    "are split into parts, the others (mostly the run's earlier part) are not; a run given its duration "
		    "gets a ring sized for it", tr->buffer_kb, (unsigned long long)lost, (long long)matched,
		    (long long)samples);
}

static json_t *trace_doc(const struct trace_run *tr, unsigned buffer_kb, uint64_t lost)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "mode", json_string(tr->ops->name));   /* the probe whose samples it explains */
	json_object_set_new(doc, "backend", json_string(tracerun_backend(tr)));
	json_object_set_new(doc, "buffer_kb", json_integer(buffer_kb));
	json_object_set_new(doc, "events_lost", json_integer((json_int_t)lost));
	return doc;
}

static void set_trace(struct result *res, json_t *doc, json_t *cpus)
{
	json_object_set_new(doc, "cpus", cpus);
	json_decref(res->trace);
	res->trace = doc;
}

/* Stop the tracefs session and read all of it, for the threads' CPUs. */
static int tracefs_read(struct trace_run *tr, const struct tracerun_thread *threads, size_t n,
			struct trace_events **ret, struct lat_error *why)
{
	unsigned ncpus = 0;
	int r;

	*ret = NULL;
	trace_session_stop(tr->s);
	for (size_t i = 0; i < n; i++)
		ncpus = threads[i].cpu + 1u > ncpus ? threads[i].cpu + 1u : ncpus;
	if ((r = trace_events_new(ncpus, 0, ret)) < 0)
		return err_set(why, r, "out of memory");
	if ((r = trace_session_read(tr->s, *ret, why)) < 0) {
		trace_events_free(*ret);
		*ret = NULL;
	}
	trace_session_destroy(tr->s);
	return r;
}

static int tracefs_finish(struct trace_run *tr, const struct tracerun_thread *threads, size_t n, struct result *res,
			  struct lat_error *why)
{
	struct trace_events *ev;
	int r = tracefs_read(tr, threads, n, &ev, why);

	if (r < 0)
		return r;
	json_t *doc = trace_doc(tr, tr->buffer_kb, trace_events_lost(ev)), *cpus = json_array();
	struct splitter *sp = calloc(1, sizeof(*sp));
	for (size_t i = 0; sp && i < n; i++) {
		const struct tracerun_thread *th = &threads[i];
		const struct trace_cpu_events *ce = &ev->cpu[th->cpu];
		const struct cpu_result *cr = i < res->ncpus ? &res->cpus[i] : NULL;
		splitter_tracefs(sp, th, ce);
		json_t *c = tr->parts ? timer_cpu(tr, sp, res, cr) : noise_cpu(ce, th, res, cr);
		if (!c)
			continue;
		json_object_set_new(c, "cpu", json_integer(th->cpu));
		json_object_set_new(c, "trace_events", json_integer((json_int_t)ce->n));
		json_array_append_new(cpus, c);
	}
	free(sp);
	set_trace(res, doc, cpus);
	note_lost(tr, doc, trace_events_lost(ev), res);
	trace_events_free(ev);
	return 0;
}

/* The collector's lost records, the late samples it could not send the
 * events of, and what came past the log's bound: said, not hidden. */
static void note_bpf_lost(const struct trace_run *tr, uint64_t lost, uint64_t dropped, uint64_t not_kept,
			  struct result *res)
{
	if (lost && tr->parts)
		result_note(res, "the BPF collector's ring buffer was full %llu times: as many samples are not split "
			    "into parts", (unsigned long long)lost);
	else if (lost)
		result_note(res, "the BPF collector's ring buffer was full %llu times: as many batches of up to %u events "
			    "are lost, and the gaps near them may be unexplained", (unsigned long long)lost,
			    (unsigned)LS_BPF_EV_CAP);
	if (dropped)
		result_note(res, "%llu samples above the spike threshold came while the BPF collector's ring buffer was "
			    "half full: they are split, their events were not sent", (unsigned long long)dropped);
	if (not_kept && tr->parts)
		result_note(res, "%llu sample records came after the trace's log was full and are not split into parts",
			    (unsigned long long)not_kept);
	else if (not_kept)
		result_note(res, "%llu events came after the trace's store was full: the gaps after them are not "
			    "explained", (unsigned long long)not_kept);
}

/* --trace-backend both: tracefs's trace read, and each sample compared (probe/tracecross.h). */
static int cross_check(struct trace_run *tr, const struct tracerun_thread *threads, size_t n, json_t *doc,
		       struct lat_error *why)
{
	struct trace_events *ev;
	int r = tracefs_read(tr, threads, n, &ev, why);

	if (r < 0)
		return r;
	json_t *c = trace_cross_check(threads, n, tr->bpf, ev, tr->above_ns);
	if (c)
		json_object_set_new(doc, "cross_check", c);
	else
		r = err_set(why, -ENOMEM, "out of memory");
	trace_events_free(ev);
	return r;
}

/* kernel.bpf_stats_enabled was on: what the collector cost, measured, per
 * program (named for its tracepoint) and in all; else NULL. */
static json_t *collector_json(const struct bpf_collector *bpf)
{
	const struct bpfcol_prog_cost *pc;
	size_t n = bpfcol_cost(bpf, &pc);
	uint64_t runs = 0, run_ns = 0;
	json_t *progs = json_object();

	for (size_t i = 0; i < n; i++) {
		runs += pc[i].runs;
		run_ns += pc[i].run_ns;
		json_object_set_new(progs, pc[i].name, json_pack("{s:I, s:I}", "runs", (json_int_t)pc[i].runs, "run_ns",
								 (json_int_t)pc[i].run_ns));
	}
	if (!runs) {
		json_decref(progs);
		return NULL;
	}
	return json_pack("{s:I, s:I, s:o}", "runs", (json_int_t)runs, "run_ns", (json_int_t)run_ns, "programs", progs);
}

static int bpf_finish(struct trace_run *tr, const struct tracerun_thread *threads, size_t n, struct result *res)
{
	uint64_t lost = 0, not_kept = 0, dropped = 0;

	bpfcol_stop(tr->bpf);
	const struct trace_events *ev = bpfcol_events(tr->bpf);        /* noise: every event */
	for (size_t i = 0; i < n; i++) {
		const struct bpfcol_cpu *k = bpfcol_cpu(tr->bpf, threads[i].cpu);
		lost += k ? k->lost : 0;
		dropped += k ? k->details_dropped : 0;
		not_kept += k ? k->not_kept : 0;
		if (ev && threads[i].cpu < ev->ncpus)
			not_kept += ev->cpu[threads[i].cpu].capped + ev->cpu[threads[i].cpu].lost;
	}
	json_t *doc = trace_doc(tr, bpfcol_ring_kb(tr->bpf), lost), *cpus = json_array();
	json_t *collector = collector_json(tr->bpf);
	if (collector)
		json_object_set_new(doc, "collector", collector);
	struct splitter *sp = calloc(1, sizeof(*sp));
	for (size_t i = 0; sp && i < n; i++) {
		const struct tracerun_thread *th = &threads[i];
		const struct bpfcol_cpu *k = bpfcol_cpu(tr->bpf, th->cpu);
		const struct cpu_result *cr = i < res->ncpus ? &res->cpus[i] : NULL;
		if (!k)
			continue;
		json_t *c;
		if (tr->parts) {
			splitter_bpf(sp, th, k);
			c = timer_cpu(tr, sp, res, cr);
		} else {
			c = noise_cpu(&ev->cpu[th->cpu], th, res, cr);
		}
		if (!c)
			continue;
		json_object_set_new(c, "cpu", json_integer(th->cpu));
		json_object_set_new(c, "trace_events", json_integer((json_int_t)k->records));
		json_object_set_new(c, "records_lost", json_integer((json_int_t)k->lost));
		json_array_append_new(cpus, c);
	}
	free(sp);
	set_trace(res, doc, cpus);
	note_bpf_lost(tr, lost, dropped, not_kept, res);
	struct lat_error why;
	if (tr->s && cross_check(tr, threads, n, doc, &why) < 0)
		result_note(res, "--trace-backend both: tracefs's trace could not be read: %s", why.msg);
	return 0;
}

int tracerun_finish(struct trace_run *tr, const struct tracerun_thread *threads, size_t n, struct result *res,
		    struct lat_error *why)
{
	return tr->bpf ? bpf_finish(tr, threads, n, res) : tracefs_finish(tr, threads, n, res, why);
}
