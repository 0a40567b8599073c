#include "result/rows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *result_label(const struct result *r, const char *key)
{
	for (unsigned i = 0; i < r->labels.n; i++)
		if (strcmp(r->labels.items[i].key, key) == 0)
			return r->labels.items[i].value;
	return NULL;
}

const struct cpu_result *result_block(const struct result *r, int cpu)
{
	if (cpu < 0)
		return &r->all;
	for (size_t i = 0; i < r->ncpus; i++)
		if (r->cpus[i].cpu == cpu)
			return &r->cpus[i];
	return NULL;
}

int cmp_runs_check(const struct cmp_runs *in, const char *metric, unsigned *ret_metric,
		   struct lat_error *err)
{
	const struct result *first = &in->res[0];
	unsigned m = 0;

	if (metric) {
		m = first->nmetrics;
		for (unsigned k = 0; k < first->nmetrics; k++)
			if (strcmp(first->metric_names[k], metric) == 0)
				m = k;
		if (m == first->nmetrics) {
			return err_set(err, -EINVAL,
				       "option '--metric': run %lld has no metric '%s'",
				       (long long)in->ids[0], metric);
		}
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct result *r = &in->res[i];
		if (strcmp(r->probe, first->probe) != 0) {
			return err_set(err, -EINVAL,
				       "runs %lld and %lld are of different probes (%s, %s): "
				       "compare runs of "
				       "one probe",
				       (long long)in->ids[0], (long long)in->ids[i], first->probe,
				       r->probe);
		}
		if (m >= r->nmetrics || strcmp(r->metric_names[m], first->metric_names[m]) != 0) {
			return err_set(err, -EINVAL, "run %lld does not have the metric '%s'",
				       (long long)in->ids[i], first->metric_names[m]);
		}
		if (!result_block(r, in->cpu)) {
			return err_set(err, -EINVAL,
				       "option '--cpu': run %lld did not measure cpu %d",
				       (long long)in->ids[i], in->cpu);
		}
	}
	*ret_metric = m;
	return 0;
}

/* Numbers as numbers ("2" before "10"), the rest as text. */
static int natural_cmp(const char *a, const char *b)
{
	char *ea, *eb;
	double da = strtod(a, &ea), db = strtod(b, &eb);
	if (*a && *b && !*ea && !*eb && da != db)
		return da < db ? -1 : 1;
	return strcmp(a, b);
}

static int key_cmp(const struct labels *a, const struct labels *b)
{
	for (size_t k = 0; k < a->n; k++) {
		int c = natural_cmp(a->items[k].value, b->items[k].value);
		if (c)
			return c;
	}
	return 0;
}

static int add_run(const struct cmp_runs *in, struct cmp_group *w, size_t ri)
{
	const struct cpu_result *cr = result_block(&in->res[ri], in->cpu);
	size_t *runs;

	if (!cr)
		return -EINVAL;
	runs = realloc(w->runs, (w->nruns + 1u) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	w->runs = runs;
	w->runs[w->nruns++] = ri;
	cmp_row_add_ops(&w->fig, &in->res[ri]);
	cmp_row_add_smis(&w->fig, &in->res[ri], cr);
	return cmp_row_add(&w->fig, cr, in->metric);
}

/* The row run ri belongs in: one with its key, else a new one. */
static int row_of(const struct cmp_runs *in, struct cmp_rows *rows, size_t ri, size_t *ret)
{
	struct labels key = { 0 };
	size_t g = 0;

	for (size_t k = 0; k < in->nby; k++) {
		const char *v = result_label(&in->res[ri], in->by[k]);
		snprintf(key.items[k].key, sizeof(key.items[k].key), "%s", in->by[k]);
		snprintf(key.items[k].value, sizeof(key.items[k].value), "%s", v ? v : "-");
	}
	key.n = (unsigned)in->nby;
	if (in->nby)
		while (g < rows->n && key_cmp(&rows->row[g].key, &key) != 0)
			g++;
	else
		g = rows->n;
	*ret = g;
	if (g < rows->n)
		return 0;
	struct cmp_group *w = &rows->row[rows->n++];
	w->key = key;
	return cmp_row_init(&w->fig);
}

int cmp_rows_build(const struct cmp_runs *in, struct cmp_rows *ret)
{
	*ret = (struct cmp_rows){ 0 };
	ret->row = calloc(in->n ? in->n : 1u, sizeof(*ret->row));
	if (!ret->row)
		return -ENOMEM;
	for (size_t ri = 0; ri < in->n; ri++) {
		size_t g;
		int r = row_of(in, ret, ri, &g);
		if (r < 0 || (r = add_run(in, &ret->row[g], ri)) < 0)
			return r;
	}
	/* Rows in the order of their label values (insertion sort keeps equal keys stable). */
	for (size_t i = 1; in->nby && i < ret->n; i++)
		for (size_t j = i; j > 0 && key_cmp(&ret->row[j - 1u].key, &ret->row[j].key) > 0;
		     j--) {
			struct cmp_group t = ret->row[j];
			ret->row[j] = ret->row[j - 1u];
			ret->row[j - 1u] = t;
		}
	return 0;
}

void cmp_rows_free(struct cmp_rows *rows)
{
	for (size_t i = 0; rows->row && i < rows->n; i++) {
		free(rows->row[i].runs);
		cmp_row_free(&rows->row[i].fig);
	}
	free(rows->row);
	*rows = (struct cmp_rows){ 0 };
}

void cmp_rows_set_baseline(struct cmp_rows *rows, const struct cmp_runs *in, int64_t id)
{
	rows->ref = 0;
	for (size_t g = 0; id && g < rows->n; g++)
		for (size_t k = 0; k < rows->row[g].nruns; k++)
			if (in->ids[rows->row[g].runs[k]] == id)
				rows->ref = g;
}

void cmp_group_name(const struct cmp_runs *in, const struct cmp_group *w, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	if (!in->nby) {
		snprintf(buf, size, "run %lld", (long long)in->ids[w->runs[0]]);
		return;
	}
	for (size_t k = 0; k < in->nby && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k ? " " : "", in->by[k],
					w->key.items[k].value);
}

json_t *cmp_group_host_causes(const struct cmp_runs *in, const struct cmp_group *w)
{
	json_t *sum = NULL;

	for (size_t k = 0; k < w->nruns; k++) {
		const json_t *causes = json_object_get(in->res[w->runs[k]].host, "causes");
		const char *name;
		const json_t *n;
		if (!json_is_object(causes))
			continue;
		if (!sum && !(sum = json_object()))
			return NULL;
		json_object_foreach((json_t *)causes, name, n) {
			const json_int_t had = json_integer_value(json_object_get(sum, name));
			if (json_object_set_new(sum, name, json_integer(had + json_integer_value(n))) < 0) {
				json_decref(sum);
				return NULL;
			}
		}
	}
	return sum;
}
