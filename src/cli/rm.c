/* latscope rm: remove stored runs, all or none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "report/tprint.h"

struct rm_cmd {
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt rm_opts[] = {
	DB_OPT(struct rm_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct rm_cmd, help), .help = "show this help" },
};

static const struct cmd_spec rm_spec = {
	.name = "rm",
	.synopsis = "ID... [--db PATH]",
	.about = "Remove stored runs.  Ids may be ranges (3-7) and lists (3,5).  When one of them is not in the\n"
		 "store, nothing is removed.",
	.opts = rm_opts,
	.nopts = ARRAY_SIZE(rm_opts),
	.help_offset = offsetof(struct rm_cmd, help),
	.min_pos = 1,
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
};

const struct cmd_spec *cmd_rm_spec(void)
{
	return &rm_spec;
}

int cmd_rm(int argc, char **argv)
{
	struct rm_cmd c = { 0 };
	struct opt_result given;
	struct lat_error err;
	struct lat_error serr;
	struct store *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int code = storecmd_parse(&rm_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	if (storecmd_parse_ids(given.pos, given.npos, &ids, &n, &err) < 0)
		return storecmd_usage("rm", err.msg);
	if ((code = storecmd_open("rm", c.db, c.db_trust ? STORE_TRUST : 0u, &st)) == EXIT_OK) {
		int r = store_rm(st, ids, n, &serr);
		if (r < 0) {
			if (r == -ENOENT) {
				code = storecmd_absent("rm", serr.msg);
			} else {
				tprintf(stderr, "latscope rm: %s\n", serr.msg);
				code = EXIT_ERROR;
			}
		} else {
			tprintf(stdout, "removed %zu run%s\n", n, n == 1 ? "" : "s");
		}
	}
	store_close(st);
	free(ids);
	return code;
}
