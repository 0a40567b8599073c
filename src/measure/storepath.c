#include "measure/storepath.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/mkdirs.h"

static int put(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s%s", a, b);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* An XDG base directory: the variable when it is absolute (a relative one is
 * invalid and must be ignored), else fallback under HOME.  Without HOME at
 * all (a tool that execs oslat or cyclictest with an empty environment), the
 * home the password database gives the user.  top (4096 bytes, or NULL): the
 * directory above which nothing may be made, the home or the variable's parent. */
static int xdg(const char *var, const char *fallback, const char *sub, char *buf, size_t size,
	       char *top)
{
	const char *dir = getenv(var), *home = getenv("HOME");
	char base[4096];

	if (!home) {
		const struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}

	if (dir && dir[0] == '/') {
		if (top && put(base, sizeof(base), dir, "") == 0)
			snprintf(top, 4096, "%s", dirname(base));
		return put(buf, size, dir, sub);
	}
	if (!home || home[0] != '/')
		return -ENOENT;
	if (top)
		snprintf(top, 4096, "%s", home);
	return put(base, sizeof(base), home, fallback) < 0 ? -ENAMETOOLONG : put(buf, size, base, sub);
}

int store_path_resolve(const char *db_opt, char *buf, size_t size, bool *ret_chosen)
{
	const char *env = getenv("LATSCOPE_DB");

	*ret_chosen = true;
	if (db_opt)
		return put(buf, size, db_opt, "");
	if (env && *env)
		return put(buf, size, env, "");
	*ret_chosen = false;
	return xdg("XDG_DATA_HOME", "/.local/share", "/latscope/runs.db", buf, size, NULL);
}

int store_default_dir_make(void)
{
	char path[4096], top[4096] = "";
	int r = xdg("XDG_DATA_HOME", "/.local/share", "/latscope/runs.db", path, sizeof(path), top);

	if (r < 0)
		return r;
	return make_dirs_under(top, dirname(path), 0700);
}

const char *store_path_source(const char *db_opt)
{
	const char *env = getenv("LATSCOPE_DB");
	return db_opt ? "'--db'" : env && *env ? "LATSCOPE_DB" : "the default store";
}

int unstored_dir_resolve(char *buf, size_t size)
{
	return xdg("XDG_STATE_HOME", "/.local/state", "/latscope/unstored", buf, size, NULL);
}
