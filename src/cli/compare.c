/*
 * latscope compare: stored runs side by side, grouped by their labels, with a
 * verdict on whether a difference is real and regression gates for CI.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "cli/outputs.h"
#include "cli/storecmd.h"
#include "core/bootstrap.h"
#include "core/expr.h"
#include "core/nstime.h"
#include "report/junit.h"
#include "report/table.h"
#include "result/compare.h"

enum { FMT_TEXT, FMT_MARKDOWN, FMT_CSV, FMT_JSON };
static const char *const format_choices[] = { "text", "markdown", "csv", "json", NULL };

struct compare_cmd {
	const char *probe;
	struct labels labels;
	const char *by;
	const char *columns;
	const char *baseline;
	int format;
	struct strlist fail_if;
	const char *junit;
	const char *cpu;
	const char *metric;
	const char *db;
	bool help;
};

static const struct opt compare_opts[] = {
	{ "label", 0, OPT_LABEL, offsetof(struct compare_cmd, labels),
	  .help = "compare the runs with this label (repeatable: all must match) instead of listing ids" },
	{ "probe", 0, OPT_STRING, offsetof(struct compare_cmd, probe), .metavar = "PROBE",
	  .help = "with --label: only runs of this probe" },
	{ "by", 0, OPT_STRING, offsetof(struct compare_cmd, by), .metavar = "KEYS",
	  .help = "one row per group of runs with the same values of these labels (config,domain,sched), in that order" },
	{ "columns", 0, OPT_STRING, offsetof(struct compare_cmd, columns), .metavar = "LIST",
	  .help = "figures to show: count min mean stddev p50 p90 p99 p99.9 p99.99 max warm_max above_pct "
		  "missed runs, or a label (default min,mean,p99,max,warm_max,missed)" },
	{ "baseline", 0, OPT_STRING, offsetof(struct compare_cmd, baseline), .metavar = "ID",
	  .help = "the run (or its group) every other row is measured against (default: the first row)" },
	{ "format", 0, OPT_ENUM, offsetof(struct compare_cmd, format), .choices = format_choices,
	  .help = "text and markdown in microseconds; csv and json in nanoseconds" },
	{ "fail-if", 0, OPT_STRLIST, offsetof(struct compare_cmd, fail_if), .metavar = "EXPR",
	  .help = "exit with status 3 when a row fails this gate: p99>+10% (against the baseline), max>200us, "
		  "missed>0; repeatable" },
	{ "junit", 0, OPT_STRING, offsetof(struct compare_cmd, junit), .metavar = "FILE",
	  .help = "write the gates' outcome as JUnit XML to FILE" },
	{ "cpu", 0, OPT_STRING, offsetof(struct compare_cmd, cpu), .metavar = "CPU",
	  .help = "compare this CPU's figures instead of all CPUs merged" },
	{ "metric", 0, OPT_STRING, offsetof(struct compare_cmd, metric), .metavar = "NAME",
	  .help = "the metric to compare (default: the probe's leading one, such as latency)" },
	DB_OPT(struct compare_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct compare_cmd, help), .help = "show this help" },
};

static const struct cmd_spec compare_spec = {
	.name = "compare",
	.synopsis = "[ID...] [--label KEY=VALUE]... [--by KEYS] [--columns LIST] [--baseline ID]\n"
		    "                        [--format text|markdown|csv|json] [--fail-if EXPR]... [--junit FILE] [--db PATH]",
	.about = "Put stored runs side by side: one row per run, or per group of runs with --by.  Under the table,\n"
		 "each row is judged against the baseline: is the difference in mean and p99 real?  The verdict\n"
		 "comes from a bootstrap over the runs' windows (see doc/compare-method.md).",
	.opts = compare_opts,
	.nopts = sizeof(compare_opts) / sizeof(compare_opts[0]),
	.help_offset = offsetof(struct compare_cmd, help),
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
};

/* ---- columns ---- */

enum col_kind { COL_STAT, COL_RUNS, COL_LABEL };

struct column {
	enum col_kind kind;
	enum expr_stat stat;            /* COL_STAT */
	char name[LABEL_KEY_MAX];
};

static const enum expr_stat all_stats[] = {
	EXPR_COUNT, EXPR_MIN, EXPR_MEAN, EXPR_STDDEV, EXPR_P50, EXPR_P90, EXPR_P99, EXPR_P999, EXPR_P9999,
	EXPR_MAX, EXPR_WARM_MAX, EXPR_ABOVE_PCT, EXPR_MISSED,
};

/* ---- a row: one run or a group of runs, summarized ---- */

struct row {
	struct labels key;              /* the --by values, or none */
	size_t *runs;                   /* indexes into the loaded results */
	size_t nruns;
	struct cmp_row fig;             /* its figures, and every window of every run of the row */
};

struct ctx {
	struct compare_cmd c;
	struct result *res;
	int64_t *ids;
	size_t nres;
	unsigned metric;
	int cpu;                        /* -1: all CPUs merged */
	char by[8][LABEL_KEY_MAX];
	size_t nby;
	struct column cols[40];
	size_t ncols;
	struct row *rows;
	size_t nrows;
	size_t ref;                     /* the baseline row */
	struct expr gates[STRLIST_MAX];
};

static const struct cpu_result *block_of(const struct ctx *x, const struct result *r)
{
	if (x->cpu < 0)
		return &r->all;
	for (size_t i = 0; i < r->ncpus; i++)
		if (r->cpus[i].cpu == x->cpu)
			return &r->cpus[i];
	return NULL;
}

static const char *label_of(const struct result *r, const char *key)
{
	for (unsigned i = 0; i < r->labels.n; i++)
		if (strcmp(r->labels.items[i].key, key) == 0)
			return r->labels.items[i].value;
	return NULL;
}

static double stat_value(const struct row *w, enum expr_stat s, bool *ret_none)
{
	return cmp_row_stat(&w->fig, s, ret_none);
}

/* ---- selecting and loading ---- */

static int check_runs(struct ctx *x)
{
	const struct result *first = &x->res[0];

	x->metric = 0;
	if (x->c.metric) {
		x->metric = first->nmetrics;
		for (unsigned m = 0; m < first->nmetrics; m++)
			if (strcmp(first->metric_names[m], x->c.metric) == 0)
				x->metric = m;
		if (x->metric == first->nmetrics) {
			fprintf(stderr, "latscope compare: option '--metric': run %lld has no metric '%s'\n",
				(long long)x->ids[0], x->c.metric);
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < x->nres; i++) {
		const struct result *r = &x->res[i];
		if (strcmp(r->probe, first->probe) != 0) {
			fprintf(stderr, "latscope compare: runs %lld and %lld are of different probes (%s, %s): "
				"compare runs of one probe\n", (long long)x->ids[0], (long long)x->ids[i], first->probe,
				r->probe);
			return EXIT_USAGE;
		}
		if (x->metric >= r->nmetrics || strcmp(r->metric_names[x->metric], first->metric_names[x->metric]) != 0) {
			fprintf(stderr, "latscope compare: run %lld does not have the metric '%s'\n", (long long)x->ids[i],
				first->metric_names[x->metric]);
			return EXIT_USAGE;
		}
		if (!block_of(x, r)) {
			fprintf(stderr, "latscope compare: option '--cpu': run %lld did not measure cpu %d\n",
				(long long)x->ids[i], x->cpu);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* ---- options that need the runs ---- */

static int split_list(const char *text, char out[][LABEL_KEY_MAX], size_t max, size_t *ret_n, const char *opt)
{
	size_t n = 0;
	const char *p = text;
	for (;;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= LABEL_KEY_MAX || n >= max) {
			fprintf(stderr, "latscope compare: option '%s': '%s' is not a comma-separated list of names%s\n", opt,
				text, n >= max ? " (too many)" : "");
			return EXIT_USAGE;
		}
		memcpy(out[n], p, len);
		out[n++][len] = '\0';
		if (!p[len])
			break;
		p += len + 1u;
	}
	*ret_n = n;
	return EXIT_OK;
}

static int parse_columns(struct ctx *x)
{
	char names[40][LABEL_KEY_MAX];
	size_t n;
	int code = split_list(x->c.columns ? x->c.columns : "min,mean,p99,max,warm_max,missed", names, 40, &n,
			      "--columns");
	if (code != EXIT_OK)
		return code;
	for (size_t i = 0; i < n; i++) {
		struct column *col = &x->cols[x->ncols++];
		memset(col, 0, sizeof(*col));
		snprintf(col->name, sizeof(col->name), "%.*s", LABEL_KEY_MAX - 1, names[i]);
		if (strcmp(names[i], "runs") == 0) {
			col->kind = COL_RUNS;
			continue;
		}
		bool found = false;
		for (size_t k = 0; k < sizeof(all_stats) / sizeof(all_stats[0]); k++)
			if (strcmp(expr_stat_name(all_stats[k]), names[i]) == 0) {
				col->kind = COL_STAT;
				col->stat = all_stats[k];
				found = true;
			}
		if (found)
			continue;
		for (size_t r = 0; r < x->nres && !found; r++)
			found = label_of(&x->res[r], names[i]) != NULL;
		if (!found) {
			fprintf(stderr, "latscope compare: option '--columns': '%s' is neither a figure (count min mean "
				"stddev p50 p90 p99 p99.9 p99.99 max warm_max above_pct missed runs) nor a label of these runs\n",
				names[i]);
			return EXIT_USAGE;
		}
		col->kind = COL_LABEL;
	}
	return EXIT_OK;
}

/* ---- grouping ---- */

/* Numbers as numbers ("2" before "10"), the rest as text. */
static int natural_cmp(const char *a, const char *b)
{
	char *ea, *eb;
	double da = strtod(a, &ea), db = strtod(b, &eb);
	if (*a && *b && !*ea && !*eb && da != db)
		return da < db ? -1 : 1;
	return strcmp(a, b);
}

static int key_cmp(const struct ctx *x, const struct labels *a, const struct labels *b)
{
	for (size_t k = 0; k < x->nby; k++) {
		int c = natural_cmp(a->items[k].value, b->items[k].value);
		if (c)
			return c;
	}
	return 0;
}

static int add_run(struct ctx *x, struct row *w, size_t ri)
{
	const struct cpu_result *cr = block_of(x, &x->res[ri]);
	size_t *runs;

	if (!cr)
		return -EINVAL;         /* check_runs made sure every run has the block */
	runs = realloc(w->runs, (w->nruns + 1u) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	w->runs = runs;
	w->runs[w->nruns++] = ri;
	return cmp_row_add(&w->fig, cr, x->metric);
}

static int build_rows(struct ctx *x)
{
	x->rows = calloc(x->nres, sizeof(*x->rows));
	if (!x->rows)
		return -ENOMEM;
	for (size_t ri = 0; ri < x->nres; ri++) {
		struct labels key = { 0 };
		for (size_t k = 0; k < x->nby; k++) {
			const char *v = label_of(&x->res[ri], x->by[k]);
			snprintf(key.items[k].key, sizeof(key.items[k].key), "%s", x->by[k]);
			snprintf(key.items[k].value, sizeof(key.items[k].value), "%s", v ? v : "-");
		}
		key.n = (unsigned)x->nby;
		size_t g = 0;
		if (x->nby)
			while (g < x->nrows && key_cmp(x, &x->rows[g].key, &key) != 0)
				g++;
		else
			g = x->nrows;
		if (g == x->nrows) {
			struct row *w = &x->rows[x->nrows++];
			w->key = key;
			if (cmp_row_init(&w->fig) < 0)
				return -ENOMEM;
		}
		if (add_run(x, &x->rows[g], ri) < 0)
			return -ENOMEM;
	}
	/* Rows in the order of their label values (insertion sort keeps equal keys stable). */
	for (size_t i = 1; x->nby && i < x->nrows; i++)
		for (size_t j = i; j > 0 && key_cmp(x, &x->rows[j - 1u].key, &x->rows[j].key) > 0; j--) {
			struct row t = x->rows[j];
			x->rows[j] = x->rows[j - 1u];
			x->rows[j - 1u] = t;
		}
	return 0;
}

static void free_rows(struct ctx *x)
{
	for (size_t i = 0; x->rows && i < x->nrows; i++) {
		free(x->rows[i].runs);
		cmp_row_free(&x->rows[i].fig);
	}
	free(x->rows);
}

static int find_baseline(struct ctx *x)
{
	struct opt_error err;
	int64_t *ids;
	size_t n;

	x->ref = 0;
	if (!x->c.baseline)
		return EXIT_OK;
	const char *arg = x->c.baseline;
	if (storecmd_parse_ids(&arg, 1, &ids, &n, &err) < 0 || n != 1) {
		if (n > 1)
			free(ids);
		return storecmd_usage("compare", "option '--baseline': one run id, please");
	}
	for (size_t g = 0; g < x->nrows; g++)
		for (size_t k = 0; k < x->rows[g].nruns; k++)
			if (x->ids[x->rows[g].runs[k]] == ids[0]) {
				x->ref = g;
				free(ids);
				return EXIT_OK;
			}
	fprintf(stderr, "latscope compare: option '--baseline': run %lld is not among the compared runs\n",
		(long long)ids[0]);
	free(ids);
	return EXIT_USAGE;
}

/* ---- output ---- */

static void row_name(const struct ctx *x, const struct row *w, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	if (!x->nby) {
		snprintf(buf, size, "run %lld", (long long)x->ids[w->runs[0]]);
		return;
	}
	for (size_t k = 0; k < x->nby && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k ? " " : "", x->by[k], w->key.items[k].value);
}

static void fmt_value(enum expr_stat s, double v, bool raw, char *buf, size_t size)
{
	if (s == EXPR_ABOVE_PCT)
		snprintf(buf, size, raw ? "%.6g" : "%.3f", v);
	else if (!cmp_stat_is_time(s) || raw)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.1f", v / 1000.0);
}

static double change_pct(double v, double base)
{
	return base != 0.0 ? (v - base) / base * 100.0 : (v == 0.0 ? 0.0 : (double)INFINITY);
}

static void runs_text(const struct ctx *x, const struct row *w, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < w->nruns && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", k ? "," : "", (long long)x->ids[w->runs[k]]);
}

static int fill_table(const struct ctx *x, struct table *t, bool raw)
{
	size_t nkey = x->nby ? x->nby : 1u;
	int r = table_init(t, nkey + x->ncols);

	if (r < 0)
		return r;
	for (size_t k = 0; k < nkey; k++)
		table_set(t, 0, k, "%s", x->nby ? x->by[k] : "run");
	for (size_t c = 0; c < x->ncols; c++) {
		const struct column *col = &x->cols[c];
		bool time = col->kind == COL_STAT && cmp_stat_is_time(col->stat);
		table_set(t, 0, nkey + c, "%s%s", col->name, time ? (raw ? " (ns)" : " (us)") : "");
		if (col->kind == COL_STAT)
			table_align_right(t, nkey + c);
	}
	for (size_t g = 0; g < x->nrows; g++) {
		const struct row *w = &x->rows[g];
		long ri = table_add_row(t);
		if (ri < 0)
			return -ENOMEM;
		for (size_t k = 0; k < nkey; k++) {
			if (x->nby)
				table_set(t, (size_t)ri, k, "%s", w->key.items[k].value);
			else
				table_set(t, (size_t)ri, k, "%lld", (long long)x->ids[w->runs[0]]);
		}
		for (size_t c = 0; c < x->ncols; c++) {
			const struct column *col = &x->cols[c];
			char v[64], runs[256];
			if (col->kind == COL_RUNS) {
				runs_text(x, w, runs, sizeof(runs));
				table_set(t, (size_t)ri, nkey + c, "%s", runs);
				continue;
			}
			if (col->kind == COL_LABEL) {
				const char *lv = label_of(&x->res[w->runs[0]], col->name);
				for (size_t k = 1; k < w->nruns; k++) {
					const char *o = label_of(&x->res[w->runs[k]], col->name);
					if (!lv || !o || strcmp(lv, o) != 0)
						lv = "(mixed)";
				}
				table_set(t, (size_t)ri, nkey + c, "%s", lv ? lv : "-");
				continue;
			}
			bool none, bnone;
			double val = stat_value(w, col->stat, &none);
			double base = stat_value(&x->rows[x->ref], col->stat, &bnone);
			if (none) {
				table_set(t, (size_t)ri, nkey + c, "-");
				continue;
			}
			fmt_value(col->stat, val, raw, v, sizeof(v));
			if (g == x->ref || !x->c.baseline || bnone || raw)
				table_set(t, (size_t)ri, nkey + c, "%s", v);
			else
				table_set(t, (size_t)ri, nkey + c, "%s (%+.0f%%)", v, change_pct(val, base));
		}
	}
	return 0;
}

/* One verdict of row g against the baseline. */
static int judge(const struct ctx *x, size_t g, double stat, struct verdict *ret)
{
	return cmp_judge(&x->rows[x->ref].fig, &x->rows[g].fig, stat, ret);
}

/* ---- gates ---- */

struct gate_outcome {
	size_t row, gate;
	bool failed;
	char message[640];
};

static size_t run_gates(const struct ctx *x, struct gate_outcome *out)
{
	size_t n = 0;
	for (unsigned k = 0; k < x->c.fail_if.n; k++) {
		const struct expr *e = &x->gates[k];
		for (size_t g = 0; g < x->nrows; g++) {
			if (e->kind == EXPR_RELATIVE && g == x->ref)
				continue;
			bool none, bnone;
			double v = stat_value(&x->rows[g], e->stat, &none);
			double base = stat_value(&x->rows[x->ref], e->stat, &bnone);
			char name[192], ex[96], vs[64], bs[64];
			struct gate_outcome *o = &out[n++];
			o->row = g;
			o->gate = k;
			o->failed = !none && !(e->kind == EXPR_RELATIVE && bnone) && expr_fails(e, v, base);
			row_name(x, &x->rows[g], name, sizeof(name));
			expr_format(e, ex, sizeof(ex));
			fmt_value(e->stat, v, false, vs, sizeof(vs));
			fmt_value(e->stat, base, false, bs, sizeof(bs));
			const char *unit = cmp_stat_is_time(e->stat) ? "us" : "";
			if (none)
				snprintf(o->message, sizeof(o->message), "%s: %s has no value: not judged", name,
					 expr_stat_name(e->stat));
			else if (e->kind == EXPR_RELATIVE)
				snprintf(o->message, sizeof(o->message), "%s: %s %s%s vs baseline %s%s (%+.1f%%): %s", name,
					 expr_stat_name(e->stat), vs, unit, bs, unit, change_pct(v, base), ex);
			else
				snprintf(o->message, sizeof(o->message), "%s: %s %s%s: %s", name, expr_stat_name(e->stat), vs, unit,
					 ex);
		}
	}
	return n;
}

static int write_junit(const struct ctx *x, const struct gate_outcome *o, size_t n)
{
	struct junit_case *cases = calloc(n ? n : 1, sizeof(*cases));
	char (*names)[160] = calloc(n ? n : 1, sizeof(*names));
	char (*classes)[192] = calloc(n ? n : 1, sizeof(*classes));
	int r = -ENOMEM;

	if (cases && names && classes) {
		for (size_t i = 0; i < n; i++) {
			row_name(x, &x->rows[o[i].row], classes[i], sizeof(classes[i]));
			expr_format(&x->gates[o[i].gate], names[i], sizeof(names[i]));
			cases[i] = (struct junit_case){ .classname = classes[i], .name = names[i], .failed = o[i].failed,
							.message = o[i].failed ? o[i].message : NULL,
							.detail = o[i].failed ? o[i].message : NULL };
		}
		r = junit_write(x->c.junit, "latscope compare", cases, n);
	}
	free(cases);
	free(names);
	free(classes);
	if (r < 0)
		fprintf(stderr, "latscope compare: option '--junit': cannot write '%s': %s\n", x->c.junit, strerror(-r));
	return r;
}

/* JSON has no NaN or infinity: no value is null. */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *json_output(const struct ctx *x, const struct verdict (*v)[2], const struct gate_outcome *o, size_t no)
{
	json_t *doc = json_object(), *rows = json_array(), *verdicts = json_array(), *gates = json_array();
	json_object_set_new(doc, "probe", json_string(x->res[0].probe));
	json_object_set_new(doc, "metric", json_string(x->res[0].metric_names[x->metric]));
	json_object_set_new(doc, "cpu", x->cpu < 0 ? json_string("all") : json_integer(x->cpu));
	json_object_set_new(doc, "baseline_row", json_integer((json_int_t)x->ref));
	for (size_t g = 0; g < x->nrows; g++) {
		const struct row *w = &x->rows[g];
		json_t *row = json_object(), *key = json_object(), *runs = json_array(), *figs = json_object();
		for (size_t k = 0; k < x->nby; k++)
			json_object_set_new(key, x->by[k], json_string(w->key.items[k].value));
		for (size_t k = 0; k < w->nruns; k++)
			json_array_append_new(runs, json_integer(x->ids[w->runs[k]]));
		for (size_t k = 0; k < sizeof(all_stats) / sizeof(all_stats[0]); k++) {
			bool none;
			double val = stat_value(w, all_stats[k], &none);
			char name[48];
			snprintf(name, sizeof(name), "%s%s", expr_stat_name(all_stats[k]), cmp_stat_is_time(all_stats[k]) ? "_ns" : "");
			json_object_set_new(figs, name, none ? json_null() : real_or_null(val));
		}
		json_object_set_new(row, "labels", key);
		json_object_set_new(row, "runs", runs);
		json_object_set_new(row, "figures", figs);
		json_array_append_new(rows, row);
		if (g == x->ref)
			continue;
		for (int k = 0; k < 2; k++) {
			const struct verdict *vd = &v[g][k];
			json_t *jv = json_object();
			json_object_set_new(jv, "row", json_integer((json_int_t)g));
			json_object_set_new(jv, "against_row", json_integer((json_int_t)x->ref));
			json_object_set_new(jv, "statistic", json_string(k ? "p99" : "mean"));
			json_object_set_new(jv, "enough_windows", json_boolean(vd->enough));
			json_object_set_new(jv, "ratio", real_or_null(vd->ratio));
			json_object_set_new(jv, "ci95_low", real_or_null(vd->lo));
			json_object_set_new(jv, "ci95_high", real_or_null(vd->hi));
			json_object_set_new(jv, "drift", real_or_null(vd->drift));
			json_object_set_new(jv, "verdict", json_string(!vd->enough ? "too few windows" : vd->direction > 0 ? "slower"
								  : vd->direction < 0 ? "faster" : "no significant difference"));
			json_array_append_new(verdicts, jv);
		}
	}
	for (size_t i = 0; i < no; i++) {
		json_t *jg = json_object();
		char ex[96];
		expr_format(&x->gates[o[i].gate], ex, sizeof(ex));
		json_object_set_new(jg, "row", json_integer((json_int_t)o[i].row));
		json_object_set_new(jg, "expression", json_string(ex));
		json_object_set_new(jg, "failed", json_boolean(o[i].failed));
		json_object_set_new(jg, "message", json_string(o[i].message));
		json_array_append_new(gates, jg);
	}
	json_object_set_new(doc, "rows", rows);
	json_object_set_new(doc, "verdicts", verdicts);
	json_object_set_new(doc, "gates", gates);
	return doc;
}

static int report(struct ctx *x)
{
	struct verdict (*v)[2] = calloc(x->nrows, sizeof(*v));
	struct gate_outcome *o = calloc((size_t)x->c.fail_if.n * x->nrows + 1u, sizeof(*o));
	struct table t = { 0 };
	int code = EXIT_OK;
	size_t no;

	if (!v || !o)
		goto oom;
	for (size_t g = 0; g < x->nrows; g++)
		if (g != x->ref && (judge(x, g, BOOT_MEAN, &v[g][0]) < 0 || judge(x, g, 99.0, &v[g][1]) < 0))
			goto oom;
	no = run_gates(x, o);
	if (x->c.format == FMT_JSON) {
		json_t *doc = json_output(x, (const struct verdict (*)[2])v, o, no);
		char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) : NULL;
		json_decref(doc);
		if (!text)
			goto oom;
		puts(text);
		free(text);
	} else {
		if (fill_table(x, &t, x->c.format == FMT_CSV) < 0)
			goto oom;
		table_print(stdout, &t, x->c.format == FMT_TEXT ? TABLE_TEXT : x->c.format == FMT_MARKDOWN ? TABLE_MARKDOWN
												     : TABLE_CSV);
		if (x->c.format != FMT_CSV) {
			char aname[192], bname[192], line[640];
			row_name(x, &x->rows[x->ref], aname, sizeof(aname));
			fputs(x->c.format == FMT_MARKDOWN ? "\n" : "", stdout);
			for (size_t g = 0; g < x->nrows; g++) {
				if (g == x->ref)
					continue;
				row_name(x, &x->rows[g], bname, sizeof(bname));
				for (int k = 0; k < 2; k++) {
					cmp_verdict_text(bname, aname, k ? "p99" : "mean", &v[g][k], line, sizeof(line));
					printf("%s%s\n", x->c.format == FMT_MARKDOWN ? "- " : "", line);
				}
			}
		}
	}
	for (size_t i = 0; i < no; i++)
		if (o[i].failed) {
			fprintf(stderr, "latscope compare: FAIL %s\n", o[i].message);
			code = EXIT_THRESHOLD;
		}
	if (x->c.junit && write_junit(x, o, no) < 0)
		code = EXIT_ERROR;
	table_free(&t);
	free(v);
	free(o);
	return code;
oom:
	table_free(&t);
	free(v);
	free(o);
	fprintf(stderr, "latscope compare: out of memory\n");
	return EXIT_ERROR;
}

static int parse_cpu(struct ctx *x)
{
	uint64_t v;
	x->cpu = -1;
	if (!x->c.cpu || strcmp(x->c.cpu, "all") == 0)
		return EXIT_OK;
	if (parse_u64(x->c.cpu, &v) < 0 || v >= CPUSET_MAX)
		return storecmd_usage("compare", "option '--cpu': a CPU number or 'all', please");
	x->cpu = (int)v;
	return EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	struct ctx x;
	struct opt_result given;
	struct store *st = NULL;
	int code;

	memset(&x, 0, sizeof(x));
	if ((code = storecmd_parse(&compare_spec, argc, argv, &x.c, &given)) >= 0)
		return code;
	for (unsigned k = 0; k < x.c.fail_if.n; k++) {
		char err[256], msg[400];
		if (expr_parse(x.c.fail_if.items[k], &x.gates[k], err, sizeof(err)) < 0) {
			snprintf(msg, sizeof(msg), "option '--fail-if': '%s': %s", x.c.fail_if.items[k], err);
			return storecmd_usage("compare", msg);
		}
	}
	if (x.c.by && (code = split_list(x.c.by, x.by, sizeof(x.by) / sizeof(x.by[0]), &x.nby, "--by")) != EXIT_OK)
		return code;
	if ((code = parse_cpu(&x)) != EXIT_OK)
		return code;
	const struct output junit = { "'--junit'", x.c.junit };
	if ((code = outputs_check("compare", &junit, 1, x.c.db, true)) >= 0)
		return code;
	if ((code = storecmd_open("compare", x.c.db, STORE_READONLY, &st)) != EXIT_OK)
		return code;
	if ((code = storecmd_select("compare", &given, x.c.probe, &x.c.labels, st, &x.ids, &x.nres)) != EXIT_OK)
		goto out;
	if ((code = storecmd_load("compare", st, x.ids, x.nres, &x.res)) != EXIT_OK) {
		x.res = NULL;
		goto out;
	}
	if ((code = check_runs(&x)) != EXIT_OK || (code = parse_columns(&x)) != EXIT_OK)
		goto out;
	if (build_rows(&x) < 0) {
		fprintf(stderr, "latscope compare: out of memory\n");
		code = EXIT_ERROR;
		goto out;
	}
	if ((code = find_baseline(&x)) != EXIT_OK)
		goto out;
	code = report(&x);
out:
	free_rows(&x);
	storecmd_free_results(x.res, x.nres);
	free(x.ids);
	store_close(st);
	return code;
}
