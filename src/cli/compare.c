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
#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "core/bootstrap.h"
#include "core/expr.h"
#include "core/nstime.h"
#include "probe/probe.h"
#include "report/junit.h"
#include "report/table.h"
#include "report/tprint.h"
#include "result/compare.h"
#include "result/gate.h"
#include "result/rows.h"
#include "sys/atomicfile.h"

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
	bool db_trust;
	bool help;
};

#define DEFAULT_COLUMNS "min,mean,p99,max,warm_max,missed"
/* A probe of operations (io) shows what they do per second and what each costs, not missed periods. */
#define DEFAULT_OP_COLUMNS "min,mean,p99,max,warm_max,ops_per_sec,bytes_per_sec,cpu_system_per_op," \
	"cpu_softirq_per_op,cpu_iowait_per_op"
#define FIGURE_NAMES "count min mean stddev p50 p90 p99 p99.9 p99.99 max warm_max above_pct missed spikes " \
	"spikes_per_hour mtbf smis, and for io ops_per_sec bytes_per_sec cpu_KIND_per_op (KIND: user nice system idle " \
	"iowait irq softirq steal)"

static const char *column_word(size_t i);

static const struct opt compare_opts[] = {
	{ "label", 0, OPT_LABEL, offsetof(struct compare_cmd, labels),
	  .help = "compare the runs with this label (repeatable: all must match) instead of listing ids" },
	{ "probe", 0, OPT_STRING, offsetof(struct compare_cmd, probe), .metavar = "PROBE",
	  .values = OPT_VALUES_WORDS, .words = storecmd_probe_word,
	  .help = "only the runs of this probe (of the ids given, or of the --label selection)" },
	{ "by", 0, OPT_STRING, offsetof(struct compare_cmd, by), .metavar = "KEYS",
	  .values = OPT_VALUES_LABEL_KEYS,
	  .help = "one row per group of runs with the same values of these labels (config,domain,sched), in that order" },
	{ "columns", 0, OPT_STRING, offsetof(struct compare_cmd, columns), .metavar = "LIST",
	  .values = OPT_VALUES_WORD_KEY_LIST, .words = column_word,
	  .help = "figures to show: " FIGURE_NAMES ", runs, host (spikes by the host's cause, for --host runs; shown by "
		  "default when a run has it; smis too, when a run counted SMIs), or a label (default " DEFAULT_COLUMNS "; for io "
		  DEFAULT_OP_COLUMNS ")" },
	{ "baseline", 0, OPT_STRING, offsetof(struct compare_cmd, baseline), .metavar = "ID",
	  .values = OPT_VALUES_RUN_ID,
	  .help = "the run (or its group) every other row is measured against (default: the first row)" },
	{ "format", 0, OPT_ENUM, offsetof(struct compare_cmd, format), .choices = format_choices,
	  .help = "text and markdown in the probe's unit (us, or ns for noise); csv and json in nanoseconds" },
	{ "fail-if", 0, OPT_STRLIST, offsetof(struct compare_cmd, fail_if), .metavar = "EXPR",
	  .help = "exit with status 3 when a row fails this gate: p99>+10% (against the baseline, when the verdict "
		  "also calls it real; p99>+10%! compares raw), max>200us, missed>0; repeatable" },
	{ "junit", 0, OPT_STRING, offsetof(struct compare_cmd, junit), .metavar = "FILE", .values = OPT_VALUES_FILE,
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
		 "each row is judged against the baseline: is the difference in mean and p99 real?  Each is judged\n"
		 "at 97.5 %, both together at 95 %, from the wider of a bootstrap over the runs' windows and batch\n"
		 "means over their contiguous parts (see doc/compare-method.md).  Runs of several probes (a\n"
		 "suite's) get a table and verdicts per probe.",
	.opts = compare_opts,
	.nopts = ARRAY_SIZE(compare_opts),
	.help_offset = offsetof(struct compare_cmd, help),
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "run id",
	.pos_values = OPT_VALUES_RUN_ID,
	.exits = ", 3 a --fail-if gate failed",
};

const struct cmd_spec *cmd_compare_spec(void)
{
	return &compare_spec;
}

/* ---- columns ---- */

/* COL_HOST: the spikes by the host's cause (--host runs). */
enum col_kind { COL_STAT, COL_RUNS, COL_LABEL, COL_HOST };

struct column {
	enum col_kind kind;
	enum expr_stat stat;            /* COL_STAT */
	char name[LABEL_KEY_MAX];
};

static const enum expr_stat all_stats[] = {
	EXPR_COUNT, EXPR_MIN, EXPR_MEAN, EXPR_STDDEV, EXPR_P50, EXPR_P90, EXPR_P99, EXPR_P999, EXPR_P9999,
	EXPR_MAX, EXPR_WARM_MAX, EXPR_ABOVE_PCT, EXPR_MISSED, EXPR_SPIKES, EXPR_SPIKES_PER_HOUR, EXPR_MTBF,
	/* a run of operations' only (io): of the whole run, whatever --cpu */
	EXPR_OPS_PER_SEC, EXPR_BYTES_PER_SEC, EXPR_CPU_USER_PER_OP, EXPR_CPU_NICE_PER_OP, EXPR_CPU_SYSTEM_PER_OP,
	EXPR_CPU_IDLE_PER_OP, EXPR_CPU_IOWAIT_PER_OP, EXPR_CPU_IRQ_PER_OP, EXPR_CPU_SOFTIRQ_PER_OP, EXPR_CPU_STEAL_PER_OP,
	EXPR_SMIS,
};

/* The columns that are no figure, by name. */
static const struct {
	const char *name;
	enum col_kind kind;
} named_columns[] = { { "runs", COL_RUNS }, { "host", COL_HOST } };

/* What --columns takes but a label: the figures, then the named columns. */
static const char *column_word(size_t i)
{
	if (i < ARRAY_SIZE(all_stats))
		return expr_stat_name(all_stats[i]);
	i -= ARRAY_SIZE(all_stats);
	return i < ARRAY_SIZE(named_columns) ? named_columns[i].name : NULL;
}

static bool is_op_stat(enum expr_stat s)
{
	return s >= EXPR_OPS_PER_SEC && s <= EXPR_CPU_STEAL_PER_OP;
}

struct ctx {
	struct compare_cmd c;
	struct result *res;
	int64_t *ids;
	size_t nres;
	unsigned metric;
	int cpu;                        /* -1: all CPUs merged */
	char by[CMP_BY_MAX][LABEL_KEY_MAX];
	size_t nby;
	struct column cols[40];
	size_t ncols;
	struct cmp_rows rows;           /* rows.ref: the baseline row */
	struct expr gates[STRLIST_MAX];
	double unit_ns;                 /* how the probe's times read: 1000 (us) or 1 (ns) */
	const char *unit;               /* "us" or "ns" */
	bool several;                   /* one of several probes' blocks: say which */
	bool per_op;                    /* the probe's values are operations (io): their rate and cost too */
	int64_t baseline_id;            /* --baseline; 0: the first row */
};

/* The runs as result/rows.h groups them. */
static struct cmp_runs runs_of(const struct ctx *x)
{
	return (struct cmp_runs){ .res = x->res,
				  .ids = x->ids,
				  .n = x->nres,
				  .by = x->by,
				  .nby = x->nby,
				  .cpu = x->cpu,
				  .metric = x->metric };
}

static double stat_value(const struct cmp_group *w, enum expr_stat s, bool *ret_none)
{
	return cmp_row_stat(&w->fig, s, ret_none);
}

/* ---- selecting and loading ---- */

static int check_runs(struct ctx *x)
{
	struct cmp_runs in = runs_of(x);
	struct lat_error err;

	if (cmp_runs_check(&in, x->c.metric, &x->metric, &err) < 0)
		return storecmd_usage("compare", err.msg);
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
			return storecmd_refuse("compare", "option '%s': '%s' is not a comma-separated list of names%s", opt,
				text, n >= max ? " (too many)" : "");
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
	size_t n = 0;
	int code = split_list(x->c.columns ? x->c.columns : x->per_op ? DEFAULT_OP_COLUMNS : DEFAULT_COLUMNS, names, 40,
			      &n, "--columns");
	if (code != EXIT_OK)
		return code;
	for (size_t i = 0; i < n; i++) {
		struct column *col = &x->cols[x->ncols++];
		memset(col, 0, sizeof(*col));
		snprintf(col->name, sizeof(col->name), "%.*s", LABEL_KEY_MAX - 1, names[i]);
		bool found = false;
		for (size_t k = 0; k < ARRAY_SIZE(named_columns) && !found; k++)
			if (strcmp(named_columns[k].name, names[i]) == 0) {
				col->kind = named_columns[k].kind;
				found = true;
			}
		if (found)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(all_stats); k++)
			if (strcmp(expr_stat_name(all_stats[k]), names[i]) == 0) {
				col->kind = COL_STAT;
				col->stat = all_stats[k];
				found = true;
			}
		if (found)
			continue;
		for (size_t r = 0; r < x->nres && !found; r++)
			found = result_label(&x->res[r], names[i]) != NULL;
		if (!found) {
			return storecmd_refuse("compare", "option '--columns': '%s' is neither a figure (" FIGURE_NAMES
					       ", runs, host) nor a label of these runs", names[i]);
		}
		col->kind = COL_LABEL;
	}
	/* Runs that counted SMIs get their column by default, beside what the user sees of the rest. */
	for (size_t r = 0; !x->c.columns && r < x->nres && x->ncols < ARRAY_SIZE(x->cols); r++)
		if (x->res[r].smi_asked && x->res[r].smi_source != SMI_SOURCE_NONE) {
			x->cols[x->ncols++] = (struct column){ .kind = COL_STAT, .stat = EXPR_SMIS, .name = "smis" };
			break;
		}
	/* Runs that asked their host get its causes by default. */
	for (size_t r = 0; !x->c.columns && r < x->nres && x->ncols < ARRAY_SIZE(x->cols); r++)
		if (x->res[r].host) {
			x->cols[x->ncols++] = (struct column){ .kind = COL_HOST, .name = "host" };
			break;
		}
	return EXIT_OK;
}

/* ---- output ---- */

static void row_name(const struct ctx *x, const struct cmp_group *w, char *buf, size_t size)
{
	struct cmp_runs in = runs_of(x);
	cmp_group_name(&in, w, buf, size);
}

static void runs_text(const struct ctx *x, const struct cmp_group *w, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < w->nruns && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", k ? "," : "", (long long)x->ids[w->runs[k]]);
}

/* "not_running 9, none 1": the host's causes of the row's spikes, those counted; "-" without --host. */
static void host_text(const struct ctx *x, const struct cmp_group *w, char *buf, size_t size)
{
	struct cmp_runs in = runs_of(x);
	json_t *sum = cmp_group_host_causes(&in, w);
	const char *name;
	json_t *n;
	size_t len = 0;

	snprintf(buf, size, "%s", sum ? "0" : "-");
	json_object_foreach(sum, name, n) {
		if (json_integer_value(n) > 0 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s %lld", len ? ", " : "", name,
						(long long)json_integer_value(n));
	}
	json_decref(sum);
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
		table_set(t, 0, nkey + c, "%s%s%s%s", col->name, time ? " (" : "", time ? (raw ? "ns" : x->unit) : "",
			  time ? ")" : "");
		if (col->kind == COL_STAT)
			table_align_right(t, nkey + c);
	}
	for (size_t g = 0; g < x->rows.n; g++) {
		const struct cmp_group *w = &x->rows.row[g];
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
			if (col->kind == COL_RUNS || col->kind == COL_HOST) {
				if (col->kind == COL_RUNS)
					runs_text(x, w, runs, sizeof(runs));
				else
					host_text(x, w, runs, sizeof(runs));
				table_set(t, (size_t)ri, nkey + c, "%s", runs);
				continue;
			}
			if (col->kind == COL_LABEL) {
				const char *lv = result_label(&x->res[w->runs[0]], col->name);
				for (size_t k = 1; k < w->nruns; k++) {
					const char *o =
						result_label(&x->res[w->runs[k]], col->name);
					if (!lv || !o || strcmp(lv, o) != 0)
						lv = "(mixed)";
				}
				table_set(t, (size_t)ri, nkey + c, "%s", lv ? lv : "-");
				continue;
			}
			bool none, bnone;
			double val = stat_value(w, col->stat, &none);
			double base = stat_value(&x->rows.row[x->rows.ref], col->stat, &bnone);
			if (none) {
				table_set(t, (size_t)ri, nkey + c, "-");
				continue;
			}
			cmp_stat_text(col->stat, val, raw, x->unit_ns, v, sizeof(v));
			if (g == x->rows.ref || !x->c.baseline || bnone || raw)
				table_set(t, (size_t)ri, nkey + c, "%s", v);
			else
				table_set(t, (size_t)ri, nkey + c, "%s (%+.0f%%)", v,
					  cmp_change_pct(val, base));
		}
	}
	return 0;
}

/* One verdict of row g against the baseline. */
static int judge(const struct ctx *x, size_t g, double stat, struct verdict *ret)
{
	return cmp_judge(&x->rows.row[x->rows.ref].fig, &x->rows.row[g].fig, stat, ret);
}

static int run_gates(const struct ctx *x, struct gate_outcome *out, size_t *ret_n)
{
	struct cmp_runs in = runs_of(x);
	const struct gate_table t = { &in, &x->rows, x->unit_ns, x->unit,
				      x->several ? x->res[0].probe : NULL };
	return gate_run(&t, x->gates, x->c.fail_if.n, out, ret_n);
}

/* Every block's gates as test cases, into the file opened before anything was read. */
static int write_junit(const struct compare_cmd *c, const struct expr *gates, const struct gate_outcome *o, size_t n,
		       struct atomic_file *sink)
{
	struct junit_case *cases = calloc(n ? n : 1, sizeof(*cases));
	char (*names)[160] = calloc(n ? n : 1, sizeof(*names));
	int r = -ENOMEM;

	if (cases && names) {
		for (size_t i = 0; i < n; i++) {
			expr_format(&gates[o[i].gate], names[i], sizeof(names[i]));
			cases[i] = (struct junit_case){ .classname = o[i].cls, .name = names[i], .failed = o[i].failed,
							.message = o[i].failed ? o[i].message : NULL,
							.detail = o[i].failed ? o[i].message : NULL };
		}
		r = junit_write_to(sink, "latscope compare", cases, n);
	}
	free(cases);
	free(names);
	if (r < 0)
		tprintf(stderr, "latscope compare: option '--junit': cannot write '%s': %s\n", c->junit, strerror(-r));
	return r;
}

/* JSON has no NaN or infinity: no value is null. */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Each row's tail fit, and every row's levels judged against the baseline's
 * (compare's tail verdicts: doc/tail-method.md).  NULL *ret_fits when the
 * rows have no tail (operations, or a metric but the leading one). */
struct tail_verdicts {
	struct tail_fit *fits;                          /* one a row */
	struct cmp_tail_verdict (*v)[CMP_TAIL_LEVELS];  /* one a row and level */
};

static int judge_tails(const struct ctx *x, struct tail_verdicts *ret)
{
	struct lat_error err;

	ret->fits = NULL;
	ret->v = NULL;
	if (x->per_op || x->metric != 0)
		return 0;
	ret->fits = calloc(x->rows.n, sizeof(*ret->fits));
	ret->v = calloc(x->rows.n, sizeof(*ret->v));
	if (!ret->fits || !ret->v)
		return -ENOMEM;
	for (size_t g = 0; g < x->rows.n; g++)
		if (cmp_row_tail(&x->rows.row[g].fig, &ret->fits[g], &err) < 0)
			return -ENOMEM;
	for (size_t g = 0; g < x->rows.n; g++)
		for (unsigned k = 0; k < CMP_TAIL_LEVELS; k++)
			cmp_tail_judge(&ret->fits[x->rows.ref], &ret->fits[g], cmp_tail_periods[k], &ret->v[g][k]);
	return 0;
}

static json_t *interval_json(const struct tail_interval *t)
{
	return json_pack("{s:o, s:o, s:o}", "est", real_or_null(t->est), "lo", real_or_null(t->lo), "hi",
			 real_or_null(t->hi));
}

/* A row's "tail": its once-an-hour and once-a-day levels and whether the fit is reliable. */
static json_t *row_tail_json(const struct tail_fit *f)
{
	json_t *o = json_pack("{s:b, s:s}", "reliable", f->reliable, "why", f->why);
	for (unsigned k = 0; o && k < CMP_TAIL_LEVELS; k++) {
		char key[32];
		snprintf(key, sizeof(key), "level_%s_ns", tail_period_name(cmp_tail_periods[k]));
		json_object_set_new(o, key, f->status == TAIL_OK ? interval_json(&f->level_ns[cmp_tail_periods[k]])
								 : json_null());
	}
	return o;
}

static json_t *tail_verdict_json(size_t g, size_t ref, unsigned period, const struct cmp_tail_verdict *v)
{
	char stat[32];
	snprintf(stat, sizeof(stat), "level_%s", tail_period_name(period));
	json_t *jv = json_pack("{s:I, s:I, s:s, s:b, s:o, s:o, s:o, s:s}", "row", (json_int_t)g, "against_row",
			       (json_int_t)ref, "statistic", stat, "reliable", v->judged, "ratio", real_or_null(v->ratio),
			       "ci95_low", real_or_null(v->lo), "ci95_high", real_or_null(v->hi), "verdict",
			       !v->judged ? "not reliable" : v->direction > 0 ? "higher" : v->direction < 0 ? "lower"
				       : "no significant difference");
	if (jv && !v->judged)
		json_object_set_new(jv, "why", json_string(v->why));
	return jv;
}

static json_t *json_output(const struct ctx *x, const struct verdict (*v)[2], const struct tail_verdicts *tv,
			   const struct gate_outcome *o, size_t no)
{
	json_t *doc = json_object(), *rows = json_array(), *verdicts = json_array(), *gates = json_array();
	const struct cmp_runs in = runs_of(x);
	json_object_set_new(doc, "probe", json_string(x->res[0].probe));
	json_object_set_new(doc, "metric", json_string(x->res[0].metric_names[x->metric]));
	json_object_set_new(doc, "cpu", x->cpu < 0 ? json_string("all") : json_integer(x->cpu));
	json_object_set_new(doc, "baseline_row", json_integer((json_int_t)x->rows.ref));
	for (size_t g = 0; g < x->rows.n; g++) {
		const struct cmp_group *w = &x->rows.row[g];
		json_t *row = json_object(), *key = json_object(), *runs = json_array(), *figs = json_object();
		for (size_t k = 0; k < x->nby; k++)
			json_object_set_new(key, x->by[k], json_string(w->key.items[k].value));
		for (size_t k = 0; k < w->nruns; k++)
			json_array_append_new(runs, json_integer(x->ids[w->runs[k]]));
		for (size_t k = 0; k < ARRAY_SIZE(all_stats); k++) {
			if (is_op_stat(all_stats[k]) && !x->per_op)
				continue;
			bool none;
			double val = stat_value(w, all_stats[k], &none);
			char name[48];
			snprintf(name, sizeof(name), "%s%s", expr_stat_name(all_stats[k]), cmp_stat_is_time(all_stats[k]) ? "_ns" : "");
			json_object_set_new(figs, name, none ? json_null() : real_or_null(val));
		}
		json_object_set_new(row, "labels", key);
		json_object_set_new(row, "runs", runs);
		json_object_set_new(row, "figures", figs);
		json_t *host = cmp_group_host_causes(&in, w);
		if (host)
			json_object_set_new(row, "host_causes", host);
		if (tv->fits)
			json_object_set_new(row, "tail", row_tail_json(&tv->fits[g]));
		json_array_append_new(rows, row);
		if (g == x->rows.ref)
			continue;

		for (int k = 0; k < 2; k++) {
			const struct verdict *vd = &v[g][k];
			json_t *jv = json_object();
			json_object_set_new(jv, "row", json_integer((json_int_t)g));
			json_object_set_new(jv, "against_row",
					    json_integer((json_int_t)x->rows.ref));
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
		for (unsigned k = 0; tv->v && k < CMP_TAIL_LEVELS; k++)
			json_array_append_new(verdicts, tail_verdict_json(g, x->rows.ref, cmp_tail_periods[k], &tv->v[g][k]));
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

/* Add a block's gate outcomes to those of every block before it. */
static int keep_outcomes(struct gate_outcome **all, size_t *nall, const struct gate_outcome *o, size_t n)
{
	struct gate_outcome *grown = realloc(*all, (*nall + n + 1u) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memcpy(grown + *nall, o, n * sizeof(*o));
	*all = grown;
	*nall += n;
	return 0;
}

/* One probe's block: its table and verdicts (or its JSON into groups), and its gates. */
static int report(struct ctx *x, json_t *groups, struct gate_outcome **all, size_t *nall)
{
	struct verdict (*v)[2] = calloc(x->rows.n, sizeof(*v));
	struct gate_outcome *o = calloc((size_t)x->c.fail_if.n * x->rows.n + 1u, sizeof(*o));
	struct table t = { 0 };
	struct tail_verdicts tv = { 0 };
	size_t no = 0;
	int r = -ENOMEM;

	if (!v || !o || judge_tails(x, &tv) < 0)
		goto out;
	for (size_t g = 0; g < x->rows.n; g++)
		if (g != x->rows.ref && ((r = judge(x, g, BOOT_MEAN, &v[g][0])) < 0 ||
					 (r = judge(x, g, 99.0, &v[g][1])) < 0))
			goto out;
	if ((r = run_gates(x, o, &no)) < 0)
		goto out;
	r = -ENOMEM;
	if (x->c.format == FMT_JSON) {
		json_t *doc = json_output(x, (const struct verdict (*)[2])v, &tv, o, no);
		if (!doc || json_array_append_new(groups, doc) < 0)
			goto out;
	} else {
		if (fill_table(x, &t, x->c.format == FMT_CSV) < 0)
			goto out;
		if (x->several && x->c.format == FMT_MARKDOWN)
			tprintf(stdout, "#### %s\n\n", x->res[0].probe);
		else if (x->several && x->c.format == FMT_TEXT)
			tprintf(stdout, "%s, %s (%s):\n", x->res[0].probe, x->res[0].metric_names[x->metric], x->unit);
		if (table_print(stdout, &t, x->c.format == FMT_TEXT ? TABLE_TEXT : x->c.format == FMT_MARKDOWN
												 ? TABLE_MARKDOWN
												 : TABLE_CSV) < 0)
			goto out;
		if (x->c.format != FMT_CSV) {
			char aname[192], bname[192], line[640];
			row_name(x, &x->rows.row[x->rows.ref], aname, sizeof(aname));
			fputs(x->c.format == FMT_MARKDOWN ? "\n" : "", stdout);
			for (size_t g = 0; g < x->rows.n; g++) {
				if (g == x->rows.ref)
					continue;
				row_name(x, &x->rows.row[g], bname, sizeof(bname));
				for (int k = 0; k < 2; k++) {
					cmp_verdict_text(bname, aname, k ? "p99" : "mean", &v[g][k], line, sizeof(line));
					tprintf(stdout, "%s%s\n", x->c.format == FMT_MARKDOWN ? "- " : "", line);
				}
				for (unsigned k = 0; tv.v && k < CMP_TAIL_LEVELS; k++) {
					cmp_tail_text(bname, aname, cmp_tail_periods[k], &tv.v[g][k], line, sizeof(line));
					tprintf(stdout, "%s%s\n", x->c.format == FMT_MARKDOWN ? "- " : "", line);
				}
			}
		}
	}
	r = keep_outcomes(all, nall, o, no);
out:
	table_free(&t);
	free(tv.fits);
	free(tv.v);
	free(v);
	free(o);
	return r;
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

/* The probes among the runs, in the order they first come. */
static size_t probes_of(const struct result *res, size_t n, const char **ret)
{
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < np && strcmp(ret[k], res[i].probe) != 0)
			k++;
		if (k == np)
			ret[np++] = res[i].probe;
	}
	return np;
}

/* The runs of one probe as a context of their own (shallow copies: x owns the results). */
static int compare_probe(const struct ctx *x, const char *probe, bool several, json_t *groups,
			 struct gate_outcome **all, size_t *nall)
{
	struct ctx g = *x;
	const struct probe_ops *ops = probe_find(probe);
	int code;

	g.res = calloc(x->nres, sizeof(*g.res));
	g.ids = calloc(x->nres, sizeof(*g.ids));
	g.nres = 0;
	g.rows = (struct cmp_rows){ 0 };
	g.ncols = 0;
	g.several = several;
	g.unit_ns = ops && ops->unit_ns == 1 ? 1.0 : 1000.0;
	g.unit = ops && ops->unit_ns == 1 ? "ns" : "us";
	g.per_op = ops && ops->per_op_costs;
	if (!g.res || !g.ids) {
		code = EXIT_ERROR;
		goto oom;
	}
	for (size_t i = 0; i < x->nres; i++)
		if (strcmp(x->res[i].probe, probe) == 0) {
			g.res[g.nres] = x->res[i];
			probe_result_ops(&g.res[g.nres]);
			g.ids[g.nres++] = x->ids[i];
		}
	if ((code = check_runs(&g)) != EXIT_OK || (code = parse_columns(&g)) != EXIT_OK)
		goto done;
	struct cmp_runs in = runs_of(&g);
	int r = cmp_rows_build(&in, &g.rows);
	if (r == 0) {
		cmp_rows_set_baseline(&g.rows, &in, g.baseline_id);
		r = report(&g, groups, all, nall);
	}
	if (r == 0) {
		code = EXIT_OK;
		goto done;
	}
	if (r == -EOVERFLOW) {
		tprintf(stderr, "latscope compare: the %s runs hold more samples than can be added up or resampled "
			"(2^63): they cannot be compared\n", probe);
		code = EXIT_ERROR;
		goto done;
	}
oom:
	tprintf(stderr, "latscope compare: out of memory\n");
	code = EXIT_ERROR;
done:
	cmp_rows_free(&g.rows);
	free(g.res);
	free(g.ids);
	return code;
}

/* --baseline names one of the runs; each probe's block without it is judged against its first row. */
static int check_baseline(struct ctx *x)
{
	struct lat_error err;
	int64_t *ids;
	size_t n;

	if (!x->c.baseline)
		return EXIT_OK;
	const char *arg = x->c.baseline;
	if (storecmd_parse_ids(&arg, 1, &ids, &n, &err) < 0 || n != 1) {
		if (n > 1)
			free(ids);
		return storecmd_usage("compare", "option '--baseline': one run id, please");
	}
	bool found = false;
	for (size_t i = 0; i < x->nres && !found; i++)
		found = x->ids[i] == ids[0];
	x->baseline_id = ids[0];
	free(ids);
	if (!found)
		return storecmd_refuse("compare", "option '--baseline': run %lld is not among the compared runs",
				       (long long)x->baseline_id);
	return EXIT_OK;
}

/* With ids, --probe keeps those of that probe. */
static int keep_probe(struct ctx *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->nres; i++) {
		if (strcmp(x->res[i].probe, x->c.probe) != 0) {
			result_free(&x->res[i]);
			continue;
		}
		x->res[n] = x->res[i];
		x->ids[n++] = x->ids[i];
	}
	x->nres = n;
	if (n == 0) {
		return storecmd_refuse("compare", "option '--probe': none of the runs given is of probe '%s'", x->c.probe);
	}
	return EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	struct ctx x;
	struct opt_result given;
	struct store *st = NULL;
	struct atomic_file jsink = { .fd = -1 };
	struct gate_outcome *outcomes = NULL;
	size_t noutcomes = 0;
	json_t *groups = NULL;
	int code, r;

	memset(&x, 0, sizeof(x));
	if ((code = storecmd_parse(&compare_spec, argc, argv, &x.c, &given)) != LAT_GO_ON)
		return storecmd_exit(code);
	struct lat_error err;
	if (gate_parse(x.c.fail_if.items, x.c.fail_if.n, x.gates, &err) < 0)
		return storecmd_usage("compare", err.msg);
	if (x.c.by && (code = split_list(x.c.by, x.by, ARRAY_SIZE(x.by), &x.nby, "--by")) != EXIT_OK)
		return code;
	if ((code = parse_cpu(&x)) != EXIT_OK)
		return code;
	const struct output junit = { "'--junit'", x.c.junit };
	if ((code = outputs_check("compare", &junit, 1, x.c.db, true)) != 0)
		return code;
	/* Like every output, before anything is read: a gate's outcome must not be lost after the table. */
	if (x.c.junit && (r = atomic_file_open(x.c.junit, &jsink)) < 0) {
		char msg[4200];
		snprintf(msg, sizeof(msg), "option '--junit': cannot write '%s': %s", x.c.junit, strerror(-r));
		return storecmd_usage("compare", msg);
	}
	if ((code = storecmd_open("compare", x.c.db, STORE_READONLY, &st)) != EXIT_OK)
		goto out;
	if ((code = storecmd_select("compare", &given, given.npos ? NULL : x.c.probe, &x.c.labels, st, &x.ids,
				    &x.nres)) != EXIT_OK)
		goto out;
	if ((code = storecmd_load("compare", st, x.ids, x.nres, &x.res)) != EXIT_OK) {
		x.res = NULL;
		goto out;
	}
	if (given.npos && x.c.probe && (code = keep_probe(&x)) != EXIT_OK)
		goto out;
	if ((code = check_baseline(&x)) != EXIT_OK)
		goto out;
	const char **probes = calloc(x.nres, sizeof(*probes));
	groups = json_array();
	if (!probes || !groups) {
		free(probes);
		tprintf(stderr, "latscope compare: out of memory\n");
		code = EXIT_ERROR;
		goto out;
	}
	size_t np = probes_of(x.res, x.nres, probes);
	for (size_t p = 0; p < np && code == EXIT_OK; p++) {
		if (p && x.c.format != FMT_JSON)
			putchar('\n');         /* the probes' blocks apart */
		code = compare_probe(&x, probes[p], np > 1, groups, &outcomes, &noutcomes);
	}
	free(probes);
	if (code != EXIT_OK)
		goto out;
	if (x.c.format == FMT_JSON) {
		/* one probe: its object as ever; several: one each, under "probes" */
		json_t *doc = json_array_size(groups) == 1 ? json_incref(json_array_get(groups, 0))
							  : json_pack("{s:O}", "probes", groups);
		char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) : NULL;
		json_decref(doc);
		if (!text) {
			tprintf(stderr, "latscope compare: out of memory\n");
			code = EXIT_ERROR;
			goto out;
		}
		puts(text);
		free(text);
	}
	for (size_t i = 0; i < noutcomes; i++)
		if (outcomes[i].failed) {
			tprintf(stderr, "latscope compare: FAIL %s\n", outcomes[i].message);
			code = EXIT_THRESHOLD;
		}
	if (x.c.junit && write_junit(&x.c, x.gates, outcomes, noutcomes, &jsink) < 0)
		code = EXIT_ERROR;
out:
	json_decref(groups);
	free(outcomes);
	atomic_file_close(&jsink);
	storecmd_free_results(x.res, x.nres);
	free(x.ids);
	store_close(st);
	return code;
}
