/*
 * Each fix of latscope tune that writes files, as its trial does it: planned
 * on the fake machine of tunetree.h (CPU 1 measured), applied with
 * file_hold_apply, put back with file_hold_restore, and killed with SIGKILL
 * while applied, for the next run's file_hold_restore_stale to put back.
 * Every fix of the table that writes files must have its known answers here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/filehold.h"
#include "sys/tunefix.h"
#include "systree.h"
#include "holdtree.h"
#include "tunetree.h"

#define GOV	 FREQ(1) "scaling_governor"
#define MIN_FREQ FREQ(1) "scaling_min_freq"

/* A fix's files: the text each holds applied, and after its restore. */
struct known {
	const char *fix;
	struct {
		const char *path, *applied, *restored;
	} f[3];
};

/* The restored text is what was read, as the kernel takes it back: THP's marked choice alone. */
static const struct known answers[] = {
	{ "cpufreq-performance",
	  { { GOV, "performance\n", "powersave\n" }, { MIN_FREQ, "3000000\n", "800000\n" } } },
	{ "irq-affinity",
	  { { "proc/irq/3/smp_affinity_list", "0\n", "1\n" },
	    { "proc/irq/24/smp_affinity_list", "0\n", "0-1\n" } } },
	{ "timer-migration", { { "proc/sys/kernel/timer_migration", "0\n", "1\n" } } },
	{ "vmstat-interval", { { "proc/sys/vm/stat_interval", "10\n", "1\n" } } },
	{ "workqueue-cpumask", { { "sys/devices/virtual/workqueue/cpumask", "1\n", "3\n" } } },
	{ "nmi-watchdog", { { "proc/sys/kernel/nmi_watchdog", "0\n", "1\n" } } },
	{ "soft-watchdog", { { "proc/sys/kernel/watchdog_cpumask", "0\n", "0-1\n" } } },
	{ "thp-never",
	  { { "sys/kernel/mm/transparent_hugepage/enabled", "never\n", "madvise\n" } } },
	{ "rt-runtime", { { "proc/sys/kernel/sched_rt_runtime_us", "-1\n", "950000\n" } } },
};

/* The files written, in order, by this process: the test's kernel lets every write go on. */
static char written[16][192];
static size_t nwritten;

static int record(const char *path)
{
	if (nwritten < sizeof(written) / sizeof(written[0]))
		snprintf(written[nwritten++], sizeof(written[0]), "%s", path);
	return 0;
}

static void tree_make(struct tree *t)
{
	tree_make_of(t, untuned);
	t->w.refuse = record;
	nwritten = 0;
}

/* Whether rel is one of k's files. */
static bool among(const struct known *k, const char *rel)
{
	for (size_t i = 0; i < 3 && k->f[i].path; i++)
		if (strcmp(k->f[i].path, rel) == 0)
			return true;
	return false;
}

/* k's files hold their applied (or restored) text; every other file of the machine is untouched. */
static void expect(const struct tree *t, const struct known *k, bool applied)
{
	for (size_t i = 0; i < 3 && k->f[i].path; i++)
		assert_string_equal(text_of(t, k->f[i].path),
				    applied ? k->f[i].applied : k->f[i].restored);
	for (const struct systree_file *f = untuned; f->path; f++)
		if (!among(k, f->path))
			assert_string_equal(text_of(t, f->path), f->text);
}

static const struct known *answer_of(const char *fix)
{
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
		if (strcmp(answers[i].fix, fix) == 0)
			return &answers[i];
	return NULL;
}

/* fix's plan on t for CPU 1, a busy-polling probe (so that rt-runtime is tried too). */
static struct tune_plan plan_on(const struct tree *t, const struct tune_fix *fix)
{
	struct tune_plan p = { .n = 0 };
	struct lat_error why = { "" };
	struct cpuset one;
	assert_int_equal(cpuset_parse("1", &one), 0);
	assert_int_equal(fix->plan(&t->w, &one, true, &p, &why), 0);
	assert_true(p.n > 0);
	return p;
}

/* The writes of the last restore are those of the apply before it, last first. */
static void expect_restored_backwards(size_t applied)
{
	assert_int_equal(nwritten, 2 * applied);
	for (size_t i = 0; i < applied; i++)
		assert_string_equal(written[applied + i], written[applied - 1 - i]);
}

static void test_every_file_fix_has_known_answers_here(void **state)
{
	(void)state;
	size_t files = 0;
	for (size_t i = 0; i < tune_nfixes; i++) {
		if (tune_fixes[i].kind != TUNE_FILES)
			continue;
		files++;
		if (!answer_of(tune_fixes[i].name))
			fail_msg(
				"fix '%s' writes files and has no known answers in test-tunehold.c",
				tune_fixes[i].name);
	}
	assert_int_equal(files, sizeof(answers) / sizeof(answers[0]));
}

static void test_each_file_fix_applied_holds_its_values_and_restored_holds_the_old(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		const struct known *k = &answers[i];
		const struct tune_fix *fix = tune_fix_find(k->fix);
		struct tree t;
		struct file_hold h;
		struct lat_error err = { "" };
		assert_non_null(fix);
		tree_make(&t);
		struct tune_plan p = plan_on(&t, fix);
		assert_int_equal(file_hold_apply(&t.w, fix->name, &p, &h, &err), 0);
		assert_int_equal(h.n, p.n);
		expect(&t, k, true);
		assert_int_equal(systree_count(t.states, "tune-"), 1);
		assert_int_equal(file_hold_restore(&h, &err), 0);
		expect(&t, k, false);
		expect_restored_backwards(p.n);
		assert_int_equal(systree_count(t.states, "tune-"), 0);
		tune_plan_free(&p);
		systree_remove(t.dir);
	}
}

/* A child that applies p and is killed with SIGKILL while it holds it. */
static void killed_while_applied(const struct tree *t, const char *fix, const struct tune_plan *p)
{
	pid_t pid = live_run(t, fix, p);
	int status;
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void test_each_file_fix_killed_while_applied_is_restored_by_the_next_run(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		const struct known *k = &answers[i];
		const struct tune_fix *fix = tune_fix_find(k->fix);
		struct tree t;
		struct lat_error err = { "" };
		unsigned files = 99;
		tree_make(&t);
		struct tune_plan p = plan_on(&t, fix);
		killed_while_applied(&t, fix->name, &p);
		expect(&t, k, true); /* the kill left the fix in place, and its state file */
		assert_int_equal(systree_count(t.states, "tune-"), 1);
		nwritten = 0;
		assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
		assert_int_equal(files, 1);
		expect(&t, k, false);
		/* last written first, as a restore in the run itself goes */
		assert_int_equal(nwritten, p.n);
		for (size_t w = 0; w < p.n; w++) {
			char full[256];
			snprintf(full, sizeof(full), "%s/%s", t.dir, p.w[p.n - 1 - w].path);
			assert_string_equal(written[w], full);
		}
		assert_int_equal(systree_count(t.states, "tune-"), 0);
		tune_plan_free(&p);
		systree_remove(t.dir);
	}
}

/*
 * cpufreq: the minimum clock is written under the governor it is planned
 * with, and the old minimum put back while the governor it was read under is
 * not yet back: the governor goes first and comes back last, in the run and
 * after a kill alike.
 */
static void test_cpufreq_sets_the_governor_before_the_minimum_and_restores_it_after(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	unsigned files;
	char gov[256], min[256];

	tree_make(&t);
	snprintf(gov, sizeof(gov), "%s/%s", t.dir, GOV);
	snprintf(min, sizeof(min), "%s/%s", t.dir, MIN_FREQ);
	struct tune_plan p = plan_on(&t, tune_fix_find("cpufreq-performance"));
	assert_int_equal(file_hold_apply(&t.w, "cpufreq-performance", &p, &h, &err), 0);
	assert_int_equal(file_hold_restore(&h, &err), 0);
	assert_int_equal(nwritten, 4);
	assert_string_equal(written[0], gov);
	assert_string_equal(written[1], min);
	assert_string_equal(written[2], min);
	assert_string_equal(written[3], gov);

	killed_while_applied(&t, "cpufreq-performance", &p);
	nwritten = 0;
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(nwritten, 2);
	assert_string_equal(written[0], min);
	assert_string_equal(written[1], gov);
	assert_string_equal(text_of(&t, GOV), "powersave\n");
	assert_string_equal(text_of(&t, MIN_FREQ), "800000\n");
	tune_plan_free(&p);
	systree_remove(t.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_file_fix_has_known_answers_here),
		cmocka_unit_test(
			test_each_file_fix_applied_holds_its_values_and_restored_holds_the_old),
		cmocka_unit_test(
			test_each_file_fix_killed_while_applied_is_restored_by_the_next_run),
		cmocka_unit_test(
			test_cpufreq_sets_the_governor_before_the_minimum_and_restores_it_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
