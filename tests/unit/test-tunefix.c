#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/cpuset.h"
#include "sys/findings.h"
#include "sys/tunefix.h"
#include "systree.h"
#include "tunetree.h"

#define END                \
	{                  \
		NULL, NULL \
	}

/* The same machine tuned already. */
static const struct systree_file tuned[] = {
	{ "sys/devices/system/cpu/online", "0-1\n" },
	{ "proc/sys/kernel/timer_migration", "0\n" },
	{ "proc/sys/vm/stat_interval", "60\n" },
	{ "proc/sys/kernel/nmi_watchdog", "0\n" },
	{ "proc/sys/kernel/watchdog", "1\n" },
	{ "proc/sys/kernel/watchdog_cpumask", "0\n" },
	{ "proc/sys/kernel/sched_rt_runtime_us", "-1\n" },
	{ "sys/devices/virtual/workqueue/cpumask", "00000001\n" },
	{ "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n" },
	{ FREQ(1) "scaling_governor", "performance\n" },
	{ FREQ(1) "scaling_available_governors", "performance powersave\n" },
	{ FREQ(1) "scaling_min_freq", "3000000\n" },
	{ FREQ(1) "scaling_max_freq", "3000000\n" },
	{ FREQ(1) "cpuinfo_max_freq", "3000000\n" },
	{ "proc/irq/24/smp_affinity_list", "0\n" },
	{ "sys/devices/system/cpu/isolated", "1\n" },
	{ "sys/devices/system/cpu/nohz_full", "1\n" },
	{ "proc/cmdline", "isolcpus=1 nohz_full=1\n" },
	{ "proc/consoles", "tty0                 -WU (EC p  )    4:1\n" },
	END
};

static struct cpuset set_of(const char *list)
{
	struct cpuset s;
	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

/* The plan of fix name on the tree at dir, for CPU 1; its return. */
static int plan_of(const char *dir, const char *name, bool busy_poll, struct tune_plan *p,
		   struct lat_error *why)
{
	const struct tune_fix *f = tune_fix_find(name);
	struct tune_where w = { .sysroot = dir };
	struct cpuset one = set_of("1");
	assert_non_null(f);
	memset(p, 0, sizeof(*p));
	why->msg[0] = '\0';
	return f->plan(&w, &one, busy_poll, p, why);
}

static void expect_one(const char *dir, const char *name, const char *path, const char *value,
		       const char *from, const char *to)
{
	struct tune_plan p;
	struct lat_error why;
	assert_int_equal(plan_of(dir, name, false, &p, &why), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.w[0].path, path);
	assert_string_equal(p.w[0].value, value);
	assert_false(p.w[0].optional);
	assert_string_equal(p.from, from);
	assert_string_equal(p.to, to);
	tune_plan_free(&p);
}

static void test_each_file_fix_plans_the_expected_writes_and_from_to_on_a_fake_tree(void **state)
{
	(void)state;
	char dir[64];
	systree_make(dir, untuned);
	expect_one(dir, "timer-migration", "proc/sys/kernel/timer_migration", "0", "1", "0");
	expect_one(dir, "vmstat-interval", "proc/sys/vm/stat_interval", "10", "1", "10");
	expect_one(dir, "nmi-watchdog", "proc/sys/kernel/nmi_watchdog", "0", "1", "0");
	expect_one(dir, "soft-watchdog", "proc/sys/kernel/watchdog_cpumask", "0", "0-1", "0");
	expect_one(dir, "workqueue-cpumask", "sys/devices/virtual/workqueue/cpumask", "1", "3",
		   "1");
	expect_one(dir, "thp-never", "sys/kernel/mm/transparent_hugepage/enabled", "never",
		   "madvise", "never");

	struct tune_plan p;
	struct lat_error why;
	assert_int_equal(plan_of(dir, "cpufreq-performance", false, &p, &why), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.w[0].path, FREQ(1) "scaling_governor");
	assert_string_equal(p.w[0].value, "performance");
	assert_string_equal(p.w[1].path, FREQ(1) "scaling_min_freq");
	assert_string_equal(p.w[1].value, "3000000");
	assert_string_equal(p.from, "powersave, min 800000 kHz");
	assert_string_equal(p.to, "performance, min 3000000 kHz");
	tune_plan_free(&p);

	/* IRQ 25 stays off CPU 1 already; the others move, in IRQ order, each optional. */
	assert_int_equal(plan_of(dir, "irq-affinity", false, &p, &why), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.w[0].path, "proc/irq/3/smp_affinity_list");
	assert_string_equal(p.w[1].path, "proc/irq/24/smp_affinity_list");
	for (size_t i = 0; i < p.n; i++) {
		assert_string_equal(p.w[i].value, "0");
		assert_true(p.w[i].optional);
	}
	assert_string_equal(p.from, "1, 0-1");
	assert_string_equal(p.to, "0");
	tune_plan_free(&p);
	tune_plan_free(&p); /* twice: nothing more */

	assert_int_equal(plan_of(dir, "rt-runtime", true, &p, &why), 0);
	assert_string_equal(p.w[0].value, "-1");
	assert_string_equal(p.from, "950000");
	tune_plan_free(&p);
	systree_remove(dir);
}

static void test_the_fixes_that_are_no_files_plan_no_write_but_say_what_changes(void **state)
{
	(void)state;
	char dir[64];
	struct tune_plan p;
	struct lat_error why;
	static const char *const cases[][3] = {
		{ "pm-qos", "not held", "0 us" },
		{ "idle-states", "up to state2 (C6)", "state0 (POLL)" },
		{ "isolcpus", "none", "1" },
		{ "nohz-full", "none", "1" },
		{ "rcu-nocbs", "none", "1" },
		{ "serial-console", "console on ttyS0", "no serial console" },
	};
	systree_make(dir, untuned);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(plan_of(dir, cases[i][0], false, &p, &why), 0);
		assert_int_equal(p.n, 0);
		assert_null(p.w);
		assert_string_equal(p.from, cases[i][1]);
		assert_string_equal(p.to, cases[i][2]);
		assert_int_not_equal(tune_fix_find(cases[i][0])->kind, TUNE_FILES);
	}
	assert_string_equal(tune_fix_find("isolcpus")->cmdline, "isolcpus=managed_irq,domain,%s");
	systree_remove(dir);
}

static void test_a_fix_without_its_files_says_not_here_and_plans_nothing(void **state)
{
	(void)state;
	static const struct systree_file bare[] = { { "proc/version", "Linux\n" }, END };
	char dir[64];
	systree_make(dir, bare);
	for (size_t i = 0; i < tune_nfixes; i++) {
		struct tune_plan p;
		struct lat_error why;
		int r = plan_of(dir, tune_fixes[i].name, true, &p, &why);
		assert_int_equal(r, -TUNE_NOT_HERE);
		assert_int_equal(strncmp(why.msg, "not here: ", 10), 0);
		assert_int_equal(p.n, 0); /* untouched */
		assert_null(p.w);
	}
	struct tune_plan p;
	struct lat_error why;
	assert_int_equal(plan_of(dir, "cpufreq-performance", false, &p, &why), -TUNE_NOT_HERE);
	assert_string_equal(why.msg,
			    "not here: no cpufreq (no /sys/devices/system/cpu/cpu1/cpufreq)");
	systree_remove(dir);
}

static void test_a_fix_in_place_already_says_so_and_plans_nothing(void **state)
{
	(void)state;
	static const char *const names[] = {
		"timer-migration",     "vmstat-interval",   "nmi-watchdog",
		"soft-watchdog",       "workqueue-cpumask", "thp-never",
		"cpufreq-performance", "irq-affinity",	    "isolcpus",
		"nohz-full",	       "rcu-nocbs"
	};
	char dir[64];
	systree_make(dir, tuned);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct tune_plan p;
		struct lat_error why;
		assert_int_equal(plan_of(dir, names[i], true, &p, &why), -TUNE_ALREADY);
		assert_int_equal(strncmp(why.msg, "already so: ", 12), 0);
		assert_null(p.w);
	}
	struct tune_plan p;
	struct lat_error why;
	assert_int_equal(plan_of(dir, "timer-migration", false, &p, &why), -TUNE_ALREADY);
	assert_string_equal(why.msg, "already so: timer_migration is 0");
	assert_int_equal(plan_of(dir, "serial-console", false, &p, &why), -TUNE_NOT_HERE);
	assert_string_equal(why.msg, "not here: no serial console");
	systree_remove(dir);
}

static void test_rt_runtime_is_tried_only_for_a_busy_polling_probe(void **state)
{
	(void)state;
	char dir[64];
	struct tune_plan p;
	struct lat_error why;
	systree_make(dir, untuned);
	assert_int_equal(plan_of(dir, "rt-runtime", false, &p, &why), -TUNE_NOT_TRIED);
	assert_string_equal(why.msg,
			    "not tried: only a busy-polling probe (noise) can be held back by the "
			    "real-time throttle");
	assert_int_equal(plan_of(dir, "rt-runtime", true, &p, &why), 0);
	tune_plan_free(&p);
	systree_remove(dir);
}

static void test_fixes_that_move_work_off_the_measured_cpus_need_a_cpu_left(void **state)
{
	(void)state;
	static const char *const names[] = { "irq-affinity", "workqueue-cpumask", "soft-watchdog",
					     "isolcpus" };
	char dir[64];
	struct cpuset all = set_of("0-1");
	systree_make(dir, untuned);
	struct tune_where w = { .sysroot = dir };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct tune_plan p = { .n = 0 };
		struct lat_error why;
		assert_int_equal(tune_fix_find(names[i])->plan(&w, &all, false, &p, &why),
				 -TUNE_NOT_HERE);
		assert_string_equal(
			why.msg,
			"not here: every online CPU is measured, none is left to take the work");
	}
	systree_remove(dir);
}

static void test_the_table_names_each_fix_once_with_a_finding_latscope_sys_knows(void **state)
{
	(void)state;
	assert_int_equal(tune_nfixes, 15);
	for (size_t i = 0; i < tune_nfixes; i++) {
		const struct tune_fix *f = &tune_fixes[i];
		assert_ptr_equal(tune_fix_find(f->name), f);
		assert_int_equal(strspn(f->name, "abcdefghijklmnopqrstuvwxyz-"), strlen(f->name));
		assert_true(f->about && f->about[0] && f->plan);
		assert_true((f->kind == TUNE_BOOT) == (f->cmdline != NULL));
		bool known = f->finding == NULL;
		for (size_t k = 0; !known && k < findings_rule_count(); k++)
			known = strcmp(findings_rule_id(k), f->finding) == 0;
		assert_true(known);
	}
	assert_null(tune_fix_find("no-such-fix"));
	assert_null(tune_fix_find(NULL));
}

static void test_masks_parse_as_the_kernel_writes_them_with_or_without_commas(void **state)
{
	(void)state;
	struct cpuset s;
	char text[64];
	assert_int_equal(tune_mask_parse("00000003", &s), 0);
	assert_int_equal(cpuset_count(&s), 2);
	assert_int_equal(tune_mask_parse("00000001,00000000,00000004", &s), 0);
	cpuset_format(&s, text, sizeof(text));
	assert_string_equal(text, "2,64");
	assert_int_equal(tune_mask_format(&s, text, sizeof(text)), strlen("1,00000000,00000004"));
	assert_string_equal(text, "1,00000000,00000004");
	cpuset_clear(&s);
	tune_mask_format(&s, text, sizeof(text));
	assert_string_equal(text, "0");
	assert_int_equal(tune_mask_parse("3g", &s), -EINVAL);
	assert_int_equal(tune_mask_parse("", &s), -EINVAL);
}

static void test_a_long_from_is_cut_short_with_dots(void **state)
{
	(void)state;
	struct tune_plan p = { .n = 0 };
	char longer[300];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	tune_plan_say(&p, longer, "0");
	assert_int_equal(strlen(p.from), sizeof(p.from) - 1);
	assert_string_equal(p.from + sizeof(p.from) - 4, "...");
	assert_string_equal(p.to, "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_each_file_fix_plans_the_expected_writes_and_from_to_on_a_fake_tree),
		cmocka_unit_test(
			test_the_fixes_that_are_no_files_plan_no_write_but_say_what_changes),
		cmocka_unit_test(test_a_fix_without_its_files_says_not_here_and_plans_nothing),
		cmocka_unit_test(test_a_fix_in_place_already_says_so_and_plans_nothing),
		cmocka_unit_test(test_rt_runtime_is_tried_only_for_a_busy_polling_probe),
		cmocka_unit_test(test_fixes_that_move_work_off_the_measured_cpus_need_a_cpu_left),
		cmocka_unit_test(
			test_the_table_names_each_fix_once_with_a_finding_latscope_sys_knows),
		cmocka_unit_test(test_masks_parse_as_the_kernel_writes_them_with_or_without_commas),
		cmocka_unit_test(test_a_long_from_is_cut_short_with_dots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
