#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "sys/cpus.h"
#include "sys/fingerprint.h"
#include "sys/sysdesc.h"
#include "systree.h"

#define END { NULL, NULL }
#define CPU "sys/devices/system/cpu/"

static struct sysdesc collect(void)
{
	struct sysdesc d;
	assert_int_equal(sysdesc_collect(&d), 0);
	return d;
}

/* Whether /proc/cpuinfo's first "flags" line lists flag: the kernel's own verdict
 * on CPUID, to check ours against without hard-coding this machine. */
static bool cpuinfo_has_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "flags", 5) != 0 || !colon)
			continue;
		for (char *tok = strtok(colon + 1, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			if (strcmp(tok, flag) == 0)
				found = true;
		break;
	}
	free(line);
	fclose(f);
	return found;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void test_sysdesc_collect_fills_kernel_release(void **state)
{
	(void)state;
	struct utsname u;
	struct sysdesc d = collect();

	assert_int_equal(uname(&u), 0);
	assert_true(d.kernel_release[0] != '\0');
	assert_string_equal(d.kernel_release, u.release);
	assert_string_equal(d.kernel_version, u.version);
}

static void test_sysdesc_collect_fills_machine(void **state)
{
	(void)state;
	struct utsname u;
	struct sysdesc d = collect();

	assert_int_equal(uname(&u), 0);
	assert_true(d.machine[0] != '\0');
	assert_string_equal(d.machine, u.machine);
}

static void test_sysdesc_collect_terminates_every_string(void **state)
{
	(void)state;
	struct sysdesc d;

	/* Poison first, so a field the collector forgot would show up here. */
	memset(&d, 'x', sizeof(d));
	assert_int_equal(sysdesc_collect(&d), 0);
	assert_true(terminated(d.hostname, sizeof(d.hostname)));
	assert_true(terminated(d.kernel_release, sizeof(d.kernel_release)));
	assert_true(terminated(d.kernel_version, sizeof(d.kernel_version)));
	assert_true(terminated(d.machine, sizeof(d.machine)));
	assert_true(terminated(d.preempt, sizeof(d.preempt)));
	assert_true(terminated(d.preempt_mode, sizeof(d.preempt_mode)));
	assert_true(terminated(d.clocksource, sizeof(d.clocksource)));
	assert_true(terminated(d.clocksources, sizeof(d.clocksources)));
	assert_true(terminated(d.cpu_model, sizeof(d.cpu_model)));
	assert_true(terminated(d.hypervisor, sizeof(d.hypervisor)));
	assert_true(terminated(d.online_cpus, sizeof(d.online_cpus)));
}

static void test_sysdesc_collect_counts_the_same_cpus_as_cpus_online(void **state)
{
	(void)state;
	struct cpuset online;
	struct sysdesc d = collect();

	assert_int_equal(cpus_online(&online), 0);
	assert_true(d.ncpus_online >= 1);
	assert_int_equal(d.ncpus_online, cpuset_count(&online));
}

static void test_sysdesc_collect_lists_online_cpus_as_a_parsable_cpu_list(void **state)
{
	(void)state;
	struct cpuset set;
	struct sysdesc d = collect();

	assert_int_equal(cpuset_parse(d.online_cpus, &set), 0);
	assert_int_equal(cpuset_count(&set), d.ncpus_online);
}

static void test_sysdesc_collect_names_a_known_preemption_model(void **state)
{
	(void)state;
	static const char *const models[] = { "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "none", "unknown" };
	static const char *const modes[] = { "", "none", "voluntary", "full", "lazy" };
	struct sysdesc d = collect();
	bool model_known = false, mode_known = false;

	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		model_known |= strcmp(d.preempt, models[i]) == 0;
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		mode_known |= strcmp(d.preempt_mode, modes[i]) == 0;
	assert_true(model_known);
	assert_true(mode_known);
}

static void test_sysdesc_collect_reports_a_current_clocksource_among_the_available(void **state)
{
	(void)state;
	struct sysdesc d = collect();

	if (d.clocksource[0] == '\0' || d.clocksources[0] == '\0')
		skip_because("this machine shows no clocksource in /sys/devices/system/clocksource");
	/* Whole words only: "tsc" must not match inside some "xtsc". */
	bool found = false;
	for (char *tok = strtok(d.clocksources, " "); tok; tok = strtok(NULL, " "))
		found |= strcmp(tok, d.clocksource) == 0;
	assert_true(found);
}

static void test_sysdesc_collect_reports_a_hypervisor_exactly_when_cpuinfo_flags_one(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	struct sysdesc d = collect();
	bool flagged = cpuinfo_has_flag("hypervisor");

	if (flagged)
		assert_true(d.hypervisor[0] != '\0');
	else
		assert_string_equal(d.hypervisor, "");
#else
	skip_because("this build is not for x86: the hypervisor flag is an x86 CPUID bit");
#endif
}

/* The fingerprint of a fake tree, the whole one or its identity part. */
static struct fingerprint *collect_tree(const struct systree_file *files, bool identity_only)
{
	char dir[64];
	struct fingerprint *fp = NULL;

	systree_make(dir, files);
	struct fingerprint_opts o = { .sysroot = dir, .identity_only = identity_only };
	assert_int_equal(fingerprint_collect(&o, &fp), 0);
	systree_remove(dir);
	return fp;
}

/* The sysdesc of a fake tree, as a view of its fingerprint; the whole
 * fingerprint must give the same view as its identity part. */
static struct sysdesc view_of(const struct systree_file *files)
{
	struct sysdesc whole, identity;
	struct fingerprint *fp = collect_tree(files, false);

	memset(&whole, 'x', sizeof(whole));
	sysdesc_from_fingerprint(fp, &whole);
	fingerprint_free(fp);
	fp = collect_tree(files, true);
	memset(&identity, 'y', sizeof(identity));
	sysdesc_from_fingerprint(fp, &identity);
	fingerprint_free(fp);
	assert_memory_equal(&whole, &identity, sizeof(whole));
	return whole;
}

static void assert_same_sysdesc(const struct sysdesc *a, const struct sysdesc *b)
{
	assert_string_equal(a->hostname, b->hostname);
	assert_string_equal(a->kernel_release, b->kernel_release);
	assert_string_equal(a->kernel_version, b->kernel_version);
	assert_string_equal(a->machine, b->machine);
	assert_string_equal(a->preempt, b->preempt);
	assert_string_equal(a->preempt_mode, b->preempt_mode);
	assert_string_equal(a->clocksource, b->clocksource);
	assert_string_equal(a->clocksources, b->clocksources);
	assert_string_equal(a->cpu_model, b->cpu_model);
	assert_string_equal(a->hypervisor, b->hypervisor);
	assert_string_equal(a->online_cpus, b->online_cpus);
	assert_int_equal(a->ncpus_online, b->ncpus_online);
}

static void test_sysdesc_collect_is_the_view_of_this_machines_whole_fingerprint(void **state)
{
	(void)state;
	struct sysdesc d = collect(), v;
	struct fingerprint *fp = NULL;

	assert_int_equal(fingerprint_collect(NULL, &fp), 0);
	sysdesc_from_fingerprint(fp, &v);
	assert_same_sysdesc(&d, &v);
	assert_string_equal(v.kernel_release, fp->release);
	assert_string_equal(v.hypervisor, fp->hypervisor);
	fingerprint_free(fp);
}

static void test_the_view_of_a_tree_carries_its_names_cpus_and_clocksource(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/hostname", "rig7\n" },
		{ "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1\n" },
		{ "proc/sys/kernel/arch", "x86_64\n" },
		{ "proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu hypervisor\n\n" },
		{ "sys/hypervisor/type", "xen\n" },
		{ "sys/devices/system/clocksource/clocksource0/current_clocksource", "xen\n" },
		{ "sys/devices/system/clocksource/clocksource0/available_clocksource", "xen tsc hpet \n" },
		{ CPU "online", "0-3,5\n" },
		END,
	};
	struct sysdesc d = view_of(tree);

	assert_string_equal(d.hostname, "rig7");
	assert_string_equal(d.kernel_release, "6.1.0-18-amd64");
	assert_string_equal(d.kernel_version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1");
	assert_string_equal(d.machine, "x86_64");
	assert_string_equal(d.cpu_model, "AMD EPYC");
	assert_string_equal(d.hypervisor, "Xen");
	assert_string_equal(d.clocksource, "xen");
	assert_string_equal(d.clocksources, "xen tsc hpet");
	assert_string_equal(d.online_cpus, "0-3,5");
	assert_int_equal(d.ncpus_online, 5);
}

static void test_the_view_names_the_preemption_model_in_sysdescs_words(void **state)
{
	(void)state;
	/* The config tells voluntary from none; the view, like uname -v, says none. */
	const struct systree_file voluntary[] = {
		{ "proc/sys/kernel/osrelease", "6.1.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP Mon Nov 30 2026\n" },
		{ "boot/config-6.1.0", "CONFIG_PREEMPT_VOLUNTARY=y\n" },
		END,
	};
	const struct systree_file rt[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Mon Nov 30 2026\n" }, END,
	};
	const struct systree_file old_rt[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT RT Mon Nov 30 2018\n" }, END,
	};
	const struct systree_file preempt[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT Mon Nov 30 2026\n" }, END,
	};
	const struct systree_file none[] = { END };
	struct fingerprint *fp = collect_tree(voluntary, false);

	assert_string_equal(fp->preempt, "voluntary");
	fingerprint_free(fp);
	assert_string_equal(view_of(voluntary).preempt, "none");
	assert_string_equal(view_of(voluntary).preempt_mode, "");
	assert_string_equal(view_of(rt).preempt, "PREEMPT_RT");
	assert_string_equal(view_of(rt).preempt_mode, "");
	assert_string_equal(view_of(old_rt).preempt, "PREEMPT_RT");
	assert_string_equal(view_of(preempt).preempt, "PREEMPT");
	assert_string_equal(view_of(preempt).preempt_mode, "");
	assert_string_equal(view_of(none).preempt, "unknown");
}

/* sysdesc's preempt_mode is what debugfs shows, never a guess from the command line or the config. */
static void test_the_view_takes_the_preemption_mode_from_debugfs_only(void **state)
{
	(void)state;
	const struct systree_file debugfs[] = {
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" },
		{ "proc/cmdline", "preempt=full\n" },
		{ "sys/kernel/debug/sched/preempt", "none (voluntary) full lazy\n" },
		END,
	};
	const struct systree_file cmdline[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" },
		{ "proc/cmdline", "preempt=full\n" },
		{ "boot/config-6.8.0", "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n" },
		END,
	};
	struct sysdesc d = view_of(debugfs);

	assert_string_equal(d.preempt, "PREEMPT_DYNAMIC");
	assert_string_equal(d.preempt_mode, "voluntary");
	d = view_of(cmdline);
	assert_string_equal(d.preempt, "PREEMPT_DYNAMIC");
	assert_string_equal(d.preempt_mode, "");
}

/* What runs before every measurement must stay cheap: no per-CPU walk, no IRQs, no config, no child. */
static void test_the_identity_part_of_a_fingerprint_reads_nothing_sysdesc_does_not_show(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/sys/kernel/osrelease", "6.8.0\n" },
		{ "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n" },
		{ "boot/config-6.8.0", "CONFIG_HZ=250\nCONFIG_PREEMPT_DYNAMIC=y\n" },
		{ "proc/cmdline", "quiet\n" },
		{ "proc/interrupts", "           CPU0\n  1:         10   IO-APIC   1-edge      i8042\n" },
		{ "proc/stat", "cpu  100 0 100 700 0 0 0 100 0 0\ncpu0 100 0 100 700 0 0 0 100 0 0\n" },
		{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },
		{ CPU "online", "0\n" },
		{ CPU "cpu0/cpuidle/state0/name", "POLL\n" },
		{ "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n" },
		END,
	};
	struct fingerprint *whole = collect_tree(tree, false), *id = collect_tree(tree, true);

	assert_true(whole->ncpus == 1 && whole->irqs_known && whole->hz == 250 && whole->cmdline_known);
	assert_true(whole->nsysctls > 0 && whole->steal_ns != FP_UNKNOWN && whole->thp_enabled[0] != '\0');
	assert_true(id->online_known && cpuset_count(&id->online) == 1);
	assert_string_equal(id->preempt, "PREEMPT_DYNAMIC");
	assert_int_equal(id->ncpus, 0);
	assert_null(id->cpus);
	assert_false(id->irqs_known || id->cmdline_known || id->consoles_known || id->mitigations_known);
	assert_true(id->hz == FP_UNKNOWN && id->steal_ns == FP_UNKNOWN && id->timer_slack_ns == FP_UNKNOWN);
	assert_string_equal(id->config_source, "");
	assert_string_equal(id->thp_enabled, "");
	assert_int_equal(id->nsysctls, 0);
	fingerprint_free(whole);
	fingerprint_free(id);
}

static void test_cpus_allowed_is_not_empty(void **state)
{
	(void)state;
	struct cpuset allowed;

	assert_int_equal(cpus_allowed(&allowed), 0);
	assert_true(cpuset_count(&allowed) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysdesc_collect_fills_kernel_release),
		cmocka_unit_test(test_sysdesc_collect_fills_machine),
		cmocka_unit_test(test_sysdesc_collect_terminates_every_string),
		cmocka_unit_test(test_sysdesc_collect_counts_the_same_cpus_as_cpus_online),
		cmocka_unit_test(test_sysdesc_collect_lists_online_cpus_as_a_parsable_cpu_list),
		cmocka_unit_test(test_sysdesc_collect_names_a_known_preemption_model),
		cmocka_unit_test(test_sysdesc_collect_reports_a_current_clocksource_among_the_available),
		cmocka_unit_test(test_sysdesc_collect_reports_a_hypervisor_exactly_when_cpuinfo_flags_one),
		cmocka_unit_test(test_sysdesc_collect_is_the_view_of_this_machines_whole_fingerprint),
		cmocka_unit_test(test_the_view_of_a_tree_carries_its_names_cpus_and_clocksource),
		cmocka_unit_test(test_the_view_names_the_preemption_model_in_sysdescs_words),
		cmocka_unit_test(test_the_view_takes_the_preemption_mode_from_debugfs_only),
		cmocka_unit_test(test_the_identity_part_of_a_fingerprint_reads_nothing_sysdesc_does_not_show),
		cmocka_unit_test(test_cpus_allowed_is_not_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
