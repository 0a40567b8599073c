/* latscope report: stored runs as one self-contained HTML page with plots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "cli/reportmon.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "report/htmlreport.h"
#include "sys/atomicfile.h"
#include "report/tprint.h"

#define REPORT_RUNS_MAX 64          /* colours repeat (dashed) after 12; past this a page stops reading */

struct report_cmd {
	struct labels labels;
	const char *probe;
	const char *monitor;
	const char *output;
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt report_opts[] = {
	{ "label", 0, OPT_LABEL, offsetof(struct report_cmd, labels),
	  .help = "report the runs with this label (repeatable: all must match) instead of listing ids" },
	{ "probe", 0, OPT_STRING, offsetof(struct report_cmd, probe), .metavar = "PROBE",
	  .values = OPT_VALUES_WORDS, .words = storecmd_probe_word,
	  .help = "only runs of this probe (instead of ids, or with --label)" },
	{ "monitor", 0, OPT_STRING, offsetof(struct report_cmd, monitor), .metavar = "ID",
	  .help = "the long-run view of a monitor: every run labelled monitor=ID, any number; latest: the monitor "
		  "whose newest run was stored last (alone: no run ids, --label or --probe)" },
	{ "output", 'o', OPT_STRING, offsetof(struct report_cmd, output), .metavar = "FILE", .values = OPT_VALUES_FILE,
	  .help = "write the page to FILE, replaced whole; - for standard output (default report.html)" },
	DB_OPT(struct report_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct report_cmd, help), .help = "show this help" },
};

static const struct cmd_spec report_spec = {
	.name = "report",
	.synopsis = "[ID...] [--label KEY=VALUE]... [--probe PROBE] [-o FILE] [--db PATH]\n"
		    "   or: latscope report --monitor ID|latest [-o FILE] [--db PATH]",
	.about = "Write stored runs as one self-contained HTML page (no scripts, nothing loaded from the network)\n"
		 "with inline SVG plots: histograms per CPU and merged, the percentile ladder, each window's max and\n"
		 "p99 over time with the spikes --trace explained, noise events, I/O throughput and CPU cost; the\n"
		 "comparison and verdicts of 'latscope compare' for the runs of each probe; and every run's\n"
		 "parameters, load, system fingerprint and findings.\n"
		 "With --monitor, the periods 'latscope monitor' stored (the runs labelled monitor=ID, by start time):\n"
		 "one figure of each period's max and p99.9 of the leading metric (every CPU merged) as steps over the\n"
		 "clock (UTC), a point at each max, the threshold dashed; then a table of the periods (run, start,\n"
		 "duration, samples, p99, p99.9, max, spikes, missed, status).  The runs are read one at a time.",
	.opts = report_opts,
	.nopts = ARRAY_SIZE(report_opts),
	.help_offset = offsetof(struct report_cmd, help),
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
};

const struct cmd_spec *cmd_report_spec(void)
{
	return &report_spec;
}

/* The page of the runs chosen by ids or filters into out; *ret_n of them. */
static int report_runs(const struct report_cmd *c, const struct opt_result *given, struct store *st, FILE *out,
		       size_t *ret_n)
{
	struct result *res = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int code, r;

	if ((code = storecmd_select("report", given, c->probe, &c->labels, st, &ids, &n)) != EXIT_OK)
		return code;
	if (n > REPORT_RUNS_MAX) {
		code = storecmd_refuse("report", "%zu runs: a report holds at most %d; choose fewer", n, REPORT_RUNS_MAX);
	} else if ((code = storecmd_load("report", st, ids, n, &res)) == EXIT_OK) {
		if ((r = html_report_write(out, res, ids, n)) < 0) {
			tprintf(stderr, "latscope report: cannot make the report: %s\n", strerror(-r));
			code = EXIT_ERROR;
		}
		storecmd_free_results(res, n);
	}
	free(ids);
	*ret_n = n;
	return code;
}

int cmd_report(int argc, char **argv)
{
	struct report_cmd c = { 0 };
	struct opt_result given;
	struct store *st = NULL;
	struct atomic_file sink = { .fd = -1 };
	size_t n = 0, buflen = 0;
	char *buf = NULL, monitor[LABEL_VALUE_MAX];
	bool to_stdout;
	FILE *out;
	int code = storecmd_parse(&report_spec, argc, argv, &c, &given), r;

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	if (c.monitor && (given.npos || c.labels.n || c.probe))
		return storecmd_usage("report", "option '--monitor': give it alone, not with run ids or --label/--probe "
				      "filters");
	if (!c.output)
		c.output = "report.html";
	to_stdout = strcmp(c.output, "-") == 0;
	const struct output file = { "'--output'", to_stdout ? NULL : c.output };
	if ((code = outputs_check("report", &file, 1, c.db, true)) != 0)
		return code;
	/* Prove the file writable before reading any run. */
	if (!to_stdout && (r = atomic_file_open(c.output, &sink)) < 0) {
		char msg[4200];
		snprintf(msg, sizeof(msg), "option '--output': cannot write '%s': %s", c.output, strerror(-r));
		return storecmd_usage("report", msg);
	}
	if ((code = storecmd_open("report", c.db, STORE_READONLY, &st)) != EXIT_OK)
		goto done;
	/* Collected in memory and written whole: a browser never opens half a page. */
	if (!(out = open_memstream(&buf, &buflen))) {
		tprintf(stderr, "latscope report: out of memory\n");
		code = EXIT_ERROR;
		goto done;
	}
	code = c.monitor ? report_monitor(st, c.monitor, out, monitor, sizeof(monitor), &n)
			 : report_runs(&c, &given, st, out, &n);
	if (fclose(out) != 0 && code == EXIT_OK) {
		tprintf(stderr, "latscope report: cannot make the report: %s\n", strerror(errno));
		code = EXIT_ERROR;
	}
	if (code != EXIT_OK)
		goto done;
	if (to_stdout) {
		/* a failure is main's to judge (a closed pipe: quietly) */
		fwrite(buf, 1, buflen, stdout);
	} else if ((r = atomic_file_write(&sink, buf, buflen)) < 0 || (r = atomic_file_commit(&sink)) < 0) {
		tprintf(stderr, "latscope report: cannot write '%s': %s\n", c.output, strerror(-r));
		code = EXIT_ERROR;
	} else {
		if (c.monitor)
			tprintf(stdout, "wrote %s: monitor %s, %zu period%s\n", c.output, monitor, n, n == 1 ? "" : "s");
		else
			tprintf(stdout, "wrote %s: %zu run%s\n", c.output, n, n == 1 ? "" : "s");
	}
done:
	free(buf);
	atomic_file_close(&sink);
	store_close(st);
	return code;
}
