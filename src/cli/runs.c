/* latscope runs: one line per stored run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/nstime.h"
#include "report/text.h"
#include "report/tprint.h"

struct runs_cmd {
	const char *probe;
	struct labels labels;
	const char *since;
	uint64_t limit;
	bool partial;
	bool ids;
	bool label_keys;
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt runs_opts[] = {
	{ "probe", 0, OPT_STRING, offsetof(struct runs_cmd, probe), .metavar = "PROBE",
	  .values = OPT_VALUES_WORDS, .words = storecmd_probe_word, .help = "only runs of this probe (timer, ...)" },
	{ "label", 0, OPT_LABEL, offsetof(struct runs_cmd, labels), .help = "only runs with this label; repeatable" },
	{ "since", 0, OPT_STRING, offsetof(struct runs_cmd, since), .metavar = "WHEN",
	  .help = "only runs started since WHEN: a UTC date (2026-11-30), date and time (2026-11-30T08:00:00), "
		  "or a duration ago (2h, 7d)" },
	{ "limit", 'n', OPT_UINT, offsetof(struct runs_cmd, limit), .min = 1, .max = 1000000,
	  .help = "only the last N runs stored" },
	{ "partial", 0, OPT_FLAG, offsetof(struct runs_cmd, partial),
	  .help = "only partial runs: the last checkpoint of a run that is still measuring or never finished" },
	{ "ids", 0, OPT_FLAG, offsetof(struct runs_cmd, ids),
	  .help = "print only the ids, one per line (for scripts and shell completion)" },
	{ "label-keys", 0, OPT_FLAG, offsetof(struct runs_cmd, label_keys),
	  .help = "print only the label keys the runs have, each once, sorted (what compare --by "
		  "takes; for scripts and shell completion)" },
	DB_OPT(struct runs_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct runs_cmd, help), .help = "show this help" },
};

static const struct cmd_spec runs_spec = {
	.name = "runs",
	.synopsis = "[--probe PROBE] [--label KEY=VALUE]... [--since WHEN] [--limit N] [--partial] "
		    "[--ids | --label-keys] [--db PATH]",
	.about = "List the stored runs in the order they were stored (by id), oldest first: id,\n"
		 "start time (UTC), probe, host, headline figures of the leading metric in the\n"
		 "probe's own unit (us, or ns for noise), and labels; \"(partial)\" marks a run\n"
		 "stored at a checkpoint, which its final result will replace.",
	.opts = runs_opts,
	.nopts = ARRAY_SIZE(runs_opts),
	.help_offset = offsetof(struct runs_cmd, help),
	.pos_name = "argument",
};

const struct cmd_spec *cmd_runs_spec(void)
{
	return &runs_spec;
}

/* The last second a stored time can hold: the store keeps nanoseconds as INT64. */
#define LAST_STORABLE_S ((time_t)(INT64_MAX / (int64_t)NS_PER_SEC))

/* WHEN as CLOCK_REALTIME ns: a UTC date or date-time, or a duration before now.
 * -ERANGE for a date before 1970 or after the last storable second. */
static int parse_since(const char *text, uint64_t now_ns, uint64_t *ret)
{
	static const char *const formats[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
					       "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	uint64_t ago;

	if (parse_duration(text, NS_PER_SEC, &ago) == 0) {
		*ret = ago < now_ns ? now_ns - ago : 0;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(text, formats[i], &tm);
		if (!end || *end)
			continue;
		time_t t = timegm(&tm);
		if (t < 0 || t > LAST_STORABLE_S)
			return -ERANGE;
		*ret = (uint64_t)t * NS_PER_SEC;
		return 0;
	}
	return -EINVAL;
}

/* The ids alone: no figure or label is read, so that a shell completing one waits for nothing. */
static int print_ids(struct store *st, const struct run_filter *f)
{
	struct lat_error err;
	int64_t *ids;
	size_t n;

	if (store_ids(st, f, &ids, &n, &err) < 0) {
		tprintf(stderr, "latscope runs: %s\n", err.msg);
		store_close(st);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		printf("%" PRId64 "\n", ids[i]);
	free(ids);
	store_close(st);
	return EXIT_OK;
}

/* The label keys alone, like the ids: one query, no run read. */
static int print_label_keys(struct store *st, const struct run_filter *f)
{
	struct lat_error err;
	char(*keys)[LABEL_KEY_MAX] = NULL;
	size_t n = 0;

	if (store_label_keys(st, f, &keys, &n, &err) < 0) {
		tprintf(stderr, "latscope runs: %s\n", err.msg);
		store_close(st);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		tprintf(stdout, "%s\n", keys[i]);
	free(keys);
	store_close(st);
	return EXIT_OK;
}

int cmd_runs(int argc, char **argv)
{
	struct runs_cmd c = { 0 };
	struct opt_result given;
	struct run_filter f = { 0 };
	struct store *st = NULL;
	struct lat_error serr;
	struct run_info *runs = NULL;
	size_t n = 0;
	int code = storecmd_parse(&runs_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	if (c.since && (code = parse_since(c.since, realtime_ns(), &f.since_ns)) < 0) {
		char msg[320], last[32];
		time_t t = LAST_STORABLE_S;
		struct tm tm;
		strftime(last, sizeof(last), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
		if (code == -ERANGE)
			snprintf(msg, sizeof(msg), "option '--since': '%s' is outside the times a run can have "
				 "(1970-01-01 to %s UTC)", c.since, last);
		else
			snprintf(msg, sizeof(msg), "option '--since': '%s' is not a date (2026-11-30), a date and time "
				 "(2026-11-30T08:00:00) or a duration (2h)", c.since);
		return storecmd_usage("runs", msg);
	}
	if (c.ids && c.label_keys)
		return storecmd_usage("runs",
				      "options '--ids' and '--label-keys' exclude each other");
	f.probe = c.probe;
	f.labels = c.labels;
	f.limit = c.limit;
	f.partial_only = c.partial;
	/* A store not made yet holds no runs, as an empty one does. */
	if ((code = storecmd_open_if_any("runs", c.db, STORE_READONLY, &st)) != EXIT_OK)
		return code;
	if (!st) {
		if (!c.ids && !c.label_keys)
			text_runs(stdout, NULL, 0);
		return EXIT_OK;
	}
	if (c.ids)
		return print_ids(st, &f);
	if (c.label_keys)
		return print_label_keys(st, &f);
	if (store_list(st, &f, &runs, &n, &serr) < 0) {
		tprintf(stderr, "latscope runs: %s\n", serr.msg);
		store_close(st);
		return EXIT_ERROR;
	}
	text_runs(stdout, runs, n);
	free(runs);
	store_close(st);
	return EXIT_OK;
}
