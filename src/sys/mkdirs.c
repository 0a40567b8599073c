#include "sys/mkdirs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Make each missing directory of dir whose name ends at or after offset from. */
static int make_from(const char *dir, size_t from, mode_t mode)
{
	char *d = strdup(dir);
	int r = 0;

	if (!d)
		return -ENOMEM;
	for (char *p = d + (from ? from : 1u);; p++) {
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
	free(d);
	return r < 0 ? r : is_dir(dir);
}

int make_dirs(const char *dir, mode_t mode)
{
	return make_from(dir, 0, mode);
}

int make_dirs_under(const char *top, const char *dir, mode_t mode)
{
	size_t n = strlen(top);
	int r;

	while (n > 0 && top[n - 1u] == '/')
		n--; /* "/" is n == 0: every absolute dir is under it */
	if (strncmp(dir, top, n) != 0 || (dir[n] != '/' && dir[n] != '\0'))
		return -EINVAL;
	if ((r = is_dir(top)) < 0)
		return r;
	return dir[n] == '\0' ? 0 : make_from(dir, n + 1u, mode);
}
