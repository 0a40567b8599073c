/* latscope report: stored runs as one self-contained HTML page with plots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/outputs.h"
#include "cli/storecmd.h"
#include "core/array.h"
#include "report/htmlreport.h"
#include "sys/atomicfile.h"
#include "report/tprint.h"

#define REPORT_RUNS_MAX 64          /* colours repeat (dashed) after 12; past this a page stops reading */

struct report_cmd {
	struct labels labels;
	const char *probe;
	const char *output;
	const char *db;
	bool help;
};

static const struct opt report_opts[] = {
	{ "label", 0, OPT_LABEL, offsetof(struct report_cmd, labels),
	  .help = "report the runs with this label (repeatable: all must match) instead of listing ids" },
	{ "probe", 0, OPT_STRING, offsetof(struct report_cmd, probe), .metavar = "PROBE",
	  .help = "only runs of this probe (instead of ids, or with --label)" },
	{ "output", 'o', OPT_STRING, offsetof(struct report_cmd, output), .metavar = "FILE",
	  .help = "write the page to FILE, replaced whole; - for standard output (default report.html)" },
	DB_OPT(struct report_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct report_cmd, help), .help = "show this help" },
};

static const struct cmd_spec report_spec = {
	.name = "report",
	.synopsis = "[ID...] [--label KEY=VALUE]... [--probe PROBE] [-o FILE] [--db PATH]",
	.about = "Write stored runs as one self-contained HTML page (no scripts, nothing loaded from the network)\n"
		 "with inline SVG plots: histograms per CPU and merged, the percentile ladder, each window's max and\n"
		 "p99 over time with the spikes --trace explained, noise events, I/O throughput and CPU cost; the\n"
		 "comparison and verdicts of 'latscope compare' for the runs of each probe; and every run's\n"
		 "parameters, load, system fingerprint and findings.",
	.opts = report_opts,
	.nopts = ARRAY_SIZE(report_opts),
	.help_offset = offsetof(struct report_cmd, help),
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
};

int cmd_report(int argc, char **argv)
{
	struct report_cmd c = { 0 };
	struct opt_result given;
	struct store *st = NULL;
	struct result *res = NULL;
	struct atomic_file sink = { .fd = -1 };
	int64_t *ids = NULL;
	size_t n = 0, buflen = 0;
	char *buf = NULL;
	bool to_stdout;
	FILE *out;
	int code = storecmd_parse(&report_spec, argc, argv, &c, &given), r;

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
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
	if ((code = storecmd_select("report", &given, c.probe, &c.labels, st, &ids, &n)) != EXIT_OK)
		goto done;
	if (n > REPORT_RUNS_MAX) {
		code = storecmd_refuse("report", "%zu runs: a report holds at most %d; choose fewer", n, REPORT_RUNS_MAX);
		goto done;
	}
	if ((code = storecmd_load("report", st, ids, n, &res)) != EXIT_OK) {
		res = NULL;
		goto done;
	}
	/* Collected in memory and written whole: a browser never opens half a page. */
	out = open_memstream(&buf, &buflen);
	r = out ? html_report_write(out, res, ids, n) : -ENOMEM;
	if (out && fclose(out) != 0 && r == 0)
		r = -errno;
	if (r < 0) {
		tprintf(stderr, "latscope report: cannot make the report: %s\n", strerror(-r));
		code = EXIT_ERROR;
		goto done;
	}
	if (to_stdout) {
		if (fwrite(buf, 1, buflen, stdout) != buflen)
			code = EXIT_ERROR;      /* main's check of stdout says why */
	} else if ((r = atomic_file_write(&sink, buf, buflen)) < 0 || (r = atomic_file_commit(&sink)) < 0) {
		tprintf(stderr, "latscope report: cannot write '%s': %s\n", c.output, strerror(-r));
		code = EXIT_ERROR;
	} else {
		tprintf(stdout, "wrote %s: %zu run%s\n", c.output, n, n == 1 ? "" : "s");
	}
done:
	free(buf);
	atomic_file_close(&sink);
	storecmd_free_results(res, n);
	store_close(st);
	free(ids);
	return code;
}
