#include "sys/mkdirs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int make_dirs(const char *dir, mode_t mode)
{
	char *d = strdup(dir);
	struct stat st;
	int r = 0;

	if (!d)
		return -ENOMEM;
	for (char *p = d + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(d, mode) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		*p = c;
		if (!c)
			break;
	}
	if (r == 0 && stat(dir, &st) < 0)
		r = -errno;
	else if (r == 0 && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	free(d);
	return r;
}
