/* A private temporary directory per test program, made and removed (with all
 * it holds) by cmocka's group setup and teardown. */
#ifndef LATSCOPE_TEST_TMPDIR_H
#define LATSCOPE_TEST_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static inline int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latscope-test-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[512];

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
			remove_tree(sub);
	closedir(d);
	rmdir(path);
}

static inline int remove_tmpdir(void **state)
{
	(void)state;
	remove_tree(tmpdir);
	return 0;
}

/* tmpdir/name; the last four stay valid, so one call may take two. */
static inline char *in_tmpdir(const char *name)
{
	static char path[4][512];
	static unsigned k;
	k = (k + 1u) % 4u;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

#endif
