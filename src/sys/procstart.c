#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sys/procstart.h"
#include "sys/textfile.h"

int proc_start_time(long pid, unsigned long long *ret)
{
	char path[64], text[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int r = textfile_read(path, text, sizeof(text));
	if (r < 0)
		return r;
	/* The name in parentheses may hold spaces and parentheses: fields count from the last ')'. */
	const char *p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 ret) != 1)
		return -EINVAL;
	return 0;
}
