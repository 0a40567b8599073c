#include "sys/samefile.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The path without "./" parts and repeated slashes, in place. */
static void tidy(char *p)
{
	char *out = p;
	for (const char *in = p; *in;) {
		bool start = in == p || in[-1] == '/';
		if (start && in[0] == '.' && (in[1] == '/' || in[1] == '\0')) {
			in += in[1] ? 2 : 1;
			continue;
		}
		if (*in == '/' && out > p && out[-1] == '/') {
			in++;
			continue;
		}
		*out++ = *in++;
	}
	if (out > p + 1 && out[-1] == '/')
		out--;
	*out = '\0';
}

/* Parent directory and name of a path that does not exist. */
static bool same_name_in_same_dir(const char *a, const char *b)
{
	char *da = strdup(a), *db = strdup(b), *ba = strdup(a), *bb = strdup(b);
	struct stat sa, sb;
	bool same = false;

	if (da && db && ba && bb && strcmp(basename(ba), basename(bb)) == 0) {
		const char *pa = dirname(da), *pb = dirname(db);
		if (stat(pa, &sa) == 0 && stat(pb, &sb) == 0) {
			same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
		} else {
			free(da);
			free(db);
			da = strdup(a);
			db = strdup(b);
			if (da && db) {
				tidy(da);
				tidy(db);
				same = strcmp(da, db) == 0;
			}
		}
	}
	free(da);
	free(db);
	free(ba);
	free(bb);
	return same;
}

bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;

	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ea || eb)
		return false;
	return same_name_in_same_dir(a, b);
}
