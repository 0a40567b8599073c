/* latscope export: stored runs for other tools (Prometheus, scripts). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/quote.h"
#include "core/termtext.h"
#include "report/gnuplot.h"
#include "report/jsonexport.h"
#include "report/openmetrics.h"
#include "result/json.h"
#include "report/tprint.h"

/* Every format, like the command table: one row each, and nothing else names them. */
struct export_format {
	const char *name;
	int (*write)(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err);
	const char *what;
};

static const struct export_format formats[] = {
	{ "openmetrics", openmetrics_write,
	  "Prometheus/OpenMetrics text for node_exporter's textfile collector, a histogram per run and CPU" },
	{ "json", json_export_write, "an array of the stored results, each with its run \"id\"" },
	{ "gnuplot", gnuplot_write, "a gnuplot script with the histograms in it (one curve per CPU of one run, or per run)" },
};

static const struct export_format *format_named(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

static const char *format_word(size_t i)
{
	return i < ARRAY_SIZE(formats) ? formats[i].name : NULL;
}

static void list_formats(FILE *out)
{
	fprintf(out, "\nFormats:\n");
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		fprintf(out, "  %-12s %s\n", formats[i].name, formats[i].what);
}

struct export_cmd {
	const char *format;
	const char *output;
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt export_opts[] = {
	{ "format", 0, OPT_STRING, offsetof(struct export_cmd, format), .metavar = "FORMAT",
	  .values = OPT_VALUES_WORDS, .words = format_word,
	  .help = "one of the formats below (default openmetrics)" },
	{ "output", 'o', OPT_STRING, offsetof(struct export_cmd, output), .metavar = "FILE", .values = OPT_VALUES_FILE,
	  .help = "write to FILE (replaced whole; a device or FIFO written in place; - for standard output)" },
	DB_OPT(struct export_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct export_cmd, help), .help = "show this help" },
};

static const struct cmd_spec export_spec = {
	.name = "export",
	.synopsis = "ID... [--format FORMAT] [-o FILE] [--db PATH]",
	.about = "Write stored runs for other tools.  For a fleet, write OpenMetrics into node_exporter's\n"
		 "textfile directory (-o /var/lib/node_exporter/textfile/latscope.prom) and let Prometheus collect it.\n"
		 "For a plot, export --format gnuplot -o hist.gp and run `gnuplot hist.gp` (writes latscope-histogram.svg).",
	.opts = export_opts,
	.nopts = ARRAY_SIZE(export_opts),
	.help_offset = offsetof(struct export_cmd, help),
	.help_more = list_formats,
	.min_pos = 1,
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
};

const struct cmd_spec *cmd_export_spec(void)
{
	return &export_spec;
}

/*
 * The document, whole, to -o's file or standard output.  A terminal gets it
 * escaped (core/termtext.h): OpenMetrics and gnuplot would pass an imported
 * host name's escape sequences to it raw.  A file or pipe gets the format's
 * own text (JSON's escapes are jansson's: every C0 control as \u00NN).
 */
static int put_out(const struct export_cmd *c, const struct export_format *fmt, struct atomic_file *sink,
		   const char *text, size_t len)
{
	char *safe = NULL;
	int r = 0;

	if (c->output ? atomic_file_is_terminal(sink) : isatty(STDOUT_FILENO)) {
		if (!(safe = term_escape_doc(text, strcmp(fmt->name, "json") == 0, &len))) {
			tprintf(stderr, "latscope export: out of memory\n");
			return EXIT_ERROR;
		}
		text = safe;
	}
	if (!c->output) {
		/* Standard output that failed is main's to judge (a closed pipe: quietly, status 0). */
		fwrite(text, 1, len, stdout);
	} else if ((r = atomic_file_write(sink, text, len)) < 0 || (r = atomic_file_commit(sink)) < 0) {
		tprintf(stderr, "latscope export: cannot write '%s': %s\n", c->output, strerror(-r));
	}
	free(safe);
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	struct export_cmd c = { 0 };
	struct opt_result given;
	struct lat_error err;
	struct store *st = NULL;
	struct result *res = NULL;
	struct atomic_file sink = { .fd = -1 };
	int64_t *ids = NULL;
	size_t n = 0;
	FILE *out = NULL;
	char *buf = NULL;
	size_t buflen = 0;
	int code = storecmd_parse(&export_spec, argc, argv, &c, &given), r;

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	const struct export_format *fmt = format_named(c.format ? c.format : "openmetrics");
	if (!fmt) {
		char names[128] = "";
		for (size_t i = 0, len = 0; i < ARRAY_SIZE(formats) && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "", formats[i].name);
		return storecmd_refuse("export", "option '--format': '%s' is not a format (%s)", c.format, names);
	}
	if (storecmd_parse_ids(given.pos, given.npos, &ids, &n, &err) < 0)
		return storecmd_usage("export", err.msg);
	const struct output file = { "'--output'", c.output };
	if ((code = outputs_check("export", &file, 1, c.db, true)) != 0) {
		free(ids);
		return code;
	}
	if (c.output && (r = atomic_file_open(c.output, &sink)) < 0) {
		char msg[320], q[QUOTE_MAX];
		snprintf(msg, sizeof(msg), "option '--output': cannot write %s: %s", quote_short(c.output, q), strerror(-r));
		free(ids);
		return storecmd_usage("export", msg);
	}
	/* Collected in memory, then written whole: a scraper never reads half a file. */
	if (!(out = open_memstream(&buf, &buflen))) {
		code = EXIT_ERROR;
		goto done;
	}
	if ((code = storecmd_open("export", c.db, STORE_READONLY, &st)) != EXIT_OK)
		goto done;
	if ((code = storecmd_load("export", st, ids, n, &res)) == EXIT_OK) {
		const struct result **list = calloc(n, sizeof(*list));
		if (!list)
			code = EXIT_ERROR;
		for (size_t i = 0; list && i < n; i++)
			list[i] = &res[i];
		struct lat_error why = { "" };
		r = list ? fmt->write(out, list, ids, n, &why) : 0;
		if (r == -EINVAL)               /* runs that cannot go together */
			code = storecmd_usage("export", why.msg);
		else if (r < 0)
			tprintf(stderr, "latscope export: cannot write %s: %s\n", fmt->name, why.msg[0] ? why.msg : strerror(-r));
		if (r < 0 && r != -EINVAL)
			code = EXIT_ERROR;
		free(list);
		storecmd_free_results(res, n);
	}
done:
	if (out && fclose(out) != 0 && code == EXIT_OK) {
		tprintf(stderr, "latscope export: out of memory\n");
		code = EXIT_ERROR;
	}
	if (code == EXIT_OK)
		code = put_out(&c, fmt, &sink, buf ? buf : "", buflen);
	free(buf);
	atomic_file_close(&sink);
	store_close(st);
	free(ids);
	return code;
}
