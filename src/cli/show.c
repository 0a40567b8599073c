/* latscope show: one stored run, whole. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/nstime.h"
#include "core/termtext.h"
#include "report/text.h"
#include "report/tailtext.h"
#include "result/json.h"
#include "report/tprint.h"

struct show_cmd {
	bool json;
	bool tail;
	uint64_t above_ns;
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt show_opts[] = {
	{ "json", 0, OPT_FLAG, offsetof(struct show_cmd, json),
	  .help = "print the result as JSON, as --json wrote it at run time, with the run's \"id\" added" },
	{ "tail", 0, OPT_FLAG, offsetof(struct show_cmd, tail),
	  .help = "print the tail estimate's fit in full: the threshold and why, the shape at each candidate threshold, "
		  "every level and the tests (doc/tail-method.md)" },
	{ "above", 0, OPT_DURATION, offsetof(struct show_cmd, above_ns), .min = 1, .max = 3600u * NS_PER_SEC,
	  .unit = NS_PER_US, .metavar = "DUR",
	  .help = "with --tail: also how often per hour a value is above DUR, from the fit above its threshold "
		  "(else counted); a bare number is microseconds" },
	DB_OPT(struct show_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct show_cmd, help), .help = "show this help" },
};

static const struct cmd_spec show_spec = {
	.name = "show",
	.synopsis = "ID [--json | --tail [--above DUR]] [--db PATH]",
	.about = "Print a stored run: where and how it ran, its notes, and its summary table.",
	.opts = show_opts,
	.nopts = ARRAY_SIZE(show_opts),
	.help_offset = offsetof(struct show_cmd, help),
	.min_pos = 1,
	.max_pos = 1,
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
};

const struct cmd_spec *cmd_show_spec(void)
{
	return &show_spec;
}

static int print_json(const char *text, int64_t id)
{
	struct lat_error err;
	/* A store is a file too, maybe from elsewhere: parsed within the same bounds as an import. */
	json_t *doc = result_json_parse(text, strlen(text), &err);
	char *out = NULL;

	if (doc && json_object_set_new(doc, "id", json_integer(id)) == 0)
		out = result_json_dump(doc);
	json_decref(doc);
	if (!out) {
		tprintf(stderr, "latscope show: run %lld cannot be printed: %s\n", (long long)id,
			doc ? "out of memory" : err.msg);
		return EXIT_ERROR;
	}
	/* A terminal gets it escaped and still JSON (core/termtext.h); a pipe gets jansson's text. */
	size_t len = strlen(out);
	char *safe = NULL;
	if (isatty(STDOUT_FILENO) && !(safe = term_escape_doc(out, true, &len))) {
		free(out);
		tprintf(stderr, "latscope show: out of memory\n");
		return EXIT_ERROR;
	}
	fwrite(safe ? safe : out, 1, len, stdout);
	putchar('\n');
	free(safe);
	free(out);
	return EXIT_OK;
}

int cmd_show(int argc, char **argv)
{
	struct show_cmd c = { 0 };
	struct opt_result given;
	struct lat_error err;
	struct store *st = NULL;
	struct result *res = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int code = storecmd_parse(&show_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	if (storecmd_parse_ids(given.pos, 1, &ids, &n, &err) < 0 || n != 1) {
		free(ids);
		return storecmd_usage("show", n > 1 ? "one run id, please" : err.msg);
	}
	if ((code = storecmd_open("show", c.db, STORE_READONLY, &st)) != EXIT_OK)
		goto out;
	if (c.above_ns && !c.tail) {
		code = storecmd_usage("show", "option '--above' needs '--tail'");
		goto out;
	}
	if (c.json && c.tail) {
		code = storecmd_usage("show", "options '--json' and '--tail' exclude each other (the JSON has the tail)");
		goto out;
	}
	if (c.json) {
		struct lat_error serr;
		char *text = NULL;
		int r = store_get(st, ids[0], &text, &serr);
		if (r < 0) {
			if (r == -ENOENT) {
				code = storecmd_absent("show", serr.msg);
			} else {
				tprintf(stderr, "latscope show: %s\n", serr.msg);
				code = EXIT_ERROR;
			}
		} else {
			code = print_json(text, ids[0]);
		}
		free(text);
		goto out;
	}
	if ((code = storecmd_load("show", st, ids, 1, &res)) != EXIT_OK)
		goto out;
	if (c.tail)
		text_tail_full(stdout, res, c.above_ns);
	else
		text_result(stdout, res, ids[0]);
	storecmd_free_results(res, 1);
out:
	store_close(st);
	free(ids);
	return code;
}
