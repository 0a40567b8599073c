#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/filehold.h"
#include "systree.h"
#include "holdtree.h"

#define END                \
	{                  \
		NULL, NULL \
	}
#define THP   "sys/kernel/mm/transparent_hugepage/enabled"
#define WQ    "sys/devices/virtual/workqueue/cpumask"
#define IRQ24 "proc/irq/24/smp_affinity_list"
#define IRQ25 "proc/irq/25/smp_affinity_list"
#define TM    "proc/sys/kernel/timer_migration"

static const struct systree_file machine[] = { { THP, "always [madvise] never\n" },
					       { WQ, "00000000,00000003\n" },
					       { IRQ24, "0-1\n" },
					       { IRQ25, "0-1\n" },
					       { TM, "1\n" },
					       END };

static void tree_make(struct tree *t)
{
	tree_make_of(t, machine);
}

static void add(struct tune_plan *p, const char *rel, const char *value, bool optional)
{
	assert_int_equal(tune_plan_add(p, rel, value, optional), 0);
}

/* Writes to every file of the machine. */
static struct tune_plan plan_all(void)
{
	struct tune_plan p = { .n = 0 };
	add(&p, THP, "never", false);
	add(&p, WQ, "1", false);
	add(&p, IRQ24, "0", true);
	add(&p, IRQ25, "0", true);
	add(&p, TM, "0", false);
	return p;
}

static unsigned state_files(const struct tree *t)
{
	return systree_count(t->states, "tune-");
}

static void test_apply_then_restore_leaves_every_file_as_it_was(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = plan_all();

	tree_make(&t);
	assert_int_equal(file_hold_apply(&t.w, "many", &p, &h, &err), 0);
	assert_int_equal(h.n, 5);
	assert_int_equal(h.skipped, 0);
	assert_string_equal(text_of(&t, THP), "never\n");
	assert_string_equal(text_of(&t, WQ), "1\n");
	assert_string_equal(text_of(&t, IRQ24), "0\n");
	assert_string_equal(text_of(&t, TM), "0\n");
	assert_int_equal(file_hold_restore(&h, &err), 0);
	/* The kernel shows THP's setting among its choices; what is written back is the choice. */
	assert_string_equal(text_of(&t, THP), "madvise\n");
	assert_string_equal(text_of(&t, WQ), "00000000,00000003\n");
	assert_string_equal(text_of(&t, IRQ24), "0-1\n");
	assert_string_equal(text_of(&t, IRQ25), "0-1\n");
	assert_string_equal(text_of(&t, TM), "1\n");
	assert_int_equal(file_hold_restore(&h, &err), 0); /* twice: nothing more */
	assert_string_equal(text_of(&t, TM), "1\n");
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void
test_a_state_file_lists_the_old_values_while_applied_and_is_gone_after_restore(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = plan_all();
	struct stat st;
	char text[1024];

	tree_make(&t);
	assert_int_equal(state_files(&t), 0);
	assert_int_equal(file_hold_apply(&t.w, "many", &p, &h, &err), 0);
	assert_int_equal(state_files(&t), 1);
	assert_non_null(strstr(h.file, "/tune-many-"));
	assert_int_equal(stat(h.file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	FILE *f = fopen(h.file, "re");
	assert_non_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "latscope tune 1\npid "));
	assert_non_null(strstr(text, "fix many\nold 0 " THP " madvise\nold 0 " WQ
				     " 00000000,00000003\nold 1 " IRQ24 " 0-1\n"));
	/* The same fix again in this process would take the true old values for the tuned ones. */
	struct file_hold again;
	assert_int_equal(file_hold_apply(&t.w, "many", &p, &again, &err), -EEXIST);
	assert_string_equal(text_of(&t, TM), "0\n");
	assert_int_equal(file_hold_restore(&h, &err), 0);
	assert_int_equal(state_files(&t), 0);
	tune_plan_free(&p);
	systree_remove(t.dir);
}

/* A child that applies p and ends without restoring, as a run killed with SIGKILL; its pid. */
static pid_t killed_run(const struct tree *t, const char *fix, const struct tune_plan *p)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct file_hold h;
		_exit(file_hold_apply(&t->w, fix, p, &h, NULL) == 0 ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

static void
test_a_killed_runs_changes_are_restored_by_the_next_and_a_live_ones_are_left_alone(void **state)
{
	(void)state;
	struct tree t;
	struct lat_error err = { "" };
	struct tune_plan tm = { .n = 0 }, thp = { .n = 0 };
	unsigned files = 99;

	tree_make(&t);
	add(&tm, TM, "0", false);
	add(&thp, THP, "never", false);
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0); /* no directory yet */
	assert_int_equal(files, 0);

	killed_run(&t, "timer-migration", &tm);
	pid_t live = live_run(&t, "thp-never", &thp);
	assert_string_equal(text_of(&t, TM), "0\n");
	assert_int_equal(state_files(&t), 2);
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(files, 1);
	assert_string_equal(text_of(&t, TM), "1\n");
	assert_string_equal(text_of(&t, THP), "never\n"); /* the live run holds it */
	assert_int_equal(state_files(&t), 1);

	kill(live, SIGKILL);
	assert_int_equal(waitpid(live, NULL, 0), live);
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(files, 1);
	assert_string_equal(text_of(&t, THP), "madvise\n");
	assert_int_equal(state_files(&t), 0);
	tune_plan_free(&tm);
	tune_plan_free(&thp);
	systree_remove(t.dir);
}

static void test_a_state_file_of_this_process_held_now_is_not_taken_for_a_killed_ones(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan tm = { .n = 0 };
	unsigned files = 99;

	tree_make(&t);
	add(&tm, TM, "0", false);
	assert_int_equal(file_hold_apply(&t.w, "timer-migration", &tm, &h, &err), 0);
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(files, 0);
	assert_string_equal(text_of(&t, TM), "0\n");
	assert_int_equal(file_hold_restore(&h, &err), 0);
	assert_string_equal(text_of(&t, TM), "1\n");
	tune_plan_free(&tm);
	systree_remove(t.dir);
}

/* The test's kernel: refuses the write of IRQ 25's affinity as a managed IRQ's, or of timer_migration. */
static int refuse_irq25(const char *path)
{
	return strstr(path, IRQ25) ? -EIO : 0;
}

static int refuse_tm(const char *path)
{
	return strstr(path, TM) ? -EINVAL : 0;
}

static void test_an_optional_write_the_kernel_refuses_is_skipped_and_counted(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = { .n = 0 };

	tree_make(&t);
	add(&p, IRQ24, "0", true);
	add(&p, IRQ25, "0", true);
	t.w.refuse = refuse_irq25;
	assert_int_equal(file_hold_apply(&t.w, "irq-affinity", &p, &h, &err), 0);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.skipped, 1);
	assert_string_equal(h.skipped_what, "/" IRQ25 ": Input/output error");
	assert_string_equal(text_of(&t, IRQ24), "0\n");
	assert_string_equal(text_of(&t, IRQ25), "0-1\n");
	assert_int_equal(file_hold_restore(&h, &err), 0);
	assert_string_equal(text_of(&t, IRQ24), "0-1\n");
	assert_int_equal(state_files(&t), 0);
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void test_a_required_write_the_kernel_refuses_fails_and_undoes_what_was_written(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = plan_all(); /* timer_migration last */

	tree_make(&t);
	t.w.refuse = refuse_tm;
	assert_int_equal(file_hold_apply(&t.w, "many", &p, &h, &err), -EINVAL);
	assert_non_null(strstr(err.msg, TM "': Invalid argument"));
	assert_string_equal(text_of(&t, WQ), "00000000,00000003\n");
	assert_string_equal(text_of(&t, IRQ24), "0-1\n");
	assert_string_equal(text_of(&t, THP), "madvise\n");
	assert_int_equal(state_files(&t), 0);
	assert_int_equal(h.n, 0);
	assert_int_equal(file_hold_restore(&h, &err), 0); /* nothing left to do */
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void test_a_file_that_cannot_be_read_fails_before_anything_is_written(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = { .n = 0 };
	char path[256];
	struct stat st;

	tree_make(&t);
	add(&p, TM, "0", false);
	add(&p, "proc/irq/99/smp_affinity_list", "0", true);
	assert_int_equal(file_hold_apply(&t.w, "irq-affinity", &p, &h, &err), -ENOENT);
	assert_non_null(
		strstr(err.msg, "proc/irq/99/smp_affinity_list': No such file or directory"));
	assert_string_equal(text_of(&t, TM), "1\n");
	assert_int_equal(state_files(&t), 0);
	snprintf(path, sizeof(path), "%s/proc/irq/99", t.dir);
	assert_int_equal(stat(path, &st), -1); /* no kernel file is ever created */
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void test_a_file_removed_between_apply_and_restore_is_reported_not_crashed_on(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = { .n = 0 };
	char path[256];
	unsigned files = 99;

	tree_make(&t);
	add(&p, IRQ24, "0", true);
	add(&p, TM, "0", false);
	assert_int_equal(file_hold_apply(&t.w, "gone", &p, &h, &err), 0);
	snprintf(path, sizeof(path), "%s/%s", t.dir, IRQ24);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(file_hold_restore(&h, &err), -ENOENT);
	assert_non_null(strstr(err.msg, IRQ24 "': it is gone"));
	assert_string_equal(text_of(&t, TM), "1\n"); /* the others are put back all the same */
	assert_int_equal(state_files(&t), 1);	     /* kept for the next run ... */
	assert_int_equal(file_hold_restore(&h, &err), 0);

	/* ... which, once this process is gone, finds nothing to put back in the gone file. */
	struct tune_plan tm = { .n = 0 };
	add(&tm, TM, "0", false);
	killed_run(&t, "timer-migration", &tm);
	assert_string_equal(text_of(&t, TM), "0\n");
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(files, 1); /* the killed child's; this process's own is left */
	assert_string_equal(text_of(&t, TM), "1\n");
	tune_plan_free(&tm);
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void test_a_fix_name_that_is_no_word_is_refused(void **state)
{
	(void)state;
	struct tree t;
	struct file_hold h;
	struct lat_error err = { "" };
	struct tune_plan p = { .n = 0 };

	tree_make(&t);
	add(&p, TM, "0", false);
	assert_int_equal(file_hold_apply(&t.w, "../x", &p, &h, &err), -EINVAL);
	assert_string_equal(text_of(&t, TM), "1\n");
	tune_plan_free(&p);
	systree_remove(t.dir);
}

static void test_a_second_tune_is_refused_while_one_holds_the_lock_and_let_in_after_it_dies(void **state)
{
	(void)state;
	struct tree t;
	struct lat_error err = { "" };
	char said[64];

	tree_make(&t);
	int first = file_hold_lock(&t.w, &err);
	assert_true(first >= 0);
	assert_int_equal(file_hold_lock(&t.w, &err), -EBUSY);
	snprintf(said, sizeof(said), "another latscope tune is running (pid %ld)", (long)getpid());
	assert_non_null(strstr(err.msg, said));
	assert_int_equal(state_files(&t), 0); /* the lock is no state file to restore */
	file_hold_unlock(&t.w, first);
	assert_int_equal(systree_count(t.states, "tune.lock"), 0); /* nothing left behind */

	/* a holder killed with SIGKILL leaves the lock free */
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lat_error e;
		_exit(file_hold_lock(&t.w, &e) >= 0 && write(ready[1], "x", 1) == 1 && pause() ? 0 : 1);
	}
	char x;
	assert_int_equal(read(ready[0], &x, 1), 1);
	assert_int_equal(file_hold_lock(&t.w, &err), -EBUSY);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unsigned files;
	assert_int_equal(systree_count(t.states, "tune.lock"), 1); /* the killed one's */
	assert_int_equal(file_hold_restore_stale(&t.w, &files, &err), 0);
	assert_int_equal(systree_count(t.states, "tune.lock"), 0); /* the next run's cleaning */
	int again = file_hold_lock(&t.w, &err);
	assert_true(again >= 0);
	file_hold_unlock(&t.w, again);
	close(ready[0]);
	close(ready[1]);
	systree_remove(t.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_then_restore_leaves_every_file_as_it_was),
		cmocka_unit_test(
			test_a_state_file_lists_the_old_values_while_applied_and_is_gone_after_restore),
		cmocka_unit_test(
			test_a_killed_runs_changes_are_restored_by_the_next_and_a_live_ones_are_left_alone),
		cmocka_unit_test(
			test_a_state_file_of_this_process_held_now_is_not_taken_for_a_killed_ones),
		cmocka_unit_test(test_an_optional_write_the_kernel_refuses_is_skipped_and_counted),
		cmocka_unit_test(
			test_a_required_write_the_kernel_refuses_fails_and_undoes_what_was_written),
		cmocka_unit_test(test_a_file_that_cannot_be_read_fails_before_anything_is_written),
		cmocka_unit_test(
			test_a_file_removed_between_apply_and_restore_is_reported_not_crashed_on),
		cmocka_unit_test(test_a_fix_name_that_is_no_word_is_refused),
		cmocka_unit_test(
			test_a_second_tune_is_refused_while_one_holds_the_lock_and_let_in_after_it_dies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
