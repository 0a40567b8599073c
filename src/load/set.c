/* latscope's side of a load: fork the supervisor, wait for it, stop it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/nstime.h"
#include "core/errmsg.h"
#include "load/console_dev.h"
#include "load/load.h"
#include "load/msg.h"
#include "load/supervisor.h"

/* Beyond the supervisor's own limits, for a supervisor that hangs: then it is killed. */
#define START_TIMEOUT_MS (SUPERVISOR_READY_MS + 5000)
#define STOP_TIMEOUT_MS 20000

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

int load_check(const struct load_spec *s, char *err, size_t errsize)
{
	char why[200];

	if (!load_kind_name(s->kind))
		return err_set(err, errsize, -EINVAL, "load: unknown kind %d", (int)s->kind);
	if (!cpuset_count(&s->cpus))
		return err_set(err, errsize, -EINVAL, "%s: no cpus", load_kind_name(s->kind));
	if (s->intensity_pct < 1 || s->intensity_pct > 100)
		return err_set(err, errsize, -EINVAL, "%s: intensity %u%% is not 1-100%%", load_kind_name(s->kind),
			       s->intensity_pct);
	if (s->kind == LOAD_CONSOLE && *s->path) {
		int r = console_dev_check(s->path, why, sizeof(why));
		if (r < 0)
			return err_set(err, errsize, r, "console: %s", why);
	}
	return 0;
}

static int validate(const struct load_spec *specs, size_t n, char *err, size_t errsize)
{
	if (n && !specs)
		return err_set(err, errsize, -EINVAL, "load: no specs");
	for (size_t i = 0; i < n; i++) {
		int r = load_check(&specs[i], err, errsize);
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

/*
 * Tell the supervisor to stop, read its last record into ret (type 0 when none
 * came within timeout_ms, and then kill it and its group) and reap it.
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
	if (r < 0 && r != -EPIPE) {
		kill(ls->pid, SIGKILL);
		kill(-ls->pid, SIGKILL);
	}
	wait_exit(ls->pid);
	close(ls->report_fd);
	free(ls);
}

int load_start(const struct load_spec *specs, size_t n, const char *cmd, struct load_set **ret, char *err,
	       size_t errsize)
{
	int life[2], report[2], r;
	struct load_set *ls;
	struct load_msg m;

	r = validate(specs, n, err, errsize);
	if (r < 0)
		return r;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return err_set(err, errsize, -ENOMEM, "load: out of memory");
	/* O_CLOEXEC: no program latscope runs may hold the write end and keep the load alive. */
	if (pipe2(life, O_CLOEXEC) < 0) {
		free(ls);
		return err_set(err, errsize, -errno, "load: cannot create a pipe: %s", strerror(errno));
	}
	if (pipe2(report, O_CLOEXEC) < 0) {
		r = -errno;
		close(life[0]);
		close(life[1]);
		free(ls);
		return err_set(err, errsize, r, "load: cannot create a pipe: %s", strerror(-r));
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
		return err_set(err, errsize, r, "load: cannot fork: %s", strerror(-r));
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
		return err_set(err, errsize, m.error ? -m.error : -EIO, "%s", m.text);
	r = r < 0 ? r : -EPROTO;
	return err_set(err, errsize, r, "load: the supervisor did not start: %s", strerror(-r));
}

int load_stop(struct load_set *ls, struct load_outcome *out, char *err, size_t errsize)
{
	struct load_msg m;

	if (!ls)
		return 0;
	end_supervisor(ls, STOP_TIMEOUT_MS, &m);
	if (m.type != MSG_OUTCOME)
		return err_set(err, errsize, m.error ? -m.error : -EPROTO, "load: the supervisor did not stop cleanly: %s",
				m.type == MSG_ERROR ? m.text : strerror(m.error ? m.error : EPROTO));
	if (out)
		*out = m.outcome;
	return 0;
}
