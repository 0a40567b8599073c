/*
 * A fake /proc and /sys for a test: the files of a table written into a
 * fresh temporary directory, so each test shows the whole tree it reads.
 * Include after cmocka.h.
 */
#ifndef LATSCOPE_TESTS_SYSTREE_H
#define LATSCOPE_TESTS_SYSTREE_H

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct systree_file {
	const char *path;               /* relative to the root: "proc/consoles" */
	const char *text;
};

/* Every directory on the way to dir/path. */
static void systree_mkdirs(const char *dir, const char *path)
{
	char full[512];
	int n = snprintf(full, sizeof(full), "%s/%s", dir, path);
	assert_true(n > 0 && (size_t)n < sizeof(full));
	for (char *p = full + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		assert_true(mkdir(full, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
}

/* files ends with { NULL }; dir receives the root. */
static void systree_make(char dir[static 64], const struct systree_file *files)
{
	snprintf(dir, 64, "/tmp/test-systree-XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (const struct systree_file *f = files; f && f->path; f++) {
		char full[512];
		systree_mkdirs(dir, f->path);
		snprintf(full, sizeof(full), "%s/%s", dir, f->path);
		FILE *out = fopen(full, "we");
		assert_non_null(out);
		assert_int_equal(fputs(f->text, out) >= 0, 1);
		assert_int_equal(fclose(out), 0);
	}
}

static int systree_unlink(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void systree_remove(const char *dir)
{
	assert_int_equal(nftw(dir, systree_unlink, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* How many files of dir (absent: none) have names starting with prefix: the state files a hold left. */
static inline unsigned systree_count(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

#endif
