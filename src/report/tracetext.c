#include "report/tracetext.h"

#include <string.h>

#include "probe/probe.h"
#include "report/tprint.h"

#define SPIKES_SHOWN 3
#define CONTRIBS_SHOWN 3

static long long num(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static double us(long long ns)
{
	return (double)ns / 1000.0;
}

/* "clang (pid 22854, prio 120) 1427.3us, timer callbacks 5.6us"; with stretches, "... 5.6us in 12 stretches" */
static void contributors(FILE *out, const json_t *occ, bool stretches)
{
	size_t i;
	const json_t *c;
	unsigned shown = 0;

	json_array_foreach(json_object_get(occ, "by"), i, c) {
		if (shown == CONTRIBS_SHOWN)
			break;
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *name = json_string_value(json_object_get(c, "name"));
		tprintf(out, "%s", shown++ ? ", " : "");
		if (kind && strcmp(kind, "task") == 0)
			tprintf(out, "task %s (pid %lld, prio %lld)", name ? name : "?", num(c, "id"), num(c, "prio"));
		else if (kind && (strcmp(kind, "irq") == 0 || strcmp(kind, "softirq") == 0))
			tprintf(out, "%s %s", kind, name ? name : "?");
		else
			tprintf(out, "%s", kind ? kind : "?");
		tprintf(out, " %.1fus", us(num(c, "ns")));
		if (stretches)
			tprintf(out, " in %lld stretch%s", num(c, "count"), num(c, "count") == 1 ? "" : "es");
	}
	if (!shown)
		tprintf(out, "nothing traced");
}

/* --host's answer for the spike (host/guestjson.h), where the run asked its host. */
static void host_line(FILE *out, const json_t *sp, const char *indent)
{
	const char *line = json_string_value(json_object_get(json_object_get(sp, "host"), "line"));
	if (line)
		tprintf(out, "%s  %s\n", indent, line);
}

static long long no_event_ns(const json_t *occ)
{
	return num(json_object_get(occ, "by_kind_ns"), "no event");
}

/* For time no kernel event covers: which of SMI, steal or neither the window counted. */
static void quiet_line(FILE *out, const json_t *sp, const char *indent)
{
	const char *cause = json_string_value(json_object_get(sp, "window_quiet_cause"));
	const json_t *before = json_object_get(sp, "before_expiry");
	long long quiet = no_event_ns(json_object_get(sp, "occupied_by")) + no_event_ns(json_object_get(sp, "after_expiry")) +
			  num(before, "interrupt_not_delivered_ns");

	if (!cause || quiet <= 0)
		return;
	if (strcmp(cause, "smi") == 0)
		tprintf(out, "%s  SMI: %lld in this window: firmware stopped the CPU\n", indent, num(sp, "window_smis"));
	else if (strcmp(cause, "steal") == 0)
		tprintf(out, "%s  no event: steal in this window, the hypervisor ran something else\n", indent);
	else if (strcmp(cause, "neither") == 0)
		tprintf(out, "%s  no event: neither an SMI nor steal counted in this window: the hardware, or firmware the "
			"SMI counter does not see\n", indent);
	else
		tprintf(out, "%s  no event: no steal in this window and SMIs not counted here: the hypervisor unseen, "
			"firmware or the hardware\n", indent);
}

void text_trace_spike(FILE *out, const json_t *sp, bool timer, const char *indent)
{
	const char *name;
	const json_t *p;

	if (!timer) {
		tprintf(out, "%sgap %.1fus at %.3fs: ", indent, us(num(sp, "gap_ns")), (double)num(sp, "at_ns") / 1e9);
		contributors(out, json_object_get(sp, "occupied_by"), false);
		if (json_object_get(sp, "window_steal_ns"))
			tprintf(out, "; steal in that window %.1fus", us(num(sp, "window_steal_ns")));
		tprintf(out, "\n");
		quiet_line(out, sp, indent);
		host_line(out, sp, indent);
		return;
	}
	const json_t *pp = json_object_get(sp, "parts"), *before = json_object_get(sp, "before_expiry"),
		     *after = json_object_get(sp, "after_expiry");
	tprintf(out, "%sspike %.1fus at %.3fs:", indent, us(num(sp, "latency_ns")), (double)num(sp, "at_ns") / 1e9);
	json_object_foreach((json_t *)pp, name, p)
		tprintf(out, " %s %.1f", name, us((long long)json_integer_value(p)));
	tprintf(out, "\n");
	if (before && num(before, "interrupt_not_delivered_ns") > 0)
		tprintf(out, "%s  %.1fus of the interrupt delay had nothing able to hold it back "
			"(interrupts off, or the vCPU not running)\n", indent, us(num(before, "interrupt_not_delivered_ns")));
	if (after) {
		tprintf(out, "%s  after the expiry: ", indent);
		contributors(out, after, false);
		tprintf(out, "\n");
	}
	if (json_object_get(sp, "window_steal_ns"))
		tprintf(out, "%s  steal in that window: %.1fus\n", indent, us(num(sp, "window_steal_ns")));
	quiet_line(out, sp, indent);
	host_line(out, sp, indent);
}

static void timer_cpu(FILE *out, const json_t *c, bool bpf)
{
	const json_t *parts = json_object_get(c, "parts"), *p, *sp;
	const char *name;
	size_t i;

	tprintf(out, "  cpu%lld  %lld of %lld samples decomposed, %lld adding up to their latency within 1us%s\n",
		num(c, "cpu"), num(c, "matched"), num(c, "samples"), num(c, "add_up"),
		num(c, "samples_not_logged") ? " (the log was full before the end)" : "");
	/* What the tracing cost scales with; bench/RESULTS.md has its price in latency. */
	tprintf(out, "        %lld %s on it, %.1f per sample\n", num(c, "trace_events"),
		bpf ? "records handed over by the BPF collector" : "trace events recorded",
		num(c, "samples") ? (double)num(c, "trace_events") / (double)num(c, "samples") : 0.0);
	tprintf(out, "        %-18s %9s %9s %9s %9s\n", "part (us)", "p50", "p99", "p99.9", "max");
	json_object_foreach((json_t *)parts, name, p)
		tprintf(out, "        %-18s %9.1f %9.1f %9.1f %9.1f\n", name, us(num(p, "p50_ns")), us(num(p, "p99_ns")),
			us(num(p, "p99.9_ns")), us(num(p, "max_ns")));
	json_array_foreach(json_object_get(c, "spikes"), i, sp) {
		if (i == SPIKES_SHOWN)
			break;
		text_trace_spike(out, sp, true, "        ");
	}
}

bool text_trace_causes(FILE *out, const json_t *cpu, const char *prefix)
{
	const json_t *causes = json_object_get(cpu, "causes");
	if (!json_array_size(json_object_get(causes, "by")))
		return false;
	fputs(prefix, out);
	contributors(out, causes, true);
	return true;
}

static void noise_cpu(FILE *out, const json_t *c)
{
	const json_t *kinds = json_object_get(c, "by_kind_ns"), *v, *sp;
	const char *name;
	size_t i;

	tprintf(out, "  cpu%lld  %lld of %lld events explained; their time by kind:", num(c, "cpu"), num(c, "explained"),
		num(c, "events"));
	json_object_foreach((json_t *)kinds, name, v)
		if (json_integer_value(v))
			tprintf(out, " %s %.1fus", name, us((long long)json_integer_value(v)));
	tprintf(out, "\n");
	if (text_trace_causes(out, c, "        most time over all events: "))
		tprintf(out, "\n");
	json_array_foreach(json_object_get(c, "spikes"), i, sp) {
		if (i == SPIKES_SHOWN)
			break;
		text_trace_spike(out, sp, false, "        ");
	}
}

void text_trace(FILE *out, const struct result *res)
{
	const json_t *c;
	size_t i;

	if (!res->trace)
		return;
	bool timer = probe_traced_as(res->probe, PROBE_TRACE_PARTS);
	const char *backend = json_string_value(json_object_get(res->trace, "backend"));
	bool bpf = backend && strcmp(backend, "bpf") == 0;
	tprintf(out, "where the time went (--trace, from kernel trace events, %s):\n",
		!bpf ? "gathered by tracefs" : timer ? "split in the kernel by BPF" : "gathered in the kernel by BPF");
	json_array_foreach(json_object_get(res->trace, "cpus"), i, c) {
		if (timer)
			timer_cpu(out, c, bpf);
		else
			noise_cpu(out, c);
	}
	if (num(res->trace, "events_lost"))
		tprintf(out, "  the trace lost %lld %s: samples near them may be unexplained\n",
			num(res->trace, "events_lost"), bpf ? "records" : "events");
}
