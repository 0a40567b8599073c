/* The figures of a probe whose values are operations: their rate and what each cost the CPU. */
#include "result/result.h"

#include <string.h>

uint64_t result_op_bytes(const struct result *res)
{
	json_t *v = res->params ? json_object_get(res->params, "bs_bytes") : NULL;
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

void result_op_figures(struct result *res)
{
	struct op_figures *o = &res->ops;
	const bool per_op = o->per_op;
	const double n = (double)res->all.sum[0].count, secs = (double)res->elapsed_ns / 1e9;

	memset(o, 0, sizeof(*o));
	o->per_op = per_op;
	if (!per_op || res->nmetrics == 0 || n <= 0 || secs <= 0)
		return;
	o->valid = true;
	o->bytes_per_op = result_op_bytes(res);
	o->ops_per_sec = n / secs;
	o->bytes_per_sec = o->ops_per_sec * (double)o->bytes_per_op;
	if (!res->machine.valid)
		return;
	const struct machine_window *m = &res->machine.total;
	o->has_cpu = true;
	for (int k = 0; k < CPU_TIME_KINDS; k++)
		o->cpu_ns_per_op[k] = (double)m->cpu_ns[k] / n;
	o->self_user_ns_per_op = (double)m->self_user_ns / n;
	o->self_system_ns_per_op = (double)m->self_system_ns / n;
}
