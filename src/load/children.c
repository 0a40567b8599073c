#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/children.h"
#include "sys/procpid.h"

static bool is_zombie(char state)
{
	return state == 'Z' || state == 'X';
}

/* The kernel's list (CONFIG_PROC_CHILDREN); -ENOENT without it.  A process's
 * children are its threads'; ours, and the supervisor's, are all its main thread's. */
static int each_listed(pid_t parent, int (*fn)(pid_t, bool, void *), void *ctx)
{
	char path[64];
	int n = 0, r = 0;
	long pid;
	struct proc_pid_stat st;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)parent, (long)parent);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	while (r >= 0 && fscanf(f, "%ld", &pid) == 1) {
		bool zombie = proc_pid_stat(pid, &st) == 0 && is_zombie(st.state);
		r = fn((pid_t)pid, zombie, ctx);
		n++;
	}
	fclose(f);
	return r < 0 ? r : n;
}

/* Every process whose parent is parent, from each /proc/PID/stat. */
static int each_scanned(pid_t parent, int (*fn)(pid_t, bool, void *), void *ctx)
{
	struct dirent *de;
	int n = 0, r = 0;
	struct proc_pid_stat st;

	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	while (r >= 0 && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		long pid = atol(de->d_name);
		if (proc_pid_stat(pid, &st) == 0 && st.ppid == parent) {
			r = fn((pid_t)pid, is_zombie(st.state), ctx);
			n++;
		}
	}
	closedir(d);
	return r < 0 ? r : n;
}

int children_each(pid_t parent, int (*fn)(pid_t pid, bool zombie, void *ctx), void *ctx)
{
	if (parent == 0)
		parent = getpid();
	int n = each_listed(parent, fn, ctx);
	return n == -ENOENT ? each_scanned(parent, fn, ctx) : n;
}

static int signal_one(pid_t pid, bool zombie, void *ctx)
{
	(void)zombie;
	kill(pid, *(const int *)ctx);
	return 0;
}

int children_signal(int sig)
{
	return children_each(0, signal_one, &sig);
}
