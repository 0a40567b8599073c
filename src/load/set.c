/* latscope's side of a load: fork the supervisor, wait for it, stop it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "core/error.h"
#include "load/children.h"
#include "load/console_dev.h"
#include "load/load.h"
#include "load/msg.h"
#include "load/supervisor.h"

/* Beyond the supervisor's own limits, for a supervisor that hangs: then it is killed. */
#define START_TIMEOUT_MS (SUPERVISOR_READY_MS + 5000)
#define STOP_TIMEOUT_MS 20000
#define HUNG_STOP_MS 1000       /* for a hung supervisor to take SIGSTOP */
#define HUNG_SWEEP_MS 2000      /* for what it left to die */

struct load_set {
	pid_t pid;
	pid_t cmd_pgid;
	int life_fd;       /* write end; closing it tells the supervisor to stop */
	int report_fd;
};

pid_t load_pgid(const struct load_set *ls)
{
	return ls->pid;
}

pid_t load_cmd_pgid(const struct load_set *ls)
{
	return ls->cmd_pgid;
}

int load_check(const struct load_spec *s, struct lat_error *err)
{
	struct lat_error why;

	if (!load_kind_name(s->kind))
		return err_set(err, -EINVAL, "load: unknown kind %d", (int)s->kind);
	if (!cpuset_count(&s->cpus))
		return err_set(err, -EINVAL, "%s: no cpus", load_kind_name(s->kind));
	if (s->intensity_pct < 1 || s->intensity_pct > 100)
		return err_set(err, -EINVAL, "%s: intensity %u%% is not 1-100%%", load_kind_name(s->kind),
			       s->intensity_pct);
	if (s->kind == LOAD_CONSOLE && *s->path) {
		int r = console_dev_check(s->path, &why);
		if (r < 0)
			return err_set(err, r, "console: %s", why.msg);
	}
	return 0;
}

static int validate(const struct load_spec *specs, size_t n, struct lat_error *err)
{
	if (n && !specs)
		return err_set(err, -EINVAL, "load: no specs");
	for (size_t i = 0; i < n; i++) {
		int r = load_check(&specs[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int wait_exit(pid_t pid)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : status;
}

/* Whether our child pid is stopped within timeout_ms (false too when it has exited). */
static bool wait_stopped(pid_t pid, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NS_PER_MS;
	const struct timespec pause = { .tv_nsec = 5000000 };
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) < 0)
			return false;
		if (si.si_pid == pid)
			return si.si_code == CLD_STOPPED;
		if (mono_ns() >= deadline)
			return false;
		nanosleep(&pause, NULL);
	}
}

struct sweep {
	pid_t leader;           /* the command's */
	bool leader_held;       /* it is a child of the stopped supervisor */
	unsigned live;
};

static int kill_child(pid_t pid, bool zombie, void *ctx)
{
	struct sweep *w = ctx;

	if (pid == w->leader)
		w->leader_held = true;
	if (!zombie) {
		kill(pid, SIGKILL);
		w->live++;
	}
	return 0;
}

/*
 * End the load of a supervisor that does not answer, for it.  Stopped, it reaps
 * nothing, so every pid among its children stays its own while we signal them,
 * and so does its command's group id while the leader is among them (it reaps
 * the leader only after its own last signal to the group).  Its children's
 * children come to it (a subreaper) as their parents die: until two walks in a
 * row find none alive, or the time is up.  A supervisor that will not even stop
 * is killed alone: what it leaves cannot be told apart safely.
 */
static void kill_for_hung(struct load_set *ls)
{
	const struct timespec pause = { .tv_nsec = 5000000 };

	kill(ls->pid, SIGSTOP);
	if (wait_stopped(ls->pid, HUNG_STOP_MS)) {
		uint64_t deadline = mono_ns() + HUNG_SWEEP_MS * NS_PER_MS;
		for (unsigned clean = 0; clean < 2 && mono_ns() < deadline;) {
			struct sweep w = { .leader = ls->cmd_pgid };
			if (children_each(ls->pid, kill_child, &w) < 0)
				break;
			if (w.leader > 0 && w.leader_held)
				kill(-w.leader, SIGKILL);
			clean = w.live ? 0 : clean + 1;
			nanosleep(&pause, NULL);
		}
	}
	kill(ls->pid, SIGKILL);
	kill(-ls->pid, SIGKILL);
}

/*
 * Tell the supervisor to stop, read its last record into ret (type 0 when none
 * came within timeout_ms, and then end its load for it) and reap it.
 * Frees ls.
 */
static void end_supervisor(struct load_set *ls, int timeout_ms, struct load_msg *ret)
{
	int r;

	close(ls->life_fd);
	do
		r = msg_recv(ls->report_fd, timeout_ms, ret);
	while (r == 0 && ret->type == MSG_READY);
	if (r < 0) {
		memset(ret, 0, sizeof(*ret));
		ret->error = -r;
	}
	/* EPIPE: it has closed its end on the way out; anything else: it hangs. */
	if (r < 0 && r != -EPIPE)
		kill_for_hung(ls);
	wait_exit(ls->pid);
	close(ls->report_fd);
	free(ls);
}

int load_start(const struct load_spec *specs, size_t n, const char *cmd, struct load_set **ret, struct lat_error *err)
{
	int life[2], report[2], r;
	struct load_set *ls;
	struct load_msg m;

	r = validate(specs, n, err);
	if (r < 0)
		return r;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return err_set(err, -ENOMEM, "load: out of memory");
	/* O_CLOEXEC: no program latscope runs may hold the write end and keep the load alive. */
	if (pipe2(life, O_CLOEXEC) < 0) {
		free(ls);
		return err_set(err, -errno, "load: cannot create a pipe: %s", strerror(errno));
	}
	if (pipe2(report, O_CLOEXEC) < 0) {
		r = -errno;
		close(life[0]);
		close(life[1]);
		free(ls);
		return err_set(err, r, "load: cannot create a pipe: %s", strerror(-r));
	}
	pid_t parent = getpid();
	ls->pid = fork();
	if (ls->pid == 0) {
		close(life[1]);
		close(report[0]);
		supervisor_main(specs, n, cmd, life[0], report[1], parent);
	}
	r = -errno;
	close(life[0]);
	close(report[1]);
	ls->life_fd = life[1];
	ls->report_fd = report[0];
	if (ls->pid < 0) {
		close(ls->life_fd);
		close(ls->report_fd);
		free(ls);
		return err_set(err, r, "load: cannot fork: %s", strerror(-r));
	}
	/* Also here, so that the group exists as soon as fork returns. */
	setpgid(ls->pid, ls->pid);

	r = msg_recv(ls->report_fd, START_TIMEOUT_MS, &m);
	if (r == 0 && m.type == MSG_READY) {
		ls->cmd_pgid = m.cmd_pid;
		*ret = ls;
		return 0;
	}
	struct load_msg last;
	end_supervisor(ls, STOP_TIMEOUT_MS, &last);
	if (r == 0 && m.type == MSG_ERROR)
		return err_set(err, m.error ? -m.error : -EIO, "%s", m.why.msg);
	r = r < 0 ? r : -EPROTO;
	return err_set(err, r, "load: the supervisor did not start: %s", strerror(-r));
}

int load_stop(struct load_set *ls, struct load_outcome *out, struct lat_error *err)
{
	struct load_msg m;

	if (!ls)
		return 0;
	end_supervisor(ls, STOP_TIMEOUT_MS, &m);
	if (m.type != MSG_OUTCOME)
		return err_set(err, m.error ? -m.error : -EPROTO, "load: the supervisor did not stop cleanly: %s",
				m.type == MSG_ERROR ? m.why.msg : strerror(m.error ? m.error : EPROTO));
	if (out)
		*out = m.outcome;
	return 0;
}
