#include <stddef.h>
#include <string.h>

#include "core/array.h"
#include "probe/clock.h"
#include "probe/io.h"
#include "probe/noise.h"
#include "probe/probe.h"
#include "probe/timer.h"
#include "probe/wake.h"
#include "result/result.h"

/* The registry: one line per probe. */
static const struct probe_ops *const probes[] = { &timer_probe, &noise_probe, &wake_probe, &io_probe, &clock_probe };

bool probe_traced_as(const char *probe, enum probe_trace_kind kind)
{
	const struct probe_ops *ops = probe_find(probe);
	return ops && ops->trace && ops->trace->kind == kind;
}

void probe_result_ops(struct result *res)
{
	const struct probe_ops *ops = probe_find(res->probe);
	if (ops && ops->per_op_costs && !res->ops.per_op) {
		res->ops.per_op = true;
		result_op_figures(res);
	}
}

const struct probe_ops *probe_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (strcmp(probes[i]->name, name) == 0)
			return probes[i];
	return NULL;
}
