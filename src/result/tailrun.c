#include "result/tailrun.h"

#include <errno.h>
#include <stdlib.h>

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
	const uint64_t observed = cr->lr.observed_ns ? cr->lr.observed_ns : res->elapsed_ns;
	int r = tail_fit(&cr->hist[0], observed, max, n, ret, err);
	free(max);
	return r;
}
