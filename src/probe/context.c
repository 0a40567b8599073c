#include "probe/context.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/procstat.h"

struct run_context {
	size_t ncpus;
	pid_t *tids;
	struct proc_table irq_start, irq_prev, irq_now;
	struct proc_table soft_start, soft_prev, soft_now;
	uint64_t *steal_prev, *steal_now;
	uint64_t *invol_prev;
	/* samples: nsamples rows of ncpus contexts, with their window index */
	uint64_t *index;
	struct win_context *ctx;
	size_t nsamples, cap;
};

static int read_all(struct proc_table *irq, struct proc_table *soft, uint64_t *steal)
{
	int r = proc_read_interrupts(irq, NULL);
	if (r == 0)
		r = proc_read_softirqs(soft, NULL);
	if (r == 0)
		r = proc_read_steal(irq, steal, NULL);
	return r;
}

static void swap_tables(struct proc_table *a, struct proc_table *b)
{
	struct proc_table t = *a;
	*a = *b;
	*b = t;
}

int context_start(struct run_context **ret, const struct cpuset *cpus, const pid_t *tids)
{
	struct run_context *c = calloc(1, sizeof(*c));
	int r = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->ncpus = cpuset_count(cpus);
	c->tids = calloc(c->ncpus, sizeof(*c->tids));
	c->steal_prev = calloc(c->ncpus, sizeof(uint64_t));
	c->steal_now = calloc(c->ncpus, sizeof(uint64_t));
	c->invol_prev = calloc(c->ncpus, sizeof(uint64_t));
	if (!c->tids || !c->steal_prev || !c->steal_now || !c->invol_prev)
		goto fail;
	memcpy(c->tids, tids, c->ncpus * sizeof(*tids));
	if ((r = proc_table_init(&c->irq_start, cpus)) < 0 || (r = proc_table_init(&c->irq_prev, cpus)) < 0 ||
	    (r = proc_table_init(&c->irq_now, cpus)) < 0 || (r = proc_table_init(&c->soft_start, cpus)) < 0 ||
	    (r = proc_table_init(&c->soft_prev, cpus)) < 0 || (r = proc_table_init(&c->soft_now, cpus)) < 0)
		goto fail;
	if ((r = read_all(&c->irq_start, &c->soft_start, c->steal_prev)) < 0 ||
	    (r = read_all(&c->irq_prev, &c->soft_prev, c->steal_prev)) < 0)
		goto fail;
	for (size_t k = 0; k < c->ncpus; k++) {
		uint64_t vol;
		if (proc_thread_switches(c->tids[k], &vol, &c->invol_prev[k]) < 0)
			c->invol_prev[k] = 0;
	}
	*ret = c;
	return 0;
fail:
	context_free(c);
	return r;
}

static int push_sample(struct run_context *c, uint64_t index)
{
	if (c->nsamples == c->cap) {
		size_t cap = c->cap ? c->cap * 2u : 64u;
		uint64_t *ix = realloc(c->index, cap * sizeof(*ix));
		if (!ix)
			return -ENOMEM;
		c->index = ix;
		struct win_context *cx = realloc(c->ctx, cap * c->ncpus * sizeof(*cx));
		if (!cx)
			return -ENOMEM;
		c->ctx = cx;
		c->cap = cap;
	}
	c->index[c->nsamples] = index;
	for (size_t k = 0; k < c->ncpus; k++) {
		struct win_context *w = &c->ctx[c->nsamples * c->ncpus + k];
		uint64_t vol, invol = c->invol_prev[k];
		if (proc_thread_switches(c->tids[k], &vol, &invol) < 0)
			invol = c->invol_prev[k];
		*w = (struct win_context){
			.valid = true,
			.irqs = proc_table_total(&c->irq_now, k) - proc_table_total(&c->irq_prev, k),
			.softirqs = proc_table_total(&c->soft_now, k) - proc_table_total(&c->soft_prev, k),
			.involuntary = invol - c->invol_prev[k],
			.steal_ns = c->steal_now[k] - c->steal_prev[k],
		};
		c->invol_prev[k] = invol;
	}
	c->nsamples++;
	return 0;
}

int context_sample(struct run_context *c, uint64_t index)
{
	int r = read_all(&c->irq_now, &c->soft_now, c->steal_now);
	if (r < 0)
		return r;
	if ((r = push_sample(c, index)) < 0)
		return r;
	swap_tables(&c->irq_prev, &c->irq_now);
	swap_tables(&c->soft_prev, &c->soft_now);
	uint64_t *t = c->steal_prev;
	c->steal_prev = c->steal_now;
	c->steal_now = t;
	return 0;
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

int context_finish(struct run_context *c, struct result *res, uint64_t last_index)
{
	int r = context_sample(c, last_index);
	if (r < 0)
		return r;
	/* After the swap, the newest counts are in *_prev. */
	for (size_t k = 0; k < c->ncpus && k < res->ncpus; k++) {
		struct cpu_result *cr = &res->cpus[k];
		cr->has_context = true;
		for (size_t i = 0; i < c->nsamples; i++)
			result_add_context(cr, c->index[i], &c->ctx[i * c->ncpus + k]);
		if ((r = by_source(&cr->irqs, &c->irq_start, &c->irq_prev, k)) < 0 ||
		    (r = by_source(&cr->softirqs, &c->soft_start, &c->soft_prev, k)) < 0)
			return r;
	}
	return 0;
}

void context_free(struct run_context *c)
{
	if (!c)
		return;
	proc_table_free(&c->irq_start);
	proc_table_free(&c->irq_prev);
	proc_table_free(&c->irq_now);
	proc_table_free(&c->soft_start);
	proc_table_free(&c->soft_prev);
	proc_table_free(&c->soft_now);
	free(c->tids);
	free(c->steal_prev);
	free(c->steal_now);
	free(c->invol_prev);
	free(c->index);
	free(c->ctx);
	free(c);
}
