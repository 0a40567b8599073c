#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuset.h"
#include "core/nstime.h"
#include "sys/findings.h"
#include "sys/fingerprint.h"
#include "sys/smi.h"
#include "systree.h"

#define END { NULL, NULL }

/* The findings of a fake tree (hypervisor as fingerprint_opts takes it), into out[max]. */
static size_t evaluate(const struct systree_file *files, const char *hypervisor, const struct findings_context *ctx,
		       struct finding *out, size_t max)
{
	char dir[64];
	struct fingerprint *fp = NULL;

	systree_make(dir, files);
	struct fingerprint_opts o = { .sysroot = dir, .hypervisor = hypervisor };
	assert_int_equal(fingerprint_collect(&o, &fp), 0);
	size_t n = findings_evaluate(fp, ctx, out, max);
	fingerprint_free(fp);
	systree_remove(dir);
	return n;
}

/*
 * Whether rule id fires in the tree; when it does, *ret (if given) is its
 * finding.  Every finding that fires must say what it saw and what to do.
 */
static bool fires_with(const struct systree_file *files, const char *hypervisor, const struct findings_context *ctx,
		       const char *id, struct finding *ret)
{
	size_t max = findings_rule_count();
	struct finding *f = calloc(max, sizeof(*f));
	bool found = false;

	assert_non_null(f);
	size_t n = evaluate(files, hypervisor, ctx, f, max);
	assert_true(n <= max);
	for (size_t i = 0; i < n; i++) {
		assert_true(f[i].saw[0] != '\0');
		assert_true(f[i].why[0] != '\0' && f[i].fix[0] != '\0');
		if (strcmp(f[i].id, id) == 0) {
			found = true;
			if (ret)
				*ret = f[i];
		}
	}
	free(f);
	return found;
}

static bool fires(const struct systree_file *files, const char *id, struct finding *ret)
{
	return fires_with(files, NULL, NULL, id, ret);
}

/* ---- guest ---- */

static void test_rule_guest_fires_when_the_hypervisor_is_kvm(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { END };
	assert_true(fires_with(tree, "KVM", NULL, "guest", &f));
	assert_non_null(strstr(f.saw, "KVM"));
	assert_int_equal(f.severity, SEVERITY_WARNING);
}

static void test_rule_guest_fires_on_the_cpuinfo_hypervisor_flag_alone(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc hypervisor constant_tsc\n\n" },
		END,
	};
	assert_true(fires(tree, "guest", NULL));
}

static void test_rule_guest_names_xen_from_sys_hypervisor_type(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { { "sys/hypervisor/type", "xen\n" }, END };
	assert_true(fires(tree, "guest", &f));
	assert_non_null(strstr(f.saw, "Xen"));
}

static void test_rule_guest_is_quiet_on_bare_metal(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n" },
		END,
	};
	assert_false(fires(tree, "guest", NULL));
	assert_false(fires_with(tree, "", NULL, "guest", NULL));
}

/* ---- steal-time ---- */

static void test_rule_steal_time_fires_when_proc_stat_counts_steal(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/stat", "cpu  1000 0 1000 97000 0 0 0 1000 0 0\ncpu0 1000 0 1000 97000 0 0 0 1000 0 0\n" },
		END,
	};
	assert_true(fires(tree, "steal-time", &f));
	assert_int_equal(f.severity, SEVERITY_PROBLEM);         /* 1% of all CPU time */
	assert_non_null(strstr(f.saw, "1.00%"));
}

static void test_rule_steal_time_is_a_warning_below_one_percent(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/stat", "cpu  1000 0 1000 97999 0 0 0 1 0 0\ncpu0 1000 0 1000 97999 0 0 0 1 0 0\n" },
		END,
	};
	assert_true(fires(tree, "steal-time", &f));
	assert_int_equal(f.severity, SEVERITY_WARNING);
}

static void test_rule_steal_time_is_quiet_without_steal(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/stat", "cpu  1000 0 1000 98000 0 0 0 0 0 0\ncpu0 1000 0 1000 98000 0 0 0 0 0 0\n" },
		END,
	};
	assert_false(fires(tree, "steal-time", NULL));
}

/* ---- smis ---- */

/* MSR_SMI_COUNT at the MSR's offset of a stand-in for /dev/cpu/0/msr: 0x01010105 in its low 32 bits. */
#define MSR_FILE                                                                                                     \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"                                                     \
	"\x05\x01\x01\x01\x01\x01\x01\x01"

static void test_rule_smis_fires_on_an_msr_count_since_reset(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/devices/system/cpu/online", "0\n" },
		{ "dev/cpu/0/msr", MSR_FILE },
		END,
	};
	struct finding f;
	assert_int_equal(sizeof(MSR_FILE) - 1u, SMI_MSR + 8u);
	assert_true(fires(tree, "smis", &f));
	assert_string_equal(f.saw, "16843013 SMIs since reset (MSR_SMI_COUNT of the first CPU)");
}

static void test_rule_smis_fires_on_smis_the_run_counted(void **state)
{
	(void)state;
	const struct systree_file tree[] = { END };
	struct findings_context ctx = { .smis_counted = true, .smis = 2 };
	struct finding f;
	assert_true(fires_with(tree, NULL, &ctx, "smis", &f));
	assert_string_equal(f.saw, "2 SMIs counted on the measured CPUs during the run");
}

static void test_rule_smis_is_quiet_without_a_count_or_with_none(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "sys/devices/system/cpu/online", "0\n" }, END };
	struct findings_context ctx = { .smis_counted = true, .smis = 0 };
	assert_false(fires(tree, "smis", NULL));
	assert_false(fires_with(tree, NULL, &ctx, "smis", NULL));
}

/* ---- serial-console ---- */

static void test_rule_serial_console_fires_when_ttyS0_is_a_console(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\n" },
		{ "proc/cmdline", "console=ttyS0,115200 quiet\n" },
		{ "proc/sys/kernel/printk", "4\t4\t1\t7\n" },
		END,
	};
	assert_true(fires(tree, "serial-console", &f));
	assert_non_null(strstr(f.saw, "ttyS0"));
	assert_non_null(strstr(f.saw, "loglevel 4"));
}

static void test_rule_serial_console_does_not_advise_quiet_to_a_machine_booted_with_it(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file quiet[] = {
		{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\n" },
		{ "proc/cmdline", "console=ttyS0 quiet reboot=k\n" },
		{ "proc/sys/kernel/printk", "4\t4\t1\t7\n" },
		END,
	};
	assert_true(fires(quiet, "serial-console", &f));
	assert_null(strstr(f.fix, "boot with quiet"));
	assert_non_null(strstr(f.fix, "already kept down (booted with quiet)"));
	assert_non_null(strstr(f.fix, "loglevel=1"));
	assert_non_null(strstr(f.saw, "the command line has quiet"));

	/* quiet at boot, but the level raised since: say so */
	const struct systree_file raised[] = {
		{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\n" },
		{ "proc/cmdline", "console=ttyS0 quiet\n" },
		{ "proc/sys/kernel/printk", "7\t4\t1\t7\n" },
		END,
	};
	assert_true(fires(raised, "serial-console", &f));
	assert_non_null(strstr(f.fix, "raised to 7 since"));

	/* neither quiet nor a low level: the usual advice */
	const struct systree_file loud[] = {
		{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\n" },
		{ "proc/cmdline", "console=ttyS0\n" },
		{ "proc/sys/kernel/printk", "7\t4\t1\t7\n" },
		END,
	};
	assert_true(fires(loud, "serial-console", &f));
	assert_non_null(strstr(f.fix, "boot with quiet or loglevel=3"));
}

static void test_rule_serial_console_fires_for_ttyAMA0_and_hvc0(void **state)
{
	(void)state;
	const struct systree_file amba[] = { { "proc/consoles", "ttyAMA0              -W- (EC p  )  204:64\n" }, END };
	const struct systree_file hvc[] = { { "proc/consoles", "hvc0                 -W- (EC p  )  229:0\n" }, END };
	assert_true(fires(amba, "serial-console", NULL));
	assert_true(fires(hvc, "serial-console", NULL));
}

static void test_rule_serial_console_is_quiet_for_a_virtual_terminal_or_a_disabled_port(void **state)
{
	(void)state;
	const struct systree_file vt[] = { { "proc/consoles", "tty0                 -WU (EC p  )    4:1\n" }, END };
	const struct systree_file off[] = { { "proc/consoles", "ttyS0                -W- (C  p a)    4:64\n" }, END };
	assert_false(fires(vt, "serial-console", NULL));
	assert_false(fires(off, "serial-console", NULL));
}

/* ---- clocksource-not-tsc ---- */

#define CLOCKSOURCE "sys/devices/system/clocksource/clocksource0/"

static void test_rule_clocksource_not_tsc_is_a_problem_for_hpet(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ CLOCKSOURCE "current_clocksource", "hpet\n" },
		{ CLOCKSOURCE "available_clocksource", "tsc hpet acpi_pm \n" },
		END,
	};
	assert_true(fires(tree, "clocksource-not-tsc", &f));
	assert_int_equal(f.severity, SEVERITY_PROBLEM);
	assert_non_null(strstr(f.fix, "clocksource=tsc"));
}

static void test_rule_clocksource_not_tsc_is_a_warning_for_kvm_clock(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ CLOCKSOURCE "current_clocksource", "kvm-clock\n" },
		{ CLOCKSOURCE "available_clocksource", "kvm-clock tsc acpi_pm \n" },
		END,
	};
	assert_true(fires(tree, "clocksource-not-tsc", &f));
	assert_int_equal(f.severity, SEVERITY_WARNING);
}

static void test_rule_clocksource_not_tsc_says_when_tsc_is_not_available(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ CLOCKSOURCE "current_clocksource", "kvm-clock\n" },
		{ CLOCKSOURCE "available_clocksource", "kvm-clock acpi_pm \n" },
		END,
	};
	assert_true(fires(tree, "clocksource-not-tsc", &f));
	assert_non_null(strstr(f.saw, "unstable"));
	assert_non_null(strstr(f.fix, "dmesg"));
}

static void test_rule_clocksource_not_tsc_is_quiet_on_tsc_and_off_x86(void **state)
{
	(void)state;
	const struct systree_file tsc[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ CLOCKSOURCE "current_clocksource", "tsc\n" },
		{ CLOCKSOURCE "available_clocksource", "tsc hpet \n" },
		END,
	};
	const struct systree_file arm[] = {
		{ "proc/sys/kernel/arch", "aarch64\n" },
		{ CLOCKSOURCE "current_clocksource", "arch_sys_counter\n" },
		END,
	};
	assert_false(fires(tsc, "clocksource-not-tsc", NULL));
	assert_false(fires(arm, "clocksource-not-tsc", NULL));
}

/* ---- tsc-flags ---- */

static void test_rule_tsc_flags_fires_without_nonstop_tsc(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc\n\n" },
		END,
	};
	assert_true(fires(tree, "tsc-flags", &f));
	assert_non_null(strstr(f.saw, "nonstop_tsc no"));
}

static void test_rule_tsc_flags_is_quiet_with_an_invariant_tsc(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n" },
		END,
	};
	assert_false(fires(tree, "tsc-flags", NULL));
}

/* ---- deep-idle-states ---- */

#define CPU0 "sys/devices/system/cpu/cpu0/"

#define IDLE_TREE(c6_disable) \
	{ "sys/devices/system/cpu/online", "0\n" }, \
	{ CPU0 "cpuidle/state0/name", "POLL\n" }, \
	{ CPU0 "cpuidle/state0/latency", "0\n" }, \
	{ CPU0 "cpuidle/state0/disable", "0\n" }, \
	{ CPU0 "cpuidle/state1/name", "C1\n" }, \
	{ CPU0 "cpuidle/state1/latency", "2\n" }, \
	{ CPU0 "cpuidle/state1/disable", "0\n" }, \
	{ CPU0 "cpuidle/state2/name", "C6\n" }, \
	{ CPU0 "cpuidle/state2/latency", "133\n" }, \
	{ CPU0 "cpuidle/state2/disable", c6_disable }

static void test_rule_deep_idle_states_fires_for_an_enabled_c6(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { IDLE_TREE("0\n"), END };
	assert_true(fires(tree, "deep-idle-states", &f));
	assert_non_null(strstr(f.saw, "C6 (exit latency 133 us) on CPU 0"));
	assert_null(strstr(f.saw, "C1"));
	assert_non_null(strstr(f.why, "production workload is not"));
	assert_int_equal(f.severity, SEVERITY_WARNING);
}

static void test_rule_deep_idle_states_is_a_problem_for_a_measurement_without_pm_qos(void **state)
{
	(void)state;
	struct finding f;
	struct cpuset measured;
	assert_int_equal(cpuset_parse("0", &measured), 0);
	struct findings_context ctx = { .measured = &measured, .pm_qos_held = false };
	const struct systree_file tree[] = { IDLE_TREE("0\n"), END };
	assert_true(fires_with(tree, NULL, &ctx, "deep-idle-states", &f));
	assert_int_equal(f.severity, SEVERITY_PROBLEM);
	ctx.pm_qos_held = true;
	assert_true(fires_with(tree, NULL, &ctx, "deep-idle-states", &f));
	assert_int_equal(f.severity, SEVERITY_WARNING);
}

static void test_rule_deep_idle_states_is_quiet_when_c6_is_disabled(void **state)
{
	(void)state;
	const struct systree_file tree[] = { IDLE_TREE("1\n"), END };
	assert_false(fires(tree, "deep-idle-states", NULL));
}

/* ---- governor-not-performance ---- */

static void test_rule_governor_not_performance_fires_for_powersave(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "sys/devices/system/cpu/online", "0-1\n" },
		{ CPU0 "cpufreq/scaling_governor", "powersave\n" },
		{ "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n" },
		END,
	};
	assert_true(fires(tree, "governor-not-performance", &f));
	assert_non_null(strstr(f.saw, "powersave on CPU 0"));
	assert_null(strstr(f.saw, "performance"));
}

static void test_rule_governor_not_performance_is_quiet_for_performance_or_no_cpufreq(void **state)
{
	(void)state;
	const struct systree_file perf[] = {
		{ "sys/devices/system/cpu/online", "0\n" },
		{ CPU0 "cpufreq/scaling_governor", "performance\n" },
		END,
	};
	const struct systree_file none[] = {
		{ "sys/devices/system/cpu/online", "0\n" },
		{ CPU0 "topology/thread_siblings_list", "0\n" },
		END,
	};
	assert_false(fires(perf, "governor-not-performance", NULL));
	assert_false(fires(none, "governor-not-performance", NULL));
}

/* ---- rt-throttling ---- */

static void test_rule_rt_throttling_fires_at_the_default_950000(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },
		{ "proc/sys/kernel/sched_rt_period_us", "1000000\n" },
		END,
	};
	assert_true(fires(tree, "rt-throttling", &f));
	assert_non_null(strstr(f.saw, "95.0%"));
	assert_non_null(strstr(f.saw, "50 ms"));
}

static void test_rule_rt_throttling_is_quiet_when_runtime_is_minus_one(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/sched_rt_runtime_us", "-1\n" },
		{ "proc/sys/kernel/sched_rt_period_us", "1000000\n" },
		END,
	};
	assert_false(fires(tree, "rt-throttling", NULL));
}

/* ---- smt-siblings ---- */

#define SMT_TREE(sib0, sib1) \
	{ "sys/devices/system/cpu/online", "0-1\n" }, \
	{ CPU0 "topology/thread_siblings_list", sib0 }, \
	{ "sys/devices/system/cpu/cpu1/topology/thread_siblings_list", sib1 }

static void test_rule_smt_siblings_fires_when_two_threads_of_a_core_are_online(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { SMT_TREE("0-1\n", "0-1\n"), { "sys/devices/system/cpu/smt/control", "on\n" },
					     END };
	assert_true(fires(tree, "smt-siblings", &f));
	assert_non_null(strstr(f.saw, "1 core with more than one online thread"));
	assert_non_null(strstr(f.saw, "0-1"));
}

static void test_rule_smt_siblings_names_an_isolated_cpu_whose_sibling_is_not_isolated(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		SMT_TREE("0-1\n", "0-1\n"),
		{ "sys/devices/system/cpu/isolated", "1\n" },
		END,
	};
	assert_true(fires(tree, "smt-siblings", &f));
	assert_non_null(strstr(f.saw, "isolated CPU 1 shares its core with CPU 0, which is not isolated"));
}

static void test_rule_smt_siblings_looks_only_at_measured_cores_when_measuring(void **state)
{
	(void)state;
	struct cpuset measured;
	const struct systree_file tree[] = {
		{ "sys/devices/system/cpu/online", "0-2\n" },
		{ CPU0 "topology/thread_siblings_list", "0-1\n" },
		{ "sys/devices/system/cpu/cpu1/topology/thread_siblings_list", "0-1\n" },
		{ "sys/devices/system/cpu/cpu2/topology/thread_siblings_list", "2\n" },
		END,
	};
	assert_int_equal(cpuset_parse("2", &measured), 0);
	struct findings_context ctx = { .measured = &measured, .pm_qos_held = true };
	assert_false(fires_with(tree, NULL, &ctx, "smt-siblings", NULL));
	assert_int_equal(cpuset_parse("1", &measured), 0);
	assert_true(fires_with(tree, NULL, &ctx, "smt-siblings", NULL));
}

static void test_rule_smt_siblings_is_quiet_with_one_thread_per_core(void **state)
{
	(void)state;
	const struct systree_file tree[] = { SMT_TREE("0\n", "1\n"), END };
	/* A sibling that is offline does not count either. */
	const struct systree_file offline[] = {
		{ "sys/devices/system/cpu/online", "0\n" },
		{ CPU0 "topology/thread_siblings_list", "0-1\n" },
		END,
	};
	assert_false(fires(tree, "smt-siblings", NULL));
	assert_false(fires(offline, "smt-siblings", NULL));
}

/* ---- irq-on-isolated ---- */

#define IRQ_TREE(affinity) \
	{ "sys/devices/system/cpu/isolated", "1\n" }, \
	{ "proc/interrupts", "           CPU0       CPU1\n" \
			     " 26:          0          8  IO-APIC   4-edge      ttyS0\n" \
			     "LOC:       1000       1000   Local timer interrupts\n" }, \
	{ "proc/irq/26/smp_affinity_list", affinity }, \
	{ "proc/irq/26/effective_affinity_list", "1\n" }

static void test_rule_irq_on_isolated_fires_when_a_device_irq_may_run_on_an_isolated_cpu(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { IRQ_TREE("0-1\n"), END };
	assert_true(fires(tree, "irq-on-isolated", &f));
	assert_non_null(strstr(f.saw, "IRQ 26 ttyS0 (allowed on 0-1, effective 1)"));
	assert_null(strstr(f.saw, "LOC"));
}

static void test_rule_irq_on_isolated_is_quiet_when_irqs_stay_on_housekeeping_cpus(void **state)
{
	(void)state;
	const struct systree_file tree[] = { IRQ_TREE("0\n"), END };
	assert_false(fires(tree, "irq-on-isolated", NULL));
}

/* ---- isolated-without-rcu-nocbs ---- */

static void test_rule_isolated_without_rcu_nocbs_fires_for_isolcpus_alone(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/cmdline", "isolcpus=domain,managed_irq,2-3 quiet\n" },
		END,
	};
	assert_true(fires(tree, "isolated-without-rcu-nocbs", &f));
	assert_non_null(strstr(f.saw, "2-3"));
	assert_non_null(strstr(f.fix, "rcu_nocbs=2-3"));
}

static void test_rule_isolated_without_rcu_nocbs_is_quiet_with_rcu_nocbs_or_nohz_full(void **state)
{
	(void)state;
	const struct systree_file nocbs[] = { { "proc/cmdline", "isolcpus=2-3 rcu_nocbs=2-3\n" }, END };
	const struct systree_file nohz[] = { { "proc/cmdline", "isolcpus=2-3 nohz_full=2-3\n" }, END };
	assert_false(fires(nocbs, "isolated-without-rcu-nocbs", NULL));
	assert_false(fires(nohz, "isolated-without-rcu-nocbs", NULL));
}

/* ---- thp-always ---- */

static void test_rule_thp_always_fires_when_thp_is_always_on(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n" },
		{ "sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n" },
		END,
	};
	assert_true(fires(tree, "thp-always", &f));
	assert_non_null(strstr(f.saw, "defrag: madvise"));
}

static void test_rule_thp_always_is_quiet_for_madvise(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n" },
		END,
	};
	assert_false(fires(tree, "thp-always", NULL));
}

/* ---- numa-balancing ---- */

static void test_rule_numa_balancing_fires_on_two_nodes_with_balancing_on(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/devices/system/node/online", "0-1\n" },
		{ "proc/sys/kernel/numa_balancing", "1\n" },
		END,
	};
	assert_true(fires(tree, "numa-balancing", NULL));
}

static void test_rule_numa_balancing_is_quiet_on_one_node_or_when_off(void **state)
{
	(void)state;
	const struct systree_file one[] = {
		{ "sys/devices/system/node/online", "0\n" },
		{ "proc/sys/kernel/numa_balancing", "1\n" },
		END,
	};
	const struct systree_file off[] = {
		{ "sys/devices/system/node/online", "0-1\n" },
		{ "proc/sys/kernel/numa_balancing", "0\n" },
		END,
	};
	assert_false(fires(one, "numa-balancing", NULL));
	assert_false(fires(off, "numa-balancing", NULL));
}

/* ---- preempt-not-full and no-preempt-rt ---- */

static void test_rule_preempt_not_full_fires_for_a_dynamic_kernel_booted_voluntary(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Mon Nov 30 08:00:00 UTC 2026\n" },
		{ "proc/cmdline", "preempt=voluntary\n" },
		END,
	};
	assert_true(fires(tree, "preempt-not-full", &f));
	assert_non_null(strstr(f.saw, "mode voluntary"));
	assert_false(fires(tree, "no-preempt-rt", NULL));
}

static void test_rule_preempt_not_full_fires_for_a_kernel_without_preempt(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { { "proc/sys/kernel/version", "#1 SMP Mon Nov 30 2026\n" }, END };
	assert_true(fires(tree, "preempt-not-full", &f));
	assert_non_null(strstr(f.fix, "CONFIG_PREEMPT"));
}

static void test_rule_preempt_not_full_is_quiet_in_full_mode_where_no_preempt_rt_fires(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Mon Nov 30 08:00:00 UTC 2026\n" },
		{ "proc/cmdline", "preempt=full\n" },
		END,
	};
	assert_false(fires(tree, "preempt-not-full", NULL));
	assert_true(fires(tree, "no-preempt-rt", NULL));
}

static void test_rule_no_preempt_rt_is_quiet_on_a_preempt_rt_kernel(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Mon Nov 30 08:00:00 UTC 2026\n" },
		END,
	};
	assert_false(fires(tree, "no-preempt-rt", NULL));
	assert_false(fires(tree, "preempt-not-full", NULL));
}

/* ---- no-isolation ---- */

static void test_rule_no_isolation_fires_without_isolcpus_or_nohz_full(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/cmdline", "quiet\n" },
		{ "sys/devices/system/cpu/isolated", "\n" },
		END,
	};
	assert_true(fires(tree, "no-isolation", &f));
	assert_int_equal(f.severity, SEVERITY_INFO);
}

static void test_rule_no_isolation_is_a_warning_for_measured_cpus_that_are_not_isolated(void **state)
{
	(void)state;
	struct finding f;
	struct cpuset measured;
	const struct systree_file tree[] = {
		{ "proc/cmdline", "isolcpus=1\n" },
		{ "sys/devices/system/cpu/isolated", "1\n" },
		END,
	};
	assert_int_equal(cpuset_parse("0-1", &measured), 0);
	struct findings_context ctx = { .measured = &measured, .pm_qos_held = true };
	assert_true(fires_with(tree, NULL, &ctx, "no-isolation", &f));
	assert_int_equal(f.severity, SEVERITY_WARNING);
	assert_non_null(strstr(f.saw, "measured CPU 0 is"));
	assert_non_null(strstr(f.fix, "nohz_full=0"));
	assert_int_equal(cpuset_parse("1", &measured), 0);
	assert_false(fires_with(tree, NULL, &ctx, "no-isolation", NULL));
}

static void test_rule_no_isolation_is_quiet_with_isolcpus(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/cmdline", "isolcpus=1\n" }, END };
	assert_false(fires(tree, "no-isolation", NULL));
}

/* ---- no-nohz-full ---- */

static void test_rule_no_nohz_full_fires_without_nohz_full_and_gives_the_tick_period(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/osrelease", "6.1.0-test\n" },
		{ "boot/config-6.1.0-test", "CONFIG_HZ=250\nCONFIG_NO_HZ_IDLE=y\n# CONFIG_NO_HZ_FULL is not set\n" },
		{ "proc/cmdline", "quiet\n" },
		END,
	};
	assert_true(fires(tree, "no-nohz-full", &f));
	assert_non_null(strstr(f.saw, "CONFIG_NO_HZ_IDLE, 250 Hz"));
	assert_non_null(strstr(f.saw, "4.0 ms"));
}

static void test_rule_no_nohz_full_is_quiet_with_nohz_full_cpus(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "sys/devices/system/cpu/nohz_full", "1\n" }, END };
	assert_false(fires(tree, "no-nohz-full", NULL));
}

/* ---- lockup-watchdogs ---- */

static void test_rule_lockup_watchdogs_fires_when_the_soft_watchdog_is_on(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/watchdog", "1\n" },
		{ "proc/sys/kernel/nmi_watchdog", "0\n" },
		END,
	};
	assert_true(fires(tree, "lockup-watchdogs", NULL));
}

static void test_rule_lockup_watchdogs_is_quiet_when_both_are_off(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/watchdog", "0\n" },
		{ "proc/sys/kernel/nmi_watchdog", "0\n" },
		END,
	};
	assert_false(fires(tree, "lockup-watchdogs", NULL));
}

/* ---- mitigations-on ---- */

#define VULN "sys/devices/system/cpu/vulnerabilities/"

static void test_rule_mitigations_on_fires_for_a_mitigated_vulnerability(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = {
		{ VULN "spectre_v2", "Mitigation: Retpolines; IBPB: conditional\n" },
		{ VULN "meltdown", "Not affected\n" },
		END,
	};
	assert_true(fires(tree, "mitigations-on", &f));
	assert_non_null(strstr(f.saw, "spectre_v2"));
	assert_null(strstr(f.saw, "meltdown"));
	assert_int_equal(f.severity, SEVERITY_INFO);
}

static void test_rule_mitigations_on_is_quiet_when_off_or_not_affected(void **state)
{
	(void)state;
	const struct systree_file off[] = {
		{ VULN "spectre_v2", "Mitigation: Retpolines\n" },
		{ "proc/cmdline", "mitigations=off\n" },
		END,
	};
	const struct systree_file fine[] = { { VULN "meltdown", "Not affected\n" }, END };
	assert_false(fires(off, "mitigations-on", NULL));
	assert_false(fires(fine, "mitigations-on", NULL));
}

/* ---- timer-slack ---- */

static void test_rule_timer_slack_fires_at_the_default_50_us(void **state)
{
	(void)state;
	struct finding f;
	const struct systree_file tree[] = { { "proc/self/timerslack_ns", "50000\n" }, END };
	assert_true(fires(tree, "timer-slack", &f));
	assert_non_null(strstr(f.saw, "50000 ns"));
	assert_int_equal(f.severity, SEVERITY_INFO);
}

static void test_rule_timer_slack_is_quiet_at_1_ns(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/self/timerslack_ns", "1\n" }, END };
	assert_false(fires(tree, "timer-slack", NULL));
}

static void test_a_run_judges_the_timer_slack_of_its_measuring_threads_not_the_main_threads(void **state)
{
	(void)state;
	struct finding f;
	struct cpuset one;
	const struct systree_file tree[] = { { "proc/self/timerslack_ns", "50000\n" }, END };

	cpuset_clear(&one);
	cpuset_add(&one, 0);
	/* real-time threads (no slack honoured): the main thread's 50 us says nothing of the run */
	struct findings_context rt = { .measured = &one, .period_ns = NS_PER_MS, .timer_slack_ns = 0 };
	assert_false(fires_with(tree, NULL, &rt, "timer-slack", NULL));
	/* SCHED_OTHER threads with --timer-slack 500us at a 1 ms interval: half of it */
	struct findings_context other = { .measured = &one, .period_ns = NS_PER_MS, .timer_slack_ns = 500u * NS_PER_US };
	assert_true(fires_with(tree, NULL, &other, "timer-slack", &f));
	assert_non_null(strstr(f.saw, "measuring threads: 500us"));
	assert_non_null(strstr(f.saw, "50 % of the measured interval 1ms"));
	assert_int_equal(f.severity, SEVERITY_WARNING);
	assert_non_null(strstr(f.fix, "--timer-slack"));
	/* the same slack against a 100 ms interval is small: worth knowing, no more */
	other.period_ns = 100u * NS_PER_MS;
	assert_true(fires_with(tree, NULL, &other, "timer-slack", &f));
	assert_int_equal(f.severity, SEVERITY_INFO);
}

/* ---- timer-slop ---- */

static void test_rule_timer_slop_weighs_xens_slop_against_the_measured_interval(void **state)
{
	(void)state;
	struct finding f;
	struct cpuset one;
	const struct systree_file tree[] = { { "proc/cmdline", "root=/dev/xvda1 xen_timer_slop=100000\n" }, END };

	cpuset_clear(&one);
	cpuset_add(&one, 0);
	/* latscope sys: against latscope timer's default 1 ms, 100 us is a tenth: large */
	assert_true(fires_with(tree, "Xen", NULL, "timer-slop", &f));
	assert_non_null(strstr(f.saw, "Xen timer slop 100us (xen_timer_slop= on the kernel command line)"));
	assert_non_null(strstr(f.saw, "of latscope timer's default interval 1ms"));
	assert_int_equal(f.severity, SEVERITY_WARNING);
	/* a run at 10 ms: a hundredth */
	struct findings_context run = { .measured = &one, .period_ns = 10u * NS_PER_MS, .timer_slack_ns = 0 };
	assert_true(fires_with(tree, "Xen", &run, "timer-slop", &f));
	assert_non_null(strstr(f.saw, "1 % of the measured interval 10ms"));
	assert_int_equal(f.severity, SEVERITY_INFO);
}

static void test_rule_timer_slop_is_quiet_where_the_slop_is_unknown(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/cmdline", "root=/dev/vda1 xen_timer_slop=100000\n" }, END };
	/* KVM does not read Xen's parameter, and shows the guest no slop of its own */
	assert_false(fires_with(tree, "KVM", NULL, "timer-slop", NULL));
	const struct systree_file bare[] = { { "proc/cmdline", "root=/dev/xvda1\n" }, END };
	assert_false(fires_with(bare, "Xen", NULL, "timer-slop", NULL));
}

/* ---- The table as a whole ---- */

static void test_an_empty_tree_fires_no_rule(void **state)
{
	(void)state;
	struct finding f[1];
	const struct systree_file tree[] = { END };
	assert_int_equal(evaluate(tree, NULL, NULL, f, 1), 0);
}

static void test_rule_ids_are_unique_and_kebab_case(void **state)
{
	(void)state;
	size_t n = findings_rule_count();
	assert_true(n >= 20);
	assert_null(findings_rule_id(n));
	for (size_t i = 0; i < n; i++) {
		const char *id = findings_rule_id(i);
		assert_non_null(id);
		assert_int_equal(strspn(id, "abcdefghijklmnopqrstuvwxyz-"), strlen(id));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(id, findings_rule_id(j));
	}
}

/* A tree in which rules of all three severities fire. */
static const struct systree_file busy_tree[] = {
	{ "proc/sys/kernel/arch", "x86_64\n" },
	{ CLOCKSOURCE "current_clocksource", "hpet\n" },            /* problem */
	{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\n" },   /* warning */
	{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },      /* warning */
	{ "proc/self/timerslack_ns", "50000\n" },                   /* info */
	END,
};

static void test_findings_come_most_severe_first_in_table_order(void **state)
{
	(void)state;
	struct finding f[32];
	size_t n = evaluate(busy_tree, NULL, NULL, f, 32);
	assert_int_equal(n, 4);
	assert_string_equal(f[0].id, "clocksource-not-tsc");
	assert_string_equal(f[1].id, "serial-console");
	assert_string_equal(f[2].id, "rt-throttling");
	assert_string_equal(f[3].id, "timer-slack");
	for (size_t i = 1; i < n; i++)
		assert_true(f[i - 1].severity >= f[i].severity);
}

static void test_max_gives_the_top_findings_and_the_count_of_all(void **state)
{
	(void)state;
	struct finding f[2];
	assert_int_equal(evaluate(busy_tree, NULL, NULL, f, 2), 4);
	assert_string_equal(f[0].id, "clocksource-not-tsc");
	assert_string_equal(f[1].id, "serial-console");
	assert_int_equal(evaluate(busy_tree, NULL, NULL, NULL, 0), 4);
}

static void test_findings_json_has_id_severity_saw_why_and_fix(void **state)
{
	(void)state;
	struct finding f[8];
	size_t n = evaluate(busy_tree, NULL, NULL, f, 8);
	json_t *arr = findings_to_json(f, n);
	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), n);
	json_t *first = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(first, "id")), "clocksource-not-tsc");
	assert_string_equal(json_string_value(json_object_get(first, "severity")), "problem");
	assert_int_equal(json_object_size(first), 5);
	assert_string_equal(json_string_value(json_object_get(first, "saw")), f[0].saw);
	assert_non_null(json_string_value(json_object_get(first, "why")));
	assert_non_null(json_string_value(json_object_get(first, "fix")));
	json_decref(arr);
}

static void test_severity_names(void **state)
{
	(void)state;
	assert_string_equal(severity_name(SEVERITY_INFO), "info");
	assert_string_equal(severity_name(SEVERITY_WARNING), "warning");
	assert_string_equal(severity_name(SEVERITY_PROBLEM), "problem");
}

static void test_this_machine_gives_findings_that_say_what_they_saw(void **state)
{
	(void)state;
	struct fingerprint *fp = NULL;
	struct finding f[64];
	assert_int_equal(fingerprint_collect(NULL, &fp), 0);
	size_t n = findings_evaluate(fp, NULL, f, 64);
	assert_true(n <= findings_rule_count());
	for (size_t i = 0; i < n; i++)
		assert_true(f[i].saw[0] != '\0' && f[i].fix[0] != '\0');
	json_t *arr = findings_to_json(f, n);
	assert_non_null(arr);
	json_decref(arr);
	fingerprint_free(fp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_guest_fires_when_the_hypervisor_is_kvm),
		cmocka_unit_test(test_rule_guest_fires_on_the_cpuinfo_hypervisor_flag_alone),
		cmocka_unit_test(test_rule_guest_names_xen_from_sys_hypervisor_type),
		cmocka_unit_test(test_rule_guest_is_quiet_on_bare_metal),
		cmocka_unit_test(test_rule_steal_time_fires_when_proc_stat_counts_steal),
		cmocka_unit_test(test_rule_steal_time_is_a_warning_below_one_percent),
		cmocka_unit_test(test_rule_steal_time_is_quiet_without_steal),
		cmocka_unit_test(test_rule_smis_fires_on_an_msr_count_since_reset),
		cmocka_unit_test(test_rule_smis_fires_on_smis_the_run_counted),
		cmocka_unit_test(test_rule_smis_is_quiet_without_a_count_or_with_none),
		cmocka_unit_test(test_rule_serial_console_fires_when_ttyS0_is_a_console),
		cmocka_unit_test(test_rule_serial_console_does_not_advise_quiet_to_a_machine_booted_with_it),
		cmocka_unit_test(test_rule_serial_console_fires_for_ttyAMA0_and_hvc0),
		cmocka_unit_test(test_rule_serial_console_is_quiet_for_a_virtual_terminal_or_a_disabled_port),
		cmocka_unit_test(test_rule_clocksource_not_tsc_is_a_problem_for_hpet),
		cmocka_unit_test(test_rule_clocksource_not_tsc_is_a_warning_for_kvm_clock),
		cmocka_unit_test(test_rule_clocksource_not_tsc_says_when_tsc_is_not_available),
		cmocka_unit_test(test_rule_clocksource_not_tsc_is_quiet_on_tsc_and_off_x86),
		cmocka_unit_test(test_rule_tsc_flags_fires_without_nonstop_tsc),
		cmocka_unit_test(test_rule_tsc_flags_is_quiet_with_an_invariant_tsc),
		cmocka_unit_test(test_rule_deep_idle_states_fires_for_an_enabled_c6),
		cmocka_unit_test(test_rule_deep_idle_states_is_a_problem_for_a_measurement_without_pm_qos),
		cmocka_unit_test(test_rule_deep_idle_states_is_quiet_when_c6_is_disabled),
		cmocka_unit_test(test_rule_governor_not_performance_fires_for_powersave),
		cmocka_unit_test(test_rule_governor_not_performance_is_quiet_for_performance_or_no_cpufreq),
		cmocka_unit_test(test_rule_rt_throttling_fires_at_the_default_950000),
		cmocka_unit_test(test_rule_rt_throttling_is_quiet_when_runtime_is_minus_one),
		cmocka_unit_test(test_rule_smt_siblings_fires_when_two_threads_of_a_core_are_online),
		cmocka_unit_test(test_rule_smt_siblings_names_an_isolated_cpu_whose_sibling_is_not_isolated),
		cmocka_unit_test(test_rule_smt_siblings_looks_only_at_measured_cores_when_measuring),
		cmocka_unit_test(test_rule_smt_siblings_is_quiet_with_one_thread_per_core),
		cmocka_unit_test(test_rule_irq_on_isolated_fires_when_a_device_irq_may_run_on_an_isolated_cpu),
		cmocka_unit_test(test_rule_irq_on_isolated_is_quiet_when_irqs_stay_on_housekeeping_cpus),
		cmocka_unit_test(test_rule_isolated_without_rcu_nocbs_fires_for_isolcpus_alone),
		cmocka_unit_test(test_rule_isolated_without_rcu_nocbs_is_quiet_with_rcu_nocbs_or_nohz_full),
		cmocka_unit_test(test_rule_thp_always_fires_when_thp_is_always_on),
		cmocka_unit_test(test_rule_thp_always_is_quiet_for_madvise),
		cmocka_unit_test(test_rule_numa_balancing_fires_on_two_nodes_with_balancing_on),
		cmocka_unit_test(test_rule_numa_balancing_is_quiet_on_one_node_or_when_off),
		cmocka_unit_test(test_rule_preempt_not_full_fires_for_a_dynamic_kernel_booted_voluntary),
		cmocka_unit_test(test_rule_preempt_not_full_fires_for_a_kernel_without_preempt),
		cmocka_unit_test(test_rule_preempt_not_full_is_quiet_in_full_mode_where_no_preempt_rt_fires),
		cmocka_unit_test(test_rule_no_preempt_rt_is_quiet_on_a_preempt_rt_kernel),
		cmocka_unit_test(test_rule_no_isolation_fires_without_isolcpus_or_nohz_full),
		cmocka_unit_test(test_rule_no_isolation_is_a_warning_for_measured_cpus_that_are_not_isolated),
		cmocka_unit_test(test_rule_no_isolation_is_quiet_with_isolcpus),
		cmocka_unit_test(test_rule_no_nohz_full_fires_without_nohz_full_and_gives_the_tick_period),
		cmocka_unit_test(test_rule_no_nohz_full_is_quiet_with_nohz_full_cpus),
		cmocka_unit_test(test_rule_lockup_watchdogs_fires_when_the_soft_watchdog_is_on),
		cmocka_unit_test(test_rule_lockup_watchdogs_is_quiet_when_both_are_off),
		cmocka_unit_test(test_rule_mitigations_on_fires_for_a_mitigated_vulnerability),
		cmocka_unit_test(test_rule_mitigations_on_is_quiet_when_off_or_not_affected),
		cmocka_unit_test(test_rule_timer_slack_fires_at_the_default_50_us),
		cmocka_unit_test(test_rule_timer_slack_is_quiet_at_1_ns),
		cmocka_unit_test(test_a_run_judges_the_timer_slack_of_its_measuring_threads_not_the_main_threads),
		cmocka_unit_test(test_rule_timer_slop_weighs_xens_slop_against_the_measured_interval),
		cmocka_unit_test(test_rule_timer_slop_is_quiet_where_the_slop_is_unknown),
		cmocka_unit_test(test_an_empty_tree_fires_no_rule),
		cmocka_unit_test(test_rule_ids_are_unique_and_kebab_case),
		cmocka_unit_test(test_findings_come_most_severe_first_in_table_order),
		cmocka_unit_test(test_max_gives_the_top_findings_and_the_count_of_all),
		cmocka_unit_test(test_findings_json_has_id_severity_saw_why_and_fix),
		cmocka_unit_test(test_severity_names),
		cmocka_unit_test(test_this_machine_gives_findings_that_say_what_they_saw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
