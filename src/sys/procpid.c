#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sys/procpid.h"
#include "sys/textfile.h"

int proc_pid_stat(long pid, struct proc_pid_stat *ret)
{
	char path[64], text[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int r = textfile_read(path, text, sizeof(text));
	if (r < 0)
		return r;
	/* The name in parentheses may hold spaces and parentheses: fields count from the last ')'. */
	const char *p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &ret->state, &ret->ppid, &ret->start) != 3)
		return -EINVAL;
	return 0;
}
