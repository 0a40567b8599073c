#include "result/gate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/bootstrap.h"

int gate_parse(const char *const *texts, size_t n, struct expr *ret, struct lat_error *err)
{
	for (size_t k = 0; k < n; k++)
		if (expr_parse(texts[k], &ret[k], err) < 0)
			return err_prefix(err, -EINVAL, "option '--fail-if': '%s': ", texts[k]);
	return 0;
}

/* The bootstrap's statistic for a judged one (expr_stat_judged): a percentile, else the mean. */
static double verdict_stat(enum expr_stat s)
{
	static const struct {
		enum expr_stat stat;
		double pct;
	} percentiles[] = { { EXPR_P50, 50.0 },
			    { EXPR_P90, 90.0 },
			    { EXPR_P99, 99.0 },
			    { EXPR_P999, 99.9 },
			    { EXPR_P9999, 99.99 } };

	for (size_t k = 0; k < ARRAY_SIZE(percentiles); k++)
		if (percentiles[k].stat == s)
			return percentiles[k].pct;
	return BOOT_MEAN;
}

/* Does the verdict on row g agree with a failed relative gate?  why says what it found. */
static int verdict_agrees(const struct gate_table *t, const struct expr *e, size_t g,
			  const char *name, bool *failed, char *why, size_t size)
{
	const struct cmp_rows *rows = t->rows;
	struct verdict vd;
	char aname[192];
	int r = cmp_judge(&rows->row[rows->ref].fig, &rows->row[g].fig, verdict_stat(e->stat), &vd);

	if (r < 0)
		return r;
	int want = e->op == EXPR_GT || e->op == EXPR_GE ? 1 : -1;
	*failed = vd.direction == want;
	cmp_group_name(t->in, &rows->row[rows->ref], aname, sizeof(aname));
	cmp_verdict_text(name, aname, expr_stat_name(e->stat), &vd, why, size);
	if (!*failed)
		snprintf(why + strlen(why), size - strlen(why),
			 ": not failed, the change is not shown real "
			 "(add '!' to compare raw)");
	return 0;
}

/*
 * A relative gate on the mean or a percentile fails only when the verdict
 * agrees that the change is real and goes the gate's way: the figure alone
 * moves by more than 10 % between two runs of one configuration on a noisy
 * machine.  '!' asks for the raw comparison; other statistics have no verdict.
 */
static int gate_one(const struct gate_table *t, const struct expr *e, size_t g,
		    struct gate_outcome *o)
{
	bool none, bnone;
	double v = cmp_row_stat(&t->rows->row[g].fig, e->stat, &none);
	double base = cmp_row_stat(&t->rows->row[t->rows->ref].fig, e->stat, &bnone);
	char name[192], ex[96], vs[64], bs[64], why[512] = "";
	const char *unit = cmp_stat_is_time(e->stat) ? t->unit : "";

	cmp_group_name(t->in, &t->rows->row[g], name, sizeof(name));
	expr_format(e, ex, sizeof(ex));
	cmp_stat_text(e->stat, v, false, t->unit_ns, vs, sizeof(vs));
	cmp_stat_text(e->stat, base, false, t->unit_ns, bs, sizeof(bs));
	o->failed = !none && !(e->kind == EXPR_RELATIVE && bnone) && expr_fails(e, v, base);
	if (o->failed && e->kind == EXPR_RELATIVE && !e->raw && expr_stat_judged(e->stat)) {
		int r = verdict_agrees(t, e, g, name, &o->failed, why, sizeof(why));
		if (r < 0)
			return r;
	}
	if (none)
		snprintf(o->message, sizeof(o->message), "%s: %s has no value: not judged", name,
			 expr_stat_name(e->stat));
	else if (e->kind == EXPR_RELATIVE)
		snprintf(o->message, sizeof(o->message),
			 "%s: %s %s%s vs baseline %s%s (%+.1f%%): %s%s%s", name,
			 expr_stat_name(e->stat), vs, unit, bs, unit, cmp_change_pct(v, base), ex,
			 why[0] ? "; " : "", why);
	else
		snprintf(o->message, sizeof(o->message), "%s: %s %s%s: %s", name,
			 expr_stat_name(e->stat), vs, unit, ex);
	snprintf(o->cls, sizeof(o->cls), "%s%s%s", t->probe ? t->probe : "", t->probe ? ": " : "",
		 name);
	return 0;
}

int gate_run(const struct gate_table *t, const struct expr *gates, size_t ngates,
	     struct gate_outcome *out, size_t *ret_n)
{
	size_t n = 0;
	for (size_t k = 0; k < ngates; k++) {
		const struct expr *e = &gates[k];
		for (size_t g = 0; g < t->rows->n; g++) {
			if (e->kind == EXPR_RELATIVE && g == t->rows->ref)
				continue;
			struct gate_outcome *o = &out[n++];
			o->row = g;
			o->gate = k;
			int r = gate_one(t, e, g, o);
			if (r < 0)
				return r;
		}
	}
	*ret_n = n;
	return 0;
}
