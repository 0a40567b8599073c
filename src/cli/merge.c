/* latscope merge: several runs of one probe as one exact result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "measure/unstored.h"
#include "core/array.h"
#include "core/quote.h"
#include "report/text.h"
#include "report/tprint.h"
#include "result/json.h"
#include "result/merge.h"

struct merge_cmd {
	const char *json_path;
	bool no_store;
	bool quiet;
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt merge_opts[] = {
	{ "json", 0, OPT_STRING, offsetof(struct merge_cmd, json_path), .metavar = "FILE", .values = OPT_VALUES_FILE,
	  .help = "write the merged result as JSON to FILE" },
	{ "no-store", 0, OPT_FLAG, offsetof(struct merge_cmd, no_store), .help = "do not keep the merged result in the store" },
	{ "quiet", 'q', OPT_FLAG, offsetof(struct merge_cmd, quiet), .help = "print nothing but errors" },
	DB_OPT(struct merge_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct merge_cmd, help), .help = "show this help" },
};

static const struct cmd_spec merge_spec = {
	.name = "merge",
	.synopsis = "ID... [--json FILE] [--no-store] [-q] [--db PATH]",
	.about = "Merge runs of one probe, for example the same probe on many hosts, into one result: histograms\n"
		 "and statistics add up exactly.  CPUs are merged by number, windows by their index in each run.\n"
		 "The merged result is stored as a new run (its host reads \"merged: ...\").  Runs of different\n"
		 "probes, or of different metrics (wake with and without --pingpong), are a usage error (2);\n"
		 "runs whose counts or sums of time would reach 2^63 together (what a JSON integer cannot\n"
		 "hold) cannot be merged: an error (1), and nothing is stored.",
	.opts = merge_opts,
	.nopts = ARRAY_SIZE(merge_opts),
	.help_offset = offsetof(struct merge_cmd, help),
	.min_pos = 1,
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
};

const struct cmd_spec *cmd_merge_spec(void)
{
	return &merge_spec;
}

/* What each run is, wherever it is stored: the merge is made of these.
 * One allocation: n pointers, then the n identities they point to. */
static int member_identities(const char *name, struct store *st, const int64_t *ids, size_t n, char ***ret)
{
	char **list = malloc(n * (sizeof(char *) + STORE_IDENTITY_SIZE));
	struct lat_error serr;

	if (!list) {
		tprintf(stderr, "latscope %s: out of memory\n", name);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		list[i] = (char *)(list + n) + i * STORE_IDENTITY_SIZE;
		if (store_identity(st, ids[i], list[i], &serr) < 0) {
			tprintf(stderr, "latscope %s: %s\n", name, serr.msg);
			free(list);
			return EXIT_ERROR;
		}
	}
	*ret = list;
	return EXIT_OK;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_cmd c = { 0 };
	struct opt_result given;
	struct lat_error err;
	struct store *st = NULL;
	struct result *in = NULL, out;
	struct atomic_file sink = { .fd = -1 };
	int64_t *ids = NULL;
	char **identities = NULL;
	size_t n = 0;
	bool merged = false;
	struct lat_error msg;
	int code = storecmd_parse(&merge_spec, argc, argv, &c, &given), r;

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	if (storecmd_parse_ids(given.pos, given.npos, &ids, &n, &err) < 0)
		return storecmd_usage("merge", err.msg);
	const struct output json = { "'--json'", c.json_path };
	if ((code = outputs_check("merge", &json, 1, c.db, true)) != 0) {
		free(ids);
		return code;
	}
	if (c.json_path && (r = atomic_file_open(c.json_path, &sink)) < 0) {
		char q[QUOTE_MAX];
		err_set(&msg, 0, "option '--json': cannot write %s: %s", quote_short(c.json_path, q), strerror(-r));
		free(ids);
		return storecmd_usage("merge", msg.msg);
	}
	if ((code = storecmd_open("merge", c.db, c.no_store ? STORE_READONLY : c.db_trust ? STORE_TRUST : 0u, &st)) != EXIT_OK)
		goto out;
	if ((code = storecmd_load("merge", st, ids, n, &in)) != EXIT_OK) {
		in = NULL;
		goto out;
	}
	if ((code = member_identities("merge", st, ids, n, &identities)) != EXIT_OK)
		goto out;
	if ((r = result_merge(in, ids, (const char *const *)identities, n, &out, &msg)) < 0) {
		if (r == -EINVAL) {
			code = storecmd_usage("merge", msg.msg);
		} else {
			tprintf(stderr, "latscope merge: %s\n", msg.msg);
			code = EXIT_ERROR;
		}
		goto out;
	}
	merged = true;
	json_t *doc = result_to_json(&out);
	char *text = doc ? result_json_dump(doc) : NULL;
	json_decref(doc);
	if (!text) {
		tprintf(stderr, "latscope merge: out of memory\n");
		code = EXIT_ERROR;
		goto out;
	}
	if (c.json_path && (r = json_file_commit(&sink, text)) < 0) {
		tprintf(stderr, "latscope merge: cannot write '%s': %s\n", c.json_path, strerror(-r));
		code = EXIT_ERROR;
	}
	/* Stored first, so that what is printed carries the id it is stored as. */
	int64_t id = 0;
	const char *said = NULL;
	if (!c.no_store) {
		struct lat_error serr;
		r = store_put(st, text, &id, &serr);
		if (r == -EEXIST) {
			said = "this merge is already stored as run";
		} else if (r < 0) {
			tprintf(stderr, "latscope merge: cannot store the merged result: %s\n", serr.msg);
			code = unstored_keep("merge", text, &out, true, c.json_path, c.db);
			id = 0;
		} else {
			said = "stored as run";
		}
	}
	if (!c.quiet) {
		text_result(stdout, &out, id);
		if (said)
			tprintf(stdout, "%s %lld in %s\n", said, (long long)id, store_path(st));
	}
	free(text);
out:
	if (merged)
		result_free(&out);
	atomic_file_close(&sink);
	storecmd_free_results(in, in ? n : 0);
	store_close(st);
	free(identities);
	free(ids);
	return code;
}
