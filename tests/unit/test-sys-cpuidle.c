#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cpuset.h"
#include "sys/cpuidle.h"
#include "sys/mkdirs.h"
#include "sys/textfile.h"
#include "systree.h"

#define END { NULL, NULL }
#define ST(c, k) "sys/devices/system/cpu/cpu" #c "/cpuidle/state" #k "/"

/* Three CPUs with POLL, C1, C1E and C6; cpu0's C6 disabled already. */
static const struct systree_file four_states[] = {
	{ ST(0, 0) "name", "POLL\n" }, { ST(0, 0) "disable", "0\n" },
	{ ST(0, 1) "name", "C1\n" },   { ST(0, 1) "disable", "0\n" },
	{ ST(0, 2) "name", "C1E\n" },  { ST(0, 2) "disable", "0\n" },
	{ ST(0, 3) "name", "C6\n" },   { ST(0, 3) "disable", "1\n" },
	{ ST(1, 0) "name", "POLL\n" }, { ST(1, 0) "disable", "0\n" },
	{ ST(1, 1) "name", "C1\n" },   { ST(1, 1) "disable", "0\n" },
	{ ST(1, 2) "name", "C1E\n" },  { ST(1, 2) "disable", "0\n" },
	{ ST(1, 3) "name", "C6\n" },   { ST(1, 3) "disable", "0\n" },
	{ ST(2, 0) "name", "POLL\n" }, { ST(2, 0) "disable", "0\n" },
	{ ST(2, 1) "name", "C1\n" },   { ST(2, 1) "disable", "0\n" },
	{ ST(2, 2) "name", "C1E\n" },  { ST(2, 2) "disable", "0\n" },
	{ ST(2, 3) "name", "C6\n" },   { ST(2, 3) "disable", "0\n" },
	END
};

struct tree {
	char dir[64];
	char states[128];
	struct cpuidle_where w;
};

static void tree_make(struct tree *t, const struct systree_file *files)
{
	systree_make(t->dir, files);
	snprintf(t->states, sizeof(t->states), "%s/run/latscope", t->dir);
	t->w = (struct cpuidle_where){ .sysroot = t->dir, .state_dir = t->states };
}

/* The disable file of cpu c state k, as text. */
static const char *disable_of(const struct tree *t, unsigned c, unsigned k)
{
	static char buf[16];
	char path[256];
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", t->dir, c, k);
	assert_int_equal(textfile_read(path, buf, sizeof(buf)), 0);
	return buf;
}

static struct cpuset set_of(const char *list)
{
	struct cpuset s;
	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

/* The state files in the tree's state directory. */
static unsigned state_files(const struct tree *t)
{
	return systree_count(t->states, "cpuidle-");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static unsigned long pidns(void)
{
	struct stat st;
	assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
	return (unsigned long)st.st_ino;
}

/* State k of cpu c disabled, as by an earlier run or the administrator. */
static void disable(const struct tree *t, unsigned c, unsigned k)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable", t->dir, c, k);
	write_file(path, "1\n");
}

/* A state file in t's state directory naming pid, with the lines after its header. */
static void put_state_file(const struct tree *t, pid_t pid, const char *rest)
{
	char path[256], text[256];
	snprintf(path, sizeof(path), "%s/cpuidle-%lu-%ld", t->states, pidns(), (long)pid);
	snprintf(text, sizeof(text), "latscope cpuidle 1\npid %ld\npidns %lu\n%s", (long)pid, pidns(), rest);
	write_file(path, text);
}

/* A pid whose process has ended (and was reaped). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* A live process called name (latscope, or one of its links; or a program that took a killed
 * run's pid).  The child says over a pipe when it has renamed itself: a loop of reads could end
 * before a child on a busy machine ever ran. */
static pid_t live_named(const char *name)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		prctl(PR_SET_NAME, name);
		alarm(30);              /* gone even when a failed assertion skips end_child */
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	textfile_read(path, comm, sizeof(comm));
	assert_string_equal(comm, name);
	return pid;
}

static pid_t live_latscope(void)
{
	return live_named("latscope");
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
static unsigned long long start_of(pid_t pid)
{
	char path[64], text[1024];
	unsigned long long start = 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	assert_int_equal(textfile_read(path, text, sizeof(text)), 0);
	const char *p = strrchr(text, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
				&start), 1);
	return start;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void test_limit_disables_exactly_the_states_deeper_than_n_on_the_named_cpus_only(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_hold h;
	struct lat_error err = { "" };
	struct cpuset cpus = set_of("0,2");

	tree_make(&t, four_states);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 1, &h, &err), 0);
	for (unsigned c = 0; c < 3; c++)
		for (unsigned k = 0; k < 4; k++)
			assert_string_equal(disable_of(&t, c, k), c != 1 && k > 1 ? "1" : "0");
	assert_true(h.limited);
	assert_int_equal(h.n, 3);               /* cpu0's C6 was disabled already */
	assert_string_equal(h.fact, "state2 (C1E), state3 (C6) disabled on cpu 0,2");
	assert_int_equal(cpuidle_restore(&h, &err), 0);
	systree_remove(t.dir);
}

static void test_restore_puts_back_earlier_values_and_a_state_disabled_before_stays_disabled(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_hold h;
	struct lat_error err = { "" };
	struct cpuset cpus = set_of("0-2");

	tree_make(&t, four_states);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 0, &h, &err), 0);
	assert_string_equal(disable_of(&t, 1, 1), "1");
	assert_int_equal(cpuidle_restore(&h, &err), 0);
	for (unsigned c = 0; c < 3; c++)
		for (unsigned k = 0; k < 4; k++)
			assert_string_equal(disable_of(&t, c, k), c == 0 && k == 3 ? "1" : "0");
	assert_int_equal(cpuidle_restore(&h, &err), 0);         /* twice: nothing more */
	assert_string_equal(disable_of(&t, 0, 3), "1");
	systree_remove(t.dir);
}

static void test_the_state_file_names_the_changes_before_they_are_made_and_goes_after_restore(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_hold h;
	struct lat_error err = { "" };
	struct cpuset cpus = set_of("1");
	char text[256];

	tree_make(&t, four_states);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 1, &h, &err), 0);
	assert_int_equal(state_files(&t), 1);
	assert_int_equal(textfile_read(h.file, text, sizeof(text)), 0);
	assert_non_null(strstr(text, "cpu 1 state 2\ncpu 1 state 3"));
	assert_int_equal(cpuidle_restore(&h, &err), 0);
	assert_int_equal(state_files(&t), 0);

	/* Where no state file can be written, nothing is changed. */
	char blocked[128];
	snprintf(blocked, sizeof(blocked), "%s/blocked", t.dir);
	write_file(blocked, "a file, not a directory\n");
	snprintf(t.states, sizeof(t.states), "%s/blocked/latscope", t.dir);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 1, &h, &err), -ENOTDIR);
	assert_non_null(strstr(err.msg, "/blocked/latscope'"));
	assert_string_equal(disable_of(&t, 1, 2), "0");
	assert_string_equal(disable_of(&t, 1, 3), "0");
	systree_remove(t.dir);
}

static void test_a_stale_state_file_of_a_dead_process_is_restored_and_a_live_ones_is_left_alone(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_stale st;
	struct lat_error err = { "" };
	pid_t dead = dead_pid();

	tree_make(&t, four_states);
	assert_int_equal(make_dirs(t.states, 0755), 0);
	put_state_file(&t, dead, "cpu 0 state 3\ncpu 1 state 2\n");
	pid_t live = live_latscope();
	put_state_file(&t, live, "cpu 2 state 1\n");
	/* A pid taken since by another program: its states are restored too. */
	put_state_file(&t, getppid(), "cpu 2 state 3\n");
	disable(&t, 1, 2);
	disable(&t, 2, 1);

	disable(&t, 2, 3);

	assert_int_equal(cpuidle_restore_stale(&t.w, &st, &err), 0);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.states, 3);
	assert_string_equal(disable_of(&t, 2, 3), "0");
	assert_string_equal(disable_of(&t, 0, 3), "0");
	assert_string_equal(disable_of(&t, 1, 2), "0");
	assert_string_equal(disable_of(&t, 2, 1), "1");         /* the live one's */
	assert_int_equal(state_files(&t), 1);

	/* And while it lives, a new limit would fight it. */
	struct cpuidle_hold h;
	struct cpuset cpus = set_of("0");
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 1, &h, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "latscope pid"));
	assert_string_equal(disable_of(&t, 0, 2), "0");
	end_child(live);
	systree_remove(t.dir);
}

static void test_a_live_owner_is_told_by_its_start_time_whatever_the_name_it_runs_under(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_stale st;
	struct lat_error err = { "" };
	char text[256];

	tree_make(&t, four_states);
	assert_int_equal(make_dirs(t.states, 0755), 0);
	/* latscope run through its rtla link: comm is "rtla", and it still holds its states */
	pid_t rtla = live_named("rtla");
	snprintf(text, sizeof(text), "start %llu\ncpu 2 state 1\n", start_of(rtla));
	put_state_file(&t, rtla, text);
	/* a latscope's pid taken by another latscope since: the start time is not the owner's */
	pid_t other = live_latscope();
	snprintf(text, sizeof(text), "start %llu\ncpu 1 state 2\n", start_of(other) - 1);
	put_state_file(&t, other, text);
	disable(&t, 1, 2);
	disable(&t, 2, 1);

	assert_int_equal(cpuidle_restore_stale(&t.w, &st, &err), 0);
	assert_int_equal(st.files, 1);
	assert_string_equal(disable_of(&t, 1, 2), "0");         /* the reused pid's */
	assert_string_equal(disable_of(&t, 2, 1), "1");         /* rtla's, left alone */
	assert_int_equal(state_files(&t), 1);
	end_child(rtla);
	end_child(other);
	systree_remove(t.dir);
}

static void test_an_unwritable_disable_file_is_named_and_what_was_changed_is_restored(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_hold h;
	struct lat_error err = { "" };
	struct cpuset cpus = set_of("0");
	char path[256];

	tree_make(&t, four_states);
	/* Root writes whatever the mode says: the check needs another user. */
	assert_int_equal(chmod(t.dir, 0755), 0);
	assert_int_equal(make_dirs(t.states, 0755), 0);
	assert_int_equal(chmod(t.states, 0777), 0);
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", t.dir);
	assert_int_equal(chmod(path, 0666), 0);
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu0/cpuidle/state2/disable", t.dir);
	assert_int_equal(chmod(path, 0444), 0);
	uid_t uid = geteuid();
	if (uid == 0)
		assert_int_equal(seteuid(65534), 0);
	int r = cpuidle_limit(&t.w, &cpus, 0, &h, &err);
	if (uid == 0)
		assert_int_equal(seteuid(0), 0);

	assert_int_equal(r, -EACCES);
	char want[320];
	snprintf(want, sizeof(want), "cannot open '%s': Permission denied (needs root)", path);
	assert_string_equal(err.msg, want);
	assert_string_equal(disable_of(&t, 0, 1), "0");        /* changed, then put back */
	assert_string_equal(disable_of(&t, 0, 2), "0");
	assert_int_equal(state_files(&t), 0);
	systree_remove(t.dir);
}

static void test_a_machine_without_idle_states_has_nothing_to_limit(void **state)
{
	(void)state;
	struct tree t;
	struct cpuidle_hold h;
	struct lat_error err = { "" };
	struct cpuset cpus = set_of("0-1");
	const struct systree_file none[] = { { "sys/devices/system/cpu/online", "0-1\n" }, END };

	tree_make(&t, none);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 0, &h, &err), 0);
	assert_false(h.limited);
	assert_string_equal(h.fact, "nothing to limit: no cpuidle driver");
	assert_int_equal(state_files(&t), 0);
	assert_int_equal(cpuidle_restore(&h, &err), 0);

	systree_remove(t.dir);
	tree_make(&t, four_states);
	assert_int_equal(cpuidle_limit(&t.w, &cpus, 3, &h, &err), 0);
	assert_false(h.limited);
	assert_string_equal(h.fact, "nothing to limit: no idle state deeper than 3");
	assert_int_equal(state_files(&t), 0);
	assert_int_equal(cpuidle_restore(&h, &err), 0);
	systree_remove(t.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_disables_exactly_the_states_deeper_than_n_on_the_named_cpus_only),
		cmocka_unit_test(test_restore_puts_back_earlier_values_and_a_state_disabled_before_stays_disabled),
		cmocka_unit_test(test_the_state_file_names_the_changes_before_they_are_made_and_goes_after_restore),
		cmocka_unit_test(test_a_stale_state_file_of_a_dead_process_is_restored_and_a_live_ones_is_left_alone),
		cmocka_unit_test(test_a_live_owner_is_told_by_its_start_time_whatever_the_name_it_runs_under),
		cmocka_unit_test(test_an_unwritable_disable_file_is_named_and_what_was_changed_is_restored),
		cmocka_unit_test(test_a_machine_without_idle_states_has_nothing_to_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
