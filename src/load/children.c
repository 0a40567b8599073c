#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/children.h"

/* The kernel's list (CONFIG_PROC_CHILDREN); -ENOENT without it.  The caller is single-threaded. */
static int signal_listed(int sig)
{
	char path[64];
	int n = 0;
	long pid;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%ld", &pid) == 1) {
		kill((pid_t)pid, sig);
		n++;
	}
	fclose(f);
	return n;
}

/* Every process whose parent is us, from each /proc/PID/stat. */
static int signal_scanned(int sig)
{
	pid_t self = getpid();
	struct dirent *de;
	int n = 0;

	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[300], line[512];
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char *got = fgets(line, sizeof(line), f);
		fclose(f);
		/* The command name may hold spaces and parentheses: fields resume after the last ')'. */
		char *end = got ? strrchr(line, ')') : NULL;
		char state;
		long ppid;
		if (end && sscanf(end + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) {
			kill((pid_t)atol(de->d_name), sig);
			n++;
		}
	}
	closedir(d);
	return n;
}

int children_signal(int sig)
{
	int n = signal_listed(sig);
	return n == -ENOENT ? signal_scanned(sig) : n;
}
