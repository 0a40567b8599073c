#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "load/child.h"
#include "load/command.h"

pid_t command_spawn(const char *cmd)
{
	pid_t pid = child_fork(SIGKILL);

	if (pid < 0)
		return pid;
	if (pid == 0) {
		setpgid(0, 0);
		/* A background group that reads the terminal would stop on SIGTTIN. */
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		/* Every descriptor of ours is O_CLOEXEC: the shell gets only 0, 1 and 2. */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* Both sides set the group, so it exists whichever runs first. */
	setpgid(pid, pid);
	return pid;
}
