/*
 * latscope tune --write-config: what it writes for the fixes judged better is
 * what a user can install as it stands.  The plans come from the fixes
 * themselves on a fake tree; the files are checked line by line and, where
 * Debian has the checker, by sysctl --dry-run and systemd-analyze verify.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/tuneout.h"
#include "sys/filehold.h"
#include "systree.h"

#define END                \
	{                  \
		NULL, NULL \
	}

/* Two CPUs, CPU 1 measured; the keys are real ones, so sysctl can check them here. */
static const struct systree_file untuned[] = { { "sys/devices/system/cpu/online", "0-1\n" },
					       { "proc/sys/kernel/timer_migration", "1\n" },
					       { "proc/sys/vm/stat_interval", "1\n" },
					       { "sys/devices/virtual/workqueue/cpumask", "3\n" },
					       { "sys/kernel/mm/transparent_hugepage/enabled",
						 "always [madvise] never\n" },
					       { "proc/irq/24/smp_affinity_list", "0-1\n" },
					       { "proc/irq/default_smp_affinity", "3\n" },
					       { "dev/cpu_dma_latency", "" },
					       END };

/* A trial of fix name, planned on the tree at dir and judged as given. */
static void trial_of(struct tune_trial *t, const char *dir, const char *name,
		     enum tune_verdict verdict)
{
	const struct tune_fix *f = tune_fix_find(name);
	struct tune_where w = { .sysroot = dir };
	struct cpuset one;
	struct lat_error why;
	assert_non_null(f);
	assert_int_equal(cpuset_parse("1", &one), 0);
	memset(t, 0, sizeof(*t));
	t->fix = f;
	if (f->kind == TUNE_BOOT) {
		t->state = TRIAL_BOOT;
		return;
	}
	assert_int_equal(f->plan(&w, &one, false, &t->plan, &why), 0);
	t->state = TRIAL_TRY;
	t->verdict = verdict;
	t->p99[0] = 41200, t->p99[1] = 30100;
	t->max[0] = 90000, t->max[1] = 60000;
	t->v99.lo = 0.6, t->v99.hi = 0.8;
}

static char *slurp(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The lines of text that are not comments, joined by '|'. */
static void settings(const char *text, char *buf, size_t size)
{
	buf[0] = '\0';
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && p[0] != '#')
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%.*s", buf[0] ? "|" : "",
				 (int)len, p);
		p += len + (nl ? 1 : 0);
	}
}

static size_t files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Run a checker given by its Debian path: -1 when it is not installed, else
 * 0 when it exited 0 and warned of nothing (systemd-analyze verify warns of an
 * unknown key and still exits 0), else 1, with what it said printed.
 */
static int checker(const char *prog, const char *arg1, const char *arg2, const char *arg3,
		   const char *arg4)
{
	char said[64] = "/tmp/test-tuneout-said-XXXXXX";
	if (access(prog, X_OK) != 0)
		return -1;
	int fd = mkstemp(said);
	assert_true(fd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1); /* sysctl --dry-run says each setting */
		dup2(fd, 2);
		execl(prog, prog, arg1, arg2, arg3, arg4, (char *)NULL);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	off_t n = lseek(fd, 0, SEEK_END);
	close(fd);
	if (n > 0)
		fprintf(stderr, "%s said:\n%s", prog, slurp("/", said));
	unlink(said);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && n == 0 ? 0 : 1;
}

static void test_write_config_writes_installable_files_for_the_fixes_judged_better(void **state)
{
	(void)state;
	char tree[64], out[64] = "/tmp/test-tuneout-XXXXXX", joined[1024];
	struct tune_trial t[6];
	struct tune_run tr = { .t = t, .n = 6 };
	systree_make(tree, untuned);
	assert_non_null(mkdtemp(out));
	assert_int_equal(cpuset_parse("1", &tr.measured), 0);
	trial_of(&t[0], tree, "timer-migration", TUNE_BETTER);
	trial_of(&t[1], tree, "vmstat-interval", TUNE_BETTER);
	trial_of(&t[2], tree, "irq-affinity", TUNE_BETTER);
	trial_of(&t[3], tree, "thp-never", TUNE_SAME); /* not better: not written */
	trial_of(&t[4], tree, "pm-qos", TUNE_BETTER);
	trial_of(&t[5], tree, "isolcpus", TUNE_UNJUDGED);

	assert_int_equal(tuneout_write_config(&tr, out), 0);
	assert_int_equal(files_in(out), 3);

	const char *conf = slurp(out, "99-latscope-tune.conf");
	assert_non_null(conf);
	assert_non_null(strstr(conf,
			       "# timer-migration: p99 41.2us -> 30.1us, max 90.0us -> 60.0us "
			       "(B against A, 95% CI -40%..-20%)\n"));
	settings(conf, joined, sizeof(joined));
	assert_string_equal(joined, "kernel.timer_migration = 0|vm.stat_interval = 10");
	char path[256];
	snprintf(path, sizeof(path), "%s/99-latscope-tune.conf", out);
	/* every key must be one this kernel has */
	int r = checker("/usr/sbin/sysctl", "--dry-run", "-p", path, NULL);
	assert_true(r == -1 || r == 0);

	const char *unit = slurp(out, "latscope-tune.service");
	assert_non_null(unit);
	settings(unit, joined, sizeof(joined));
	assert_string_equal(joined,
			    "[Unit]|Description=latscope tune: the settings it measured better|"
			    "After=local-fs.target|[Service]|Type=oneshot|"
			    "ExecStart=-/bin/sh -c 'echo 0 > /proc/irq/24/smp_affinity_list'|"
			    "RemainAfterExit=yes|[Install]|WantedBy=multi-user.target");
	snprintf(path, sizeof(path), "%s/latscope-tune.service", out);
	r = checker("/usr/bin/systemd-analyze", "verify", "--man=no", path, NULL);
	assert_true(r == -1 || r == 0);

	const char *cmdline = slurp(out, "kernel-cmdline.txt");
	assert_non_null(cmdline);
	settings(cmdline, joined, sizeof(joined));
	assert_string_equal(joined, "isolcpus=managed_irq,domain,1");
	assert_non_null(strstr(cmdline, "# pm-qos measured better (p99 41.2us -> 30.1us"));

	for (size_t i = 0; i < tr.n; i++)
		tune_plan_free(&t[i].plan);
	systree_remove(tree);
	systree_remove(out);
}

static void test_nothing_judged_better_writes_nothing_but_the_boot_only_lines(void **state)
{
	(void)state;
	char tree[64], out[64] = "/tmp/test-tuneout-XXXXXX";
	struct tune_trial t[2];
	struct tune_run tr = { .t = t, .n = 2 };
	systree_make(tree, untuned);
	assert_non_null(mkdtemp(out));
	assert_int_equal(cpuset_parse("1", &tr.measured), 0);
	trial_of(&t[0], tree, "timer-migration", TUNE_WORSE);
	trial_of(&t[1], tree, "irq-affinity", TUNE_UNJUDGED);
	assert_int_equal(tuneout_write_config(&tr, out), 0);
	assert_int_equal(files_in(out), 0);
	for (size_t i = 0; i < tr.n; i++)
		tune_plan_free(&t[i].plan);
	systree_remove(tree);
	systree_remove(out);
}

static void test_apply_keeps_exactly_the_file_fixes_judged_better_past_the_next_run(void **state)
{
	(void)state;
	char tree[64], states[128], out[4096];
	struct tune_trial t[5];
	struct tune_run tr = { .t = t, .n = 5, .rounds = 1 };
	unsigned files = 99;
	struct lat_error err = { "" };
	systree_make(tree, untuned);
	snprintf(states, sizeof(states), "%s/run/latscope", tree);
	struct tune_where w = { .sysroot = tree, .state_dir = states };
	assert_int_equal(cpuset_parse("1", &tr.measured), 0);
	trial_of(&t[0], tree, "timer-migration", TUNE_BETTER);
	trial_of(&t[1], tree, "vmstat-interval", TUNE_WORSE);
	trial_of(&t[2], tree, "thp-never", TUNE_SAME);
	trial_of(&t[3], tree, "workqueue-cpumask", TUNE_BETTER);
	trial_of(&t[4], tree, "pm-qos", TUNE_BETTER); /* held by the runner only: not kept */

	assert_int_equal(tuneout_apply(&w, &tr), 0);
	const bool kept[] = { true, false, false, true, false };
	for (size_t i = 0; i < tr.n; i++)
		assert_int_equal(t[i].kept, kept[i]);
	assert_string_equal(slurp(tree, "proc/sys/kernel/timer_migration"), "0\n");
	assert_string_equal(slurp(tree, "sys/devices/virtual/workqueue/cpumask"), "1\n");
	assert_string_equal(slurp(tree, "proc/sys/vm/stat_interval"), "1\n");
	assert_string_equal(slurp(tree, "sys/kernel/mm/transparent_hugepage/enabled"),
			    "always [madvise] never\n");
	/* No state file is left for the next run to take for a killed run's and undo. */
	assert_int_equal(systree_count(states, "tune-"), 0);
	assert_int_equal(file_hold_restore_stale(&w, &files, &err), 0);
	assert_int_equal(files, 0);
	assert_string_equal(slurp(tree, "proc/sys/kernel/timer_migration"), "0\n");

	/* What puts a kept fix back before the reboot is said, beside the table's "yes". */
	assert_string_equal(t[0].undo, "  echo 1 > /proc/sys/kernel/timer_migration\n");
	assert_string_equal(t[3].undo, "  echo 3 > /sys/devices/virtual/workqueue/cpumask\n");
	assert_null(t[1].undo);
	FILE *f = fmemopen(out, sizeof(out), "w");
	assert_non_null(f);
	tune_print(f, &tr, true);
	fclose(f);
	assert_non_null(strstr(out,
			       "timer-migration: kept until the next reboot; to undo it "
			       "sooner, as root:\n  echo 1 > /proc/sys/kernel/timer_migration\n"));
	assert_non_null(strstr(out, "| yes, until reboot "));
	assert_non_null(strstr(out, "| no: held only while latscope measures "));
	assert_null(strstr(out, "vmstat-interval: kept"));
	for (size_t i = 0; i < tr.n; i++) {
		tune_plan_free(&t[i].plan);
		free(t[i].undo);
	}
	systree_remove(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_write_config_writes_installable_files_for_the_fixes_judged_better),
		cmocka_unit_test(test_nothing_judged_better_writes_nothing_but_the_boot_only_lines),
		cmocka_unit_test(
			test_apply_keeps_exactly_the_file_fixes_judged_better_past_the_next_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
