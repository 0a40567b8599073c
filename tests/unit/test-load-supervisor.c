/*
 * Unit tests for the machinery under a load (src/load/): what load_check refuses,
 * how a worker that cannot start or dies is reported by the supervisor, the records
 * on its pipes, the walk over a process's children, and what a forked child undoes.
 * The load's own running and stopping are test-load.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/nstime.h"
#include "load/child.h"
#include "load/children.h"
#include "load/console_dev.h"
#include "load/duty.h"
#include "load/load.h"
#include "load/msg.h"
#include "sys/cpus.h"

#include "gcovflush.h"
#include "skipwhy.h"

/* ---- helpers ---- */

static struct load_spec spec_on(const char *text, const char *online_list)
{
	struct cpuset online;
	struct load_spec s;
	struct lat_error err = { "" };

	assert_int_equal(cpuset_parse(online_list, &online), 0);
	if (load_parse(text, &online, &s, &err) != 0) {
		print_error("load_parse(\"%s\"): %s\n", text, err.msg);
		fail();
	}
	return s;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool group_gone(pid_t pgid)
{
	return kill(-pgid, 0) == -1 && errno == ESRCH;
}

/* The first pid in /proc/PID/task/PID/children, or 0 (read by the test itself, not by children.c). */
static pid_t first_child_of(pid_t pid)
{
	char path[64];
	long child = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &child) != 1)
		child = 0;
	fclose(f);
	return (pid_t)child;
}

/* load_start must fail with want_r and exactly reason, leaving nothing behind. */
static void expect_start_error(const struct load_spec *s, int want_r, const char *reason)
{
	struct load_set *ls = NULL;
	struct lat_error err = { "" };

	int r = load_start(s, 1, NULL, &ls, &err);
	if (r != want_r || strcmp(err.msg, reason) != 0) {
		print_error("load_start: %d \"%s\", want %d \"%s\"\n", r, err.msg, want_r, reason);
		if (r == 0)
			load_stop(ls, NULL, NULL);
		fail();
	}
	assert_null(ls);
}

/* ---- load_check and load_start refuse what is not a load ---- */

static void expect_check_error(const struct load_spec *s, int want_r, const char *reason)
{
	struct lat_error err = { "" };
	struct load_set *ls = NULL;

	assert_int_equal(load_check(s, &err), want_r);
	assert_string_equal(err.msg, reason);
	/* load_start checks again before it forks anything */
	memset(&err, 0, sizeof(err));
	assert_int_equal(load_start(s, 1, NULL, &ls, &err), want_r);
	assert_string_equal(err.msg, reason);
	assert_null(ls);
}

static void test_load_check_refuses_an_unknown_kind_an_empty_cpu_set_and_an_intensity_outside_1_to_100(void **state)
{
	(void)state;
	struct load_spec s = spec_on("cpu:cpus=0", "0");

	s.kind = (enum load_kind)42;
	expect_check_error(&s, -EINVAL, "load: unknown kind 42");
	s = spec_on("mem:cpus=0", "0");
	cpuset_clear(&s.cpus);
	expect_check_error(&s, -EINVAL, "mem: no cpus");
	s = spec_on("syscall:cpus=0", "0");
	s.intensity_pct = 0;
	expect_check_error(&s, -EINVAL, "syscall: intensity 0% is not 1-100%");
	s.intensity_pct = 101;
	expect_check_error(&s, -EINVAL, "syscall: intensity 101% is not 1-100%");
	s.intensity_pct = 1;
	assert_int_equal(load_check(&s, NULL), 0);
}

static void test_load_start_refuses_a_count_of_specs_without_the_specs(void **state)
{
	(void)state;
	struct load_set *ls = NULL;
	struct lat_error err = { "" };

	assert_int_equal(load_start(NULL, 2, NULL, &ls, &err), -EINVAL);
	assert_string_equal(err.msg, "load: no specs");
	assert_null(ls);
}

static void test_load_check_names_a_fifo_and_a_socket_as_no_console(void **state)
{
	(void)state;
	char dir[] = "/tmp/latscope-test-loadsup-XXXXXX", fifo[128], sock[128], want[320];
	struct lat_error err = { "" };
	struct load_spec s = spec_on("console:cpus=0", "0");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(sfd >= 0);
	assert_true(strlen(sock) < sizeof(addr.sun_path));
	memcpy(addr.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(bind(sfd, (struct sockaddr *)&addr, sizeof(addr)), 0);

	snprintf(s.path, sizeof(s.path), "%s", fifo);
	snprintf(want, sizeof(want), "console: dev '%s' is a fifo, not a terminal or /dev/kmsg", fifo);
	assert_int_equal(load_check(&s, &err), -ENOTTY);
	assert_string_equal(err.msg, want);
	/* the opening side refuses too, and a fifo without a reader does not hold it */
	assert_int_equal(console_dev_open(fifo, &err), -ENOTTY);

	snprintf(s.path, sizeof(s.path), "%s", sock);
	snprintf(want, sizeof(want), "console: dev '%s' is a socket, not a terminal or /dev/kmsg", sock);
	assert_int_equal(load_check(&s, &err), -ENOTTY);
	assert_string_equal(err.msg, want);

	close(sfd);
	unlink(sock);
	unlink(fifo);
	assert_int_equal(rmdir(dir), 0);
}

/* ---- a worker that cannot start, or dies ---- */

/* The highest CPU this kernel could ever have, from /sys/devices/system/cpu/possible; -1 unknown. */
static int last_possible_cpu(void)
{
	char line[4096];
	struct cpuset possible;
	int last = -1;

	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	if (!f)
		return -1;
	char *got = fgets(line, sizeof(line), f);
	fclose(f);
	if (!got)
		return -1;
	line[strcspn(line, "\n")] = '\0';
	if (cpuset_parse(line, &possible) < 0)
		return -1;
	cpuset_foreach(cpu, &possible)
		last = cpu;
	return last;
}

static void test_load_start_names_the_cpu_a_worker_cannot_be_pinned_to(void **state)
{
	(void)state;
	char want[256];
	int last = last_possible_cpu();

	if (last < 0)
		skip_because("this machine has no readable /sys/devices/system/cpu/possible");
	if ((unsigned)last + 1u >= CPUSET_MAX)
		skip_because("this machine may have every CPU latscope can name: none is left to fail");
	unsigned cpu = (unsigned)last + 1u;
	struct load_spec s = spec_on("cpu:cpus=0", "0");
	cpuset_clear(&s.cpus);
	cpuset_add(&s.cpus, cpu);
	/* The worker says why before it exits; the supervisor passes its words on whichever it sees first. */
	snprintf(want, sizeof(want), "cpu: cannot pin a worker to CPU %u: Invalid argument", cpu);
	expect_start_error(&s, -EINVAL, want);
}

static void test_load_start_names_the_generator_whose_worker_cannot_set_up(void **state)
{
	(void)state;
	int p[2];
	char reason[512] = "";

	/* A worker holds 0-2 and its report pipe: the sched ring's 8 pipes do not fit under a
	 * limit of 13, which leaves it one descriptor for nothing but its exit.  In a child of
	 * our own, so that the limit stays there. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct load_spec s = spec_on("sched:cpus=0", "0");
		struct rlimit lim = { .rlim_cur = 13, .rlim_max = 13 };
		struct lat_error err = { "" };
		struct load_set *ls = NULL;
		int keep[] = { p[1] };
		child_close_fds(keep, 1);
		for (int fd = 0; fd < 3; fd++)          /* 0-2 open, as the count above has them */
			if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
				_exit(3);
		if (p[1] >= 13)
			_exit(3);
		if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
			_exit(2);
		int r = load_start(&s, 1, NULL, &ls, &err);
		if (r == 0)
			load_stop(ls, NULL, NULL);
		if (write(p[1], err.msg, strlen(err.msg)) < 0)
			_exit(2);
		_exit(r == -EMFILE ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = read(p[0], reason, sizeof(reason) - 1);
	close(p[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	reason[n > 0 ? n : 0] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    strcmp(reason, "sched: cannot create a pipe: Too many open files") != 0) {
		print_error("status %#x, reason \"%s\"\n", (unsigned)status, reason);
		fail();
	}
}

static void test_load_stop_counts_a_worker_killed_while_the_load_ran_as_lost(void **state)
{
	(void)state;
	struct load_spec s = spec_on("cpu:cpus=0,intensity=10%", "0");
	struct load_set *ls = NULL;
	struct lat_error err = { "" };
	struct load_outcome out;

	assert_int_equal(load_start(&s, 1, NULL, &ls, &err), 0);
	pid_t pgid = load_pgid(ls), worker = first_child_of(pgid);
	assert_true(worker > 0);
	assert_int_equal(kill(worker, SIGKILL), 0);
	/* Gone from /proc once the supervisor has reaped it, and so noted it (a state, not a time). */
	uint64_t deadline = mono_ns() + 5 * NS_PER_SEC;
	while (kill(worker, 0) == 0 && mono_ns() < deadline)
		sleep_ms(5);
	bool reaped = kill(worker, 0) < 0;
	assert_int_equal(load_stop(ls, &out, &err), 0);
	assert_true(reaped);
	assert_int_equal(out.workers_lost, 1);
	assert_false(out.cmd_ran);
	assert_true(group_gone(pgid));
}

/* ---- the records on the pipes ---- */

static void test_msg_records_cross_a_pipe_whole_even_in_pieces(void **state)
{
	(void)state;
	int p[2];
	struct load_msg m = { .type = MSG_OUTCOME, .outcome = { .cmd_ran = true, .workers_lost = 7 } }, got;

	assert_int_equal(pipe(p), 0);
	snprintf(m.why.msg, sizeof(m.why.msg), "unused");
	assert_int_equal(msg_send(p[1], &m), 0);
	assert_int_equal(msg_recv(p[0], 1000, &got), 0);
	assert_int_equal(got.type, MSG_OUTCOME);
	assert_true(got.outcome.cmd_ran);
	assert_int_equal(got.outcome.workers_lost, 7);

	/* a record written in two halves is read as one */
	const char *bytes = (const char *)&m;
	assert_int_equal(write(p[1], bytes, sizeof(m) / 2), (ssize_t)(sizeof(m) / 2));
	assert_int_equal(write(p[1], bytes + sizeof(m) / 2, sizeof(m) - sizeof(m) / 2),
			 (ssize_t)(sizeof(m) - sizeof(m) / 2));
	memset(&got, 0, sizeof(got));
	assert_int_equal(msg_recv(p[0], -1, &got), 0);
	assert_memory_equal(&got, &m, sizeof(m));

	/* half a record and then the end: no record */
	assert_int_equal(write(p[1], bytes, 10), 10);
	close(p[1]);
	assert_int_equal(msg_recv(p[0], 1000, &got), -EPIPE);
	close(p[0]);
}

static void test_msg_send_error_carries_the_errno_and_the_reason_and_returns_the_error(void **state)
{
	(void)state;
	int p[2];
	struct load_msg got;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(msg_send_error(p[1], ENOSPC, "io: no room in '%s'", "/x"), -ENOSPC);
	assert_int_equal(msg_recv(p[0], 1000, &got), 0);
	assert_int_equal(got.type, MSG_ERROR);
	assert_int_equal(got.error, ENOSPC);
	assert_string_equal(got.why.msg, "io: no room in '/x'");
	close(p[0]);
	close(p[1]);
}

static void test_msg_recv_times_out_on_silence_and_says_epipe_when_every_writer_is_gone(void **state)
{
	(void)state;
	int p[2];
	struct load_msg got;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(msg_recv(p[0], 0, &got), -ETIMEDOUT);
	assert_int_equal(msg_recv(p[0], 20, &got), -ETIMEDOUT);
	close(p[1]);
	assert_int_equal(msg_recv(p[0], -1, &got), -EPIPE);
	close(p[0]);
	/* a descriptor that is not open: the error, not a wait */
	assert_int_equal(msg_recv(p[0], -1, &got), -EBADF);
}

static void test_msg_send_to_a_pipe_nobody_reads_is_epipe(void **state)
{
	(void)state;
	int p[2];
	struct load_msg m = { .type = MSG_READY };
	void (*was)(int) = signal(SIGPIPE, SIG_IGN);

	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(msg_send(p[1], &m), -EPIPE);
	close(p[1]);
	assert_int_equal(msg_send(p[1], &m), -EBADF);
	signal(SIGPIPE, was);
}

/* ---- children_each and children_signal ---- */

struct seen {
	pid_t pid[8];
	bool zombie[8];
	unsigned n;
	int stop_at;            /* return -ECANCELED at this call (1-based); 0 never */
};

static int note_child(pid_t pid, bool zombie, void *ctx)
{
	struct seen *s = ctx;
	if (s->n < ARRAY_SIZE(s->pid)) {
		s->pid[s->n] = pid;
		s->zombie[s->n] = zombie;
	}
	s->n++;
	return s->stop_at && (int)s->n == s->stop_at ? -ECANCELED : 0;
}

static int index_of(const struct seen *s, pid_t pid)
{
	for (unsigned i = 0; i < s->n && i < ARRAY_SIZE(s->pid); i++)
		if (s->pid[i] == pid)
			return (int)i;
	return -1;
}

/* A child in pause() and one that has exited, unreaped. */
static void two_children(pid_t *live, pid_t *dead)
{
	*live = fork();
	assert_true(*live >= 0);
	if (*live == 0) {
		for (;;)
			pause();
	}
	*dead = fork();
	assert_true(*dead >= 0);
	if (*dead == 0)
		_exit(0);
	/* its zombie state, waited for without reaping it */
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)*dead, &si, WEXITED | WNOWAIT), 0);
}

static void test_children_each_names_each_child_and_which_has_ended(void **state)
{
	(void)state;
	pid_t live, dead;
	struct seen s = { .n = 0 };

	two_children(&live, &dead);
	int n = children_each(0, note_child, &s);
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	waitpid(dead, NULL, 0);
	assert_int_equal(n, 2);
	assert_int_equal((int)s.n, 2);
	int li = index_of(&s, live), di = index_of(&s, dead);
	assert_true(li >= 0 && di >= 0);
	assert_false(s.zombie[li]);
	assert_true(s.zombie[di]);
}

static void test_children_each_stops_at_the_first_refusal_and_returns_it(void **state)
{
	(void)state;
	pid_t live, dead;
	struct seen s = { .stop_at = 1 };

	two_children(&live, &dead);
	int n = children_each(getpid(), note_child, &s);
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	waitpid(dead, NULL, 0);
	assert_int_equal(n, -ECANCELED);
	assert_int_equal((int)s.n, 1);
}

static void test_children_each_of_a_process_that_is_gone_finds_none(void **state)
{
	(void)state;
	struct seen s = { .n = 0 };
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* no list of its own: the scan of /proc finds no process it is the parent of */
	assert_int_equal(children_each(pid, note_child, &s), 0);
	assert_int_equal((int)s.n, 0);
}

static void test_children_signal_reaches_every_child_and_counts_them(void **state)
{
	(void)state;
	pid_t live, dead;
	int status;

	two_children(&live, &dead);
	assert_int_equal(children_signal(SIGTERM), 2);
	assert_int_equal(waitpid(live, &status, 0), live);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
	assert_int_equal(waitpid(dead, &status, 0), dead);
	assert_true(WIFEXITED(status));
	assert_int_equal(children_signal(SIGTERM), 0);
}

/* ---- what a forked child undoes ---- */

static void test_child_die_with_a_process_that_is_not_the_parent_is_esrch(void **state)
{
	(void)state;
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		/* the death signal is set, but the process named is not our parent: refused */
		int r = child_die_with(getpid(), SIGKILL);
		int ok = r == -ESRCH && child_die_with(getppid(), SIGKILL) == 0;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_child_fork_gives_default_signals_an_empty_mask_and_death_with_the_parent(void **state)
{
	(void)state;
	int p[2], status;
	sigset_t block, was;
	void (*old)(int) = signal(SIGUSR1, SIG_IGN);

	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_BLOCK, &block, &was), 0);
	assert_int_equal(pipe(p), 0);
	pid_t pid = child_fork(SIGKILL);
	if (pid == 0) {
		struct sigaction sa;
		sigset_t now;
		int deathsig = 0;
		sigaction(SIGUSR1, NULL, &sa);
		sigprocmask(SIG_SETMASK, NULL, &now);
		prctl(PR_GET_PDEATHSIG, &deathsig, 0, 0, 0);
		char ok = sa.sa_handler == SIG_DFL && !sigismember(&now, SIGUSR2) && deathsig == SIGKILL;
		if (write(p[1], &ok, 1) != 1)
			_exit(2);
		_exit(0);
	}
	sigprocmask(SIG_SETMASK, &was, NULL);
	signal(SIGUSR1, old);
	assert_true(pid > 0);
	char ok = 0;
	assert_int_equal(read(p[0], &ok, 1), 1);
	close(p[0]);
	close(p[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(ok);
}

static void test_child_close_fds_keeps_only_the_listed_descriptors(void **state)
{
	(void)state;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[6];
		bool std_open[3];
		for (int i = 0; i < 3; i++)
			std_open[i] = fcntl(i, F_GETFD) >= 0;
		for (int i = 0; i < 6; i++)
			if ((fds[i] = open("/dev/null", O_RDONLY)) < 0)
				_exit(2);
		int keep[] = { fds[4], fds[1], -1, 1 };     /* in any order; -1 and 0-2 change nothing */
		child_close_fds(keep, ARRAY_SIZE(keep));
		int bad = 0;
		for (int i = 0; i < 6; i++) {
			bool open_now = fcntl(fds[i], F_GETFD) >= 0;
			bad |= open_now != (i == 1 || i == 4);
		}
		for (int i = 0; i < 3; i++)
			bad |= (fcntl(i, F_GETFD) >= 0) != std_open[i];
		_exit(bad ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_child_unmeasure_drops_the_rt_policy_and_the_1_ns_timer_slack(void **state)
{
	(void)state;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 10 };
		/* as root it also has SCHED_FIFO to drop; without, the policy was never RT */
		(void)sched_setscheduler(0, SCHED_FIFO, &sp);
		if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) < 0)
			_exit(2);
		child_unmeasure();
		int bad = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) != 50000;
		bad |= sched_getscheduler(0) != SCHED_OTHER;
		_exit(bad ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the duty cycle ---- */

static void test_duty_pace_at_full_intensity_never_rests(void **state)
{
	(void)state;
	struct duty d;

	duty_init(&d, 100);
	uint64_t start = d.period_start;
	assert_int_equal(d.busy_ns, DUTY_PERIOD_NS);
	duty_pace(&d);
	assert_int_equal(d.period_start, start);
	duty_init(&d, 250);             /* above 100 is full */
	assert_int_equal(d.busy_ns, DUTY_PERIOD_NS);
}

static void test_duty_pace_rests_the_idle_share_once_the_busy_share_is_spent(void **state)
{
	(void)state;
	struct duty d;

	duty_init(&d, 10);
	assert_int_equal(d.busy_ns, DUTY_PERIOD_NS / 10);
	/* spend the 1 ms busy share */
	while (mono_ns() - d.period_start < d.busy_ns)
		;
	uint64_t before = mono_ns();
	duty_pace(&d);
	uint64_t after = mono_ns();
	/* The next period starts 9 ms after the call began, at the latest when it returned:
	 * relations a stall cannot turn (a late wakeup only moves "after"). */
	assert_true(d.period_start >= before + DUTY_PERIOD_NS * 9 / 10);
	assert_true(d.period_start <= after);
	/* within the busy share again: no rest */
	uint64_t start = d.period_start;
	duty_pace(&d);
	if (mono_ns() - start < d.busy_ns)
		assert_int_equal(d.period_start, start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_check_refuses_an_unknown_kind_an_empty_cpu_set_and_an_intensity_outside_1_to_100),
		cmocka_unit_test(test_load_start_refuses_a_count_of_specs_without_the_specs),
		cmocka_unit_test(test_load_check_names_a_fifo_and_a_socket_as_no_console),
		cmocka_unit_test(test_load_start_names_the_cpu_a_worker_cannot_be_pinned_to),
		cmocka_unit_test(test_load_start_names_the_generator_whose_worker_cannot_set_up),
		cmocka_unit_test(test_load_stop_counts_a_worker_killed_while_the_load_ran_as_lost),
		cmocka_unit_test(test_msg_records_cross_a_pipe_whole_even_in_pieces),
		cmocka_unit_test(test_msg_send_error_carries_the_errno_and_the_reason_and_returns_the_error),
		cmocka_unit_test(test_msg_recv_times_out_on_silence_and_says_epipe_when_every_writer_is_gone),
		cmocka_unit_test(test_msg_send_to_a_pipe_nobody_reads_is_epipe),
		cmocka_unit_test(test_children_each_names_each_child_and_which_has_ended),
		cmocka_unit_test(test_children_each_stops_at_the_first_refusal_and_returns_it),
		cmocka_unit_test(test_children_each_of_a_process_that_is_gone_finds_none),
		cmocka_unit_test(test_children_signal_reaches_every_child_and_counts_them),
		cmocka_unit_test(test_child_die_with_a_process_that_is_not_the_parent_is_esrch),
		cmocka_unit_test(test_child_fork_gives_default_signals_an_empty_mask_and_death_with_the_parent),
		cmocka_unit_test(test_child_close_fds_keeps_only_the_listed_descriptors),
		cmocka_unit_test(test_child_unmeasure_drops_the_rt_policy_and_the_1_ns_timer_slack),
		cmocka_unit_test(test_duty_pace_at_full_intensity_never_rests),
		cmocka_unit_test(test_duty_pace_rests_the_idle_share_once_the_busy_share_is_spent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
