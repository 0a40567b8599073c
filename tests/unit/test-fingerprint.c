#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/cpuset.h"
#include "sys/fingerprint.h"
#include "sys/timerslop.h"
#include "systree.h"

#define END { NULL, NULL }
#define CPU "sys/devices/system/cpu/"

/* The fingerprint of a fake tree; free with fingerprint_free. */
static struct fingerprint *collect(const struct systree_file *files)
{
	char dir[64];
	struct fingerprint *fp = NULL;

	systree_make(dir, files);
	struct fingerprint_opts o = { .sysroot = dir };
	assert_int_equal(fingerprint_collect(&o, &fp), 0);
	systree_remove(dir);
	return fp;
}

static const char *cpus(const struct cpuset *s)
{
	static char buf[128];
	cpuset_format(s, buf, sizeof(buf));
	return buf;
}

static void test_an_empty_tree_leaves_everything_unknown(void **state)
{
	(void)state;
	const struct systree_file tree[] = { END };
	struct fingerprint *fp = collect(tree);

	assert_int_equal(fp->guest, FP_TRI_UNKNOWN);
	assert_string_equal(fp->release, "");
	assert_string_equal(fp->preempt, "");
	assert_false(fp->cmdline_known);
	assert_true(fp->hz == FP_UNKNOWN && fp->steal_ns == FP_UNKNOWN && fp->timer_slack_ns == FP_UNKNOWN);
	assert_false(fp->online_known || fp->isolated_known || fp->nohz_full_known || fp->irqs_known);
	assert_int_equal(fp->ncpus, 0);

	json_t *j = fingerprint_to_json(fp);
	assert_non_null(j);
	assert_true(json_is_null(json_object_get(json_object_get(j, "kernel"), "hz")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "kernel"), "params")));
	assert_true(json_is_null(json_object_get(j, "interrupts")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "virtualization"), "guest")));
	json_decref(j);
	fingerprint_free(fp);
}

static void test_a_sysroot_that_is_not_a_directory_is_an_error(void **state)
{
	(void)state;
	struct fingerprint *fp = NULL;
	struct fingerprint_opts o = { .sysroot = "/nonexistent-latscope-root" };
	assert_int_equal(fingerprint_collect(&o, &fp), -ENOENT);
	o.sysroot = "/proc/self/stat";
	assert_int_equal(fingerprint_collect(&o, &fp), -ENOTDIR);
	assert_null(fp);
}

static void test_the_command_line_keeps_parameters_of_interest_and_stops_at_the_init_arguments(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=nohz,domain,2-3 "
				  "console=tty0 console=ttyS0,115200 intel-idle.max_cstate=1 quiet "
				  "rcu_nocbs=\"2-3\" -- nohz_full=1\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);

	assert_true(fp->cmdline_known);
	assert_string_equal(fingerprint_param(fp, "isolcpus"), "nohz,domain,2-3");
	assert_string_equal(fingerprint_param(fp, "console"), "tty0 ttyS0,115200");
	assert_string_equal(fingerprint_param(fp, "intel_idle.max_cstate"), "1");
	assert_string_equal(fingerprint_param(fp, "quiet"), "");
	assert_string_equal(fingerprint_param(fp, "rcu_nocbs"), "2-3");
	assert_null(fingerprint_param(fp, "root"));
	assert_null(fingerprint_param(fp, "nohz_full"));      /* after "--": init's */
	fingerprint_free(fp);
}

static void test_isolcpus_flags_are_dropped_from_the_cpu_list(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/cmdline", "isolcpus=nohz,domain,managed_irq,2-3,6\n" }, END };
	struct fingerprint *fp = collect(tree);

	assert_true(fp->isolated_known);
	assert_string_equal(cpus(&fp->isolated), "2-3,6");
	fingerprint_free(fp);
}

static void test_sysfs_isolation_wins_over_the_command_line(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/cmdline", "isolcpus=2-3 nohz_full=2-3\n" },
		{ CPU "isolated", "3\n" },
		{ CPU "nohz_full", " (null)\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);

	assert_string_equal(cpus(&fp->isolated), "3");
	assert_true(fp->nohz_full_known);
	assert_int_equal(cpuset_count(&fp->nohz_full), 0);
	fingerprint_free(fp);
}

static void test_the_preemption_mode_comes_from_debugfs_then_the_command_line_then_the_config(void **state)
{
	(void)state;
	const struct systree_file config[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Mon Nov 30 2026\n" },
		{ "boot/config-6.8.0", "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n" },
		END,
	};
	const struct systree_file cmdline[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Mon Nov 30 2026\n" },
		{ "boot/config-6.8.0", "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n" },
		{ "proc/cmdline", "preempt=none\n" },
		END,
	};
	const struct systree_file debugfs[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Mon Nov 30 2026\n" },
		{ "proc/cmdline", "preempt=none\n" },
		{ "sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n" },
		END,
	};
	struct fingerprint *fp = collect(config);
	assert_string_equal(fp->preempt, "PREEMPT_DYNAMIC");
	assert_string_equal(fp->preempt_mode, "voluntary");
	assert_string_equal(fp->preempt_mode_source, "config");
	fingerprint_free(fp);

	fp = collect(cmdline);
	assert_string_equal(fp->preempt_mode, "none");
	assert_string_equal(fp->preempt_mode_source, "cmdline");
	fingerprint_free(fp);

	fp = collect(debugfs);
	assert_string_equal(fp->preempt_mode, "full");
	assert_string_equal(fp->preempt_mode_source, "debugfs");
	fingerprint_free(fp);
}

static void test_a_dynamic_kernel_without_config_or_debugfs_has_an_unknown_mode(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" }, END };
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->preempt, "PREEMPT_DYNAMIC");
	assert_string_equal(fp->preempt_mode, "");
	fingerprint_free(fp);
}

static void test_sys_kernel_realtime_makes_a_preempt_rt_kernel(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" },
		{ "sys/kernel/realtime", "1\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->preempt, "PREEMPT_RT");
	assert_string_equal(fp->preempt_mode, "full");
	fingerprint_free(fp);
}

/* uname -v is the running kernel's own word; a config of the same release may be another build's. */
static void test_a_kernel_config_fills_in_only_what_the_version_leaves_open(void **state)
{
	(void)state;
	const struct systree_file dynamic[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" },
		{ "boot/config-6.8.0", "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT=y\n" },
		END,
	};
	const struct systree_file none[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP\n" },
		{ "boot/config-6.8.0", "CONFIG_PREEMPT=y\nCONFIG_PREEMPT_LAZY=y\n" },
		END,
	};
	struct fingerprint *fp = collect(dynamic);
	assert_string_equal(fp->preempt, "PREEMPT_DYNAMIC");
	fingerprint_free(fp);

	fp = collect(none);
	assert_string_equal(fp->preempt, "lazy");
	assert_string_equal(fp->preempt_mode, "lazy");
	fingerprint_free(fp);
}

/* arm64 names the core by implementer and part, old arm32 after every CPU, other boards only in the device tree. */
static void test_the_cpu_model_falls_back_to_the_core_ids_then_the_device_tree(void **state)
{
	(void)state;
	const struct systree_file arm64[] = {
		{ "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\n"
				  "processor\t: 1\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\n" },
		{ "proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4" },
		END,
	};
	const struct systree_file arm32[] = {
		{ "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 38.40\n\nprocessor\t: 1\nBogoMIPS\t: 38.40\n\n"
				  "Hardware\t: BCM2835\nCPU implementer\t: 0x41\nCPU part\t: 0xc07\n" },
		END,
	};
	const struct systree_file board[] = {
		{ "proc/cpuinfo", "processor\t: 0\ncpu\t\t: POWER9\n\n" },
		{ "proc/device-tree/model", "IBM,9009-22A" },
		END,
	};
	struct fingerprint *fp = collect(arm64);
	assert_string_equal(fp->cpu_model, "implementer 0x41 part 0xd08");
	fingerprint_free(fp);

	fp = collect(arm32);
	assert_string_equal(fp->cpu_model, "implementer 0x41 part 0xc07");
	fingerprint_free(fp);

	fp = collect(board);
	assert_string_equal(fp->cpu_model, "IBM,9009-22A");
	fingerprint_free(fp);
}

static void test_a_trees_hypervisor_comes_from_sysfs_then_the_device_tree_spelled_one_way(void **state)
{
	(void)state;
	const struct systree_file sysfs[] = { { "sys/hypervisor/type", "xen\n" }, END };
	const struct systree_file dt[] = { { "proc/device-tree/hypervisor/compatible", "xen,xen-4.17" }, END };
	const struct systree_file kvm[] = { { "proc/device-tree/hypervisor/compatible", "linux,kvm" }, END };

	struct fingerprint *fp = collect(sysfs);
	assert_string_equal(fp->hypervisor, "Xen");
	assert_string_equal(fp->hypervisor_source, "sysfs");
	fingerprint_free(fp);
	fp = collect(dt);
	assert_string_equal(fp->hypervisor, "Xen");
	assert_string_equal(fp->hypervisor_source, "device tree");
	fingerprint_free(fp);
	fp = collect(kvm);
	assert_string_equal(fp->hypervisor, "linux,kvm");
	assert_int_equal(fp->guest, FP_TRI_YES);
	fingerprint_free(fp);
}

static void test_the_boot_config_gives_hz_and_the_tick(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/osrelease", "6.1.0-rt\n" },
		{ "boot/config-6.1.0-rt", "#\n# comment\nCONFIG_HZ_1000=y\nCONFIG_HZ=1000\nCONFIG_NO_HZ_FULL=y\n"
					  "CONFIG_PREEMPT_RT=y\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->config_source, "/boot/config-6.1.0-rt");
	assert_int_equal(fp->hz, 1000);
	assert_string_equal(fp->nohz, "full");
	assert_string_equal(fp->preempt, "PREEMPT_RT");
	fingerprint_free(fp);
}

static void test_proc_config_gz_is_read_through_gzip(void **state)
{
	(void)state;
	char dir[64], cmd[256];
	struct fingerprint *fp = NULL;
	const struct systree_file tree[] = { { "proc/config", "CONFIG_HZ=300\nCONFIG_NO_HZ_IDLE=y\n" }, END };

	if (system("command -v gzip >/dev/null 2>&1") != 0)
		skip_because("gzip is not installed (apt-get install gzip)");
	systree_make(dir, tree);
	snprintf(cmd, sizeof(cmd), "gzip %s/proc/config", dir);
	assert_int_equal(system(cmd), 0);
	struct fingerprint_opts o = { .sysroot = dir };
	assert_int_equal(fingerprint_collect(&o, &fp), 0);
	assert_string_equal(fp->config_source, "/proc/config.gz");
	assert_int_equal(fp->hz, 300);
	assert_string_equal(fp->nohz, "idle");
	fingerprint_free(fp);
	systree_remove(dir);
}

static void test_a_config_gz_that_is_not_gzip_leaves_the_config_unknown(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/config.gz", "CONFIG_HZ=300\n" }, END };
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->config_source, "");
	assert_true(fp->hz == FP_UNKNOWN);
	fingerprint_free(fp);
}

static void test_consoles_keep_their_flags_and_know_a_serial_port(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/consoles", "ttyS0                -W- (EC  p a)    4:64\ntty0                 -WU (E  p  )    4:1\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_int_equal(fp->nconsoles, 2);
	assert_string_equal(fp->consoles[0].name, "ttyS0");
	assert_string_equal(fp->consoles[0].flags, "ECpa");
	assert_true(fp->consoles[0].enabled && fp->consoles[0].serial);
	assert_true(fp->consoles[1].enabled && !fp->consoles[1].serial);
	fingerprint_free(fp);
}

static void test_per_cpu_governors_idle_states_and_siblings_are_read_and_grouped_in_json(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ CPU "online", "0-2\n" },
		{ CPU "cpu0/topology/thread_siblings_list", "0,2\n" },
		{ CPU "cpu1/topology/thread_siblings_list", "1\n" },
		{ CPU "cpu2/topology/thread_siblings_list", "0,2\n" },
		{ CPU "cpu0/cpufreq/scaling_governor", "performance\n" },
		{ CPU "cpu1/cpufreq/scaling_governor", "powersave\n" },
		{ CPU "cpu2/cpufreq/scaling_governor", "performance\n" },
		{ CPU "cpu0/cpuidle/state0/name", "POLL\n" }, { CPU "cpu0/cpuidle/state0/latency", "0\n" },
		{ CPU "cpu0/cpuidle/state0/disable", "0\n" },
		{ CPU "cpu2/cpuidle/state0/name", "POLL\n" }, { CPU "cpu2/cpuidle/state0/latency", "0\n" },
		{ CPU "cpu2/cpuidle/state0/disable", "0\n" },
		{ CPU "cpuidle/current_driver", "intel_idle\n" },
		{ CPU "cpuidle/current_governor_ro", "menu\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_int_equal(fp->ncpus, 3);
	assert_string_equal(fp->cpus[1].governor, "powersave");
	assert_int_equal(fp->cpus[0].nidle, 1);
	assert_int_equal(fp->cpus[1].nidle, 0);
	assert_string_equal(fp->cpuidle_driver, "intel_idle");

	json_t *j = fingerprint_to_json(fp);
	json_t *idle = json_object_get(j, "idle_frequency");
	json_t *gov = json_object_get(idle, "governors");
	assert_string_equal(json_string_value(json_object_get(gov, "performance")), "0,2");
	assert_string_equal(json_string_value(json_object_get(gov, "powersave")), "1");
	json_t *groups = json_object_get(idle, "idle_states");
	assert_int_equal(json_array_size(groups), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(groups, 0), "cpus")), "0,2");
	json_t *smt = json_object_get(json_object_get(j, "cpus"), "smt_siblings");
	assert_int_equal(json_array_size(smt), 1);
	assert_string_equal(json_string_value(json_array_get(smt, 0)), "0,2");
	json_decref(j);
	fingerprint_free(fp);
}

static void test_a_cpu_without_cpufreq_has_governor_none_and_an_unreadable_one_unknown(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ CPU "online", "0-1\n" },
		{ CPU "cpu0/topology/thread_siblings_list", "0\n" },
		{ CPU "cpu1/cpufreq/affected_cpus", "1\n" },         /* cpufreq there, governor missing */
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->cpus[0].governor, "none");
	assert_string_equal(fp->cpus[1].governor, "");
	fingerprint_free(fp);
}

static void test_device_irqs_get_their_names_and_affinities(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/interrupts", "           CPU0       CPU1\n"
				     " 26:          0          8  IO-APIC   4-edge      ttyS0\n"
				     " 36:          0     808586  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
				     "NMI:          0          0   Non-maskable interrupts\n"
				     "ERR:          0\n" },
		{ "proc/irq/26/smp_affinity_list", "0-1\n" },
		{ "proc/irq/26/effective_affinity_list", "1\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_true(fp->irqs_known);
	assert_int_equal(fp->nirqs, 2);
	assert_int_equal(fp->irqs[0].irq, 26);
	assert_string_equal(fp->irqs[0].name, "ttyS0");
	assert_string_equal(fp->irqs[0].affinity, "0-1");
	assert_string_equal(fp->irqs[0].effective, "1");
	assert_string_equal(fp->irqs[1].name, "virtio1-req.0");
	assert_string_equal(fp->irqs[1].affinity, "");       /* unreadable: unknown */
	fingerprint_free(fp);
}

static void test_sysctls_list_the_sched_knobs_sorted_and_read_printk_as_text(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },
		{ "proc/sys/kernel/sched_autogroup_enabled", "1\n" },
		{ "proc/sys/kernel/printk", "4\t4\t1\t7\n" },
		{ "proc/sys/kernel/hostname", "box\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	int64_t v;
	assert_int_equal(fp->nsysctls, 3);
	assert_string_equal(fp->sysctls[0].name, "kernel.sched_autogroup_enabled");
	assert_string_equal(fp->sysctls[1].name, "kernel.sched_rt_runtime_us");
	assert_string_equal(fingerprint_sysctl(fp, "kernel.printk"), "4 4 1 7");
	assert_int_equal(fingerprint_sysctl_i64(fp, "kernel.printk", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(fingerprint_sysctl_i64(fp, "kernel.hostname", &v), -ENOENT);

	json_t *j = fingerprint_to_json(fp);
	json_t *sysctl = json_object_get(json_object_get(j, "scheduling"), "sysctl");
	assert_int_equal(json_integer_value(json_object_get(sysctl, "kernel.sched_rt_runtime_us")), 950000);
	assert_string_equal(json_string_value(json_object_get(sysctl, "kernel.printk")), "4 4 1 7");
	json_decref(j);
	fingerprint_free(fp);
}

static void test_thp_settings_are_the_bracketed_choice(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n" },
		{ "sys/kernel/mm/transparent_hugepage/defrag", "always defer [defer+madvise] madvise never\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	assert_string_equal(fp->thp_enabled, "madvise");
	assert_string_equal(fp->thp_defrag, "defer+madvise");
	fingerprint_free(fp);
}

static void test_steal_and_all_cpu_time_come_from_proc_stat(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/stat", "cpu  100 0 100 700 0 0 0 100 0 0\ncpu0 100 0 100 700 0 0 0 100 0 0\nintr 5\nctxt 9\n"
			       "softirq 3\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);
	long hz = sysconf(_SC_CLK_TCK);
	assert_true(fp->steal_ns == 100 * (1000000000 / hz));
	assert_true(fp->cpu_ns == 1000 * (1000000000 / hz));
	fingerprint_free(fp);
}

static void test_the_hypervisor_can_be_given_and_a_cpu_model_in_bad_utf8_still_encodes(void **state)
{
	(void)state;
	char dir[64];
	struct fingerprint *fp = NULL;
	const struct systree_file tree[] = {
		{ "proc/cpuinfo", "processor\t: 0\nmodel name\t: Caf\xe9 CPU\nflags\t\t: fpu\n\n" },
		END,
	};
	systree_make(dir, tree);
	struct fingerprint_opts o = { .sysroot = dir, .hypervisor = "Hyper-V", .timer_slack_ns = 7 };
	assert_int_equal(fingerprint_collect(&o, &fp), 0);
	systree_remove(dir);
	assert_string_equal(fp->hypervisor, "Hyper-V");
	assert_string_equal(fp->hypervisor_source, "given");
	assert_int_equal(fp->guest, FP_TRI_YES);
	assert_int_equal(fp->timer_slack_ns, 7);

	json_t *j = fingerprint_to_json(fp);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "cpus"), "model")), "Caf? CPU");
	json_decref(j);
	fingerprint_free(fp);
}

/* Two tick devices of a Xen HVM guest's /proc/timer_list, the PV timer second. */
static const char xen_timer_list[] =
	"Timer List Version: v0.9\n"
	"HRTIMER_MAX_CLOCK_BASES: 8\n"
	"now at 5031744612345 nsecs\n"
	"\n"
	"cpu: 0\n"
	" clock 0:\n"
	"  .base:       ffff88803ec1e140\n"
	"  .resolution: 1 nsecs\n"
	"\n"
	"Tick Device: mode:     1\n"
	"Broadcast device\n"
	"Clock Event Device: lapic\n"
	" max_delta_ns:   1000000000\n"
	" min_delta_ns:   1000\n"
	" mult:           4294967\n"
	"\n"
	"Tick Device: mode:     1\n"
	"Per CPU device: 0\n"
	"Clock Event Device: xen\n"
	" max_delta_ns:   4294967295\n"
	" min_delta_ns:   50000\n"
	" mult:           1\n"
	" shift:          0\n"
	"\n";

static void test_a_xen_guest_reports_the_slop_in_effect_from_its_clock_event_device(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/hypervisor/type", "xen\n" },
		{ "proc/timer_list", xen_timer_list },
		{ "proc/cmdline", "root=/dev/xvda1 xen_timer_slop=70000\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);

	assert_string_equal(fp->hypervisor, "Xen");
	/* what is in effect beats what was asked for at boot */
	assert_int_equal(fp->timer_slop_ns, 50000);
	assert_string_equal(fp->timer_slop_source, "/proc/timer_list");
	json_t *j = fingerprint_to_json(fp);
	assert_non_null(j);
	json_t *tk = json_object_get(j, "timekeeping");
	assert_int_equal(json_integer_value(json_object_get(tk, "timer_slop_ns")), 50000);
	assert_string_equal(json_string_value(json_object_get(tk, "timer_slop_source")), "/proc/timer_list");
	json_decref(j);
	fingerprint_free(fp);
}

static void test_a_xen_guest_without_a_readable_timer_list_takes_xen_timer_slop_from_the_command_line(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/hypervisor/type", "xen\n" },
		{ "proc/cmdline", "root=/dev/xvda1 xen_timer_slop=200k quiet\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);

	/* the kernel reads it with memparse: k is 1024 */
	assert_int_equal(fp->timer_slop_ns, 200 * 1024);
	assert_string_equal(fp->timer_slop_source, "cmdline");
	assert_string_equal(fingerprint_param(fp, "xen_timer_slop"), "200k");
	fingerprint_free(fp);
}

/* An HVM guest on the lapic deadline timer: xen_timer_slop= does nothing there. */
static void test_a_xen_guest_whose_clock_event_device_is_not_xens_has_no_slop_in_effect(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "sys/hypervisor/type", "xen\n" },
		{ "proc/timer_list", "Timer List Version: v0.9\n\nTick Device: mode:     1\nPer CPU device: 0\n"
				     "Clock Event Device: lapic-deadline\n max_delta_ns:   1000000000\n"
				     " min_delta_ns:   1000\n\n" },
		{ "proc/cmdline", "root=/dev/xvda1 xen_timer_slop=200k quiet\n" },
		END,
	};
	struct fingerprint *fp = collect(tree);

	assert_int_equal(fp->timer_slop_ns, 0);
	assert_string_equal(fp->timer_slop_source, "/proc/timer_list");
	fingerprint_free(fp);
}

static void test_the_timer_slop_is_unknown_without_xen_or_without_a_source(void **state)
{
	(void)state;
	/* Xen, but neither source: unknown, not the kernel's default guessed */
	const struct systree_file xen[] = { { "sys/hypervisor/type", "xen\n" }, { "proc/cmdline", "quiet\n" }, END };
	struct fingerprint *fp = collect(xen);
	assert_true(fp->timer_slop_ns == FP_UNKNOWN);
	assert_string_equal(fp->timer_slop_source, "");
	json_t *j = fingerprint_to_json(fp);
	assert_true(json_is_null(json_object_get(json_object_get(j, "timekeeping"), "timer_slop_ns")));
	json_decref(j);
	fingerprint_free(fp);

	/* a Xen device listed on a machine that is not a Xen guest is not read */
	const struct systree_file kvm[] = {
		{ "sys/hypervisor/type", "kvm\n" },
		{ "proc/timer_list", xen_timer_list },
		{ "proc/cmdline", "xen_timer_slop=70000\n" },
		END,
	};
	fp = collect(kvm);
	assert_true(fp->timer_slop_ns == FP_UNKNOWN);
	fingerprint_free(fp);
}

static void test_timer_list_gives_the_min_delta_of_the_named_device_only(void **state)
{
	(void)state;
	uint64_t ns = 0;
	FILE *f = fmemopen((void *)xen_timer_list, sizeof(xen_timer_list) - 1u, "r");
	assert_non_null(f);
	assert_int_equal(timer_list_min_delta(f, "lapic", &ns), 0);
	assert_int_equal(ns, 1000);
	rewind(f);
	assert_int_equal(timer_list_min_delta(f, "xen", &ns), 0);
	assert_int_equal(ns, 50000);
	rewind(f);
	assert_int_equal(timer_list_min_delta(f, "hpet", &ns), -ENOENT);
	fclose(f);

	static const char junk[] = "Clock Event Device: xen\n max_delta_ns:   5\n min_delta_ns:   lots\n";
	f = fmemopen((void *)junk, sizeof(junk) - 1u, "r");
	assert_non_null(f);
	assert_int_equal(timer_list_min_delta(f, "xen", &ns), -EINVAL);
	assert_int_equal(ns, 50000);    /* untouched on failure */
	fclose(f);
}

static void test_this_machine_reads_with_its_own_release_and_timer_slack(void **state)
{
	(void)state;
	struct fingerprint *fp = NULL;
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	assert_int_equal(fingerprint_collect(NULL, &fp), 0);
	assert_string_equal(fp->release, u.release);
	assert_true(fp->timer_slack_ns > 0);
	assert_true(fp->online_known && fp->ncpus == cpuset_count(&fp->online));
	assert_true(fp->cmdline_known);
	json_t *j = fingerprint_to_json(fp);
	assert_non_null(j);
	char *text = json_dumps(j, JSON_COMPACT);
	assert_non_null(text);
	free(text);
	json_decref(j);
	fingerprint_free(fp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_empty_tree_leaves_everything_unknown),
		cmocka_unit_test(test_a_sysroot_that_is_not_a_directory_is_an_error),
		cmocka_unit_test(test_a_xen_guest_reports_the_slop_in_effect_from_its_clock_event_device),
		cmocka_unit_test(test_a_xen_guest_without_a_readable_timer_list_takes_xen_timer_slop_from_the_command_line),
		cmocka_unit_test(test_a_xen_guest_whose_clock_event_device_is_not_xens_has_no_slop_in_effect),
		cmocka_unit_test(test_the_timer_slop_is_unknown_without_xen_or_without_a_source),
		cmocka_unit_test(test_timer_list_gives_the_min_delta_of_the_named_device_only),
		cmocka_unit_test(test_the_command_line_keeps_parameters_of_interest_and_stops_at_the_init_arguments),
		cmocka_unit_test(test_isolcpus_flags_are_dropped_from_the_cpu_list),
		cmocka_unit_test(test_sysfs_isolation_wins_over_the_command_line),
		cmocka_unit_test(test_the_preemption_mode_comes_from_debugfs_then_the_command_line_then_the_config),
		cmocka_unit_test(test_a_dynamic_kernel_without_config_or_debugfs_has_an_unknown_mode),
		cmocka_unit_test(test_sys_kernel_realtime_makes_a_preempt_rt_kernel),
		cmocka_unit_test(test_a_kernel_config_fills_in_only_what_the_version_leaves_open),
		cmocka_unit_test(test_the_cpu_model_falls_back_to_the_core_ids_then_the_device_tree),
		cmocka_unit_test(test_a_trees_hypervisor_comes_from_sysfs_then_the_device_tree_spelled_one_way),
		cmocka_unit_test(test_the_boot_config_gives_hz_and_the_tick),
		cmocka_unit_test(test_proc_config_gz_is_read_through_gzip),
		cmocka_unit_test(test_a_config_gz_that_is_not_gzip_leaves_the_config_unknown),
		cmocka_unit_test(test_consoles_keep_their_flags_and_know_a_serial_port),
		cmocka_unit_test(test_per_cpu_governors_idle_states_and_siblings_are_read_and_grouped_in_json),
		cmocka_unit_test(test_a_cpu_without_cpufreq_has_governor_none_and_an_unreadable_one_unknown),
		cmocka_unit_test(test_device_irqs_get_their_names_and_affinities),
		cmocka_unit_test(test_sysctls_list_the_sched_knobs_sorted_and_read_printk_as_text),
		cmocka_unit_test(test_thp_settings_are_the_bracketed_choice),
		cmocka_unit_test(test_steal_and_all_cpu_time_come_from_proc_stat),
		cmocka_unit_test(test_the_hypervisor_can_be_given_and_a_cpu_model_in_bad_utf8_still_encodes),
		cmocka_unit_test(test_this_machine_reads_with_its_own_release_and_timer_slack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
