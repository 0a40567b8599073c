/*
 * Unit tests for the load generators (src/load/): the spec text, and that a
 * started load runs, works for the share of time its intensity gives, and
 * leaves no process or file behind however it ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/nstime.h"
#include "load/console_dev.h"
#include "load/load.h"
#include "sys/cpus.h"

#include "gcovflush.h"

/* ---- helpers ---- */

/* How long a wait for a state may take before the test fails.  Generous: CI runs
 * these tests under sanitizers on CPUs that other tests keep busy, and a wait only
 * takes this long when it fails. */
#define STATE_TIMEOUT_NS (20 * NS_PER_SEC)

static struct cpuset cpus_of(const char *list)
{
	struct cpuset s;
	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Parse with online CPUs 0-3 and check the canonical text. */
static void expect_spec(const char *text, const char *canonical)
{
	struct cpuset online = cpus_of("0-3");
	struct load_spec s;
	struct lat_error err = { "" };
	char buf[512];

	int r = load_parse(text, &online, &s, &err);
	if (r != 0) {
		print_error("load_parse(\"%s\"): r=%d (%s), want 0\n", text, r, err.msg);
		fail();
	}
	load_format(&s, buf, sizeof(buf));
	if (strcmp(buf, canonical) != 0) {
		print_error("load_parse(\"%s\") formats as \"%s\", want \"%s\"\n", text, buf, canonical);
		fail();
	}
}

/* Parse with online CPUs 0-3; the reason must be reason and ret untouched. */
static void expect_spec_error(const char *text, const char *reason)
{
	struct cpuset online = cpus_of("0-3");
	struct load_spec s, untouched;
	struct lat_error err = { "" };

	memset(&s, 0x5a, sizeof(s));
	memcpy(&untouched, &s, sizeof(s));
	int r = load_parse(text, &online, &s, &err);
	if (r != -EINVAL || strcmp(err.msg, reason) != 0) {
		print_error("load_parse(\"%s\"): r=%d \"%s\", want %d \"%s\"\n", text ? text : "(null)", r, err.msg,
			    -EINVAL, reason);
		fail();
	}
	assert_memory_equal(&s, &untouched, sizeof(s));
}

static struct load_spec spec_on(const char *text, const char *cpus)
{
	struct cpuset online = cpus_of(cpus);
	struct load_spec s;
	struct lat_error err = { "" };

	if (load_parse(text, &online, &s, &err) != 0) {
		print_error("load_parse(\"%s\"): %s\n", text, err.msg);
		fail();
	}
	return s;
}

static bool group_gone(pid_t pgid)
{
	return kill(-pgid, 0) == -1 && errno == ESRCH;
}

/* State and parent of pid from /proc; false when it is gone. */
static bool proc_state(pid_t pid, char *ret_state, long *ret_ppid)
{
	char path[64], line[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char *got = fgets(line, sizeof(line), f);
	fclose(f);
	char *end = got ? strrchr(line, ')') : NULL;
	return end && sscanf(end + 1, " %c %ld", ret_state, ret_ppid) == 2;
}

/* Gone, or a zombie waiting for its parent: nothing runs any more. */
static bool ended(pid_t pid)
{
	char st;
	long ppid;

	return !proc_state(pid, &st, &ppid) || st == 'Z' || st == 'X';
}

/* Whether sig waits for pid, sent to the process or to its thread. */
static bool sig_pending(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask;
	bool pending = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    (mask & 1ull << (sig - 1)))
			pending = true;
	fclose(f);
	return pending;
}

static struct load_set *start_or_fail(const struct load_spec *specs, size_t n, const char *cmd)
{
	struct load_set *ls = NULL;
	struct lat_error err = { "" };

	int r = load_start(specs, n, cmd, &ls, &err);
	if (r != 0) {
		print_error("load_start: %d %s\n", r, err.msg);
		fail();
	}
	return ls;
}

static void stop_or_fail(struct load_set *ls, struct load_outcome *out)
{
	struct lat_error err = { "" };
	int r = load_stop(ls, out, &err);
	if (r != 0) {
		print_error("load_stop: %d %s\n", r, err.msg);
		fail();
	}
}

static unsigned entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* ---- load_parse and load_format ---- */

static void test_load_parse_reads_a_bare_kind_as_every_online_cpu_at_full_intensity(void **state)
{
	(void)state;
	expect_spec("cpu", "cpu:cpus=0-3,intensity=100%");
	expect_spec("mem", "mem:cpus=0-3,intensity=100%");
	expect_spec("syscall", "syscall:cpus=0-3,intensity=100%");
	expect_spec("sched", "sched:cpus=0-3,intensity=100%");
	expect_spec("io", "io:cpus=0-3,intensity=100%,dir=/var/tmp");
	expect_spec("console", "console:cpus=0-3,intensity=100%");
}

static void test_load_parse_reads_cpus_intensity_dir_and_dev(void **state)
{
	(void)state;
	expect_spec("cpu:cpus=0,intensity=50%", "cpu:cpus=0,intensity=50%");
	expect_spec("cpu:intensity=7", "cpu:cpus=0-3,intensity=7%");
	expect_spec("cpu:cpus=0,2-3", "cpu:cpus=0,2-3,intensity=100%");
	expect_spec("mem:cpus=3,1,intensity=1%", "mem:cpus=1,3,intensity=1%");
	expect_spec("sched:cpus=all", "sched:cpus=0-3,intensity=100%");
	expect_spec("io:cpus=1,dir=/tmp", "io:cpus=1,intensity=100%,dir=/tmp");
	expect_spec("console:dev=/dev/ttyS0", "console:cpus=0-3,intensity=100%,dev=/dev/ttyS0");
	expect_spec("console:intensity=100%,cpus=2", "console:cpus=2,intensity=100%");
}

static void test_load_parse_rejects_an_unknown_kind_naming_the_kinds(void **state)
{
	(void)state;
	expect_spec_error("foo", "unknown load 'foo' (cpu, mem, syscall, sched, io, console)");
	expect_spec_error("CPU", "unknown load 'CPU' (cpu, mem, syscall, sched, io, console)");
	expect_spec_error("cpux:cpus=0", "unknown load 'cpux' (cpu, mem, syscall, sched, io, console)");
	expect_spec_error("", "empty load (cpu, mem, syscall, sched, io, console)");
	expect_spec_error(NULL, "empty load (cpu, mem, syscall, sched, io, console)");
}

static void test_load_parse_rejects_a_key_the_kind_does_not_have(void **state)
{
	(void)state;
	expect_spec_error("cpu:speed=3", "unknown key 'speed' for cpu (cpus, intensity)");
	expect_spec_error("cpu:dir=/tmp", "unknown key 'dir' for cpu (cpus, intensity)");
	expect_spec_error("io:dev=/dev/null", "unknown key 'dev' for io (cpus, intensity, dir)");
	expect_spec_error("console:dir=/tmp", "unknown key 'dir' for console (cpus, intensity, dev)");
	expect_spec_error("cpu:=3", "unknown key '' for cpu (cpus, intensity)");
}

static void test_load_parse_rejects_intensity_outside_1_to_100_percent(void **state)
{
	(void)state;
	expect_spec_error("cpu:intensity=150%", "intensity '150%' is not 1-100%");
	expect_spec_error("cpu:intensity=0%", "intensity '0%' is not 1-100%");
	expect_spec_error("cpu:intensity=101", "intensity '101' is not 1-100%");
	expect_spec_error("cpu:intensity=-5%", "intensity '-5%' is not 1-100%");
	expect_spec_error("cpu:intensity=50%%", "intensity '50%%' is not 1-100%");
	expect_spec_error("cpu:intensity=5x", "intensity '5x' is not 1-100%");
	expect_spec_error("cpu:intensity=%", "intensity '%' is not 1-100%");
}

static void test_load_parse_rejects_cpus_that_are_not_online_naming_them(void **state)
{
	(void)state;
	expect_spec_error("cpu:cpus=9", "cpus '9' are not online");
	expect_spec_error("cpu:cpus=2-6", "cpus '4-6' are not online");
	expect_spec_error("cpu:cpus=0,8,9", "cpus '8-9' are not online");
	expect_spec_error("cpu:cpus=zero", "cpus 'zero' is not a CPU list");
}

static void test_load_parse_rejects_empty_values_and_malformed_options(void **state)
{
	(void)state;
	expect_spec_error("cpu:cpus=", "empty value for 'cpus'");
	expect_spec_error("io:dir=", "empty value for 'dir'");
	expect_spec_error("cpu:intensity=", "empty value for 'intensity'");
	expect_spec_error("cpu:", "no options after 'cpu:'");
	expect_spec_error("cpu:cpus", "'cpus' is not key=value");
	expect_spec_error("cpu:intensity=5,3", "'3' is not key=value");
	expect_spec_error("cpu:cpus=0,cpus=1", "'cpus' is given twice");
}

static void test_load_format_round_trips_through_parse(void **state)
{
	const char *texts[] = {
		"cpu", "cpu:cpus=0,2,intensity=33%", "mem:intensity=1%", "syscall:cpus=1-3", "sched:cpus=0",
		"io:dir=/tmp/x y", "console", "console:dev=/dev/kmsg,cpus=3,intensity=99",
	};
	struct cpuset online = cpus_of("0-3");
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct load_spec a, b;
		struct lat_error err;
		char once[512], twice[512];
		assert_int_equal(load_parse(texts[i], &online, &a, &err), 0);
		size_t len = load_format(&a, once, sizeof(once));
		assert_int_equal(len, strlen(once));
		assert_int_equal(load_parse(once, &online, &b, &err), 0);
		load_format(&b, twice, sizeof(twice));
		assert_string_equal(once, twice);
		assert_memory_equal(&a, &b, sizeof(a));
	}
}

static void test_load_format_into_a_short_buffer_returns_the_needed_length(void **state)
{
	struct load_spec s = spec_on("io:cpus=1,dir=/tmp", "0-3");
	char small[8];
	(void)state;

	size_t want = strlen("io:cpus=1,intensity=100%,dir=/tmp");
	assert_int_equal(load_format(&s, small, sizeof(small)), want);
	assert_true(strlen(small) < sizeof(small));
	assert_int_equal(load_format(&s, NULL, 0), want);
}

/* ---- load_check and the console's devices ---- */

/* A new pty: its master (the caller closes it) and the name of its other side in name. */
static int new_pty(char *name, size_t size)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	assert_int_equal(ptsname_r(master, name, size), 0);
	return master;
}

/* load_check of console:dev=path must give r and, when r < 0, reason. */
static void expect_dev_check(const char *path, int want_r, const char *reason)
{
	struct load_spec s = spec_on("console:cpus=0", "0");
	struct lat_error err = { "" };

	snprintf(s.path, sizeof(s.path), "%s", path);
	int r = load_check(&s, &err);
	if (r != want_r || (r < 0 && strcmp(err.msg, reason) != 0)) {
		print_error("load_check(dev=%s): %d \"%s\", want %d \"%s\"\n", path, r, err.msg, want_r, reason);
		fail();
	}
}

/* A scratch directory with a regular file "file" holding "precious\n" and "link" leading to it. */
static void make_victims(char *dir, char *file, char *link, size_t size)
{
	assert_non_null(mkdtemp(dir));
	snprintf(file, size, "%s/file", dir);
	snprintf(link, size, "%s/link", dir);
	FILE *f = fopen(file, "we");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(symlink(file, link), 0);
}

static void expect_unchanged(const char *file)
{
	char buf[64] = "";
	FILE *f = fopen(file, "re");

	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, "precious\n");
}

static void remove_victims(const char *dir, const char *file, const char *link)
{
	unlink(link);
	unlink(file);
	rmdir(dir);
}

static void test_load_check_accepts_a_terminal_and_dev_kmsg_as_console_dev(void **state)
{
	char pts[128];
	(void)state;

	int master = new_pty(pts, sizeof(pts));
	expect_dev_check(pts, 0, "");
	close(master);
	expect_dev_check("/dev/kmsg", 0, "");
	expect_dev_check("/dev/ptmx", 0, "");
}

static void test_load_check_refuses_a_console_dev_that_is_no_terminal_naming_what_it_is(void **state)
{
	char dir[] = "/tmp/latscope-test-load-dev-XXXXXX", file[128], link[128], want[256];
	(void)state;

	make_victims(dir, file, link, sizeof(file));
	snprintf(want, sizeof(want), "console: dev '%s' is a regular file, not a terminal or /dev/kmsg", file);
	expect_dev_check(file, -ENOTTY, want);
	snprintf(want, sizeof(want), "console: dev '%s' is a regular file, not a terminal or /dev/kmsg", link);
	expect_dev_check(link, -ENOTTY, want);
	snprintf(want, sizeof(want), "console: dev '%s' is a directory, not a terminal or /dev/kmsg", dir);
	expect_dev_check(dir, -ENOTTY, want);
	expect_dev_check("/dev/null", -ENOTTY, "console: dev '/dev/null' is a character device, not a terminal or /dev/kmsg");
	snprintf(link, sizeof(link), "%s/none", dir);
	snprintf(want, sizeof(want), "console: cannot open '%s': No such file or directory", link);
	expect_dev_check(link, -ENOENT, want);
	snprintf(link, sizeof(link), "%s/link", dir);
	expect_dev_check("/nonexist/tty", -ENOENT, "console: cannot open '/nonexist/tty': No such file or directory");
	expect_unchanged(file);
	remove_victims(dir, file, link);
}

/* The place that opens for writing refuses by itself, whatever was checked before. */
static void test_console_dev_open_refuses_what_is_no_terminal_and_leaves_it_unchanged(void **state)
{
	struct lat_error err;
	char dir[] = "/tmp/latscope-test-load-dev-XXXXXX", file[128], link[128];
	(void)state;

	make_victims(dir, file, link, sizeof(file));
	assert_int_equal(console_dev_open(file, &err), -ENOTTY);
	assert_int_equal(console_dev_open(link, &err), -ENOTTY);
	assert_int_equal(console_dev_open(dir, &err), -ENOTTY);
	assert_int_equal(console_dev_open("/dev/null", &err), -ENOTTY);
	assert_string_equal(err.msg, "dev '/dev/null' is a character device, not a terminal or /dev/kmsg");
	expect_unchanged(file);
	remove_victims(dir, file, link);
}

static void test_console_dev_open_gives_a_blocking_writer_on_a_terminal_and_dev_kmsg(void **state)
{
	struct lat_error err = { "" };
	char pts[128], buf[16];
	(void)state;

	int master = new_pty(pts, sizeof(pts));
	int fd = console_dev_open(pts, &err);
	if (fd < 0) {
		print_error("console_dev_open(%s): %s\n", pts, err.msg);
		fail();
	}
	assert_true(isatty(fd));
	assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_WRONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "x\n", 2), 2);
	assert_true(read(master, buf, sizeof(buf)) > 0);
	close(fd);
	close(master);
	if (geteuid() == 0) {      /* /dev/kmsg takes writes from root; nothing is written here */
		fd = console_dev_open("/dev/kmsg", &err);
		assert_true(fd >= 0);
		close(fd);
	}
}

/* ---- load_start and load_stop ---- */

static void test_load_start_and_stop_of_each_generator_on_cpu_0_leave_no_process_behind(void **state)
{
	const char *texts[] = { "cpu:cpus=0", "mem:cpus=0", "syscall:cpus=0", "sched:cpus=0",
				"io:cpus=0,dir=/tmp", "console:cpus=0", "cpu:cpus=0,intensity=30%" };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct load_spec s = spec_on(texts[i], "0");
		struct load_outcome out;
		struct load_set *ls = start_or_fail(&s, 1, NULL);
		pid_t pgid = load_pgid(ls);

		assert_true(pgid > 0);
		assert_int_equal(load_cmd_pgid(ls), 0);
		sleep_ms(100);
		assert_int_equal(kill(-pgid, 0), 0);
		stop_or_fail(ls, &out);
		if (!group_gone(pgid)) {
			print_error("%s: process group %d outlived load_stop\n", texts[i], (int)pgid);
			fail();
		}
		assert_false(out.cmd_ran);
		assert_int_equal(out.workers_lost, 0);
	}
}

static void test_load_start_runs_several_generators_at_once(void **state)
{
	struct load_spec specs[] = { spec_on("cpu:cpus=0,intensity=20%", "0"), spec_on("syscall:cpus=0", "0"),
				     spec_on("sched:cpus=0,intensity=50%", "0") };
	(void)state;

	struct load_set *ls = start_or_fail(specs, ARRAY_SIZE(specs), NULL);
	pid_t pgid = load_pgid(ls);
	sleep_ms(50);
	stop_or_fail(ls, NULL);
	assert_true(group_gone(pgid));
}

static void expect_start_error(const char *text, int want_r, const char *reason)
{
	struct load_spec s = spec_on(text, "0");
	struct load_set *ls = NULL;
	struct lat_error err = { "" };

	assert_int_equal(load_start(&s, 1, NULL, &ls, &err), want_r);
	assert_string_equal(err.msg, reason);
	assert_null(ls);
}

static void test_load_start_names_the_generator_when_io_cannot_create_its_scratch_file(void **state)
{
	(void)state;
	expect_start_error("io:cpus=0,dir=/nonexist", -ENOENT,
			   "io: cannot create a scratch file in '/nonexist': No such file or directory");
}

static void test_load_start_names_the_generator_when_the_console_device_cannot_be_opened(void **state)
{
	(void)state;
	expect_start_error("console:cpus=0,dev=/nonexist/tty", -ENOENT,
			   "console: cannot open '/nonexist/tty': No such file or directory");
}

static void test_load_start_refuses_a_console_dev_that_is_a_regular_file_and_leaves_it_unchanged(void **state)
{
	char path[] = "/tmp/latscope-test-load-file-XXXXXX", text[128], buf[64] = "";
	const char precious[] = "precious\n";
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, precious, strlen(precious)), (ssize_t)strlen(precious));
	close(fd);
	snprintf(text, sizeof(text), "console:cpus=0,dev=%s", path);
	struct load_spec s = spec_on(text, "0");
	struct load_set *ls = NULL;
	struct lat_error err = { "" };
	int r = load_start(&s, 1, NULL, &ls, &err);
	if (r == 0)
		load_stop(ls, NULL, NULL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(path);
	assert_int_equal(r, -ENOTTY);
	assert_null(ls);
	assert_int_equal(n, (ssize_t)strlen(precious));
	assert_string_equal(buf, precious);
}

static void test_load_io_leaves_no_scratch_file_in_its_dir(void **state)
{
	char dir[] = "/tmp/latscope-test-load-XXXXXX", text[128];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(text, sizeof(text), "io:cpus=0,dir=%s", dir);
	struct load_spec s = spec_on(text, "0");
	struct load_set *ls = start_or_fail(&s, 1, NULL);
	sleep_ms(50);
	assert_int_equal(entries_in(dir), 0);
	stop_or_fail(ls, NULL);
	assert_int_equal(entries_in(dir), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_load_console_writes_lines_to_the_given_terminal(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	char text[128], buf[4096];
	(void)state;

	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	snprintf(text, sizeof(text), "console:cpus=0,intensity=10%%,dev=%s", ptsname(master));
	struct load_spec s = spec_on(text, "0");
	struct load_set *ls = start_or_fail(&s, 1, NULL);
	ssize_t n = read(master, buf, sizeof(buf) - 1);
	stop_or_fail(ls, NULL);
	close(master);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "latscope console load"));
}

static void test_load_stop_ends_a_command_and_its_background_children(void **state)
{
	struct load_outcome out;
	(void)state;

	struct load_set *ls = start_or_fail(NULL, 0, "sleep 30 & sleep 30");
	pid_t pgid = load_pgid(ls), cmd = load_cmd_pgid(ls);
	assert_true(cmd > 0);
	sleep_ms(100);
	assert_int_equal(kill(-cmd, 0), 0);
	stop_or_fail(ls, &out);
	assert_true(group_gone(cmd));
	assert_true(group_gone(pgid));
	assert_true(out.cmd_ran);
	assert_false(out.cmd_ended_early);
	assert_true(WIFSIGNALED(out.cmd_status));
}

/* The pid a command wrote into pidfile, waiting up to STATE_TIMEOUT_NS for it. */
static long pid_from(const char *pidfile)
{
	uint64_t deadline = mono_ns() + STATE_TIMEOUT_NS;
	long pid = 0;

	while (!pid && mono_ns() < deadline) {
		sleep_ms(10);
		FILE *f = fopen(pidfile, "r");
		if (f && fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
	}
	return pid;
}

/* Start the command before FILE after, which writes a pid into FILE; that pid in ret_pid. */
static struct load_set *start_cmd_telling_a_pid(const char *before, const char *after, pid_t *ret_pid)
{
	char pidfile[] = "/tmp/latscope-test-load-pid-XXXXXX", cmd[256];

	int fd = mkstemp(pidfile);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s%s%s", before, pidfile, after);
	struct load_set *ls = start_or_fail(NULL, 0, cmd);
	*ret_pid = (pid_t)pid_from(pidfile);
	unlink(pidfile);
	assert_true(*ret_pid > 0);
	return ls;
}

static void test_load_holds_the_leader_of_a_command_that_ended_early_until_its_group_is_stopped(void **state)
{
	struct load_outcome out;
	long ppid = 0;
	pid_t child;
	char st = '?';
	(void)state;

	struct load_set *ls = start_cmd_telling_a_pid("sleep 30 & echo $! > ", "; exit 4", &child);
	pid_t leader = load_cmd_pgid(ls);
	/* Reaped, the leader's pid, and so its group's id, could go to a new process
	 * group, which the stop would then signal: it must stay a zombie of the supervisor. */
	uint64_t deadline = mono_ns() + STATE_TIMEOUT_NS;
	while (proc_state(leader, &st, &ppid) && st != 'Z' && mono_ns() < deadline)
		sleep_ms(10);
	if (!proc_state(leader, &st, &ppid) || st != 'Z' || ppid != load_pgid(ls)) {
		print_error("the ended leader %d is %c with parent %ld, want a zombie of %d\n", (int)leader, st, ppid,
			    (int)load_pgid(ls));
		stop_or_fail(ls, NULL);
		fail();
	}
	assert_false(ended(child));
	stop_or_fail(ls, &out);
	assert_true(ended(child));
	assert_true(group_gone(leader));
	assert_true(out.cmd_ended_early);
	assert_true(WIFEXITED(out.cmd_status));
	assert_int_equal(WEXITSTATUS(out.cmd_status), 4);
}

static void test_load_stop_ends_orphans_that_left_the_command_group(void **state)
{
	pid_t orphan;
	(void)state;

	/* setsid: the sleep leaves the group and its parent shell exits, so only the subreaper knows it. */
	struct load_set *ls = start_cmd_telling_a_pid("setsid sh -c 'echo $$ > ", "; exec sleep 30' & sleep 30",
							    &orphan);
	stop_or_fail(ls, NULL);
	assert_int_equal(kill(orphan, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static void test_load_stop_ends_the_command_s_children_when_the_supervisor_hangs(void **state)
{
	struct lat_error err = { "" };
	pid_t grandchild;
	(void)state;

	/* The orphans of a killed supervisor come to us, so that we can see them end and reap them. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	struct load_set *ls = start_cmd_telling_a_pid("sleep 1000 & echo $! > ", "; wait", &grandchild);
	/* A supervisor that answers nothing any more: load_stop has to end the load itself. */
	assert_int_equal(kill(load_pgid(ls), SIGSTOP), 0);
	assert_int_not_equal(load_stop(ls, NULL, &err), 0);
	uint64_t deadline = mono_ns() + STATE_TIMEOUT_NS;
	while (!ended(grandchild) && mono_ns() < deadline)
		sleep_ms(10);
	bool gone = ended(grandchild);
	if (!gone)
		kill(grandchild, SIGKILL);      /* ours since the supervisor died: its pid is still held */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	if (!gone) {
		print_error("the command's child %d outlived a hung supervisor\n", (int)grandchild);
		fail();
	}
}

/*
 * Whether the supervisor sup has taken in the end of the command's leader: it notes
 * the time when it reads the leader's SIGCHLD, not when the leader exits.  In this
 * order: the leader has ended (so the signal has been sent), the signal no longer
 * waits (so it has been read), and the supervisor sleeps again (so it is done with it).
 */
static bool leader_end_noted(pid_t leader, pid_t sup)
{
	char st;
	long ppid;

	return ended(leader) && !sig_pending(sup, SIGCHLD) && proc_state(sup, &st, &ppid) &&
	       st == 'S';
}

static void test_load_stop_reports_a_command_that_ended_early_with_its_status(void **state)
{
	struct load_outcome out;
	bool noted;
	(void)state;

	uint64_t before = mono_ns();
	struct load_set *ls = start_or_fail(NULL, 0, "exit 3");
	pid_t leader = load_cmd_pgid(ls);
	uint64_t deadline = mono_ns() + STATE_TIMEOUT_NS;
	while (!(noted = leader_end_noted(leader, load_pgid(ls))) && mono_ns() < deadline)
		sleep_ms(10);
	uint64_t after = mono_ns();
	if (!noted) {
		print_error("after %llu s, the command's leader %d has not ended or the supervisor "
			    "has not noted it\n",
			    (unsigned long long)(STATE_TIMEOUT_NS / NS_PER_SEC), (int)leader);
		stop_or_fail(ls, NULL);
		fail();
	}
	stop_or_fail(ls, &out);
	assert_true(out.cmd_ran);
	assert_true(out.cmd_ended_early);
	assert_true(WIFEXITED(out.cmd_status));
	assert_int_equal(WEXITSTATUS(out.cmd_status), 3);
	assert_true(out.cmd_ended_ns > before && out.cmd_ended_ns < after);
}

static void test_load_ends_when_the_process_that_started_it_is_killed(void **state)
{
	int p[2];
	pid_t ids[2] = { 0, 0 };
	(void)state;

	/* The orphaned supervisor comes to us, so that we can reap it: init may not. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(pipe(p), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct cpuset online = cpus_of("0");
		struct load_spec s;
		struct load_set *ls;
		struct lat_error err;
		close(p[0]);
		if (load_parse("cpu:cpus=0,intensity=10%", &online, &s, &err) == 0 &&
		    load_start(&s, 1, "sleep 60", &ls, &err) == 0) {
			ids[0] = load_pgid(ls);
			ids[1] = load_cmd_pgid(ls);
		}
		if (write(p[1], ids, sizeof(ids)) != (ssize_t)sizeof(ids))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], ids, sizeof(ids)), (ssize_t)sizeof(ids));
	close(p[0]);
	assert_true(ids[0] > 0 && ids[1] > 0);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, NULL, 0), child);

	uint64_t deadline = mono_ns() + STATE_TIMEOUT_NS;
	while (!(group_gone(ids[0]) && group_gone(ids[1])) && mono_ns() < deadline) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sleep_ms(10);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	assert_true(group_gone(ids[0]));
	assert_true(group_gone(ids[1]));
}

/* The one process of group pgid but its leader: the worker of a load of one spec on one CPU. */
static pid_t worker_of(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t worker = 0;
	unsigned n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == pgid || getpgid((pid_t)pid) != pgid)
			continue;
		worker = (pid_t)pid;
		n++;
	}
	closedir(d);
	if (n != 1) {
		print_error("group %d has %u processes but its leader, want 1\n", (int)pgid, n);
		fail();
	}
	return worker;
}

/* What a process has done: its CPU time and how often it went to sleep. */
struct work {
	unsigned long long cpu_ns;      /* /proc/PID/schedstat */
	unsigned long long sleeps;      /* voluntary context switches, /proc/PID/status */
};

static struct work work_of(pid_t pid)
{
	char path[64], line[256];
	struct work w = { .sleeps = ~0ull };

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	FILE *f = fopen(path, "re");
	int got = f ? fscanf(f, "%llu", &w.cpu_ns) : 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "voluntary_ctxt_switches: %llu", &w.sleeps);
	if (f)
		fclose(f);
	if (got != 1 || w.sleeps == ~0ull) {
		print_error("cannot read the schedstat or the context switches of %d\n", (int)pid);
		fail();
	}
	return w;
}

/* CPU time per period from a to b: n sleeps end at most n + 1 periods. */
static uint64_t cpu_ns_per_period(struct work a, struct work b)
{
	return (b.cpu_ns - a.cpu_ns) / (b.sleeps - a.sleeps + 1);
}

/*
 * Intensity is the share of every 10 ms period that a cpu worker works, by the
 * clock, before it sleeps the rest.  Its CPU time in all depends on what else runs
 * on its CPU (a CPU shared by five gives a 100% worker a fifth), so judged is its
 * CPU time per period, between two sleeps, which contention cannot raise: at 20%
 * at most the 2 ms it works by the clock, however late it gets the CPU, for it gets
 * no more CPU time than time passes (3 ms: schedstat lags a running process by up
 * to a tick); at 100% it never sleeps, so whatever share it gets is far more than
 * a period's.  Both run at once on CPU 0.
 */
static void test_load_cpu_time_per_period_grows_with_intensity(void **state)
{
	(void)state;
	struct load_spec full_spec = spec_on("cpu:cpus=0,intensity=100%", "0");
	struct load_spec fifth_spec = spec_on("cpu:cpus=0,intensity=20%", "0");
	struct load_set *full_ls = start_or_fail(&full_spec, 1, NULL);
	struct load_set *fifth_ls = start_or_fail(&fifth_spec, 1, NULL);
	pid_t full = worker_of(load_pgid(full_ls)), fifth = worker_of(load_pgid(fifth_ls));

	struct work full0 = work_of(full), fifth0 = work_of(fifth);
	sleep_ms(500);
	struct work full1 = work_of(full), fifth1 = work_of(fifth);
	stop_or_fail(fifth_ls, NULL);
	stop_or_fail(full_ls, NULL);
	uint64_t full_ns = cpu_ns_per_period(full0, full1);
	uint64_t fifth_ns = cpu_ns_per_period(fifth0, fifth1);
	if (full_ns < 10 * NS_PER_MS || fifth_ns > 3 * NS_PER_MS) {
		print_error("cpu time per period at 100%%: %llu ns (%llu sleeps), "
			    "at 20%%: %llu ns (%llu sleeps); want >= 10 ms and <= 3 ms\n",
			    (unsigned long long)full_ns, full1.sleeps - full0.sleeps,
			    (unsigned long long)fifth_ns, fifth1.sleeps - fifth0.sleeps);
		fail();
	}
}

static void test_load_stop_of_null_is_a_no_op(void **state)
{
	(void)state;
	assert_int_equal(load_stop(NULL, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_parse_reads_a_bare_kind_as_every_online_cpu_at_full_intensity),
		cmocka_unit_test(test_load_parse_reads_cpus_intensity_dir_and_dev),
		cmocka_unit_test(test_load_parse_rejects_an_unknown_kind_naming_the_kinds),
		cmocka_unit_test(test_load_parse_rejects_a_key_the_kind_does_not_have),
		cmocka_unit_test(test_load_parse_rejects_intensity_outside_1_to_100_percent),
		cmocka_unit_test(test_load_parse_rejects_cpus_that_are_not_online_naming_them),
		cmocka_unit_test(test_load_parse_rejects_empty_values_and_malformed_options),
		cmocka_unit_test(test_load_format_round_trips_through_parse),
		cmocka_unit_test(test_load_format_into_a_short_buffer_returns_the_needed_length),
		cmocka_unit_test(test_load_check_accepts_a_terminal_and_dev_kmsg_as_console_dev),
		cmocka_unit_test(test_load_check_refuses_a_console_dev_that_is_no_terminal_naming_what_it_is),
		cmocka_unit_test(test_console_dev_open_refuses_what_is_no_terminal_and_leaves_it_unchanged),
		cmocka_unit_test(test_console_dev_open_gives_a_blocking_writer_on_a_terminal_and_dev_kmsg),
		cmocka_unit_test(test_load_start_and_stop_of_each_generator_on_cpu_0_leave_no_process_behind),
		cmocka_unit_test(test_load_start_runs_several_generators_at_once),
		cmocka_unit_test(test_load_start_names_the_generator_when_io_cannot_create_its_scratch_file),
		cmocka_unit_test(test_load_start_names_the_generator_when_the_console_device_cannot_be_opened),
		cmocka_unit_test(test_load_start_refuses_a_console_dev_that_is_a_regular_file_and_leaves_it_unchanged),
		cmocka_unit_test(test_load_io_leaves_no_scratch_file_in_its_dir),
		cmocka_unit_test(test_load_console_writes_lines_to_the_given_terminal),
		cmocka_unit_test(test_load_stop_ends_a_command_and_its_background_children),
		cmocka_unit_test(test_load_holds_the_leader_of_a_command_that_ended_early_until_its_group_is_stopped),
		cmocka_unit_test(test_load_stop_ends_orphans_that_left_the_command_group),
		cmocka_unit_test(test_load_stop_ends_the_command_s_children_when_the_supervisor_hangs),
		cmocka_unit_test(test_load_stop_reports_a_command_that_ended_early_with_its_status),
		cmocka_unit_test(test_load_ends_when_the_process_that_started_it_is_killed),
		cmocka_unit_test(test_load_cpu_time_per_period_grows_with_intensity),
		cmocka_unit_test(test_load_stop_of_null_is_a_no_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
