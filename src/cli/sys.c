/* latscope sys: the machine's latency fingerprint and what to change. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/units.h"
#include "sys/findings.h"
#include "sys/fingerprint.h"
#include "sys/timerslop.h"
#include "report/tprint.h"

#define WIDTH 100               /* findings are wrapped to this many columns */

struct sys_cmd {
	bool json;
	bool findings_only;
	const char *sysroot;
	bool help;
};

static const struct opt sys_opts[] = {
	{ "json", 0, OPT_FLAG, offsetof(struct sys_cmd, json),
	  .help = "print {\"fingerprint\": ..., \"findings\": [...]} as JSON" },
	{ "findings-only", 0, OPT_FLAG, offsetof(struct sys_cmd, findings_only),
	  .help = "print the findings without the fingerprint" },
	{ "sysroot", 0, OPT_STRING, offsetof(struct sys_cmd, sysroot), .metavar = "DIR", .values = OPT_VALUES_DIR,
	  .help = "read /proc and /sys under DIR: a copied tree, or a fake one for testing (default /)" },
	{ "help", 'h', OPT_HELP, offsetof(struct sys_cmd, help), .help = "show this help" },
};

static const struct cmd_spec sys_spec = {
	.name = "sys",
	.synopsis = "[--json] [--findings-only] [--sysroot DIR]",
	.about = "Describe what moves latency on this machine (virtualization, kernel, timekeeping, CPUs, idle and\n"
		 "frequency, isolation, interrupts, memory, console, scheduling), then the findings, most severe\n"
		 "first: what was seen, why it matters, what to change.  Needs no privileges: what cannot be read\n"
		 "is unknown.  Findings are advice, not errors: the exit status is 0.",
	.opts = sys_opts,
	.nopts = ARRAY_SIZE(sys_opts),
	.help_offset = offsetof(struct sys_cmd, help),
	.pos_name = "argument",
};

const struct cmd_spec *cmd_sys_spec(void)
{
	return &sys_spec;
}

static const char *known(const char *s)
{
	return s[0] != '\0' ? s : "unknown";
}

__attribute__((format(printf, 2, 3)))
static void row(const char *label, const char *fmt, ...)
{
	va_list ap;

	tprintf(stdout, "  %-20s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *cpulist(bool is_known, const struct cpuset *s, char *buf, size_t size)
{
	if (!is_known)
		return "unknown";
	if (cpuset_count(s) == 0)
		return "none";
	if (cpuset_format(s, buf, size) >= size)
		memcpy(buf + size - 4, "...", 4);
	return buf;
}

static void print_virtualization(const struct fingerprint *fp)
{
	tprintf(stdout, "Virtualization\n");
	if (fp->guest == FP_TRI_YES)
		row("hypervisor", "%s (a guest; seen through %s)", fp->hypervisor[0] ? fp->hypervisor : "unnamed",
		    fp->hypervisor_source);
	else
		row("hypervisor", "%s", fp->guest == FP_TRI_NO ? "none (bare metal)" : "unknown");
}

static const char *mode_source(const char *source)
{
	return strcmp(source, "debugfs") == 0 ? "from /sys/kernel/debug/sched/preempt" :
	       strcmp(source, "cmdline") == 0 ? "from preempt= on the command line" :
	       strcmp(source, "config") == 0 ? "the kernel config's default" : "as built";
}

static void print_kernel(const struct fingerprint *fp)
{
	tprintf(stdout, "Kernel\n");
	row("release", "%s", known(fp->release));
	row("version", "%s", known(fp->version));
	row("arch", "%s", known(fp->arch));
	if (fp->preempt_mode[0] != '\0')
		row("preemption", "%s, mode %s (%s)", known(fp->preempt), fp->preempt_mode,
		    mode_source(fp->preempt_mode_source));
	else
		row("preemption", "%s, mode unknown", known(fp->preempt));
	row("config", "%s", fp->config_source[0] ? fp->config_source : "unknown (no /boot/config-RELEASE or /proc/config.gz)");
	if (!fp->cmdline_known) {
		row("parameters", "unknown");
	} else if (fp->nparams == 0) {
		row("parameters", "none of interest");
	} else {
		tprintf(stdout, "  %-20s", "parameters");
		for (size_t i = 0; i < fp->nparams; i++)
			tprintf(stdout, " %s%s%s", fp->params[i].name, fp->params[i].value[0] ? "=" : "", fp->params[i].value);
		putchar('\n');
	}
	row("mitigations", "%s", !fp->mitigations_known ? "unknown" : fp->mitigated[0] ? fp->mitigated : "none");
}

/* The hypervisor's timer slop, and why it is unknown when it is. */
static void print_timer_slop(const struct fingerprint *fp)
{
	char d[32];
	bool xen = strcmp(fp->hypervisor, "Xen") == 0;

	if (fp->timer_slop_ns == 0 && xen) {
		row("hypervisor slop", "none in effect (the guest's clock event device in /proc/timer_list is not "
		    "xen's, so xen_timer_slop= does not apply)");
	} else if (fp->timer_slop_ns != FP_UNKNOWN) {
		fmt_duration((uint64_t)fp->timer_slop_ns, d, sizeof(d));
		row("hypervisor slop", "%s (%s)", d, strcmp(fp->timer_slop_source, "cmdline") == 0 ?
		    "xen_timer_slop= on the kernel command line" : "the xen clock event device in /proc/timer_list");
	} else if (xen) {
		fmt_duration(XEN_TIMER_SLOP_DEFAULT_NS, d, sizeof(d));
		row("hypervisor slop", "unknown (no xen clock event device in a readable /proc/timer_list, no "
		    "xen_timer_slop= on the command line; the kernel's default is %s)", d);
	} else if (fp->guest == FP_TRI_NO) {
		row("hypervisor slop", "none (bare metal)");
	} else if (fp->guest == FP_TRI_YES) {
		row("hypervisor slop", "unknown (%s does not show it to the guest)",
		    fp->hypervisor[0] ? fp->hypervisor : "the hypervisor");
	} else {
		row("hypervisor slop", "unknown");
	}
}

static void print_timekeeping(const struct fingerprint *fp)
{
	tprintf(stdout, "Timekeeping\n");
	row("clocksource", "%s (available: %s)", known(fp->clocksource), known(fp->clocksources));
	if (fp->hz != FP_UNKNOWN)
		row("timer frequency", "%lld Hz (CONFIG_HZ)", (long long)fp->hz);
	else
		row("timer frequency", "unknown");
	row("tick", "%s", strcmp(fp->nohz, "full") == 0 ? "CONFIG_NO_HZ_FULL" : strcmp(fp->nohz, "idle") == 0 ?
	    "CONFIG_NO_HZ_IDLE (stops on idle CPUs only)" : strcmp(fp->nohz, "periodic") == 0 ?
	    "CONFIG_HZ_PERIODIC (never stops)" : "unknown");
	if (fingerprint_is_x86(fp) && fp->cpu_flags_known)
		row("TSC flags", "constant_tsc %s, nonstop_tsc %s, tsc_reliable %s, tsc_known_freq %s",
		    fp->constant_tsc ? "yes" : "no", fp->nonstop_tsc ? "yes" : "no", fp->tsc_reliable ? "yes" : "no",
		    fp->tsc_known_freq ? "yes" : "no");
	if (fp->timer_slack_ns != FP_UNKNOWN)
		row("timer slack", "%lld ns (this process)", (long long)fp->timer_slack_ns);
	else
		row("timer slack", "unknown");
	print_timer_slop(fp);
}

static void print_cpus(const struct fingerprint *fp)
{
	char list[256];
	size_t threads = 0;              /* 0: no sibling list read */

	tprintf(stdout, "CPUs\n");
	row("model", "%s", known(fp->cpu_model));
	if (fp->online_known)
		row("online", "%s (%u CPUs)", cpulist(true, &fp->online, list, sizeof(list)), cpuset_count(&fp->online));
	else
		row("online", "unknown");
	for (size_t i = 0; i < fp->ncpus; i++) {
		struct cpuset sib;
		if (cpuset_parse(fp->cpus[i].siblings, &sib) == 0 && cpuset_count(&sib) > threads)
			threads = cpuset_count(&sib);
	}
	char per_core[48] = "threads per core unknown";
	if (threads > 0)
		snprintf(per_core, sizeof(per_core), "at most %zu thread%s per core", threads, threads > 1 ? "s" : "");
	row("SMT", "active %s, control %s, %s", fp->smt_active == FP_TRI_UNKNOWN ? "unknown" : fp->smt_active ? "yes" : "no",
	    known(fp->smt_control), per_core);
	if (fp->numa_nodes != FP_UNKNOWN)
		row("NUMA nodes", "%lld", (long long)fp->numa_nodes);
	else
		row("NUMA nodes", "unknown");
}

/* CPUs whose value (by same) matches CPU i's, when i is the first of them; else false. */
static bool first_of_group(const struct fingerprint *fp, size_t i, bool (*same)(const struct fp_cpu *, const struct fp_cpu *),
			   struct cpuset *ret)
{
	for (size_t j = 0; j < i; j++)
		if (same(&fp->cpus[j], &fp->cpus[i]))
			return false;
	cpuset_clear(ret);
	for (size_t j = i; j < fp->ncpus; j++)
		if (same(&fp->cpus[j], &fp->cpus[i]))
			cpuset_add(ret, fp->cpus[j].cpu);
	return true;
}

static bool same_governor(const struct fp_cpu *a, const struct fp_cpu *b)
{
	return strcmp(a->governor, b->governor) == 0;
}

static void print_idle_frequency(const struct fingerprint *fp)
{
	char list[256];
	struct cpuset set;
	bool any = false;

	tprintf(stdout, "Idle and frequency\n");
	row("cpuidle", "driver %s, governor %s", known(fp->cpuidle_driver), known(fp->cpuidle_governor));
	for (size_t i = 0; i < fp->ncpus; i++) {
		const struct fp_cpu *c = &fp->cpus[i];
		if (c->nidle == 0 || !first_of_group(fp, i, fp_same_idle, &set))
			continue;
		tprintf(stdout, "  %-20s CPU%s %s:", any ? "" : "idle states", cpuset_count(&set) == 1 ? "" : "s",
		       cpulist(true, &set, list, sizeof(list)));
		for (size_t k = 0; k < c->nidle; k++) {
			const struct fp_idle_state *s = &c->idle[k];
			tprintf(stdout, "%s %s", k ? "," : "", s->name);
			if (s->latency_us != FP_UNKNOWN)
				tprintf(stdout, " %lld us", (long long)s->latency_us);
			if (s->disabled == FP_TRI_YES)
				tprintf(stdout, " (disabled)");
		}
		putchar('\n');
		any = true;
	}
	if (!any)
		row("idle states", "%s", fp->ncpus ? "none (no cpuidle states)" : "unknown");
	any = false;
	for (size_t i = 0; i < fp->ncpus; i++) {
		if (!first_of_group(fp, i, same_governor, &set))
			continue;
		const char *g = fp->cpus[i].governor;
		tprintf(stdout, "  %-20s %s on CPU%s %s\n", any ? "" : "governor",
		       strcmp(g, "none") == 0 ? "none (no cpufreq)" : known(g), cpuset_count(&set) == 1 ? "" : "s",
		       cpulist(true, &set, list, sizeof(list)));
		any = true;
	}
	if (!any)
		row("governor", "unknown");
}

static void print_isolation(const struct fingerprint *fp)
{
	char list[256];
	const char *v;

	tprintf(stdout, "Isolation\n");
	row("isolated CPUs", "%s", cpulist(fp->isolated_known, &fp->isolated, list, sizeof(list)));
	row("nohz_full CPUs", "%s", cpulist(fp->nohz_full_known, &fp->nohz_full, list, sizeof(list)));
	v = fingerprint_param(fp, "rcu_nocbs");
	row("rcu_nocbs", "%s", v ? (v[0] ? v : "(no list)") : fp->cmdline_known ? "not given" : "unknown");
	v = fingerprint_param(fp, "irqaffinity");
	row("irqaffinity", "%s", v ? v : fp->cmdline_known ? "not given" : "unknown");
}

static void print_interrupts(const struct fingerprint *fp)
{
	tprintf(stdout, "Interrupts\n");
	if (!fp->irqs_known) {
		row("device IRQs", "unknown");
		return;
	}
	if (fp->nirqs == 0) {
		row("device IRQs", "none");
		return;
	}
	tprintf(stdout, "  %5s  %-12s %-12s %s\n", "IRQ", "allowed", "effective", "name");
	for (size_t i = 0; i < fp->nirqs; i++) {
		const struct fp_irq *q = &fp->irqs[i];
		tprintf(stdout, "  %5u  %-12s %-12s %s\n", q->irq, known(q->affinity), known(q->effective), q->name);
	}
}

static void print_memory(const struct fingerprint *fp)
{
	int64_t v;

	tprintf(stdout, "Memory\n");
	row("huge pages (THP)", "enabled %s, defrag %s", known(fp->thp_enabled), known(fp->thp_defrag));
	if (fingerprint_sysctl_i64(fp, "kernel.numa_balancing", &v) == 0)
		row("NUMA balancing", "%s", v ? "on" : "off");
	else
		row("NUMA balancing", "unknown");
}

static void print_console(const struct fingerprint *fp)
{
	const char *param = fingerprint_param(fp, "console");
	int64_t level;

	tprintf(stdout, "Console\n");
	if (!fp->consoles_known)
		row("consoles", "unknown");
	else if (fp->nconsoles == 0)
		row("consoles", "none");
	for (size_t i = 0; i < fp->nconsoles; i++) {
		const struct fp_console *c = &fp->consoles[i];
		tprintf(stdout, "  %-20s %s %s (flags %s)\n", i ? "" : "consoles", c->name,
		       c->serial ? (c->enabled ? "serial, enabled" : "serial, disabled") : (c->enabled ? "enabled" : "disabled"),
		       c->flags);
	}
	row("console=", "%s", param ? param : fp->cmdline_known ? "not given" : "unknown");
	if (fingerprint_sysctl_i64(fp, "kernel.printk", &level) == 0)
		row("console loglevel", "%lld", (long long)level);
	else
		row("console loglevel", "unknown");
}

static void print_scheduling(const struct fingerprint *fp)
{
	int64_t runtime, period;

	tprintf(stdout, "Scheduling\n");
	if (fingerprint_sysctl_i64(fp, "kernel.sched_rt_runtime_us", &runtime) < 0)
		row("RT throttling", "unknown");
	else if (runtime < 0)
		row("RT throttling", "off (kernel.sched_rt_runtime_us = -1)");
	else if (fingerprint_sysctl_i64(fp, "kernel.sched_rt_period_us", &period) == 0 && period > 0)
		row("RT throttling", "on: %lld us of every %lld us (%.1f%%)", (long long)runtime, (long long)period,
		    100.0 * (double)runtime / (double)period);
	else
		row("RT throttling", "on: %lld us per period", (long long)runtime);
	if (fp->steal_ns == FP_UNKNOWN)
		row("steal time", "unknown");
	else
		row("steal time", "%.1f s since boot (%.2f%% of CPU time)", (double)fp->steal_ns / 1e9,
		    fp->cpu_ns > 0 ? 100.0 * (double)fp->steal_ns / (double)fp->cpu_ns : 0.0);
	if (fp->smis != FP_UNKNOWN)
		row("SMIs", "%lld since reset (MSR_SMI_COUNT)", (long long)fp->smis);
	else if (fp->smi_source[0])
		row("SMIs", "countable while measuring (%s); no count since reset without the MSR", fp->smi_source);
	else
		row("SMIs", "not available here (no smi event in the msr PMU, no /dev/cpu/N/msr)");
	for (size_t i = 0; i < fp->nsysctls; i++)
		tprintf(stdout, "  %-20s %s = %s\n", i ? "" : "sysctl", fp->sysctls[i].name, fp->sysctls[i].value);
}

/* text after a label at indent, wrapped to WIDTH on blanks. */
static void wrap(const char *label, const char *text, int indent)
{
	int col = tprintf(stdout, "%*s%s", indent, "", label);
	const char *p = text;

	while (*p != '\0') {
		size_t word = strcspn(p, " ");
		if (col > indent + (int)strlen(label) && col + 1 + (int)word > WIDTH) {
			col = tprintf(stdout, "\n%*s", indent + (int)strlen(label), "") - 1;
		} else if (col > indent + (int)strlen(label)) {
			putchar(' ');
			col++;
		}
		col += tprintf(stdout, "%.*s", (int)word, p);
		p += word;
		p += strspn(p, " ");
	}
	putchar('\n');
}

static void print_findings(const struct finding *f, size_t n)
{
	size_t count[3] = { 0 };

	for (size_t i = 0; i < n; i++)
		count[f[i].severity]++;
	tprintf(stdout, "Findings: %zu problem%s, %zu warning%s, %zu info\n", count[SEVERITY_PROBLEM],
	       count[SEVERITY_PROBLEM] == 1 ? "" : "s", count[SEVERITY_WARNING], count[SEVERITY_WARNING] == 1 ? "" : "s",
	       count[SEVERITY_INFO]);
	for (size_t i = 0; i < n; i++) {
		tprintf(stdout, "\n  %-8s %s\n", severity_name(f[i].severity), f[i].id);
		wrap("saw: ", f[i].saw, 11);
		wrap("why: ", f[i].why, 11);
		wrap("fix: ", f[i].fix, 11);
	}
}

static int print_json(const struct fingerprint *fp, const struct finding *f, size_t n, bool findings_only)
{
	json_t *doc = json_object();
	json_t *fpj = findings_only ? NULL : fingerprint_to_json(fp);
	json_t *fj = findings_to_json(f, n);
	char *text = NULL;

	if (doc && (findings_only || fpj) && fj) {
		if ((findings_only || json_object_set_new(doc, "fingerprint", fpj) == 0) &&
		    json_object_set_new(doc, "findings", fj) == 0)
			text = json_dumps(doc, JSON_INDENT(2));
		fpj = fj = NULL;        /* owned by doc now, or freed by a failed set */
	}
	json_decref(fpj);
	json_decref(fj);
	json_decref(doc);
	if (!text) {
		tprintf(stderr, "latscope sys: out of memory\n");
		return EXIT_ERROR;
	}
	puts(text);
	free(text);
	return EXIT_OK;
}

int cmd_sys(int argc, char **argv)
{
	struct sys_cmd c = { 0 };
	struct opt_result given;
	struct fingerprint_opts fo = { 0 };
	struct fingerprint *fp = NULL;
	int code = storecmd_parse(&sys_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	fo.sysroot = c.sysroot;
	int r = fingerprint_collect(&fo, &fp);
	if (r < 0) {
		char msg[512];
		if (r == -ENOMEM) {
			tprintf(stderr, "latscope sys: out of memory\n");
			return EXIT_ERROR;
		}
		snprintf(msg, sizeof(msg), "option '--sysroot': cannot read '%s': %s", c.sysroot ? c.sysroot : "/",
			 strerror(-r));
		return storecmd_usage("sys", msg);
	}

	size_t max = findings_rule_count();
	struct finding *f = calloc(max, sizeof(*f));
	if (!f) {
		fingerprint_free(fp);
		tprintf(stderr, "latscope sys: out of memory\n");
		return EXIT_ERROR;
	}
	size_t n = findings_evaluate(fp, NULL, f, max);
	if (c.json) {
		code = print_json(fp, f, n, c.findings_only);
	} else {
		if (!c.findings_only) {
			print_virtualization(fp);
			print_kernel(fp);
			print_timekeeping(fp);
			print_cpus(fp);
			print_idle_frequency(fp);
			print_isolation(fp);
			print_interrupts(fp);
			print_memory(fp);
			print_console(fp);
			print_scheduling(fp);
			putchar('\n');
		}
		print_findings(f, n);
		code = EXIT_OK;
	}
	free(f);
	fingerprint_free(fp);
	return code;
}
