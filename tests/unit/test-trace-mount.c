/*
 * tracefs mounted by latscope where it is not, and unmounted only when
 * latscope mounted it and nothing uses it.  The mount and unmount tests run
 * as root in a private mount namespace of this test process: the machine's
 * own tracefs, which other tests use, is never unmounted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/instance.h"
#include "trace/mount.h"
#include "trace/names.h"
#include "systree.h"

static enum tracefs_where where_in(const char *table, char *dir, size_t size)
{
	FILE *f = fmemopen((void *)table, strlen(table), "r");
	assert_non_null(f);
	enum tracefs_where w = tracefs_where(f, dir, size);
	fclose(f);
	return w;
}

static void test_tracefs_is_found_wherever_it_is_mounted(void **state)
{
	(void)state;
	char dir[64];
	assert_int_equal(where_in("proc /proc proc rw,nosuid 0 0\n"
				  "sysfs /sys sysfs rw 0 0\n"
				  "debugfs /sys/kernel/debug debugfs rw 0 0\n"
				  "nodev /mnt/tr tracefs rw,relatime 0 0\n"
				  "nodev /sys/kernel/tracing tracefs rw 0 0\n", dir, sizeof(dir)),
			 TRACEFS_MOUNTED);
	assert_string_equal(dir, "/mnt/tr");           /* the first, as libtracefs takes it */
}

static void test_with_only_debugfs_mounted_tracefs_is_its_tracing_directory(void **state)
{
	(void)state;
	char dir[64];
	assert_int_equal(where_in("sysfs /sys sysfs rw 0 0\n"
				  "debugfs /sys/kernel/debug debugfs rw 0 0\n", dir, sizeof(dir)),
			 TRACEFS_IN_DEBUGFS);
	assert_string_equal(dir, "/sys/kernel/debug/tracing");
}

static void test_without_tracefs_or_debugfs_tracefs_is_absent(void **state)
{
	(void)state;
	char dir[64] = "x";
	assert_int_equal(where_in("sysfs /sys sysfs rw 0 0\n"
				  "garbage\n"
				  "\n"
				  "tmpfs /tmp tmpfs rw 0 0\n", dir, sizeof(dir)),
			 TRACEFS_ABSENT);
	assert_string_equal(dir, "");
	assert_int_equal(where_in("", dir, sizeof(dir)), TRACEFS_ABSENT);
}

static void test_a_mount_point_too_long_for_the_buffer_gives_no_directory(void **state)
{
	(void)state;
	char dir[8];
	assert_int_equal(where_in("nodev /sys/kernel/tracing tracefs rw 0 0\n", dir, sizeof(dir)), TRACEFS_MOUNTED);
	assert_string_equal(dir, "");
}

/* A fake tracefs: dir/instances/NAME for each name. */
static void fake_tracefs(char dir[static 64], const char *const *names, size_t n)
{
	static const struct systree_file files[] = { { "instances/.keep", "" }, { NULL, NULL } };
	char path[512];
	systree_make(dir, files);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/instances/%s", dir, names[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
}

static void instance_of(long pid, char *buf, size_t size)
{
	assert_int_equal(trace_instance_name(trace_pidns(), pid, buf, size), 0);
}

static void test_a_live_latscope_run_of_this_mount_namespace_keeps_tracefs_in_use(void **state)
{
	(void)state;
	char dir[64], name[64], why[320];
	instance_of((long)getpid(), name, sizeof(name));
	const char *names[] = { name };
	fake_tracefs(dir, names, 1);
	assert_true(tracefs_in_use(dir, why, sizeof(why)));
	assert_non_null(strstr(why, name));
	systree_remove(dir);
}

static void test_instances_of_dead_runs_and_of_other_tools_leave_tracefs_unused(void **state)
{
	(void)state;
	char dir[64], dead[64], why[320] = "x";
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	instance_of((long)pid, dead, sizeof(dead));
	const char *names[] = { dead, "trace-cmd-probe", "latscope-bogus" };
	fake_tracefs(dir, names, 3);
	assert_false(tracefs_in_use(dir, why, sizeof(why)));
	assert_string_equal(why, "");
	systree_remove(dir);
	assert_false(tracefs_in_use("/nonexistent-tracefs", why, sizeof(why)));
}

static void test_a_run_of_another_mount_namespace_leaves_tracefs_unused(void **state)
{
	(void)state;
	char dir[64], name[64], why[320];
	int ready[2], hold[2];

	if (geteuid() != 0)
		skip_because("this machine: the tests do not run as root");
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(hold[1]);         /* so that the parent's close ends the read */
		char c = unshare(CLONE_NEWNS) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(hold[0]);
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	instance_of((long)pid, name, sizeof(name));
	const char *names[] = { name };
	fake_tracefs(dir, names, 1);
	bool used = tracefs_in_use(dir, why, sizeof(why));
	close(hold[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(ready[0]);
	close(ready[1]);
	systree_remove(dir);
	assert_false(used);
}

static void test_nothing_is_unmounted_that_latscope_did_not_mount(void **state)
{
	(void)state;
	/* Not the machine's tracefs: code that wrongly unmounts here gets EINVAL, not 1. */
	char dir[64];
	fake_tracefs(dir, NULL, 0);
	struct tracefs_mount m = { .ours = false };
	snprintf(m.dir, sizeof(m.dir), "%s", dir);
	struct lat_error note = { "untouched" };
	assert_int_equal(tracefs_unmount(&m, &note), 1);
	assert_string_equal(note.msg, "untouched");
	systree_remove(dir);
}

static void test_a_mount_a_run_of_this_namespace_uses_is_left_and_the_note_says_why(void **state)
{
	(void)state;
	char dir[64], name[64];
	struct lat_error note;
	instance_of((long)getpid(), name, sizeof(name));
	const char *names[] = { name };
	fake_tracefs(dir, names, 1);
	struct tracefs_mount m = { .ours = true };
	snprintf(m.dir, sizeof(m.dir), "%s", dir);
	/* -EBUSY, not the -EINVAL an umount of a directory that is no mount point gives */
	assert_int_equal(tracefs_unmount(&m, &note), -EBUSY);
	assert_false(m.ours);
	assert_non_null(strstr(note.msg, "left tracefs mounted at '"));
	assert_non_null(strstr(note.msg, name));
	systree_remove(dir);
}

/* ---- as root, in a private mount namespace ------------------------------ */

/* This process's own mount namespace, with nothing propagating to the machine's; else skip. */
static void private_mount_ns(void)
{
	static bool done;
	if (done)
		return;
	if (geteuid() != 0)
		skip_because("this machine: the tests do not run as root");
	if (unshare(CLONE_NEWNS) < 0)
		skip_because("this machine allows no private mount namespace (unshare(CLONE_NEWNS) failed)");
	/* Without this an unmount below would reach the machine's namespace: stop here. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		abort();
	done = true;
}

static enum tracefs_where where_now(char *dir, size_t size)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	assert_non_null(f);
	enum tracefs_where w = tracefs_where(f, dir, size);
	fclose(f);
	return w;
}

/* Every tracefs and debugfs mount of this (private) namespace gone. */
static void unmount_all_tracefs(void)
{
	char dir[64];
	enum tracefs_where w;
	for (int i = 0; i < 16 && (w = where_now(dir, sizeof(dir))) != TRACEFS_ABSENT; i++) {
		if (w == TRACEFS_IN_DEBUGFS)
			dir[strlen(dir) - strlen("/tracing")] = '\0';
		assert_int_equal(umount2(dir, MNT_DETACH), 0);
	}
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_ABSENT);
}

static void test_tracefs_not_mounted_is_mounted_then_unmounted_once_unused(void **state)
{
	(void)state;
	char dir[64];
	struct lat_error err, note;
	struct tracefs_mount m, again;

	private_mount_ns();
	unmount_all_tracefs();
	assert_int_equal(tracefs_mount(&m, &err), 0);
	assert_true(m.ours);
	assert_string_equal(m.dir, TRACEFS_MOUNT_DIR);
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_MOUNTED);
	assert_string_equal(dir, TRACEFS_MOUNT_DIR);

	/* Mounted now: a second user mounts nothing, and so unmounts nothing. */
	assert_int_equal(tracefs_mount(&again, &err), 0);
	assert_false(again.ours);
	assert_int_equal(tracefs_unmount(&again, &note), 1);
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_MOUNTED);

	assert_int_equal(tracefs_unmount(&m, &note), 0);
	assert_false(m.ours);
	assert_non_null(strstr(note.msg, "unmounted tracefs from '" TRACEFS_MOUNT_DIR "'"));
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_ABSENT);
}

static void test_a_mount_with_a_file_open_in_it_is_left_mounted_and_the_note_says_so(void **state)
{
	(void)state;
	char dir[64];
	struct lat_error err, note;
	struct tracefs_mount m;

	private_mount_ns();
	unmount_all_tracefs();
	assert_int_equal(tracefs_mount(&m, &err), 0);
	assert_true(m.ours);
	int fd = open(TRACEFS_MOUNT_DIR "/trace_clock", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(tracefs_unmount(&m, &note), -EBUSY);
	assert_non_null(strstr(note.msg, "a process has a file open in it"));
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_MOUNTED);
	close(fd);
	assert_int_equal(umount2(TRACEFS_MOUNT_DIR, 0), 0);
}

/* A trace session started where tracefs was not mounted, so it mounted it. */
static struct trace_session *session_that_mounted(void)
{
	struct lat_error err = { "" };
	struct trace_session *s = NULL;
	struct trace_opts o = { .buffer_kb = 64, .events = TRACE_WANT_TIMER };

	private_mount_ns();
	unmount_all_tracefs();
	cpuset_clear(&o.cpus);
	cpuset_add(&o.cpus, 0);
	if (trace_session_start(&o, &s, &err) < 0)
		fail_msg("trace_session_start: %s", err.msg);
	assert_string_equal(trace_session_mounted(s), TRACEFS_MOUNT_DIR);
	return s;
}

static void test_a_session_given_up_after_its_mount_says_when_the_mount_has_to_stay(void **state)
{
	(void)state;
	char dir[64];
	struct lat_error err;
	struct trace_session *s = session_that_mounted();
	int fd = open(TRACEFS_MOUNT_DIR "/trace_clock", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	/* as spike_ring_start gives up when overwrite mode cannot be set */
	err_set(&err, -EIO, "cannot set overwrite mode");
	assert_int_equal(trace_session_abandon(s, -EIO, &err), -EIO);
	assert_string_equal(err.msg, "cannot set overwrite mode; left tracefs mounted at '" TRACEFS_MOUNT_DIR
			    "', which latscope had mounted: a process has a file open in it");
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_MOUNTED);
	close(fd);
	assert_int_equal(umount2(TRACEFS_MOUNT_DIR, 0), 0);
}

static void test_a_session_given_up_after_its_mount_unmounts_it_and_keeps_the_reason(void **state)
{
	(void)state;
	char dir[64];
	struct lat_error err;
	struct trace_session *s = session_that_mounted();

	err_set(&err, -EIO, "cannot set overwrite mode");
	assert_int_equal(trace_session_abandon(s, -EIO, &err), -EIO);
	assert_string_equal(err.msg, "cannot set overwrite mode");
	assert_int_equal(where_now(dir, sizeof(dir)), TRACEFS_ABSENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracefs_is_found_wherever_it_is_mounted),
		cmocka_unit_test(test_with_only_debugfs_mounted_tracefs_is_its_tracing_directory),
		cmocka_unit_test(test_without_tracefs_or_debugfs_tracefs_is_absent),
		cmocka_unit_test(test_a_mount_point_too_long_for_the_buffer_gives_no_directory),
		cmocka_unit_test(test_a_live_latscope_run_of_this_mount_namespace_keeps_tracefs_in_use),
		cmocka_unit_test(test_instances_of_dead_runs_and_of_other_tools_leave_tracefs_unused),
		cmocka_unit_test(test_a_run_of_another_mount_namespace_leaves_tracefs_unused),
		cmocka_unit_test(test_nothing_is_unmounted_that_latscope_did_not_mount),
		cmocka_unit_test(test_a_mount_a_run_of_this_namespace_uses_is_left_and_the_note_says_why),
		cmocka_unit_test(test_tracefs_not_mounted_is_mounted_then_unmounted_once_unused),
		cmocka_unit_test(test_a_mount_with_a_file_open_in_it_is_left_mounted_and_the_note_says_so),
		cmocka_unit_test(test_a_session_given_up_after_its_mount_says_when_the_mount_has_to_stay),
		cmocka_unit_test(test_a_session_given_up_after_its_mount_unmounts_it_and_keeps_the_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
