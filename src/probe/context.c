#include "probe/context.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/nstime.h"
#include "sys/procstat.h"

/* Everything read at one moment: deltas between two of these are a window's context. */
struct snapshot {
	struct proc_table irq, soft;
	struct cpu_times *cpu;          /* per measured CPU */
	struct proc_stat machine;
	uint64_t *invol;                /* per measuring thread */
	uint64_t *smis;                 /* per measured CPU, since the counter opened */
	uint64_t self_user_ns, self_system_ns;
};

struct run_context {
	size_t ncpus;
	pid_t *tids;
	uint64_t *ended_invol;          /* per thread, once it has ended; UINT64_MAX before */
	struct snapshot start, prev, now;
	struct proc_table stat;         /* a table only for /proc/stat's buffer and CPU columns */
	struct smi_counter *smi;        /* NULL: no SMI source here */
	struct lat_error smi_why;       /* why not, or why it stopped */
	bool smi_lost;                  /* a read failed: the counts would be short */
	/* samples: nsamples rows of ncpus contexts, with their window index */
	uint64_t *index;
	struct win_context *ctx;
	struct machine_window *machine;
	size_t nsamples, cap;
	size_t *attached;               /* per CPU: how many of the samples it has taken */
	uint64_t dropped;               /* CPU-samples left without a window (a CPU far behind) */
};

static int snapshot_init(struct snapshot *s, const struct cpuset *cpus, size_t ncpus)
{
	int r = proc_table_init(&s->irq, cpus);
	if (r == 0)
		r = proc_table_init(&s->soft, cpus);
	s->cpu = calloc(ncpus ? ncpus : 1u, sizeof(*s->cpu));
	s->invol = calloc(ncpus ? ncpus : 1u, sizeof(*s->invol));
	s->smis = calloc(ncpus ? ncpus : 1u, sizeof(*s->smis));
	return r < 0 ? r : !s->cpu || !s->invol || !s->smis ? -ENOMEM : 0;
}

static void snapshot_free(struct snapshot *s)
{
	proc_table_free(&s->irq);
	proc_table_free(&s->soft);
	free(s->cpu);
	free(s->invol);
	free(s->smis);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NS_PER_SEC + (uint64_t)tv.tv_usec * NS_PER_US;
}

static int take(struct run_context *c, struct snapshot *s)
{
	struct rusage ru;
	int r = proc_read_interrupts(&s->irq, NULL);

	if (r == 0)
		r = proc_read_softirqs(&s->soft, NULL);
	if (r == 0)
		r = proc_read_stat(&c->stat, s->cpu, &s->machine, NULL);
	if (r < 0)
		return r;
	for (size_t k = 0; k < c->ncpus; k++) {
		uint64_t vol;
		if (c->ended_invol[k] != UINT64_MAX)
			s->invol[k] = c->ended_invol[k];
		else if (proc_thread_switches(c->tids[k], &vol, &s->invol[k]) < 0)
			s->invol[k] = c->prev.invol[k];     /* gone: nothing new since */
	}
	if (c->smi && !c->smi_lost && (r = smi_read(c->smi, s->smis)) < 0) {
		c->smi_lost = true;
		err_set(&c->smi_why, r, "the counter stopped reading: %s", strerror(-r));
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		s->self_user_ns = tv_ns(ru.ru_utime);
		s->self_system_ns = tv_ns(ru.ru_stime);
	}
	return 0;
}

static void swap(struct snapshot *a, struct snapshot *b)
{
	struct snapshot t = *a;
	*a = *b;
	*b = t;
}

int context_start(struct run_context **ret, const struct cpuset *cpus, const pid_t *tids, const struct smi_env *smi)
{
	struct run_context *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ncpus = cpuset_count(cpus);
	c->tids = calloc(c->ncpus ? c->ncpus : 1u, sizeof(*c->tids));
	c->ended_invol = calloc(c->ncpus ? c->ncpus : 1u, sizeof(*c->ended_invol));
	c->attached = calloc(c->ncpus ? c->ncpus : 1u, sizeof(*c->attached));
	if (!c->tids || !c->ended_invol || !c->attached) {
		r = -ENOMEM;
		goto fail;
	}
	memcpy(c->tids, tids, c->ncpus * sizeof(*tids));
	for (size_t k = 0; k < c->ncpus; k++)
		c->ended_invol[k] = UINT64_MAX;
	if ((r = proc_table_init(&c->stat, cpus)) < 0 || (r = snapshot_init(&c->start, cpus, c->ncpus)) < 0 ||
	    (r = snapshot_init(&c->prev, cpus, c->ncpus)) < 0 || (r = snapshot_init(&c->now, cpus, c->ncpus)) < 0)
		goto fail;
	if (smi_open(&c->smi, cpus, smi, &c->smi_why) < 0)
		c->smi = NULL;
	if ((r = take(c, &c->start)) < 0 || (r = take(c, &c->prev)) < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	context_free(c);
	return r;
}

/* b - a, or 0 when a counter went backwards (a source that disappeared). */
static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

static int push_sample(struct run_context *c, uint64_t index)
{
	if (c->nsamples == c->cap) {
		size_t cap = c->cap ? c->cap * 2u : 64u;
		uint64_t *ix = realloc(c->index, cap * sizeof(*ix));
		if (ix)
			c->index = ix;
		struct win_context *cx = realloc(c->ctx, cap * (c->ncpus ? c->ncpus : 1u) * sizeof(*cx));
		if (cx)
			c->ctx = cx;
		struct machine_window *mw = realloc(c->machine, cap * sizeof(*mw));
		if (mw)
			c->machine = mw;
		if (!ix || !cx || !mw)
			return -ENOMEM;
		c->cap = cap;
	}
	const struct snapshot *a = &c->prev, *b = &c->now;
	c->index[c->nsamples] = index;
	for (size_t k = 0; k < c->ncpus; k++) {
		struct win_context *w = &c->ctx[c->nsamples * c->ncpus + k];
		*w = (struct win_context){
			.valid = true,
			.irqs = delta(proc_table_total(&a->irq, k), proc_table_total(&b->irq, k)),
			.softirqs = delta(proc_table_total(&a->soft, k), proc_table_total(&b->soft, k)),
			.involuntary = delta(a->invol[k], b->invol[k]),
		};
		for (int t = 0; t < CPU_TIME_KINDS; t++)
			w->cpu_ns[t] = delta(a->cpu[k].ns[t], b->cpu[k].ns[t]);
		w->smis = delta(a->smis[k], b->smis[k]);
	}
	struct machine_window *m = &c->machine[c->nsamples];
	*m = (struct machine_window){
		.index = index,
		.irqs = delta(a->machine.intr, b->machine.intr),
		.softirqs = delta(a->machine.softirq, b->machine.softirq),
		.switches = delta(a->machine.ctxt, b->machine.ctxt),
		.self_user_ns = delta(a->self_user_ns, b->self_user_ns),
		.self_system_ns = delta(a->self_system_ns, b->self_system_ns),
	};
	for (int t = 0; t < CPU_TIME_KINDS; t++)
		m->cpu_ns[t] = delta(a->machine.cpu.ns[t], b->machine.cpu.ns[t]);
	c->nsamples++;
	return 0;
}

int context_sample(struct run_context *c, uint64_t index)
{
	int r = take(c, &c->now);
	if (r == 0)
		r = push_sample(c, index);
	if (r == 0)
		swap(&c->prev, &c->now);
	return r;
}

/* A name as it may go into JSON: printable ASCII only. */
static void clean_name(char *dst, size_t size, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1u < size; i++)
		dst[i] = src[i] > 0x20 && src[i] < 0x7f ? src[i] : '_';
	dst[i] = '\0';
}

static int by_source(struct named_counts *out, const struct proc_table *start, const struct proc_table *end, size_t k)
{
	for (size_t s = 0; s < end->nsrc; s++) {
		uint64_t now = end->counts[s * end->ncpus + k], then = proc_table_get(start, end->names[s], k);
		char name[RESULT_SOURCE_LEN];
		if (now <= then)
			continue;
		clean_name(name, sizeof(name), end->names[s]);
		int r = named_counts_add(out, name, now - then);
		if (r < 0)
			return r;
	}
	return 0;
}

void context_smi(const struct run_context *c, struct result *res)
{
	res->smi_asked = true;
	res->smi_source = c->smi && !c->smi_lost ? smi_counter_source(c->smi) : SMI_SOURCE_NONE;
	if (res->smi_source == SMI_SOURCE_NONE)
		result_info_kept(res, "SMIs: not available here (%s)", c->smi_why.msg);
}

void context_thread_ended(struct run_context *c, size_t k, uint64_t involuntary)
{
	if (k < c->ncpus)
		c->ended_invol[k] = involuntary;
}

/* CPU k takes its context of samples up to (not past) upto; taken ones are not taken again. */
static void attach_cpu(struct run_context *c, struct result *res, size_t k, size_t upto)
{
	for (; c->attached[k] < upto; c->attached[k]++) {
		size_t i = c->attached[k];
		result_add_context(&res->cpus[k], c->index[i], &c->ctx[i * c->ncpus + k]);
	}
}

/* The machine rows of samples [0, n), which every CPU has taken, into res; the rest moved to the front. */
static int retire(struct run_context *c, struct result *res, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = machine_record(&res->machine, &c->machine[i], res->warmup);
	size_t rest = c->nsamples - n;
	memmove(c->index, c->index + n, rest * sizeof(*c->index));
	memmove(c->ctx, c->ctx + n * c->ncpus, rest * c->ncpus * sizeof(*c->ctx));
	memmove(c->machine, c->machine + n, rest * sizeof(*c->machine));
	c->nsamples = rest;
	for (size_t k = 0; k < c->ncpus; k++)
		c->attached[k] -= n;
	return r;
}

/* Past this many pending samples, a CPU that hands over no window loses the oldest's context. */
#define PENDING_MAX (2u * RESULT_RECENT_WINDOWS)

int context_apply(struct run_context *c, struct result *res)
{
	size_t done = c->nsamples;

	/* Each CPU takes the samples whose window it has handed over: one lagging
	 * behind keeps its own until its windows come, and takes them then. */
	for (size_t k = 0; k < c->ncpus && k < res->ncpus; k++) {
		const struct cpu_result *cr = &res->cpus[k];
		size_t upto = c->attached[k];
		while (cr->nwin && upto < c->nsamples && c->index[upto] <= cr->win[cr->nwin - 1u].w.index)
			upto++;
		attach_cpu(c, res, k, upto);
		if (c->nsamples > PENDING_MAX && c->attached[k] < c->nsamples - PENDING_MAX) {
			c->dropped += c->nsamples - PENDING_MAX - c->attached[k];
			c->attached[k] = c->nsamples - PENDING_MAX;   /* better none than the wrong window's */
		}
		if (c->attached[k] < done)
			done = c->attached[k];
	}
	return done ? retire(c, res, done) : 0;
}

int context_finish(struct run_context *c, struct result *res, uint64_t last_index)
{
	int r = context_sample(c, last_index);
	if (r < 0)
		return r;
	for (size_t k = 0; k < c->ncpus && k < res->ncpus; k++)
		attach_cpu(c, res, k, c->nsamples);     /* every window is there now */
	if ((r = retire(c, res, c->nsamples)) < 0)
		return r;
	if (c->dropped)
		result_note(res, "the context (interrupts, steal) of %llu CPU-windows is missing: their CPU handed "
			    "over no window for %u windows", (unsigned long long)c->dropped, PENDING_MAX);
	/* After the swap, the newest counts are in prev. */
	if (c->smi_lost)
		context_smi(c, res);    /* the counts since the failure are missing: none is said */
	for (size_t k = 0; k < c->ncpus && k < res->ncpus; k++) {
		struct cpu_result *cr = &res->cpus[k];
		cr->has_context = true;
		if ((r = by_source(&cr->irqs, &c->start.irq, &c->prev.irq, k)) < 0 ||
		    (r = by_source(&cr->softirqs, &c->start.soft, &c->prev.soft, k)) < 0)
			return r;
	}
	return 0;
}

void context_free(struct run_context *c)
{
	if (!c)
		return;
	snapshot_free(&c->start);
	snapshot_free(&c->prev);
	snapshot_free(&c->now);
	proc_table_free(&c->stat);
	smi_close(c->smi);
	free(c->tids);
	free(c->ended_invol);
	free(c->attached);
	free(c->index);
	free(c->ctx);
	free(c->machine);
	free(c);
}
