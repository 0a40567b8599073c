#include "report/hosttext.h"

#include <jansson.h>

#include "core/units.h"
#include "report/tprint.h"

static uint64_t u(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (uint64_t)json_integer_value(v)
	       : json_is_real(v)  ? (uint64_t)json_real_value(v)
				  : 0;
}

static void sync_line(FILE *out, const json_t *s)
{
	char b[32];
	if (!json_is_object(s)) {
		tprintf(out, "  the clocks were never lined up (the link held less than 3 s): no "
			     "spike has an answer\n");
		return;
	}
	fmt_duration(u(s, "bound_ns"), b, sizeof(b));
	tprintf(out,
		"  clocks lined up to +-%s (offset %+.1fus, drift %+.2f ppm, %llu exchanges)\n", b,
		json_number_value(json_object_get(s, "offset_ns")) / 1e3,
		json_number_value(json_object_get(s, "drift_ppm")),
		(unsigned long long)u(s, "exchanges"));
}

void text_host(FILE *out, const struct result *res)
{
	const json_t *h = res->host, *c, *e;
	const char *name;
	size_t i;

	if (!h)
		return;
	const json_t *vm = json_object_get(h, "vm");
	tprintf(out, "the host (--host %s: VM pid %llu '%s', vCPUs by %s):\n",
		json_string_value(json_object_get(h, "agent")), (unsigned long long)u(vm, "pid"),
		json_string_value(json_object_get(vm, "name")),
		json_string_value(json_object_get(h, "found_by")));
	sync_line(out, json_object_get(h, "sync"));
	tprintf(out, "  asked %llu times, answered %llu; %llu episodes held",
		(unsigned long long)u(h, "asked"), (unsigned long long)u(h, "answered"),
		(unsigned long long)u(h, "episodes"));
	if (u(h, "episodes_dropped"))
		tprintf(out, " (%llu more gave way to longer ones)",
			(unsigned long long)u(h, "episodes_dropped"));
	tprintf(out, "\n");
	if (res->trace) {
		tprintf(out, "  spikes by host cause:");
		json_object_foreach((json_t *)json_object_get(h, "causes"), name, c)
			tprintf(out, " %s %llu", name, (unsigned long long)json_integer_value(c));
		tprintf(out, "\n");
	}
	json_array_foreach(json_object_get(h, "largest"), i, e)
	{
		const char *line =
			json_string_value(json_object_get(json_object_get(e, "host"), "line"));
		char v[32];
		if (!line)
			continue;
		fmt_duration(u(e, "value_ns"), v, sizeof(v));
		tprintf(out, "  cpu%llu %s at %.3fs: %s\n", (unsigned long long)u(e, "cpu"), v,
			(double)u(e, "at_ns") / 1e9, line);
	}
	if (json_string_value(json_object_get(h, "lost")))
		tprintf(out, "  the link ended early: %s\n",
			json_string_value(json_object_get(h, "lost")));
}
