/* latscope tune's verdicts and its table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/tuneout.h"
#include "core/units.h"
#include "report/table.h"
#include "report/tprint.h"

/* The two states' trials as compare's rows (every CPU merged): 0 or -ENOMEM. */
static int rows(const struct tune_trial *t, struct cmp_row *a, struct cmp_row *b)
{
	int r = cmp_row_init(a);
	if (r == 0)
		r = cmp_row_init(b);
	for (unsigned i = 0; r == 0 && i < t->na; i++)
		r = cmp_row_add(a, &t->a[i].all, 0);
	for (unsigned i = 0; r == 0 && i < t->nb; i++)
		r = cmp_row_add(b, &t->b[i].all, 0);
	return r;
}

void tune_judge(struct tune_trial *t)
{
	struct cmp_row row[2];
	struct tail_fit fit[2];
	struct lat_error err;

	t->verdict = TUNE_UNJUDGED;
	if (t->na == 0 || t->nb == 0 || rows(t, &row[0], &row[1]) < 0)
		return;
	for (int s = 0; s < 2; s++) {
		bool none;
		t->p50[s] = cmp_row_stat(&row[s], EXPR_P50, &none);
		t->p99[s] = cmp_row_stat(&row[s], EXPR_P99, &none);
		t->max[s] = cmp_row_stat(&row[s], EXPR_MAX, &none);
	}
	if (cmp_judge(&row[0], &row[1], 99.0, &t->v99) == 0 && t->v99.enough)
		t->verdict = t->v99.direction < 0   ? TUNE_BETTER
			     : t->v99.direction > 0 ? TUNE_WORSE
						    : TUNE_SAME;
	if (cmp_row_tail(&row[0], &fit[0], &err) == 0 && cmp_row_tail(&row[1], &fit[1], &err) == 0)
		cmp_tail_judge(&fit[0], &fit[1], TAIL_HOUR, &t->hour);
	else
		snprintf(t->hour.why, sizeof(t->hour.why), "%.190s", err.msg);
	cmp_row_free(&row[0]);
	cmp_row_free(&row[1]);
}

static void pair(struct table *tb, long row, size_t col, const double v[2])
{
	char a[32], b[32];
	fmt_duration3((uint64_t)llround(v[0]), a, sizeof(a));
	fmt_duration3((uint64_t)llround(v[1]), b, sizeof(b));
	table_set(tb, (size_t)row, col, "%s -> %s", a, b);
}

static const char *verdict_text(const struct tune_trial *t)
{
	switch (t->verdict) {
	case TUNE_BETTER: return "better";
	case TUNE_WORSE: return "worse";
	case TUNE_SAME: return "no difference at this length";
	case TUNE_UNJUDGED: break;
	}
	return t->failed ? "not tried" : t->na && t->nb ? "too few windows" : "not measured";
}

static const char *hour_text(const struct cmp_tail_verdict *h)
{
	if (!h->judged)
		return "not judged";
	return h->direction > 0 ? "higher" : h->direction < 0 ? "lower" : "no difference";
}

/* A kept fix: what writes its old values back, a line each (tprintf shows a newline inside as \x0a). */
static void print_undo(FILE *out, const struct tune_trial *t)
{
	const char *p = t->undo;
	tprintf(out, "%s: kept until the next reboot; to undo it sooner, as root:\n", t->fix->name);
	if (!p)
		tprintf(out, "  (out of memory: the old values cannot be listed)\n");
	while (p && *p) {
		size_t len = strcspn(p, "\n");
		tprintf(out, "%.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

void tune_print(FILE *out, const struct tune_run *tr, bool apply)
{
	static const char *const head[] = { "fix", "change",	    "p50",	"p99",
					    "max", "verdict (p99)", "1h level", "kept" };
	struct table tb;

	if (table_init(&tb, sizeof(head) / sizeof(head[0])) < 0)
		return;
	for (size_t c = 0; c < sizeof(head) / sizeof(head[0]); c++)
		table_set(&tb, 0, c, "%s", head[c]);
	for (size_t i = 0; i < tr->n; i++) {
		const struct tune_trial *t = &tr->t[i];
		if (t->state != TRIAL_TRY)
			continue;
		long r = table_add_row(&tb);
		if (r < 0)
			break;
		table_set(&tb, (size_t)r, 0, "%s", t->fix->name);
		table_set(&tb, (size_t)r, 1, "%s -> %s", t->plan.from, t->plan.to);
		if (t->verdict != TUNE_UNJUDGED) {
			pair(&tb, r, 2, t->p50);
			pair(&tb, r, 3, t->p99);
			pair(&tb, r, 4, t->max);
		}
		table_set(&tb, (size_t)r, 5, "%s", verdict_text(t));
		table_set(&tb, (size_t)r, 6, "%s", hour_text(&t->hour));
		table_set(&tb, (size_t)r, 7, "%s",
			  t->kept ? "yes, until reboot"
			  : apply && t->verdict == TUNE_BETTER
				  ? "no: held only while latscope measures"
				  : "no");
	}
	tprintf(out,
		"latscope tune: A is the machine as it is, B with the fix, %u trial(s) each, every "
		"CPU merged "
		"(labels tune=%s fix=NAME state=a|b)\n",
		tr->rounds, tr->start);
	table_print(out, &tb, TABLE_TEXT);
	table_free(&tb);
	for (size_t i = 0; i < tr->n; i++) {
		const struct tune_trial *t = &tr->t[i];
		if (t->state == TRIAL_NOT_HERE)
			tprintf(out, "%s: %s\n", t->fix->name, t->why);
		else if (t->failed)
			tprintf(out, "%s: not tried: %s\n", t->fix->name, t->why);
		if (t->skipped_note[0])
			tprintf(out, "%s: %s\n", t->fix->name, t->skipped_note);
		if (t->kept)
			print_undo(out, t);
		if (t->state == TRIAL_TRY && !t->hour.judged && t->verdict != TUNE_UNJUDGED &&
		    t->hour.why[0])
			tprintf(out, "%s: 1h level not judged: %s\n", t->fix->name, t->hour.why);
	}
	for (size_t i = 0; i < tr->n; i++) {
		const struct tune_trial *t = &tr->t[i];
		if (t->state != TRIAL_BOOT)
			continue;
		char cpus[128], line[256];
		cpuset_format(&tr->measured, cpus, sizeof(cpus));
		tune_cmdline(t->fix, cpus, line, sizeof(line));
		tprintf(out,
			"%s: only a reboot can make it, so nothing was measured: %s (%s -> %s)\n",
			t->fix->name, line, t->plan.from, t->plan.to);
	}
	if (tr->stopped)
		tprintf(out, "stopped by a signal: the table holds what was measured; every change "
			     "was undone\n");
}

void tune_run_free(struct tune_run *tr)
{
	for (size_t i = 0; i < tr->n; i++) {
		struct tune_trial *t = &tr->t[i];
		for (unsigned k = 0; t->a && k < t->na; k++)
			result_free(&t->a[k]);
		for (unsigned k = 0; t->b && k < t->nb; k++)
			result_free(&t->b[k]);
		free(t->a);
		free(t->b);
		tune_plan_free(&t->plan);
		free(t->undo);
	}
	free(tr->t);
	tr->t = NULL;
	tr->n = 0;
}
