#include "sys/tunefix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "sys/textfile.h"
#include "sys/tunefix_boot.h"
#include "sys/tunefix_cpus.h"

/*
 * One kernel setting to one value: not here without its file, already so when
 * it holds the value.  name is what the messages call it.
 */
static int plan_setting(const struct tune_where *w, const char *rel, const char *name,
			const char *value, struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	char now[256];
	int r = tune_read(w, rel, now, sizeof(now));

	if (r == -ENOENT)
		return err_set(why, -TUNE_NOT_HERE, "not here: no %s (no /%s)", name, rel);
	if (r < 0)
		return err_set(why, r, "cannot read '/%s': %s", rel, strerror(-r));
	if (strcmp(now, value) == 0)
		return err_set(why, -TUNE_ALREADY, "already so: %s is %s", name, value);
	if ((r = tune_plan_add(&p, rel, value, false)) < 0)
		return err_set(why, r, "out of memory");
	tune_plan_say(&p, now, value);
	*ret = p;
	return 0;
}

static int plan_timer_migration(const struct tune_where *w, const struct cpuset *measured,
				bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	(void)measured;
	(void)busy_poll;
	return plan_setting(w, "proc/sys/kernel/timer_migration", "timer_migration", "0", ret, why);
}

static int plan_nmi_watchdog(const struct tune_where *w, const struct cpuset *measured,
			     bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	(void)measured;
	(void)busy_poll;
	return plan_setting(w, "proc/sys/kernel/nmi_watchdog", "nmi_watchdog", "0", ret, why);
}

static int plan_rt_runtime(const struct tune_where *w, const struct cpuset *measured,
			   bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	(void)measured;
	if (!busy_poll)
		return err_set(why, -TUNE_NOT_TRIED,
			       "not tried: only a busy-polling probe (noise) can be held back by "
			       "the real-time "
			       "throttle");
	return plan_setting(w, "proc/sys/kernel/sched_rt_runtime_us", "sched_rt_runtime_us", "-1",
			    ret, why);
}

/* Every CPU's vmstat work (folding the per-CPU counters) runs once an interval
 * as a kworker on it, measured CPUs too; 10 s makes that ten times rarer. */
static int plan_vmstat_interval(const struct tune_where *w, const struct cpuset *measured,
				bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	static const char rel[] = "proc/sys/vm/stat_interval";
	char now[32];
	(void)measured;
	(void)busy_poll;
	if (tune_read(w, rel, now, sizeof(now)) == 0 && strtol(now, NULL, 10) >= 10)
		return err_set(why, -TUNE_ALREADY, "already so: stat_interval is %s s", now);
	return plan_setting(w, rel, "stat_interval", "10", ret, why);
}

static int plan_thp_never(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			  struct tune_plan *ret, struct lat_error *why)
{
	static const char rel[] = "sys/kernel/mm/transparent_hugepage/enabled";
	struct tune_plan p = { .n = 0 };
	char text[128], now[32];
	int r;
	(void)measured;
	(void)busy_poll;
	if ((r = tune_read(w, rel, text, sizeof(text))) == -ENOENT)
		return err_set(why, -TUNE_NOT_HERE, "not here: no transparent huge pages (no /%s)",
			       rel);
	/* It reads "always [madvise] never": the bracketed word is the setting. */
	if (r < 0 || textfile_choice(text, '[', ']', now, sizeof(now)) < 0)
		return err_set(why, r < 0 ? r : -EINVAL, "cannot read '/%s': %s", rel,
			       r < 0 ? strerror(-r) : "no [choice] in it");
	if (strcmp(now, "never") == 0)
		return err_set(why, -TUNE_ALREADY,
			       "already so: transparent huge pages are never used");
	if ((r = tune_plan_add(&p, rel, "never", false)) < 0)
		return err_set(why, r, "out of memory");
	tune_plan_say(&p, now, "never");
	*ret = p;
	return 0;
}

static int plan_pm_qos(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		       struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	(void)measured;
	(void)busy_poll;
	if (!tune_exists(w, "dev/cpu_dma_latency"))
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: no PM QoS device (no /dev/cpu_dma_latency)");
	tune_plan_say(&p, "not held", "0 us");
	*ret = p;
	return 0;
}

static int plan_idle_states(const struct tune_where *w, const struct cpuset *measured,
			    bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	char rel[128], first[32], deepest[32] = "", from[96], to[96];
	int cpu = measured ? cpuset_next(measured, 0) : -1;
	unsigned k = 0;
	(void)busy_poll;
	cpu = cpu < 0 ? 0 : cpu;
	/* state0 is polling (or the shallowest state): only deeper ones can be held off. */
	for (; k < 10; k++) { /* the kernel's CPUIDLE_STATE_MAX */
		char name[32];
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpuidle/state%u/name", cpu,
			 k);
		if (tune_read(w, rel, name, sizeof(name)) < 0)
			break;
		memcpy(k ? deepest : first, name, sizeof(name));
	}
	if (k < 2)
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: no cpuidle states deeper than polling");
	snprintf(from, sizeof(from), "up to state%u (%s)", k - 1, deepest);
	snprintf(to, sizeof(to), "state0 (%s)", first);
	tune_plan_say(&p, from, to);
	*ret = p;
	return 0;
}

const struct tune_fix tune_fixes[] = {
	{ "pm-qos", "deep-idle-states",
	  "hold /dev/cpu_dma_latency at 0: no CPU enters an idle state it is slow to leave",
	  TUNE_PMQOS, NULL, plan_pm_qos },
	{ "idle-states", "deep-idle-states",
	  "disable the idle states deeper than state0 on the measured CPUs: a wakeup never waits "
	  "for one's exit",
	  TUNE_IDLE, NULL, plan_idle_states },
	{ "cpufreq-performance", "governor-not-performance",
	  "performance governor and the highest minimum clock: a woken task never starts on a slow "
	  "clock",
	  TUNE_FILES, NULL, tune_plan_cpufreq },
	{ "irq-affinity", "irq-on-isolated",
	  "move device interrupts off the measured CPUs: their handlers no longer run ahead of the "
	  "probe",
	  TUNE_FILES, NULL, tune_plan_irq_affinity },
	{ "timer-migration", NULL,
	  "timer_migration 0: timers stay on the CPU that set them instead of moving to a busy one",
	  TUNE_FILES, NULL, plan_timer_migration },
	{ "vmstat-interval", NULL,
	  "vm.stat_interval 10 s: the per-CPU vmstat work that runs on every CPU comes ten times "
	  "less often",
	  TUNE_FILES, NULL, plan_vmstat_interval },
	{ "workqueue-cpumask", NULL,
	  "unbound workqueues off the measured CPUs: kworkers of unbound work run elsewhere",
	  TUNE_FILES, NULL, tune_plan_workqueue },
	{ "nmi-watchdog", "lockup-watchdogs",
	  "nmi_watchdog 0: no perf NMI of the hard lockup detector on every CPU", TUNE_FILES, NULL,
	  plan_nmi_watchdog },
	{ "soft-watchdog", "lockup-watchdogs",
	  "watchdog_cpumask without the measured CPUs: no soft lockup timer and thread on them",
	  TUNE_FILES, NULL, tune_plan_soft_watchdog },
	{ "thp-never", "thp-always",
	  "transparent huge pages never: no compaction stall in a fault, no khugepaged TLB "
	  "shootdowns",
	  TUNE_FILES, NULL, plan_thp_never },
	{ "rt-runtime", "rt-throttling",
	  "sched_rt_runtime_us -1: a spinning real-time thread is never throttled for the rest of "
	  "a period",
	  TUNE_FILES, NULL, plan_rt_runtime },
	{ "isolcpus", "no-isolation",
	  "isolate the measured CPUs: no other task or unbound kernel work is placed on them",
	  TUNE_BOOT, "isolcpus=managed_irq,domain,%s", tune_plan_isolcpus },
	{ "nohz-full", "no-nohz-full",
	  "stop the scheduler tick on a measured CPU that runs one task", TUNE_BOOT, "nohz_full=%s",
	  tune_plan_nohz_full },
	{ "rcu-nocbs", "isolated-without-rcu-nocbs",
	  "invoke RCU callbacks in kthreads off the measured CPUs, not in softirq on them",
	  TUNE_BOOT, "rcu_nocbs=%s", tune_plan_rcu_nocbs },
	{ "serial-console", "serial-console",
	  "no serial console: a kernel message no longer stalls its CPU for milliseconds",
	  TUNE_BOOT, "drop console=ttyS* from the kernel command line", tune_plan_serial_console },
};

const size_t tune_nfixes = ARRAY_SIZE(tune_fixes);

const struct tune_fix *tune_fix_find(const char *name)
{
	for (size_t i = 0; name && i < tune_nfixes; i++)
		if (strcmp(tune_fixes[i].name, name) == 0)
			return &tune_fixes[i];
	return NULL;
}
