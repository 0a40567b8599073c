#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "load/child.h"
#include "load/children.h"
#include "load/command.h"
#include "load/gen.h"
#include "load/msg.h"
#include "load/supervisor.h"
#include "load/worker.h"

struct worker_rec {
	pid_t pid;
	size_t spec;
	unsigned cpu;
	bool ready;
	bool gone;
};

struct sup {
	const struct load_spec *specs;
	size_t n;
	struct gen_shared *shared;      /* one per spec */
	struct worker_rec *workers;
	unsigned nworkers, nspawned, nready;
	int life_fd, report_fd, sig_fd, ready_fd;
	struct pollfd *pfds;            /* 3 + n */
	pid_t cmd_pid;                  /* the command's leader while it is ours (unreaped); else 0 */
	bool cmd_ended;                 /* that leader has exited: it is held as a zombie */
	struct load_outcome out;
	bool stopping;                  /* latscope asked, died, or a signal came */
	bool failed;
	struct load_msg error;          /* when failed */
};

__attribute__((format(printf, 3, 4)))
static int sup_fail(struct sup *s, int r, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return r;     /* the first reason is the one that matters */
	s->failed = true;
	s->error = (struct load_msg){ .type = MSG_ERROR, .error = -r };
	va_start(ap, fmt);
	err_vset(&s->error.why, r, fmt, ap);
	va_end(ap);
	return r;
}

static struct worker_rec *worker_by_pid(struct sup *s, pid_t pid)
{
	for (unsigned i = 0; i < s->nspawned; i++)
		if (s->workers[i].pid == pid)
			return &s->workers[i];
	return NULL;
}

/* The command's leader has ended: when, if before the stop. */
static void note_cmd_ended(struct sup *s)
{
	s->cmd_ended = true;
	if (!s->stopping) {
		s->out.cmd_ended_early = true;
		s->out.cmd_ended_ns = mono_ns();
	}
}

static void note_exit(struct sup *s, pid_t pid, int status)
{
	struct worker_rec *w;

	if (pid == s->cmd_pid) {
		s->out.cmd_status = status;
		if (!s->cmd_ended)
			note_cmd_ended(s);
		s->cmd_pid = 0;         /* its pid, and the id of its group, may now go to anyone */
	} else if ((w = worker_by_pid(s, pid))) {
		w->gone = true;
		if (!s->stopping && w->ready)
			s->out.workers_lost++;
	}
	/* Anything else is an orphan the subreaper inherited: reaping is all it needs. */
}

/* Reap pid if it has ended (flags 0: wait for it); true when it was. */
static bool reap(struct sup *s, pid_t pid, int flags)
{
	int status;

	if (waitpid(pid, &status, flags) != pid)
		return false;
	note_exit(s, pid, status);
	return true;
}

struct past_leader {
	struct sup *s;
	unsigned reaped, left;
};

static int reap_listed(pid_t pid, bool zombie, void *ctx)
{
	struct past_leader *p = ctx;

	(void)zombie;
	if (pid == p->s->cmd_pid)
		return 0;
	if (reap(p->s, pid, WNOHANG))
		p->reaped++;
	else
		p->left++;
	return 0;
}

/*
 * The held leader is the first zombie waitid finds, and hides those behind it:
 * reap them from the list of children instead.  Again while it reaps anything,
 * for a child reaped may have handed its own children to us after the walk
 * passed them.  1 while others are left, 0 once only the leader is, -errno
 * when the children cannot be listed.
 */
static int reap_past_leader(struct sup *s)
{
	struct past_leader p;

	do {
		p = (struct past_leader){ .s = s };
		int r = children_each(0, reap_listed, &p);
		if (r < 0)
			return r;
	} while (p.reaped);
	return p.left > 0;
}

/*
 * Reap whatever has ended, but the command's leader.  Reaped, its pid, which
 * is also the id of its process group, is free for any new process, and a
 * kill(-pid) after that could hit an unrelated group (a new setsid process
 * that got the pid).  Unreaped, a zombie, it stays ours, and so does the
 * group's id: the leader is only noted here, and finish reaps it after the
 * last signal to its group.  (A pidfd would not do: it holds the process, not
 * its number, and cannot name a group.)  False once nothing is left but that
 * zombie.
 */
static bool reap_ended(struct sup *s)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
			return errno != ECHILD;
		if (si.si_pid == 0)
			return true;            /* children, none ended */
		if (si.si_pid != s->cmd_pid) {
			if (!reap(s, si.si_pid, WNOHANG))
				return true;    /* not ours to reap after all: never spin on it */
			continue;
		}
		if (!s->cmd_ended)
			note_cmd_ended(s);
		int r = reap_past_leader(s);
		if (r >= 0)
			return r > 0;
		/* Unable to see past it: let it go, and its group with it (see end_all). */
		reap(s, s->cmd_pid, 0);
	}
}

static void on_signals(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			s->stopping = true;
	reap_ended(s);
}

static void on_life(struct sup *s)
{
	char byte;
	ssize_t n = read(s->life_fd, &byte, 1);

	/* EOF (latscope closed its end or died) and a byte both mean stop. */
	if (n < 0 && errno == EINTR)
		return;
	/* A leader that ended before the stop came ended early, its SIGCHLD read or not yet. */
	reap_ended(s);
	s->stopping = true;
	close(s->life_fd);
	s->life_fd = -1;
}

static void on_ready(struct sup *s)
{
	struct load_msg m;
	int r = msg_recv(s->ready_fd, 0, &m);

	if (r < 0) {
		if (r != -ETIMEDOUT) {      /* every worker has reported and closed its end */
			close(s->ready_fd);
			s->ready_fd = -1;
		}
		return;
	}
	if (m.type == MSG_ERROR) {
		sup_fail(s, -m.error, "%s", m.why.msg);
	} else if (m.type == MSG_READY && m.worker < s->nspawned && !s->workers[m.worker].ready) {
		s->workers[m.worker].ready = true;
		s->nready++;
	}
}

static void drain(int fd)
{
	char buf[16384];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Wait up to timeout_ms (-1: no limit) for anything and handle it. */
static void sup_poll(struct sup *s, int timeout_ms)
{
	struct pollfd *p = s->pfds;
	size_t np = 0;

	p[np++] = (struct pollfd){ .fd = s->life_fd, .events = POLLIN };
	p[np++] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
	p[np++] = (struct pollfd){ .fd = s->ready_fd, .events = POLLIN };
	for (size_t i = 0; i < s->n; i++)
		p[np++] = (struct pollfd){ .fd = s->shared[i].master_fd, .events = POLLIN };
	if (poll(p, np, timeout_ms) <= 0)
		return;
	if (p[0].revents)
		on_life(s);
	if (p[1].revents)
		on_signals(s);
	if (p[2].revents)
		on_ready(s);
	for (size_t i = 3; i < np; i++)
		if (p[i].revents)
			drain(p[i].fd);
}

/* Name the first worker that is not running: by its own message when it sent
 * one before it died, else by what became of it. */
static int fail_unready(struct sup *s, bool died)
{
	for (unsigned i = 0; i < s->nspawned; i++) {
		const struct worker_rec *w = &s->workers[i];
		if (w->ready || (died && !w->gone))
			continue;
		/* A worker writes its reason before it exits: the record may still be in the pipe. */
		struct load_msg m;
		while (died && s->ready_fd >= 0 && msg_recv(s->ready_fd, 200, &m) == 0)
			if (m.type == MSG_ERROR)
				return sup_fail(s, -m.error, "%s", m.why.msg);
		return sup_fail(s, died ? -ECHILD : -ETIMEDOUT, "%s: the worker on CPU %u %s",
				load_kind_name(s->specs[w->spec].kind), w->cpu,
				died ? "exited while starting" : "was not ready after 5 s");
	}
	return 0;
}

static bool any_died_unready(const struct sup *s)
{
	for (unsigned i = 0; i < s->nspawned; i++)
		if (s->workers[i].gone && !s->workers[i].ready)
			return true;
	return false;
}

static int wait_ready(struct sup *s)
{
	uint64_t deadline = mono_ns() + SUPERVISOR_READY_MS * NS_PER_MS;

	while (!s->failed && !s->stopping && s->nready < s->nworkers) {
		if (any_died_unready(s))
			return fail_unready(s, true);
		uint64_t now = mono_ns();
		if (now >= deadline)
			return fail_unready(s, false);
		sup_poll(s, (int)((deadline - now) / NS_PER_MS) + 1);
	}
	return s->failed ? -s->error.error : 0;
}

static int spawn_workers(struct sup *s)
{
	int ready[2];

	if (pipe2(ready, O_CLOEXEC) < 0)
		return sup_fail(s, -errno, "load: cannot create a pipe: %s", strerror(errno));
	s->ready_fd = ready[0];
	for (size_t i = 0; i < s->n; i++) {
		unsigned index = 0;
		cpuset_foreach(cpu, &s->specs[i].cpus) {
			pid_t pid = worker_spawn(&s->specs[i], &s->shared[i], (unsigned)cpu, index++, s->nspawned, ready[1]);
			if (pid < 0) {
				close(ready[1]);
				return sup_fail(s, (int)pid, "%s: cannot start a worker: %s",
						load_kind_name(s->specs[i].kind), strerror((int)-pid));
			}
			s->workers[s->nspawned++] = (struct worker_rec){ .pid = pid, .spec = i, .cpu = (unsigned)cpu };
		}
	}
	/* Only the workers hold the write end now. */
	close(ready[1]);
	return 0;
}

static int start(struct sup *s, const char *cmd)
{
	struct lat_error why;
	int r;

	s->shared = calloc(s->n ? s->n : 1, sizeof(*s->shared));
	s->pfds = calloc(3 + s->n, sizeof(*s->pfds));
	for (size_t i = 0; i < s->n; i++)
		s->nworkers += cpuset_count(&s->specs[i].cpus);
	s->workers = calloc(s->nworkers ? s->nworkers : 1, sizeof(*s->workers));
	if (!s->shared || !s->pfds || !s->workers)
		return sup_fail(s, -ENOMEM, "load: out of memory");
	for (size_t i = 0; i < s->n; i++)
		gen_shared_init(&s->shared[i]);
	for (size_t i = 0; i < s->n; i++) {
		const struct gen_ops *ops = gen_ops_for(s->specs[i].kind);
		r = ops->prepare ? ops->prepare(&s->specs[i], &s->shared[i], &why) : 0;
		if (r < 0)
			return sup_fail(s, r, "%s: %s", load_kind_name(s->specs[i].kind), why.msg);
	}
	r = spawn_workers(s);
	if (r < 0)
		return r;
	r = wait_ready(s);
	if (r < 0 || s->stopping)
		return r;
	/* After the workers, so that the command starts on a machine already under load. */
	if (cmd) {
		pid_t pid = command_spawn(cmd);
		if (pid < 0)
			return sup_fail(s, (int)pid, "load: cannot start the command: %s", strerror((int)-pid));
		s->cmd_pid = pid;
		s->out.cmd_ran = true;
	}
	return 0;
}

/* Signal every descendant until none is left or deadline_ns (0: none) passes.
 * Repeated, because a subreaper inherits new orphans as their parents die.
 * The command's group only while its leader is unreaped (reap_ended). */
static void end_all(struct sup *s, int sig, uint64_t deadline_ns)
{
	for (;;) {
		if (s->cmd_pid > 0)
			kill(-s->cmd_pid, sig);
		children_signal(sig);
		if (!reap_ended(s))
			return;
		if (deadline_ns && mono_ns() >= deadline_ns)
			return;
		sup_poll(s, 20);
	}
}

static void finish(struct sup *s)
{
	s->stopping = true;
	end_all(s, SIGTERM, mono_ns() + SUPERVISOR_GRACE_MS * NS_PER_MS);
	end_all(s, SIGKILL, 0);
	/* Every signal to its group sent: only now may the leader's pid go. */
	if (s->cmd_pid > 0)
		reap(s, s->cmd_pid, 0);
	for (size_t i = 0; s->shared && i < s->n; i++)
		gen_shared_release(&s->shared[i]);
}

static int setup_signals(struct sup *s)
{
	sigset_t mask;

	child_reset_signals();
	/* With latscope gone, a report must fail with EPIPE, not kill us before we clean up. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sig_fd < 0 ? sup_fail(s, -errno, "load: cannot create a signalfd: %s", strerror(errno)) : 0;
}

void supervisor_main(const struct load_spec *specs, size_t n, const char *cmd, int life_fd, int report_fd,
		     pid_t parent)
{
	struct sup s = { .specs = specs, .n = n, .life_fd = life_fd, .report_fd = report_fd, .sig_fd = -1,
			 .ready_fd = -1 };

	/* Our own group, so that every worker can be found and none joins latscope's. */
	setpgid(0, 0);
	int r = setup_signals(&s);
	/* The pipe is the first line of defence; a SIGTERM when latscope's thread dies is the second. */
	if (child_die_with(parent, SIGTERM) < 0)
		s.stopping = true;
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	child_unmeasure();
	int keep[] = { life_fd, report_fd, s.sig_fd };
	child_close_fds(keep, ARRAY_SIZE(keep));

	if (r == 0 && !s.stopping)
		r = start(&s, cmd);
	if (r == 0 && !s.stopping) {
		struct load_msg ready = { .type = MSG_READY, .cmd_pid = s.cmd_pid };
		msg_send(report_fd, &ready);
		while (!s.stopping)
			sup_poll(&s, -1);
	}
	finish(&s);
	if (s.failed) {
		msg_send(report_fd, &s.error);
		_exit(1);
	}
	struct load_msg done = { .type = MSG_OUTCOME, .outcome = s.out };
	msg_send(report_fd, &done);
	_exit(0);
}
