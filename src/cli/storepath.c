#include "cli/storepath.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int put(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s%s", a, b);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int store_path_resolve(const char *db_opt, char *buf, size_t size, bool *ret_chosen)
{
	const char *env = getenv("LATSCOPE_DB"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	*ret_chosen = true;
	if (db_opt)
		return put(buf, size, db_opt, "");
	if (env && *env)
		return put(buf, size, env, "");
	*ret_chosen = false;
	/* XDG: a relative XDG_DATA_HOME is invalid and must be ignored. */
	if (xdg && xdg[0] == '/')
		return put(buf, size, xdg, "/latscope/runs.db");
	if (home && home[0] == '/')
		return put(buf, size, home, "/.local/share/latscope/runs.db");
	return -ENOENT;
}

const char *store_path_source(const char *db_opt)
{
	const char *env = getenv("LATSCOPE_DB");
	return db_opt ? "'--db'" : env && *env ? "LATSCOPE_DB" : "the default store";
}
