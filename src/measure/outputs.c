#include "measure/outputs.h"

#include <stdio.h>

#include "measure/storecmd.h"
#include "measure/storepath.h"
#include "sys/samefile.h"

static bool is_option(const struct output *o)
{
	return o->what[0] == '\'';
}

int outputs_check(const char *cmd, const struct output *outs, size_t n, const char *db_opt, bool uses_store)
{
	struct output all[OUTPUTS_MAX];
	char store[4096], msg[4400];
	bool chosen;

	for (size_t i = 0; i < n && i < OUTPUTS_MAX - 1u; i++)
		all[i] = outs[i];
	n = n < OUTPUTS_MAX - 1u ? n : OUTPUTS_MAX - 1u;
	/* The store's source ("'--db'", LATSCOPE_DB, the default store) names it in the message. */
	if (uses_store && store_path_resolve(db_opt, store, sizeof(store), &chosen) == 0)
		all[n++] = (struct output){ store_path_source(db_opt), store };
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const struct output *a = &all[i], *b = &all[j];
			if (!a->path || !b->path || !same_file(a->path, b->path))
				continue;
			if (is_option(a) && is_option(b))
				snprintf(msg, sizeof(msg), "options %s and %s name the same file '%s'", a->what, b->what,
					 b->path);
			else
				snprintf(msg, sizeof(msg), "%s%s and %s%s name the same file '%s'", is_option(a) ? "option " : "",
					 a->what, is_option(b) ? "option " : "", b->what, b->path);
			return storecmd_usage(cmd, msg);
		}
	return 0;
}
