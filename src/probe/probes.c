#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/error.h"
#include "probe/clock.h"
#include "probe/io.h"
#include "probe/noise.h"
#include "probe/probe.h"
#include "probe/timer.h"
#include "probe/attach.h"
#include "probe/wake.h"
#include "result/result.h"

/* The registry: one line per probe. */
static const struct probe_ops *const probes[] = { &timer_probe, &noise_probe, &wake_probe, &io_probe, &clock_probe, &attach_probe };

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

/* s after buf's text, with sep before it unless buf is empty; cut at size. */
static void append(char *buf, size_t size, const char *sep, const char *s)
{
	size_t at = strlen(buf);
	snprintf(buf + at, size - at, "%s%s", at ? sep : "", s);
}

int probe_check_result(const struct result *res, struct lat_error *err)
{
	const struct probe_ops *ops = probe_find(res->probe);
	char want[256] = "", more[128] = "", got[256] = "";

	if (!ops) {
		for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
			append(want, sizeof(want), ", ", probes[i]->name);
		return err_set(err, -EINVAL, "probe '%s' is not one of latscope's (%s)", res->probe, want);
	}
	unsigned least = ops->min_metrics ? ops->min_metrics : ops->nmetrics;
	bool fits = res->nmetrics >= least && res->nmetrics <= ops->nmetrics;
	for (unsigned m = 0; fits && m < res->nmetrics; m++)
		fits = strcmp(res->metric_names[m], ops->metric_names[m]) == 0;
	if (fits)
		return 0;
	for (unsigned m = 0; m < ops->nmetrics; m++)
		append(m < least ? want : more, m < least ? sizeof(want) : sizeof(more), ", ", ops->metric_names[m]);
	for (unsigned m = 0; m < res->nmetrics; m++)
		append(got, sizeof(got), ", ", res->metric_names[m]);
	return err_set(err, -EINVAL, "metrics: the %s probe writes %s%s%s%s, not %s", ops->name, want,
		       more[0] ? " (and " : "", more, more[0] ? ")" : "", got);
}

const struct probe_ops *probe_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (strcmp(probes[i]->name, name) == 0)
			return probes[i];
	return NULL;
}

const struct probe_ops *probe_at(size_t i)
{
	return i < ARRAY_SIZE(probes) ? probes[i] : NULL;
}
