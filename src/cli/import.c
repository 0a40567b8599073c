/* latscope import: results made elsewhere (other hosts, --json files) into the store. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/storecmd.h"
#include "result/json.h"

#define IMPORT_MAX_BYTES (1024L * 1024L * 1024L)

struct import_cmd {
	const char *db;
	bool help;
};

static const struct opt import_opts[] = {
	DB_OPT(struct import_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct import_cmd, help), .help = "show this help" },
};

static const struct cmd_spec import_spec = {
	.name = "import",
	.synopsis = "FILE.json... [--db PATH]",
	.about = "Store results written with --json, here or on other hosts.  Every file is checked first; when\n"
		 "one is not a latscope result, nothing is stored.  A run already in the store is skipped.",
	.opts = import_opts,
	.nopts = sizeof(import_opts) / sizeof(import_opts[0]),
	.help_offset = offsetof(struct import_cmd, help),
	.min_pos = 1,
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "file",
};

/* The file's result in the store's form (the same text --json writes), checked whole. */
static int load_file(const char *path, char **ret_text)
{
	json_error_t jerr;
	struct result res;
	char err[320];
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	int r;

	if (!doc) {
		fprintf(stderr, "latscope import: '%s': %s\n", path,
			json_error_code(&jerr) == json_error_cannot_open_file ? jerr.text : "not valid JSON");
		if (json_error_code(&jerr) != json_error_cannot_open_file)
			fprintf(stderr, "latscope import: '%s': line %d: %s\n", path, jerr.line, jerr.text);
		return -EINVAL;
	}
	r = result_from_json(doc, &res, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "latscope import: '%s': %s\n", path, err);
		json_decref(doc);
		return r;
	}
	result_free(&res);
	json_object_del(doc, "id");     /* from `show --json`: the store gives its own */
	*ret_text = result_json_dump(doc);
	json_decref(doc);
	return *ret_text ? 0 : -ENOMEM;
}

int cmd_import(int argc, char **argv)
{
	struct import_cmd c = { 0 };
	struct opt_result given;
	struct store *st = NULL;
	char **texts;
	int code = storecmd_parse(&import_spec, argc, argv, &c, &given);

	if (code >= 0)
		return code;
	texts = calloc(given.npos, sizeof(*texts));
	if (!texts)
		return EXIT_ERROR;
	code = EXIT_OK;
	for (size_t i = 0; i < given.npos; i++)
		if (load_file(given.pos[i], &texts[i]) < 0)
			code = EXIT_USAGE;
	if (code == EXIT_OK && (code = storecmd_open("import", c.db, STORE_CREATE | STORE_MKDIR, &st)) == EXIT_OK) {
		struct store_error serr;
		int64_t *ids = calloc(given.npos, sizeof(*ids));
		bool *dup = calloc(given.npos, sizeof(*dup));
		if (!ids || !dup)
			code = EXIT_ERROR;
		else if (store_put_all(st, (const char *const *)texts, given.npos, ids, dup, &serr) < 0) {
			fprintf(stderr, "latscope import: %s; nothing was stored\n", serr.msg);
			code = EXIT_ERROR;
		} else {
			for (size_t i = 0; i < given.npos; i++)
				printf("%s: %s run %lld\n", given.pos[i], dup[i] ? "already stored as" : "stored as",
				       (long long)ids[i]);
		}
		free(ids);
		free(dup);
	}
	for (size_t i = 0; i < given.npos; i++)
		free(texts[i]);
	free(texts);
	store_close(st);
	return code;
}
