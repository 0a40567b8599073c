#include "result/tailrun.h"

#include <errno.h>
#include <stdlib.h>

uint64_t cpu_result_observed(const struct result *res, const struct cpu_result *cr)
{
	if (cr->lr.observed_ns)
		return cr->lr.observed_ns;
	if (cr->nwin)
		return cr->win[cr->nwin - 1u].w.end_ns - cr->win[0].w.start_ns;
	return res->elapsed_ns;
}

int cpu_result_tail(const struct result *res, const struct cpu_result *cr, struct tail_fit *ret,
		    struct lat_error *err)
{
	uint64_t *max = malloc((cr->nwin ? cr->nwin : 1) * sizeof(*max));
	size_t n = 0;

	if (!max)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < cr->nwin; i++)
		if (cr->win[i].span <= 1 && cr->win[i].w.m[0].st.n)
			max[n++] = cr->win[i].w.m[0].st.max;
	int r = tail_fit(&cr->hist[0], cpu_result_observed(res, cr), max, n, ret, err);
	free(max);
	/* all: one GPD fitted to the union of unlike CPUs' tails follows the
	 * many samples of the quiet ones and can fall under the worst CPU's far
	 * levels, which the union's must reach (doc/tail-method.md) */
	for (size_t i = 0; r == 0 && cr == &res->all && res->ncpus > 1 && i < res->ncpus; i++) {
		struct tail_fit one;
		if ((r = cpu_result_tail(res, &res->cpus[i], &one, err)) == 0)
			tail_floor(ret, &one, res->cpus[i].cpu);
	}
	return r;
}
