/* latscope clock: what each clock costs to read, how it is served, its resolution, and its order. */
#include "measure/clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/units.h"
#include "probe/cycles.h"
#include "sys/cpus.h"

static const struct opt clock_opts[] = {
	RUN_OPTS(struct clock_cmd, policy_choices_no_deadline),
};

#define NOPTS ARRAY_SIZE(clock_opts)

static void clock_defaults(void *params)
{
	struct clock_cmd *c = params;
	run_params_defaults(&c->run, &c->out);
	/* The loop spins: at a real-time priority it would starve the rest of the
	 * system, and a read costs the same at any priority (a preemption shows as
	 * one long read, not as a slower clock). */
	c->run.policy = POLICY_OTHER;
	c->run.priority = 0;
	c->run.duration_ns = 5u * NS_PER_SEC;
	c->run.threshold_ns = NS_PER_US;
	c->p.tsc = false;
	c->p.board = NULL;
	c->no_tsc.msg[0] = '\0';
	c->help = false;
}

static int clock_validate(void *params, const struct opt_result *given, struct lat_error *err)
{
	struct clock_cmd *c = params;

	/* -l alone: that many rounds, not the default duration too. */
	if (opt_run_given(clock_opts, NOPTS, given, RUN_ROW_LOOPS) &&
	    !opt_run_given(clock_opts, NOPTS, given, RUN_ROW_DURATION))
		c->run.duration_ns = 0;
	if (c->run.policy != POLICY_OTHER) {
		struct cpuset online, left;
		if (cpus_online(&online) == 0) {
			cpuset_diff(&left, &online, &c->run.cpus);
			if (cpuset_count(&left) == 0) {
				return err_set(
					err, -EINVAL,
					"option '%s': a real-time priority on every CPU would "
					"leave nothing else to run while the loops spin; leave a "
					"CPU out with -a",
					opt_run_given(clock_opts, NOPTS, given, RUN_ROW_POLICY)
						? "--policy"
						: "--priority");
			}
		}
	}
	/* The rule of noise's --clock tsc: a counter that ticks at one rate on every CPU. */
	c->no_tsc.msg[0] = '\0';
	c->p.tsc = cycles_reliable(&c->no_tsc);
	memset(&c->board, 0, sizeof(c->board));
	c->p.board = &c->board;
	return 0;
}

static void clock_notes(const void *params, struct result *res)
{
	const struct clock_cmd *c = params;
	if (!c->p.tsc)
		result_info(res, "no tsc metric: %s", c->no_tsc.msg);
}

static void clock_describe(const void *params, char *buf, size_t size)
{
	const struct clock_cmd *c = params;
	char dur[32];
	if (c->run.duration_ns)
		fmt_duration(c->run.duration_ns, dur, sizeof(dur));
	else if (c->run.loops)
		snprintf(dur, sizeof(dur), "%llu rounds", (unsigned long long)c->run.loops);
	else
		snprintf(dur, sizeof(dur), "until Ctrl-C");
	snprintf(buf, size, "two back-to-back reads of monotonic, monotonic_raw, realtime, tai, boottime%s, %s",
		 c->p.tsc ? " and tsc" : "", dur);
}

static void clock_after(const void *params, struct result *res)
{
	const struct clock_cmd *c = params;
	if (clock_observe(&c->p, res) < 0)
		result_note(res, "what was seen of each clock (resolution, order, system calls) could not be kept: "
			    "out of memory");
}

const struct measure_cmd clock_command = {
	.synopsis = "[-a CPUS] [-D DURATION | -l ROUNDS] [--threshold DUR] [--window DUR]\n"
		    "                      [--json FILE] [--label KEY=VALUE]... [-q]",
	.about = "Measure what it costs to read each clock on each CPU (by default every online CPU, for 5 s):\n"
		 "CLOCK_MONOTONIC, MONOTONIC_RAW, REALTIME, TAI, BOOTTIME and the TSC where it can be trusted,\n"
		 "each read twice back to back, the difference one sample.  Also whether the vDSO serves each\n"
		 "clock or every read is a system call, its resolution, and whether it ever went backwards, on a\n"
		 "CPU or across CPUs.  SCHED_OTHER by default: the loops spin.",
	.ops = &clock_probe,
	.opts = clock_opts,
	.nopts = NOPTS,
	.params_size = sizeof(struct clock_cmd),
	.run_offset = offsetof(struct clock_cmd, run),
	.extras_offset = offsetof(struct clock_cmd, out),
	.probe_offset = offsetof(struct clock_cmd, p),
	.help_offset = offsetof(struct clock_cmd, help),
	.defaults = clock_defaults,
	.validate = clock_validate,
	.describe = clock_describe,
	.notes = clock_notes,
	.after = clock_after,
};

/* ---- after the run: what the board and the histograms say ---- */

static const char *const served_names[] = { "unknown", "vdso", "syscall", "instruction" };

/* The smallest non-zero sample of metric k on cr, and how many were zero: the
 * samples are the steps (exact below 128 ns, see core/hist.h).  UINT64_MAX: none. */
static uint64_t min_step(const struct cpu_result *cr, unsigned k, uint64_t *ret_same)
{
	const struct hist *h = &cr->hist[k];
	*ret_same = h->counts[0];
	if (cr->st[k].n == 0 || *ret_same == cr->st[k].n)
		return UINT64_MAX;
	if (cr->st[k].min > 0)
		return cr->st[k].min;
	for (unsigned b = 1; b < HIST_BUCKETS; b++)
		if (h->counts[b])
			return hist_bucket_low(b);
	return UINT64_MAX;
}

/* What the CPUs say of how clock k is served, and whether seccomp could tell. */
static int served_of(const struct clk_total *t, const struct result *res, unsigned k, bool *ret_by_timing)
{
	*ret_by_timing = false;
	if (t->served == 1u << CLK_SERVED_VDSO)
		return CLK_SERVED_VDSO;
	if (t->served == 1u << CLK_SERVED_SYSCALL)
		return CLK_SERVED_SYSCALL;
	if (t->served == 1u << CLK_SERVED_INSTRUCTION)
		return CLK_SERVED_INSTRUCTION;
	if (t->served != 1u << CLK_SERVED_UNKNOWN || t->syscall_p50_lo_ns == UINT64_MAX)
		return CLK_SERVED_UNKNOWN;     /* mixed, or nothing to judge by */
	*ret_by_timing = true;
	return clk_served_by_timing(res->all.sum[k].p50, t->syscall_p50_lo_ns);
}

/* "20 ns" or "20-22 ns". */
static const char *range(uint64_t lo, uint64_t hi, char *buf, size_t size)
{
	if (lo == hi)
		snprintf(buf, size, "%llu ns", (unsigned long long)lo);
	else
		snprintf(buf, size, "%llu-%llu ns", (unsigned long long)lo, (unsigned long long)hi);
	return buf;
}

static const char *served_text(const struct clk_total *t, int served, bool by_timing)
{
	switch ((enum clk_served)served) {
	case CLK_SERVED_VDSO: return by_timing ? "vDSO (judged by timing)" : "vDSO, no system call";
	case CLK_SERVED_SYSCALL: return by_timing ? "a system call per read (judged by timing)" : "a system call per read";
	case CLK_SERVED_INSTRUCTION: return "one instruction";
	case CLK_SERVED_UNKNOWN: break;
	}
	return t->served & (t->served - 1u) ? "vDSO on some CPUs, a system call on others" : "vDSO or system call unknown";
}

/* Smallest steps over the CPUs: lo and hi, ns (lo UINT64_MAX: none). */
static void steps_over(const struct result *res, unsigned k, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < res->ncpus; i++) {
		uint64_t same, v = min_step(&res->cpus[i], k, &same);
		if (v == UINT64_MAX)
			continue;
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
}

/* One note per clock: a warning when it went backwards, else an info. */
static void note_clock(const struct clk_total *t, struct result *res, unsigned k)
{
	char back[200] = "", a[48], b[48], rs[64], sys[64] = "", step[64], order[112];
	bool by_timing;
	int served = served_of(t, res, k, &by_timing);
	uint64_t lo, hi;

	if (t->backwards)
		snprintf(back, sizeof(back), "%llu reads earlier than the read before (by up to %llu ns on cpu %d)",
			 (unsigned long long)t->backwards, (unsigned long long)t->back_max_ns, t->back_cpu);
	if (t->cross_backwards) {
		size_t n = strlen(back);
		snprintf(back + n, sizeof(back) - n, "%s%llu of %llu checks across CPUs earlier than another CPU's "
			 "(by up to %lld ns on cpu %d)", n ? ", " : "", (unsigned long long)t->cross_backwards,
			 (unsigned long long)t->cross_checks, -(long long)t->cross_margin_ns, t->margin_cpu);
	}
	if (k == CLK_TSC) {
		if (t->cycle_ps_lo == t->cycle_ps_hi)
			snprintf(rs, sizeof(rs), "one cycle %.3f ns", (double)t->cycle_ps_lo / 1000.0);
		else
			snprintf(rs, sizeof(rs), "one cycle %.3f-%.3f ns", (double)t->cycle_ps_lo / 1000.0,
				 (double)t->cycle_ps_hi / 1000.0);
	} else {
		struct timespec ts;
		if (clock_getres(clk_ids[k], &ts) == 0)
			snprintf(rs, sizeof(rs), "clock_getres %llu ns", (unsigned long long)ts_to_ns(&ts));
		else
			snprintf(rs, sizeof(rs), "clock_getres unknown");
		if (t->syscall_p50_lo_ns != UINT64_MAX)
			snprintf(sys, sizeof(sys), ", a system call %s",
				 range(t->syscall_p50_lo_ns, t->syscall_p50_hi_ns, a, sizeof(a)));
	}
	steps_over(res, k, &lo, &hi);
	if (lo == UINT64_MAX)
		snprintf(step, sizeof(step), "no step seen");
	else
		snprintf(step, sizeof(step), "smallest step %s", range(lo, hi, a, sizeof(a)));
	if (t->cross_checks)
		snprintf(order, sizeof(order), "in order on each CPU and in %llu checks across CPUs (closest %lld ns)",
			 (unsigned long long)t->cross_checks, (long long)t->cross_margin_ns);
	else
		snprintf(order, sizeof(order), "in order (one CPU: nothing compared across CPUs)");
	const struct summary *all = &res->all.sum[k];
	const char *p50 = all->count ? range(all->p50, all->p50, b, sizeof(b)) : "none";
	if (back[0])
		result_note(res, "%s went backwards: %s%s; %s, read p50 %s", clk_names[k], back,
			    k == CLK_REALTIME || k == CLK_TAI ? " (setting the time does that)" : "",
			    served_text(t, served, by_timing), p50);
	else
		result_info(res, "%s: %s; read p50 %s%s; %s, %s; %s", clk_names[k], served_text(t, served, by_timing), p50,
			    sys, rs, step, order);
}

/* Set key to v in o; v is taken whatever happens.  false when it could not be. */
static bool put(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

/* v, or null when it is not known (or past what JSON integers hold). */
static json_t *uint_or_null(uint64_t v, bool known)
{
	return known && v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_null();
}

static json_t *cpus_json(const struct result *res, unsigned k)
{
	json_t *a = json_array();
	bool ok = a != NULL;

	for (size_t i = 0; ok && i < res->ncpus; i++) {
		uint64_t same, step = min_step(&res->cpus[i], k, &same);
		json_t *o = json_object();
		ok = o && put(o, "cpu", json_integer(res->cpus[i].cpu)) &&
		     put(o, "min_step_ns", uint_or_null(step, step != UINT64_MAX)) &&
		     put(o, "same_reads", uint_or_null(same, true)) && json_array_append(a, o) == 0;
		json_decref(o);
	}
	if (!ok) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *clock_json(const struct clk_total *t, const struct result *res, unsigned k)
{
	json_t *o = json_object();
	struct timespec ts;
	bool by_timing, ok = o != NULL;
	int served = served_of(t, res, k, &by_timing);
	const bool sys = t->syscall_p50_lo_ns != UINT64_MAX;

	ok = ok && put(o, "served_by", json_string(t->served & (t->served - 1u) ? "mixed" : served_names[served]));
	ok = ok && put(o, "served_by_method", json_string(k == CLK_TSC ? "architecture" : by_timing ? "timing" : "seccomp"));
	ok = ok && put(o, "getres_ns", k != CLK_TSC && clock_getres(clk_ids[k], &ts) == 0
					   ? json_integer((json_int_t)ts_to_ns(&ts)) : json_null());
	ok = ok && put(o, "cycle_ps_min", uint_or_null(t->cycle_ps_lo, k == CLK_TSC && t->cpus));
	ok = ok && put(o, "cycle_ps_max", uint_or_null(t->cycle_ps_hi, k == CLK_TSC && t->cpus));
	ok = ok && put(o, "syscall_min_ns", uint_or_null(t->syscall_min_ns, sys));
	ok = ok && put(o, "syscall_p50_min_ns", uint_or_null(t->syscall_p50_lo_ns, sys));
	ok = ok && put(o, "syscall_p50_max_ns", uint_or_null(t->syscall_p50_hi_ns, sys));
	ok = ok && put(o, "backwards", uint_or_null(t->backwards, true));
	ok = ok && put(o, "backwards_max_ns", uint_or_null(t->back_max_ns, t->backwards));
	ok = ok && put(o, "backwards_cpu", t->back_cpu >= 0 ? json_integer(t->back_cpu) : json_null());
	ok = ok && put(o, "cross_checks", uint_or_null(t->cross_checks, true));
	ok = ok && put(o, "cross_backwards", uint_or_null(t->cross_backwards, true));
	ok = ok && put(o, "cross_margin_ns", t->cross_checks ? json_integer(t->cross_margin_ns) : json_null());
	ok = ok && put(o, "cross_margin_cpu", t->cross_checks ? json_integer(t->margin_cpu) : json_null());
	ok = ok && put(o, "cpus", cpus_json(res, k));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int clock_observe(const struct clock_params *p, struct result *res)
{
	json_t *observed = json_object(), *clocks = json_object();
	bool ok = observed && clocks && res->params;
	const unsigned n = res->nmetrics < CLK_KINDS ? res->nmetrics : CLK_KINDS;

	for (unsigned k = 0; ok && k < n; k++) {
		note_clock(&p->board->total[k], res, k);
		ok = put(clocks, clk_names[k], clock_json(&p->board->total[k], res, k));
	}
	ok = ok && put(observed, "cross_every_ns", json_integer(CLK_CROSS_EVERY_NS));
	ok = ok && put(observed, "clocks", json_incref(clocks));
	ok = ok && put(res->params, "observed", json_incref(observed));
	json_decref(clocks);
	json_decref(observed);
	return ok ? 0 : -ENOMEM;
}
