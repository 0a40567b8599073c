#include "sys/findings.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/units.h"
#include "sys/textfile.h"
#include "sys/tunefix.h"

/* Idle states that take longer than this to leave are "deep". */
#define DEEP_IDLE_US 10
/* Steal above this share of all CPU time is a problem, not a warning. */
#define STEAL_PROBLEM_SHARE 0.01
/* Items named in one finding before "and N more". */
#define LIST_MAX 4

/* Append to a finding's text, cut to fit. */
__attribute__((format(printf, 2, 3)))
static void add(char buf[FINDING_TEXT_MAX], const char *fmt, ...)
{
	size_t len = strnlen(buf, FINDING_TEXT_MAX);
	va_list ap;

	if (len + 1 >= FINDING_TEXT_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, FINDING_TEXT_MAX - len, fmt, ap);
	va_end(ap);
}

/* A CPU list for a sentence; a long one ends in "...". */
static const char *cpus_text(const struct cpuset *s, char buf[64])
{
	if (cpuset_format(s, buf, 64) >= 64)
		memcpy(buf + 60, "...", 4);
	return buf;
}

/* "CPU 3" or "CPUs 0-3". */
static const char *cpus_phrase(const struct cpuset *s, char buf[72])
{
	char list[64];
	snprintf(buf, 72, "CPU%s %s", cpuset_count(s) == 1 ? "" : "s", cpus_text(s, list));
	return buf;
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static int64_t sysctl_or(const struct fingerprint *fp, const char *name, int64_t fallback)
{
	int64_t v;
	return fingerprint_sysctl_i64(fp, name, &v) == 0 ? v : fallback;
}

/* ---- The rules: each says whether it fires and, if so, what it saw. ---- */

static bool rule_guest(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	(void)ctx;
	if (fp->guest != FP_TRI_YES)
		return false;
	if (fp->hypervisor[0] != '\0')
		add(f->saw, "running as a guest of %s (seen through %s)", fp->hypervisor, fp->hypervisor_source);
	else
		add(f->saw, "running as a guest of an unnamed hypervisor (seen through %s)", fp->hypervisor_source);
	return true;
}

static bool rule_steal_time(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	(void)ctx;
	if (fp->steal_ns == FP_UNKNOWN || fp->steal_ns <= 0)
		return false;
	double share = fp->cpu_ns > 0 ? (double)fp->steal_ns / (double)fp->cpu_ns : 0.0;
	add(f->saw, "steal time %.1f s since boot, %.2f%% of all CPU time", (double)fp->steal_ns / 1e9, share * 100.0);
	if (share >= STEAL_PROBLEM_SHARE)
		f->severity = SEVERITY_PROBLEM;
	return true;
}

static bool rule_smis(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	if (ctx && ctx->smis_counted && ctx->smis > 0)
		add(f->saw, "%llu SMIs counted on the measured CPUs during the run", (unsigned long long)ctx->smis);
	else if (fp->smis != FP_UNKNOWN && fp->smis > 0)
		add(f->saw, "%lld SMIs since reset (MSR_SMI_COUNT of the first CPU)", (long long)fp->smis);
	else
		return false;
	return true;
}

static bool rule_serial_console(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	const char *param = fingerprint_param(fp, "console");
	int64_t level;
	size_t n = 0;

	(void)ctx;
	for (size_t i = 0; i < fp->nconsoles; i++) {
		const struct fp_console *c = &fp->consoles[i];
		if (!c->enabled || !c->serial)
			continue;
		add(f->saw, "%s%s (flags %s)", n++ ? ", " : "kernel console on ", c->name, c->flags);
	}
	if (n == 0)
		return false;
	if (param)
		add(f->saw, "; console=%s", param);
	bool quiet = fingerprint_param(fp, "quiet") != NULL, have_level =
		fingerprint_sysctl_i64(fp, "kernel.printk", &level) == 0;
	if (have_level)
		add(f->saw, "; console loglevel %lld", (long long)level);
	if (quiet)
		add(f->saw, "; the command line has quiet");
	/* Advice to boot with quiet is no help to a machine booted with it: the
	 * loglevel in effect says what reaches the console, quiet only how it booted. */
	static const char drop[] = "Drop the serial console= from the kernel command line where no one reads it";
	if (have_level && level <= 1)
		add(f->fix, "%s; the console loglevel is already %lld, so only the kernel's most urgent messages reach it.",
		    drop, (long long)level);
	else if ((have_level && level <= 4) || (!have_level && quiet))
		add(f->fix, "%s. Messages are already kept down (%s), but errors still print: to keep them off it too, "
		    "boot with loglevel=1 or run dmesg -n 1 (sysctl kernel.printk=\"1 4 1 3\").", drop,
		    quiet ? "booted with quiet" : "console loglevel 4 or less");
	else if (quiet)
		add(f->fix, "%s. It was booted with quiet, but the console loglevel has been raised to %lld since: run "
		    "dmesg -n 1 (sysctl kernel.printk=\"1 4 1 3\").", drop, (long long)level);
	return true;
}

static bool rule_clocksource_not_tsc(const struct fingerprint *fp, const struct findings_context *ctx,
				     struct finding *f)
{
	/* Read by a system call and an I/O access, not from user space. */
	static const char *const slow[] = { "hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit", NULL };
	bool tsc_available = textfile_has_word(fp->clocksources, "tsc");

	(void)ctx;
	if (!fingerprint_is_x86(fp) || fp->clocksource[0] == '\0' || strcmp(fp->clocksource, "tsc") == 0)
		return false;
	add(f->saw, "clocksource %s", fp->clocksource);
	if (fp->clocksources[0] != '\0')
		add(f->saw, " (available: %s)", fp->clocksources);
	if (one_of(fp->clocksource, slow)) {
		add(f->saw, "; %s has no user-space read: every clock read is a system call", fp->clocksource);
		f->severity = SEVERITY_PROBLEM;
	}
	if (fp->clocksources[0] != '\0' && !tsc_available) {
		add(f->saw, "; tsc is not available: the kernel found it unstable");
		add(f->fix, "Find out why the kernel dropped the TSC (dmesg | grep -i tsc). On a guest, expose an "
		    "invariant TSC (KVM: -cpu host,+invtsc); on bare metal, check firmware settings for deep package "
		    "C-states; tsc=reliable skips the kernel's checks where the TSC is known to be good.");
	}
	return true;
}

static bool rule_tsc_flags(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	(void)ctx;
	if (!fingerprint_is_x86(fp) || !fp->cpu_flags_known || (fp->constant_tsc && fp->nonstop_tsc))
		return false;
	add(f->saw, "TSC flags: constant_tsc %s, nonstop_tsc %s", fp->constant_tsc ? "yes" : "no",
	    fp->nonstop_tsc ? "yes" : "no");
	return true;
}

static bool rule_deep_idle_states(const struct fingerprint *fp, const struct findings_context *ctx,
				  struct finding *f)
{
	struct {
		const char *name;
		int64_t latency_us;
		struct cpuset cpus;
	} deep[8];
	size_t n = 0;
	char list[72];

	for (size_t i = 0; i < fp->ncpus; i++)
		for (size_t k = 0; k < fp->cpus[i].nidle; k++) {
			const struct fp_idle_state *s = &fp->cpus[i].idle[k];
			if (s->disabled != FP_TRI_NO || s->latency_us == FP_UNKNOWN || s->latency_us <= DEEP_IDLE_US)
				continue;
			size_t d = 0;
			while (d < n && (strcmp(deep[d].name, s->name) != 0 || deep[d].latency_us != s->latency_us))
				d++;
			if (d == n) {
				if (n == ARRAY_SIZE(deep))
					continue;
				deep[n].name = s->name;
				deep[n].latency_us = s->latency_us;
				cpuset_clear(&deep[n++].cpus);
			}
			cpuset_add(&deep[d].cpus, fp->cpus[i].cpu);
		}
	if (n == 0)
		return false;
	add(f->saw, "idle states deeper than %d us enabled:", DEEP_IDLE_US);
	for (size_t d = 0; d < n; d++)
		add(f->saw, "%s %s (exit latency %lld us) on %s", d ? "," : "", deep[d].name,
		    (long long)deep[d].latency_us, cpus_phrase(&deep[d].cpus, list));
	if (fp->cpuidle_driver[0] != '\0')
		add(f->saw, "; cpuidle driver %s", fp->cpuidle_driver);
	if (ctx && ctx->measured && !ctx->pm_qos_held) {
		add(f->saw, "; this measurement held no PM QoS request, so it paid the exit latencies too");
		f->severity = SEVERITY_PROBLEM;
	}
	return true;
}

static bool rule_governor(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	static const char *const fine[] = { "", "none", "performance", NULL };
	size_t n = 0;
	char list[72];

	(void)ctx;
	for (size_t i = 0; i < fp->ncpus; i++) {
		const char *g = fp->cpus[i].governor;
		bool first = true;
		if (one_of(g, fine))
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(fp->cpus[j].governor, g) != 0;
		if (!first)
			continue;
		struct cpuset set;
		cpuset_clear(&set);
		for (size_t j = i; j < fp->ncpus; j++)
			if (strcmp(fp->cpus[j].governor, g) == 0)
				cpuset_add(&set, fp->cpus[j].cpu);
		add(f->saw, "%s%s on %s", n++ ? ", " : "frequency governor ", g, cpus_phrase(&set, list));
	}
	return n > 0;
}

static bool rule_rt_throttling(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	int64_t runtime, period;

	(void)ctx;
	if (fingerprint_sysctl_i64(fp, "kernel.sched_rt_runtime_us", &runtime) < 0 || runtime < 0)
		return false;
	add(f->saw, "kernel.sched_rt_runtime_us = %lld", (long long)runtime);
	if (fingerprint_sysctl_i64(fp, "kernel.sched_rt_period_us", &period) == 0 && period > 0 && runtime <= period)
		add(f->saw, " of every kernel.sched_rt_period_us = %lld: real-time tasks may run %.1f%% of each period, "
		    "then wait up to %lld ms", (long long)period, 100.0 * (double)runtime / (double)period,
		    (long long)((period - runtime) / 1000));
	return true;
}

/* The online CPUs of cpu's core, from its sibling list. */
static bool core_of(const struct fingerprint *fp, const struct fp_cpu *c, struct cpuset *ret)
{
	struct cpuset sib;
	if (cpuset_parse(c->siblings, &sib) < 0)
		return false;
	cpuset_clear(ret);
	cpuset_foreach(cpu, &sib)
		if (!fp->online_known || cpuset_has(&fp->online, (unsigned)cpu))
			cpuset_add(ret, (unsigned)cpu);
	return cpuset_count(ret) > 1;
}

static bool rule_smt_siblings(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	struct cpuset core, seen, exposed, busy;
	size_t cores = 0;
	char list[64], groups[FINDING_TEXT_MAX] = "", phrase[72];

	cpuset_clear(&seen);
	cpuset_clear(&exposed);
	cpuset_clear(&busy);
	for (size_t i = 0; i < fp->ncpus; i++) {
		const struct fp_cpu *c = &fp->cpus[i];
		if (cpuset_has(&seen, c->cpu) || !core_of(fp, c, &core))
			continue;
		bool measured = false;
		cpuset_foreach(cpu, &core) {
			cpuset_add(&seen, (unsigned)cpu);
			measured |= ctx && ctx->measured && cpuset_has(ctx->measured, (unsigned)cpu);
		}
		if (ctx && ctx->measured && !measured)
			continue;
		if (cores++ < LIST_MAX)
			add(groups, "%s(%s)", cores > 1 ? " " : "", cpus_text(&core, list));
		/* An isolated thread whose sibling is not isolated shares its core with anything. */
		cpuset_foreach(cpu, &core) {
			if (!fp->isolated_known || !cpuset_has(&fp->isolated, (unsigned)cpu))
				continue;
			cpuset_foreach(other, &core)
				if (!cpuset_has(&fp->isolated, (unsigned)other)) {
					cpuset_add(&exposed, (unsigned)cpu);
					cpuset_add(&busy, (unsigned)other);
				}
		}
	}
	if (cores == 0)
		return false;
	add(f->saw, "%zu core%s with more than one online thread%s: %s%s", cores, cores > 1 ? "s" : "",
	    ctx && ctx->measured ? " among the measured CPUs' cores" : "", groups, cores > LIST_MAX ? " ..." : "");
	if (fp->smt_control[0] != '\0')
		add(f->saw, " (smt/control %s)", fp->smt_control);
	if (cpuset_count(&exposed) > 0) {
		add(f->saw, "; isolated %s", cpus_phrase(&exposed, phrase));
		add(f->saw, " %s with %s, which %s not isolated",
		    cpuset_count(&exposed) == 1 ? "shares its core" : "share their cores", cpus_phrase(&busy, phrase),
		    cpuset_count(&busy) == 1 ? "is" : "are");
	}
	return true;
}

/* Interrupts that belong to every CPU (arm64 PPIs): their affinity cannot change. */
static bool per_cpu_irq(const char *name)
{
	static const char *const names[] = { "arch_timer", "arm-pmu", "kvm guest vtimer", "kvm guest ptimer",
					     "arch_mem_timer", "vgic", NULL };
	return one_of(name, names);
}

static bool rule_irq_on_isolated(const struct fingerprint *fp, const struct findings_context *ctx,
				 struct finding *f)
{
	size_t n = 0;
	char list[64];

	(void)ctx;
	if (!fp->isolated_known || cpuset_count(&fp->isolated) == 0)
		return false;
	for (size_t i = 0; i < fp->nirqs; i++) {
		const struct fp_irq *q = &fp->irqs[i];
		struct cpuset allowed, both;
		if (per_cpu_irq(q->name) || cpuset_parse(q->affinity, &allowed) < 0)
			continue;
		cpuset_diff(&both, &allowed, &fp->isolated);
		if (cpuset_count(&both) == cpuset_count(&allowed))
			continue;       /* none of the isolated CPUs */
		if (n++ < LIST_MAX)
			add(f->saw, "%sIRQ %u %s (allowed on %s%s%s)", n > 1 ? ", " : "", q->irq, q->name, q->affinity,
			    q->effective[0] ? ", effective " : "", q->effective);
	}
	if (n == 0)
		return false;
	if (n > LIST_MAX)
		add(f->saw, " and %zu more", n - LIST_MAX);
	add(f->saw, " may run on the isolated CPUs %s", cpus_text(&fp->isolated, list));
	return true;
}

static bool rule_isolated_without_rcu_nocbs(const struct fingerprint *fp, const struct findings_context *ctx,
					    struct finding *f)
{
	const char *nocbs = fingerprint_param(fp, "rcu_nocbs");
	struct cpuset covered, left;
	char list[64], phrase[72];

	(void)ctx;
	if (!fp->cmdline_known || !fp->isolated_known || cpuset_count(&fp->isolated) == 0)
		return false;
	if (nocbs && strcmp(nocbs, "all") == 0)
		return false;
	if (!nocbs || cpuset_parse(nocbs, &covered) < 0)
		cpuset_clear(&covered);
	/* nohz_full CPUs have their callbacks offloaded too. */
	for (unsigned w = 0; fp->nohz_full_known && w < CPUSET_WORDS; w++)
		covered.bits[w] |= fp->nohz_full.bits[w];
	cpuset_diff(&left, &fp->isolated, &covered);
	if (cpuset_count(&left) == 0)
		return false;
	add(f->saw, "isolated %s", cpus_phrase(&left, phrase));
	add(f->saw, " run their own RCU callbacks (%s%s)", nocbs ? "rcu_nocbs=" : "no rcu_nocbs=", nocbs ? nocbs : "");
	add(f->fix, "Add rcu_nocbs=%s (nohz_full= implies it) to the kernel command line, so the callbacks run in "
	    "rcuo threads on the housekeeping CPUs.", cpus_text(&fp->isolated, list));
	return true;
}

static bool rule_thp_always(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	(void)ctx;
	if (strcmp(fp->thp_enabled, "always") != 0)
		return false;
	add(f->saw, "transparent huge pages enabled: always, defrag: %s", fp->thp_defrag[0] ? fp->thp_defrag : "unknown");
	return true;
}

static bool rule_numa_balancing(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	(void)ctx;
	if (fp->numa_nodes == FP_UNKNOWN || fp->numa_nodes < 2 || sysctl_or(fp, "kernel.numa_balancing", 0) < 1)
		return false;
	add(f->saw, "automatic NUMA balancing on (kernel.numa_balancing = %lld) across %lld nodes",
	    (long long)sysctl_or(fp, "kernel.numa_balancing", 0), (long long)fp->numa_nodes);
	return true;
}

static const char *const not_full[] = { "none", "voluntary", "none or voluntary", NULL };

static const char *mode_source(const char *source)
{
	return strcmp(source, "debugfs") == 0 ? "from /sys/kernel/debug/sched/preempt" :
	       strcmp(source, "cmdline") == 0 ? "from preempt= on the kernel command line" :
	       strcmp(source, "config") == 0 ? "the kernel config's default, no preempt= given" :
	       "as the kernel was built";
}

static bool rule_preempt_not_full(const struct fingerprint *fp, const struct findings_context *ctx,
				  struct finding *f)
{
	(void)ctx;
	if (strcmp(fp->preempt, "PREEMPT_RT") == 0 || !one_of(fp->preempt_mode, not_full))
		return false;
	add(f->saw, "%s kernel in preemption mode %s (%s)", fp->preempt, fp->preempt_mode,
	    mode_source(fp->preempt_mode_source));
	if (strcmp(fp->preempt, "PREEMPT_DYNAMIC") != 0)
		add(f->fix, "Use a kernel built with CONFIG_PREEMPT (or CONFIG_PREEMPT_DYNAMIC, booted with preempt=full), "
		    "or PREEMPT_RT for the lowest worst case.");
	return true;
}

static bool rule_no_preempt_rt(const struct fingerprint *fp, const struct findings_context *ctx,
			       struct finding *f)
{
	(void)ctx;
	if (fp->preempt[0] == '\0' || strcmp(fp->preempt, "PREEMPT_RT") == 0 || one_of(fp->preempt_mode, not_full))
		return false;       /* preempt-not-full says more */
	add(f->saw, "%s kernel without PREEMPT_RT (preemption mode %s)", fp->preempt,
	    fp->preempt_mode[0] ? fp->preempt_mode : "unknown");
	return true;
}

static bool rule_no_isolation(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	struct cpuset quiet, left;
	char list[64], phrase[72];

	if (!fp->isolated_known || !fp->nohz_full_known)
		return false;
	quiet = fp->isolated;
	for (unsigned w = 0; w < CPUSET_WORDS; w++)
		quiet.bits[w] |= fp->nohz_full.bits[w];
	if (ctx && ctx->measured) {
		cpuset_diff(&left, ctx->measured, &quiet);
		if (cpuset_count(&left) == 0)
			return false;
		add(f->saw, "measured %s %s in neither isolcpus nor nohz_full", cpus_phrase(&left, phrase),
		    cpuset_count(&left) == 1 ? "is" : "are");
		add(f->fix, "Reserve the real-time CPUs: isolcpus=managed_irq,domain,%s nohz_full=%s rcu_nocbs=%s on the "
		    "kernel command line (or a cgroup cpuset partition), irqaffinity= the other CPUs, and pin the work there.",
		    cpus_text(&left, list), list, list);
		f->severity = SEVERITY_WARNING;
		return true;
	}
	if (cpuset_count(&quiet) > 0)
		return false;
	add(f->saw, "no CPU is isolated: no isolcpus and no nohz_full");
	return true;
}

static bool rule_no_nohz_full(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	struct cpuset left;
	char phrase[72];

	if (!fp->nohz_full_known)
		return false;
	if (ctx && ctx->measured) {
		cpuset_diff(&left, ctx->measured, &fp->nohz_full);
		if (cpuset_count(&left) == 0)
			return false;
		add(f->saw, "measured %s %s not nohz_full", cpus_phrase(&left, phrase),
		    cpuset_count(&left) == 1 ? "is" : "are");
	} else {
		if (cpuset_count(&fp->nohz_full) > 0)
			return false;
		add(f->saw, "no nohz_full CPUs");
	}
	if (fp->nohz[0] != '\0')
		add(f->saw, "; the kernel's tick: %s", strcmp(fp->nohz, "full") == 0 ? "CONFIG_NO_HZ_FULL (supported, not used)" :
		    strcmp(fp->nohz, "idle") == 0 ? "CONFIG_NO_HZ_IDLE" : "CONFIG_HZ_PERIODIC");
	if (fp->hz != FP_UNKNOWN && fp->hz > 0)
		add(f->saw, ", %lld Hz: a busy CPU takes a tick every %.1f ms", (long long)fp->hz, 1000.0 / (double)fp->hz);
	if (strcmp(fp->nohz, "full") == 0)
		add(f->fix, "Boot with nohz_full=<the real-time CPUs> (with isolcpus= the same CPUs); the tick then stops "
		    "on a CPU that runs a single task.");
	return true;
}

static bool rule_lockup_watchdogs(const struct fingerprint *fp, const struct findings_context *ctx,
				  struct finding *f)
{
	int64_t soft = sysctl_or(fp, "kernel.watchdog", -1), nmi = sysctl_or(fp, "kernel.nmi_watchdog", -1);

	(void)ctx;
	if (soft < 1 && nmi < 1)
		return false;
	add(f->saw, "lockup detectors: soft %s, NMI %s", soft < 0 ? "unknown" : soft ? "on" : "off",
	    nmi < 0 ? "unknown" : nmi ? "on" : "off");
	int64_t thresh = sysctl_or(fp, "kernel.watchdog_thresh", -1);
	if (thresh > 0)
		add(f->saw, " (kernel.watchdog_thresh = %lld s)", (long long)thresh);
	return true;
}

static bool rule_mitigations(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	const char *param = fingerprint_param(fp, "mitigations");

	(void)ctx;
	if (!fp->mitigations_known || fp->mitigated[0] == '\0' || (param && strcmp(param, "off") == 0))
		return false;
	add(f->saw, "CPU vulnerability mitigations on: %s", fp->mitigated);
	if (param)
		add(f->saw, " (mitigations=%s)", param);
	return true;
}

/* " (N % of the measured interval D)", and whether that share is large. */
static bool against_period(char buf[FINDING_TEXT_MAX], uint64_t v, uint64_t period, bool measured)
{
	char d[32];
	fmt_duration(period, d, sizeof(d));
	add(buf, ", %.0f %% of %s interval %s", 100.0 * (double)v / (double)period,
	    measured ? "the measured" : "latscope timer's default", d);
	/* in double: a slop read from a file or the command line may be near 2^63 */
	return 100.0 * (double)v >= (double)period * FINDINGS_LARGE_SHARE;
}

static bool rule_timer_slack(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	char d[32];

	/* A run judges the slack its measuring threads had, not the main thread's. */
	if (ctx && ctx->measured) {
		if (ctx->timer_slack_ns <= 1)
			return false;
		fmt_duration(ctx->timer_slack_ns, d, sizeof(d));
		add(f->saw, "timer slack of the measuring threads: %s", d);
		if (ctx->period_ns && against_period(f->saw, ctx->timer_slack_ns, ctx->period_ns, true))
			f->severity = SEVERITY_WARNING;
		add(f->fix, "Unless the slack is what you meant to measure, measure with the default --timer-slack "
		    "(1 ns) or under SCHED_FIFO: a wakeup may then be late by the slack on top of what the system adds.");
		return true;
	}
	if (fp->timer_slack_ns == FP_UNKNOWN || fp->timer_slack_ns <= 1)
		return false;
	add(f->saw, "timer slack of this process: %lld ns", (long long)fp->timer_slack_ns);
	return true;
}

static bool rule_timer_slop(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f)
{
	char d[32];
	bool measured = ctx && ctx->period_ns;

	if (fp->timer_slop_ns == FP_UNKNOWN || fp->timer_slop_ns <= 0)
		return false;
	fmt_duration((uint64_t)fp->timer_slop_ns, d, sizeof(d));
	add(f->saw, "%s timer slop %s (%s)", fp->hypervisor, d, strcmp(fp->timer_slop_source, "cmdline") == 0 ?
	    "xen_timer_slop= on the kernel command line" : "the xen clock event device in /proc/timer_list");
	if (against_period(f->saw, (uint64_t)fp->timer_slop_ns, measured ? ctx->period_ns : FINDINGS_DEFAULT_PERIOD_NS,
			   measured))
		f->severity = SEVERITY_WARNING;
	return true;
}

struct rule {
	const char *id;
	enum severity severity;         /* a rule may raise it from what it saw */
	/* Whether the rule fires; if so it writes f->saw (and f->fix to replace the one below). */
	bool (*check)(const struct fingerprint *fp, const struct findings_context *ctx, struct finding *f);
	const char *why;
	const char *fix;
};

static const struct rule rules[] = {
	{ "guest", SEVERITY_WARNING, rule_guest,
	  "The hypervisor can stop a vCPU at any moment to run another guest or its own work, and nothing in the "
	  "guest can see it coming or prevent it: such pauses reach milliseconds, far above what the guest kernel "
	  "itself adds.",
	  "For hard real-time work use bare metal, or dedicated and pinned physical CPUs for every vCPU (no "
	  "overcommit, host CPUs isolated and tuned for real time). latscope noise shows the pauses." },
	{ "steal-time", SEVERITY_WARNING, rule_steal_time,
	  "Steal is time a vCPU was ready to run while the hypervisor ran something else: during it nothing in the "
	  "guest runs, timers and interrupts included, so every wakeup that falls in it waits.",
	  "Ask for dedicated physical CPUs (no overcommit) or move the work to a less loaded host; latscope noise and "
	  "timer show the steal beside every window." },
	{ "smis", SEVERITY_WARNING, rule_smis,
	  "A System Management Interrupt stops every CPU while the firmware runs, for microseconds to milliseconds; "
	  "the kernel never sees it, so no trace event explains the time lost.",
	  "Look at the firmware's settings that run in SMM: legacy USB emulation, power and thermal management left "
	  "to the firmware (choose OS control), error reporting by SMI; update the firmware. latscope timer and noise "
	  "count SMIs beside every window." },
	{ "serial-console", SEVERITY_WARNING, rule_serial_console,
	  "The kernel writes each message to a serial console synchronously, a character at a time at the line's "
	  "speed (about 87 us a character at 115200 baud), often with interrupts off on the printing CPU: one line "
	  "can stall that CPU for milliseconds.",
	  "Drop the serial console= from the kernel command line where no one reads it, or keep messages off it: "
	  "boot with quiet or loglevel=3, or run dmesg -n 1 (sysctl kernel.printk=\"3 4 1 3\")." },
	{ "clocksource-not-tsc", SEVERITY_WARNING, rule_clocksource_not_tsc,
	  "Every clock read (clock_gettime, timers, the scheduler's own accounting) goes through the clocksource. "
	  "The TSC is read from user space in nanoseconds; paravirtual clocks add memory reads and retries, and "
	  "hpet or acpi_pm need a system call and a slow I/O access of a microsecond or more.",
	  "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource, or clocksource=tsc on the "
	  "kernel command line, where the TSC is invariant." },
	{ "tsc-flags", SEVERITY_WARNING, rule_tsc_flags,
	  "Without constant_tsc the TSC's rate follows the CPU's frequency; without nonstop_tsc it stops in deep idle "
	  "states. Neither clock can be trusted across CPUs and time: the kernel may drop it, and latscope then reads "
	  "CLOCK_MONOTONIC, which costs more per sample.",
	  "On a guest, expose an invariant TSC (KVM: -cpu host or +invtsc); on bare metal, use a CPU with an "
	  "invariant TSC." },
	{ "deep-idle-states", SEVERITY_WARNING, rule_deep_idle_states,
	  "Leaving a deep idle state takes its exit latency, and it falls on the wakeup path: the timer or interrupt "
	  "that should start a real-time task first waits for the core to wake up. latscope holds /dev/cpu_dma_latency "
	  "at 0 while it measures, so its measurement is protected; a production workload is not, unless it holds a "
	  "PM QoS request of its own.",
	  "Have the real-time application keep /dev/cpu_dma_latency open, holding the most latency it can afford (in "
	  "us, 0 for none), for as long as it runs; or disable the deep states (cpupower idle-set -D 10, or echo 1 > "
	  "/sys/devices/system/cpu/cpuN/cpuidle/stateK/disable), or boot with intel_idle.max_cstate=1 "
	  "processor.max_cstate=1." },
	{ "governor-not-performance", SEVERITY_WARNING, rule_governor,
	  "Other governors lower the clock while a CPU looks idle; a task woken there runs slowly until the governor "
	  "raises it again, milliseconds later, and each change of frequency stalls the core briefly.",
	  "cpupower frequency-set -g performance (or echo performance > "
	  "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor); with intel_pstate also set "
	  "energy_performance_preference to performance." },
	{ "rt-throttling", SEVERITY_WARNING, rule_rt_throttling,
	  "A SCHED_FIFO or SCHED_RR task that runs longer than the runtime in one period is stopped until the next "
	  "period starts: a real-time thread that busy-polls sees a stall of up to the rest of the period, every period.",
	  "If your real-time threads always sleep well within each period, this safety net costs nothing. If they "
	  "spin, sleep in every period (as latscope noise --burst 900ms --rest 100ms does) or set sysctl kernel.sched_rt_runtime_us=-1, knowing "
	  "that a runaway real-time task then keeps its CPU for good." },
	{ "smt-siblings", SEVERITY_WARNING, rule_smt_siblings,
	  "Threads of one core share its execution units and caches: whatever runs on a sibling slows the other "
	  "thread down, so a real-time task's latency depends on its sibling's work even when its own CPU is isolated.",
	  "Keep the siblings of real-time CPUs idle (isolate both threads of the core) or turn SMT off: echo off > "
	  "/sys/devices/system/cpu/smt/control, or boot with nosmt." },
	{ "irq-on-isolated", SEVERITY_WARNING, rule_irq_on_isolated,
	  "A device interrupt on an isolated CPU runs its handler, and often softirq work after it, ahead of the "
	  "real-time task there: isolcpus by itself does not move device interrupts away.",
	  "Move them: echo the housekeeping CPUs > /proc/irq/N/smp_affinity_list, or boot with irqaffinity= the "
	  "housekeeping CPUs; managed interrupts (per-queue ones, such as NVMe) need isolcpus=managed_irq,...; tell "
	  "irqbalance to leave the isolated CPUs alone (IRQBALANCE_BANNED_CPULIST)." },
	{ "isolated-without-rcu-nocbs", SEVERITY_WARNING, rule_isolated_without_rcu_nocbs,
	  "RCU callbacks queued on an isolated CPU are invoked on it, in softirq context and in bursts after each grace "
	  "period: kernel work the isolation was meant to keep away.",
	  "Add rcu_nocbs= the isolated CPUs to the kernel command line (nohz_full= implies it)." },
	{ "thp-always", SEVERITY_WARNING, rule_thp_always,
	  "With transparent huge pages always on, any anonymous mapping may get huge pages: a page fault can stall "
	  "for compaction (as the defrag setting allows), and khugepaged collapses pages in the background, taking "
	  "locks and sending TLB shootdowns to every CPU the process runs on.",
	  "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (or transparent_hugepage=madvise on the kernel "
	  "command line), and lock and pre-fault the real-time memory (mlockall)." },
	{ "numa-balancing", SEVERITY_WARNING, rule_numa_balancing,
	  "Automatic NUMA balancing unmaps pages of running tasks now and then to learn where they are used; the task "
	  "then takes page faults, and sometimes a page migration, in the middle of its work.",
	  "sysctl kernel.numa_balancing=0, and place real-time memory and threads on one node (numactl, mbind)." },
	{ "preempt-not-full", SEVERITY_INFO, rule_preempt_not_full,
	  "Without full preemption, a task in kernel code keeps its CPU until it reaches a preemption point: a woken "
	  "real-time task waits behind long system calls and kernel work on its CPU, for hundreds of microseconds or "
	  "more.",
	  "Boot with preempt=full (or echo full > /sys/kernel/debug/sched/preempt), or use a PREEMPT_RT kernel for the "
	  "lowest worst case." },
	{ "no-preempt-rt", SEVERITY_INFO, rule_no_preempt_rt,
	  "Without PREEMPT_RT, interrupt handlers, softirqs and code holding spinlocks cannot be preempted: their "
	  "length adds to the worst-case latency, tens to hundreds of microseconds.",
	  "For bounded worst cases use a PREEMPT_RT kernel (in mainline since 6.12: CONFIG_PREEMPT_RT=y); threadirqs "
	  "on the command line moves most interrupt handlers into threads meanwhile." },
	{ "no-isolation", SEVERITY_INFO, rule_no_isolation,
	  "On a CPU that is not isolated the scheduler places other tasks, kernel threads (kworkers, ksoftirqd, RCU) "
	  "and unbound timers beside real-time work, and each of them can delay it.",
	  "Reserve CPUs for real-time work: isolcpus=managed_irq,domain,N-M nohz_full=N-M rcu_nocbs=N-M on the kernel "
	  "command line (or a cgroup cpuset partition), irqaffinity= the other CPUs, and pin the work there." },
	{ "no-nohz-full", SEVERITY_INFO, rule_no_nohz_full,
	  "A busy CPU takes the scheduler tick HZ times a second; each tick runs timers, accounting and RCU work, a "
	  "few microseconds each time and more when it finds work to do.",
	  "Use a kernel built with CONFIG_NO_HZ_FULL and boot it with nohz_full= the real-time CPUs: the tick then "
	  "stops on a CPU that runs a single task." },
	{ "lockup-watchdogs", SEVERITY_INFO, rule_lockup_watchdogs,
	  "The soft lockup detector runs a timer on every CPU every few seconds that wakes a per-CPU thread; the hard "
	  "lockup detector adds a perf NMI. Each is a short interruption, on isolated CPUs too unless nohz_full or "
	  "kernel.watchdog_cpumask leaves them out.",
	  "sysctl kernel.watchdog=0 (or nowatchdog on the kernel command line), or keep it off the real-time CPUs with "
	  "kernel.watchdog_cpumask; kernel.nmi_watchdog=0 for the NMI one alone." },
	{ "mitigations-on", SEVERITY_INFO, rule_mitigations,
	  "Mitigations add work to every system call, interrupt and context switch (buffer clearing, retpolines, "
	  "barriers, page-table switches): each entry into the kernel costs more, from nanoseconds to microseconds.",
	  "Measure with and without: mitigations=off on the kernel command line removes them, with their protection; "
	  "only where no untrusted code runs." },
	{ "timer-slack", SEVERITY_INFO, rule_timer_slack,
	  "The kernel may delay a SCHED_OTHER task's timers by up to its timer slack to batch wakeups (50 us by "
	  "default); real-time policies ignore it. latscope sets 1 ns on its measuring threads unless told otherwise "
	  "(latscope timer --timer-slack 50us).",
	  "In latency-sensitive SCHED_OTHER code call prctl(PR_SET_TIMERSLACK, 1), or run it under SCHED_FIFO or "
	  "SCHED_RR." },
	{ "timer-slop", SEVERITY_INFO, rule_timer_slop,
	  "The guest kernel programs no timer closer than the hypervisor's slop (the minimum delta of Xen's clock "
	  "event device): a wakeup due sooner after the timer is set comes up to the slop late, and timers within "
	  "the slop of each other fire together. Against an interval of ten times the slop or less, that is a large "
	  "part of every period.",
	  "Boot the guest with a smaller xen_timer_slop= (nanoseconds; the kernel's default is 100000), at the cost "
	  "of more timer interrupts, or judge only intervals well above the slop." },
};

#define NRULES ARRAY_SIZE(rules)

size_t findings_rule_count(void)
{
	return NRULES;
}

const char *findings_rule_id(size_t i)
{
	return i < NRULES ? rules[i].id : NULL;
}

const char *severity_name(enum severity s)
{
	switch (s) {
	case SEVERITY_INFO: return "info";
	case SEVERITY_WARNING: return "warning";
	case SEVERITY_PROBLEM: return "problem";
	}
	return "?";
}

/* Where latscope tune can measure the fix, the finding says how: "latscope tune --only a,b". */
static void point_to_tune(struct finding *f)
{
	char names[160] = "";
	size_t len = 0;

	for (size_t i = 0; i < tune_nfixes; i++)
		if (tune_fixes[i].finding && tune_fixes[i].kind != TUNE_BOOT && strcmp(tune_fixes[i].finding, f->id) == 0 &&
		    len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "", tune_fixes[i].name);
	if (len)
		add(f->fix, " latscope tune --only %s measures whether it helps here.", names);
}

size_t findings_evaluate(const struct fingerprint *fp, const struct findings_context *ctx,
			 struct finding *out, size_t max)
{
	struct finding fired[NRULES];
	size_t n = 0;

	for (size_t i = 0; i < NRULES; i++) {
		struct finding *f = &fired[n];
		f->id = rules[i].id;
		f->severity = rules[i].severity;
		f->saw[0] = f->fix[0] = '\0';
		f->why = rules[i].why;
		if (!rules[i].check(fp, ctx, f))
			continue;
		if (f->fix[0] == '\0')
			add(f->fix, "%s", rules[i].fix);
		point_to_tune(f);
		/* Insertion keeps table order within a severity. */
		struct finding tmp = *f;
		size_t at = n;
		while (at > 0 && fired[at - 1].severity < tmp.severity) {
			fired[at] = fired[at - 1];
			at--;
		}
		fired[at] = tmp;
		n++;
	}
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = fired[i];
	return n;
}

json_t *findings_to_json(const struct finding *f, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", f[i].id, "severity", severity_name(f[i].severity),
				      "saw", f[i].saw, "why", f[i].why, "fix", f[i].fix);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
