#include "trace/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/array.h"
#include "trace/mount.h"
#include "trace/remove.h"

/* What latscope writes down the pipe. */
#define GUARD_MOUNTED   'm'     /* latscope mounted tracefs at TRACEFS_MOUNT_DIR */
#define GUARD_UNMOUNTED 'u'     /* ... and has decided about it since */
#define GUARD_DONE      'd'     /* the instance is gone: end */

#if !HAVE_TRACEFS

int trace_guard_start(struct trace_guard *g, const char *name)
{
	(void)name;
	g->pid = 0;
	g->fd = -1;
	return -ENOTSUP;
}

#else

/*
 * latscope's pipe closes as it exits, but its other files (those of the
 * instance among them, which keep its rmdir EBUSY) may still be open for a
 * moment: the kernel closes them all before it hands the guard to a new
 * parent, so wait for that, then retry what is still busy.
 */
static void remove_after(pid_t parent, const char *name)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	for (int i = 0; i < 250 && getppid() == parent; i++)
		nanosleep(&tick, NULL);
	for (int i = 0; i < 250 && trace_instance_remove(name) == -EBUSY; i++)
		nanosleep(&tick, NULL);
}

__attribute__((noreturn))
static void guard_main(int fd, const char *name)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };
	pid_t parent = getppid();
	char c;
	ssize_t n;

	setsid();
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_IGN);
	/* Hold nothing of latscope's: not its terminal, its pipes or its files, */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
	if (dup2(fd, 3) < 0 || chdir("/") < 0)    /* nor its directory, which may be in tracefs */
		_exit(1);
	close_range(4, ~0u, 0);
	struct tracefs_mount m = { .ours = false, .dir = TRACEFS_MOUNT_DIR };
	for (;;) {
		n = read(3, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 1 && (c == GUARD_MOUNTED || c == GUARD_UNMOUNTED)) {
			m.ours = c == GUARD_MOUNTED;
			continue;
		}
		break;
	}
	if (n != 1) {                           /* the pipe closed unreleased: latscope is gone */
		remove_after(parent, name);
		tracefs_unmount(&m, NULL);
	}
	_exit(0);
}

int trace_guard_start(struct trace_guard *g, const char *name)
{
	int p[2];

	g->pid = 0;
	g->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[1]);
		guard_main(p[0], name);
	}
	close(p[0]);
	g->pid = pid;
	g->fd = p[1];
	return 0;
}

#endif

static void tell(const struct trace_guard *g, char c)
{
	ssize_t n;
	do
		n = write(g->fd, &c, 1);
	while (n < 0 && errno == EINTR);
}

void trace_guard_mounted(struct trace_guard *g, bool mounted)
{
	if (g && g->fd >= 0)
		tell(g, mounted ? GUARD_MOUNTED : GUARD_UNMOUNTED);
}

void trace_guard_release(struct trace_guard *g)
{
	if (g->fd >= 0) {
		tell(g, GUARD_DONE);
		close(g->fd);
		g->fd = -1;
	}
	if (g->pid > 0) {
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
		g->pid = 0;
	}
}
