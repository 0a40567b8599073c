#include "monitor/reporter.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/runner.h"

#define REPORT_SERVE_MAX (64u << 20)

int reporter_start(struct reporter *rp, const char *id, const char *store)
{
	char *const argv[] = { (char *)"latscope", (char *)"report", (char *)"--monitor", (char *)id, (char *)"-o",
			       (char *)rp->file, (char *)"--db", (char *)store, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, stops;
	pid_t pid;

	if (rp->pid)
		return 0;
	sigemptyset(&none);
	runner_stop_signals(&stops);
	sigaddset(&stops, SIGUSR1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &stops);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int r = posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (r == 0)
		rp->pid = pid;
	return r;
}

/* The file report replaced: a regular file, not a link put in its place since. */
static char *read_report(const char *file, size_t *ret_len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	char *text = NULL;
	ssize_t n = -1;

	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= REPORT_SERVE_MAX &&
	    (text = malloc((size_t)sb.st_size + 1u)))
		n = read(fd, text, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	if (text && n == (ssize_t)sb.st_size) {
		*ret_len = (size_t)n;
		return text;
	}
	free(text);
	return NULL;
}

bool reporter_collect(struct reporter *rp, bool wait, char **ret_text, size_t *ret_len)
{
	int status;

	*ret_text = NULL;
	if (!rp->pid)
		return false;
	const pid_t w = waitpid(rp->pid, &status, wait ? 0 : WNOHANG);
	if (w == 0)
		return false;
	rp->pid = 0;
	if (w > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !wait)
		*ret_text = read_report(rp->file, ret_len);
	return true;
}

void reporter_stop(struct reporter *rp)
{
	char *text;
	size_t len;

	if (!rp->pid)
		return;
	kill(rp->pid, SIGTERM);         /* a newer one would have followed; nothing left behind */
	reporter_collect(rp, true, &text, &len);
}
