/*
 * Unit tests for the OpenMetrics exposition (src/report/openmetrics.c) and the
 * JUnit XML report (src/report/junit.c).
 *
 * The exposition is parsed back here with a small parser written from the
 * OpenMetrics 1.0 ABNF, and checked on a real result (a 1 s timer run on CPU 0,
 * kept below as its JSON) and on synthetic ones whose values are known.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "skipwhy.h"

#include "core/array.h"
#include "core/cpuset.h"
#include "core/hist.h"
#include "core/nstime.h"
#include "core/stats.h"
#include "report/junit.h"
#include "report/openmetrics.h"
#include "result/json.h"
#include "result/result.h"

#include "rng.h"


/* A real result, kept at the end of this file. */
static const char *real_run_json(void);

/* ---- a parser for what the tests read back ---- */

#define P_LABELS 48

struct psample {
	char name[160];
	unsigned nl;
	char lname[P_LABELS][96];
	char lvalue[P_LABELS][600];     /* unescaped */
	char value[64];
	size_t family;
};

struct pfamily {
	char name[160];
	char type[24];
	char unit[32];
	bool has_unit, has_help;
	size_t first, n;                /* its samples */
};

struct expo {
	struct pfamily *fam;
	size_t nfam;
	struct psample *s;
	size_t ns;
};

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* metricname: [a-zA-Z_:][a-zA-Z0-9_:]*; label-name: the same without ':'. */
static size_t scan_name(const char *p, bool colon, char *dst, size_t size)
{
	size_t n = 0;

	while (name_char(p[n]) || (colon && p[n] == ':')) {
		if (n == 0 && !(name_start(p[n]) || (colon && p[n] == ':')))
			break;
		assert_true(n + 1 < size);
		dst[n] = p[n];
		n++;
	}
	dst[n] = '\0';
	return n;
}

static bool is_digits(const char *p, const char **end)
{
	const char *s = p;
	while (*s >= '0' && *s <= '9')
		s++;
	*end = s;
	return s > p;
}

/* number = realnumber / [SIGN] ("inf" / "infinity") / "nan", as in the ABNF. */
static bool valid_number(const char *v)
{
	const char *p = v, *e;

	if (strcmp(v, "+Inf") == 0 || strcmp(v, "-Inf") == 0 || strcmp(v, "NaN") == 0)
		return true;
	if (*p == '+' || *p == '-')
		p++;
	bool before = is_digits(p, &e);
	p = e;
	bool after = false;
	if (*p == '.') {
		after = is_digits(p + 1, &e);
		p = e;
	}
	if (!before && !after)
		return false;
	if (*p == 'e') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digits(p, &e))
			return false;
		p = e;
	}
	return *p == '\0';
}

static bool valid_integer(const char *v)
{
	const char *e;
	return is_digits(v, &e) && *e == '\0';
}

static const char *label_of(const struct psample *s, const char *name)
{
	for (unsigned i = 0; i < s->nl; i++)
		if (strcmp(s->lname[i], name) == 0)
			return s->lvalue[i];
	return NULL;
}

/* A label the sample must have. */
static const char *lab(const struct psample *s, const char *name)
{
	const char *v = label_of(s, name);
	if (!v)
		fail_msg("'%s' has no label '%s'", s->name, name);
	return v ? v : "";
}

/* What a sample of a family of this type may add to the family's name. */
static bool suffix_allowed(const char *type, const char *suffix)
{
	if (strcmp(type, "histogram") == 0)
		return !strcmp(suffix, "_bucket") || !strcmp(suffix, "_count") || !strcmp(suffix, "_sum");
	if (strcmp(type, "summary") == 0)
		return !*suffix || !strcmp(suffix, "_count") || !strcmp(suffix, "_sum");
	if (strcmp(type, "counter") == 0)
		return !strcmp(suffix, "_total");
	return !*suffix;
}

/* Labels of the sample that are not per-point (le, quantile). */
static bool point_label(const char *name)
{
	return !strcmp(name, "le") || !strcmp(name, "quantile");
}

static void parse_sample(struct expo *e, const char *line)
{
	struct psample *s;
	const char *p = line;

	assert_true(e->nfam > 0);               /* every sample follows its family's TYPE */
	e->s = realloc(e->s, (e->ns + 1) * sizeof(*e->s));
	assert_non_null(e->s);
	s = &e->s[e->ns];
	memset(s, 0, sizeof(*s));
	p += scan_name(p, true, s->name, sizeof(s->name));
	assert_true(s->name[0] != '\0');
	if (*p == '{') {
		p++;
		while (*p != '}') {
			assert_true(s->nl < P_LABELS);
			size_t n = scan_name(p, false, s->lname[s->nl], sizeof(s->lname[0]));
			if (n == 0) {
				print_error("bad label name at '%s'\n", p);
				fail();
			}
			p += n;
			assert_int_equal(*p++, '=');
			assert_int_equal(*p++, '"');
			size_t o = 0;
			while (*p != '"') {
				assert_true(*p != '\0' && *p != '\n');
				char c = *p++;
				if (c == '\\') {
					c = *p++;
					/* only the three escapes both formats know */
					assert_true(c == 'n' || c == '"' || c == '\\');
					c = c == 'n' ? '\n' : c;
				}
				if (o + 1 >= sizeof(s->lvalue[0]))
					fail_msg("label value too long in: %.300s", line);
				s->lvalue[s->nl][o++] = c;
			}
			s->lvalue[s->nl][o] = '\0';
			p++;
			for (unsigned i = 0; i < s->nl; i++)
				assert_string_not_equal(s->lname[i], s->lname[s->nl]);
			s->nl++;
			if (*p == ',')
				p++;
			else
				assert_int_equal(*p, '}');
		}
		p++;
	}
	assert_int_equal(*p++, ' ');
	/* the value ends the line: no timestamp, no exemplar */
	assert_true(strlen(p) < sizeof(s->value));
	strcpy(s->value, p);
	if (!valid_number(s->value)) {
		print_error("bad value in '%s'\n", line);
		fail();
	}

	struct pfamily *f = &e->fam[e->nfam - 1];
	size_t fl = strlen(f->name);
	if (strncmp(s->name, f->name, fl) != 0 || !suffix_allowed(f->type, s->name + fl)) {
		print_error("'%s' is not part of family '%s' (%s)\n", s->name, f->name, f->type);
		fail();
	}
	if (f->n == 0)
		f->first = e->ns;
	f->n++;
	s->family = e->nfam - 1;
	e->ns++;
}

static void parse_meta(struct expo *e, const char *line)
{
	char kw[8], name[160];
	const char *p = line + 2;

	assert_true(strncmp(p, "TYPE ", 5) == 0 || strncmp(p, "UNIT ", 5) == 0 || strncmp(p, "HELP ", 5) == 0);
	memcpy(kw, p, 4);
	kw[4] = '\0';
	p += 5;
	p += scan_name(p, true, name, sizeof(name));
	assert_int_equal(*p++, ' ');
	if (strcmp(kw, "TYPE") == 0) {
		for (size_t i = 0; i < e->nfam; i++)
			assert_string_not_equal(e->fam[i].name, name);   /* families not interleaved */
		e->fam = realloc(e->fam, (e->nfam + 1) * sizeof(*e->fam));
		assert_non_null(e->fam);
		struct pfamily *f = &e->fam[e->nfam++];
		memset(f, 0, sizeof(*f));
		strcpy(f->name, name);
		assert_true(strlen(p) < sizeof(f->type));
		strcpy(f->type, p);
		assert_true(!strcmp(p, "gauge") || !strcmp(p, "counter") || !strcmp(p, "histogram") ||
			    !strcmp(p, "summary") || !strcmp(p, "info") || !strcmp(p, "stateset") ||
			    !strcmp(p, "gaugehistogram") || !strcmp(p, "unknown"));
		return;
	}
	/* UNIT and HELP: once, for the family just typed, before its samples (TYPE, UNIT, HELP) */
	assert_true(e->nfam > 0);
	struct pfamily *f = &e->fam[e->nfam - 1];
	assert_string_equal(f->name, name);
	assert_int_equal(f->n, 0);
	if (strcmp(kw, "UNIT") == 0) {
		assert_false(f->has_unit);
		assert_false(f->has_help);
		f->has_unit = true;
		assert_true(strlen(p) < sizeof(f->unit));
		strcpy(f->unit, p);
		/* the unit is the name's suffix */
		size_t nl = strlen(name), ul = strlen(p);
		assert_true(nl > ul + 1 && name[nl - ul - 1] == '_' && strcmp(name + nl - ul, p) == 0);
	} else {
		assert_false(f->has_help);
		f->has_help = true;
		assert_true(*p != '\0');
		/* the classic parser knows only \\ and \n in HELP */
		assert_null(strchr(p, '"'));
		assert_null(strchr(p, '\\'));
	}
}

/*
 * Check the exposition's shape as it is parsed: every line metadata, a sample
 * or the final "# EOF"; then that every family keeps one set of label names
 * and that no series appears twice.
 */
static void parse(const char *text, struct expo *e)
{
	size_t len = strlen(text);
	char *copy = strdup(text);

	memset(e, 0, sizeof(*e));
	assert_non_null(copy);
	assert_null(strchr(text, '\r'));
	assert_true(len >= 6 && strcmp(text + len - 6, "# EOF\n") == 0);
	copy[len - 6] = '\0';
	for (char *line = copy, *next; *line; line = next) {
		next = strchr(line, '\n');
		assert_non_null(next);                  /* every line ends in a newline */
		*next++ = '\0';
		if (line[0] == '#') {
			assert_int_equal(line[1], ' ');
			assert_string_not_equal(line, "# EOF");  /* only last */
			parse_meta(e, line);
		} else {
			parse_sample(e, line);
		}
	}
	free(copy);

	for (size_t f = 0; f < e->nfam; f++) {
		const struct pfamily *fam = &e->fam[f];
		assert_true(fam->has_help);
		const struct psample *first = &e->s[fam->first];
		for (size_t i = fam->first; i < fam->first + fam->n; i++) {
			const struct psample *s = &e->s[i];
			unsigned own = 0, first_own = 0;
			for (unsigned l = 0; l < s->nl; l++) {
				if (point_label(s->lname[l]))
					continue;
				own++;
				assert_non_null(label_of(first, s->lname[l]));
			}
			for (unsigned l = 0; l < first->nl; l++)
				first_own += !point_label(first->lname[l]);
			assert_int_equal(own, first_own);
		}
	}
	for (size_t i = 0; i < e->ns; i++)
		for (size_t j = i + 1; j < e->ns; j++) {
			const struct psample *a = &e->s[i], *b = &e->s[j];
			if (strcmp(a->name, b->name) != 0 || a->nl != b->nl)
				continue;
			bool same = true;
			for (unsigned l = 0; l < a->nl && same; l++) {
				const char *v = label_of(b, a->lname[l]);
				same = v && strcmp(v, a->lvalue[l]) == 0;
			}
			if (same) {
				print_error("series '%s' appears twice\n", a->name);
				fail();
			}
		}
}

static void expo_free(struct expo *e)
{
	free(e->fam);
	free(e->s);
	memset(e, 0, sizeof(*e));
}

static const struct pfamily *family_or_null(const struct expo *e, const char *name)
{
	for (size_t i = 0; i < e->nfam; i++)
		if (strcmp(e->fam[i].name, name) == 0)
			return &e->fam[i];
	return NULL;
}

static const struct pfamily *family_named(const struct expo *e, const char *name)
{
	static const struct pfamily none;
	const struct pfamily *f = family_or_null(e, name);
	if (!f)
		fail_msg("no family '%s'", name);
	return f ? f : &none;
}

/* The sample called name whose labels include the pairs in ap, or NULL. */
static const struct psample *vlookup(const struct expo *e, const char *name, va_list ap)
{
	for (size_t i = 0; i < e->ns; i++) {
		const struct psample *s = &e->s[i];
		if (strcmp(s->name, name) != 0)
			continue;
		va_list aq;
		bool match = true;
		va_copy(aq, ap);
		for (const char *k; match && (k = va_arg(aq, const char *));) {
			const char *v = va_arg(aq, const char *), *got = label_of(s, k);
			match = got && strcmp(got, v) == 0;
		}
		va_end(aq);
		if (match)
			return s;
	}
	return NULL;
}

/* find(e, name, key, value, ..., NULL): the sample, which must be there. */
static const struct psample *find(const struct expo *e, const char *name, ...)
{
	static const struct psample none;
	va_list ap;
	va_start(ap, name);
	const struct psample *s = vlookup(e, name, ap);
	va_end(ap);
	if (!s)
		fail_msg("no sample '%s' with those labels", name);
	return s ? s : &none;
}

static bool exists(const struct expo *e, const char *name, ...)
{
	va_list ap;
	va_start(ap, name);
	const struct psample *s = vlookup(e, name, ap);
	va_end(ap);
	return s != NULL;
}

static uint64_t count_of(const struct psample *s)
{
	assert_non_null(s);
	assert_true(valid_integer(s->value));
	return strtoull(s->value, NULL, 10);
}

static double le_of(const struct psample *s)
{
	const char *le = label_of(s, "le");
	assert_non_null(le);
	return strcmp(le, "+Inf") == 0 ? HUGE_VAL : strtod(le, NULL);
}

/* ---- results ---- */

static const char *const metric_names[] = { "latency" };

static char *render(const struct result *const *rs, const int64_t *ids, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(openmetrics_write(f, rs, ids, n, NULL), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void load_real(struct result *res)
{
	struct lat_error err = { "" };
	const char *text = real_run_json();
	int r = result_from_text(text, strlen(text), res, &err);

	if (r < 0)
		print_error("fixture: %s\n", err.msg);
	assert_int_equal(r, 0);
}

/*
 * A finalized one-metric result on cpulist: CPU i gets values v (each plus i),
 * split over nwin windows, and i + 1 missed periods.
 */
static void synth_result(struct result *res, const char *cpulist, const uint64_t *v, size_t nv,
			 size_t nwin, uint64_t warmup)
{
	struct cpuset set;
	struct hist *h = malloc(sizeof(*h));

	assert_non_null(h);
	assert_int_equal(cpuset_parse(cpulist, &set), 0);
	assert_int_equal(result_init(res, "timer", 1, metric_names, &set), 0);
	res->warmup = warmup;
	snprintf(res->sys.hostname, sizeof(res->sys.hostname), "host-a");
	snprintf(res->sys.kernel_release, sizeof(res->sys.kernel_release), "6.1.0-test");
	res->start_realtime_ns = UINT64_C(1700000000123456789);
	for (size_t c = 0; c < res->ncpus; c++) {
		for (size_t w = 0; w < nwin; w++) {
			struct rec_window win;
			memset(&win, 0, sizeof(win));
			stats_reset(&win.overhead);
			stats_reset(&win.m[0].st);
			hist_reset(h);
			win.index = w;
			win.start_ns = w * NS_PER_SEC;
			win.end_ns = (w + 1) * NS_PER_SEC;
			win.missed = w == 0 ? c + 1 : 0;
			for (size_t i = w; i < nv; i += nwin) {
				stats_add(&win.m[0].st, v[i] + c);
				hist_record(h, v[i] + c);
			}
			assert_int_equal(result_add_window(res, &res->cpus[c], &win, h), 0);
		}
	}
	free(h);
	assert_int_equal(result_finalize(res), 0);
}

/* The cpu_result behind the cpu label of a sample. */
static const struct cpu_result *row_of(const struct result *res, const char *cpu)
{
	if (strcmp(cpu, "all") == 0)
		return &res->all;
	for (size_t i = 0; i < res->ncpus; i++)
		if (res->cpus[i].cpu == atoi(cpu))
			return &res->cpus[i];
	fail_msg("no cpu '%s'", cpu);
	return &res->all;
}

/*
 * Every histogram series: bounds rising to +Inf, counts cumulative, +Inf equal
 * to _count and to the run's summary count.  results[i] has run label ids[i].
 */
static void check_histograms(const struct expo *e, const struct result *const *results,
			     const int64_t *ids, size_t n)
{
	size_t checked = 0;

	for (size_t i = 0; i < e->ns; i++) {
		const struct psample *s = &e->s[i];
		const struct pfamily *f = &e->fam[s->family];
		if (strcmp(f->type, "histogram") != 0 || strcmp(label_of(s, "le") ? label_of(s, "le") : "", "+Inf") != 0)
			continue;
		/* walk back over this series' buckets */
		size_t j = i;
		while (j > f->first && strstr(e->s[j - 1].name, "_bucket") &&
		       strcmp(lab(&e->s[j - 1], "run"), lab(s, "run")) == 0 &&
		       strcmp(lab(&e->s[j - 1], "cpu"), lab(s, "cpu")) == 0)
			j--;
		assert_int_equal(i - j, 25);            /* the ladder: 1-2-5 from 1us to 100s */
		for (size_t k = j + 1; k <= i; k++) {
			assert_true(le_of(&e->s[k]) > le_of(&e->s[k - 1]));
			assert_true(count_of(&e->s[k]) >= count_of(&e->s[k - 1]));
		}
		/* then _count and _sum of the same series */
		char name[200];
		snprintf(name, sizeof(name), "%s_count", f->name);
		const struct psample *cnt = &e->s[i + 1];
		assert_string_equal(cnt->name, name);
		assert_string_equal(lab(cnt, "cpu"), lab(s, "cpu"));
		assert_int_equal(count_of(cnt), count_of(s));
		snprintf(name, sizeof(name), "%s_sum", f->name);
		assert_string_equal(e->s[i + 2].name, name);

		const struct result *res = NULL;
		for (size_t r = 0; r < n; r++) {
			char id[32];
			snprintf(id, sizeof(id), "%" PRId64, ids[r]);
			if (strcmp(id, lab(s, "run")) == 0)
				res = results[r];
		}
		if (!res)
			fail_msg("no run '%s'", lab(s, "run"));
		else
			assert_int_equal(count_of(s), row_of(res, lab(s, "cpu"))->sum[0].count);
		checked++;
	}
	size_t rows = 0;
	for (size_t r = 0; r < n; r++)
		rows += results[r]->ncpus + 1;
	assert_int_equal(checked, rows);
}

/* ---- OpenMetrics ---- */

static void test_every_line_of_a_real_run_is_metadata_a_sample_or_the_final_eof(void **state)
{
	(void)state;
	struct result res;
	struct expo e;

	load_real(&res);
	const struct result *rs[] = { &res };
	int64_t id = 7;
	char *text = render(rs, &id, 1);
	parse(text, &e);

	/* the families, in order, once each */
	static const char *const want[][2] = {
		{ "latscope_run_info", "gauge" },
		{ "latscope_latency_seconds", "histogram" },
		{ "latscope_latency_quantile_seconds", "summary" },
		{ "latscope_latency_min_seconds", "gauge" },
		{ "latscope_latency_max_seconds", "gauge" },
		{ "latscope_latency_warm_max_seconds", "gauge" },
		{ "latscope_missed_periods", "gauge" },
	};
	assert_int_equal(e.nfam, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_string_equal(e.fam[i].name, want[i][0]);
		assert_string_equal(e.fam[i].type, want[i][1]);
		bool seconds = strstr(want[i][0], "_seconds") != NULL;
		assert_int_equal(e.fam[i].has_unit, seconds);
		if (seconds)
			assert_string_equal(e.fam[i].unit, "seconds");
	}
	/* common labels on every sample */
	for (size_t i = 0; i < e.ns; i++) {
		assert_string_equal(lab(&e.s[i], "run"), "7");
		assert_string_equal(lab(&e.s[i], "host"), res.sys.hostname);
		assert_string_equal(lab(&e.s[i], "probe"), "timer");
	}
	const struct psample *info = find(&e, "latscope_run_info", "run", "7", NULL);
	assert_string_equal(info->value, "1");
	assert_string_equal(lab(info, "kernel"), res.sys.kernel_release);
	assert_string_equal(lab(info, "start"), "2026-11-30T09:14:59.155Z");
	assert_null(label_of(info, "cpu"));

	/* one CPU and the merged row */
	assert_true(exists(&e, "latscope_latency_max_seconds", "cpu", "0", NULL));
	assert_true(exists(&e, "latscope_latency_max_seconds", "cpu", "all", NULL));
	assert_int_equal(family_named(&e, "latscope_latency_max_seconds")->n, 2);
	assert_int_equal(count_of(find(&e, "latscope_missed_periods", "cpu", "0", NULL)), res.cpus[0].missed);

	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_smis_are_a_gauge_per_row_of_a_run_that_counted_them_and_absent_without_a_source(void **state)
{
	(void)state;
	struct result res;
	struct expo e;
	int64_t id = 7;

	load_real(&res);
	res.smi_asked = true;
	res.smi_source = SMI_SOURCE_PMU;
	res.cpus[0].has_context = res.all.has_context = true;
	for (size_t w = 0; w < res.cpus[0].nwin; w++)
		res.cpus[0].win[w].ctx.smis = 2;
	for (size_t w = 0; w < res.all.nwin; w++)
		res.all.win[w].ctx.smis = 2;
	const struct result *rs[] = { &res };
	char *text = render(rs, &id, 1);
	parse(text, &e);
	assert_int_equal(count_of(find(&e, "latscope_smis", "cpu", "0", NULL)), 2u * res.cpus[0].nwin);
	assert_true(exists(&e, "latscope_smis", "cpu", "all", NULL));
	expo_free(&e);
	free(text);

	res.smi_source = SMI_SOURCE_NONE;       /* not available here: no family, never a 0 */
	text = render(rs, &id, 1);
	parse(text, &e);
	assert_null(family_or_null(&e, "latscope_smis"));
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_histogram_buckets_are_cumulative_and_inf_equals_count_and_the_summary_count(void **state)
{
	(void)state;
	struct result real, syn;
	uint64_t v[300];
	struct expo e;

	load_real(&real);
	rng_seed(3);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		v[i] = 500u + rng_below(UINT64_C(3000000));
	synth_result(&syn, "0-2", v, ARRAY_SIZE(v), 3, 1);
	const struct result *rs[] = { &real, &syn };
	const int64_t ids[] = { 1, 2 };
	char *text = render(rs, ids, 2);
	parse(text, &e);
	check_histograms(&e, rs, ids, 2);
	/* the real run: 999 samples */
	assert_int_equal(count_of(find(&e, "latscope_latency_seconds_count", "run", "1", "cpu", "0", NULL)),
			 real.cpus[0].sum[0].count);
	assert_true(real.cpus[0].sum[0].count > 0);
	/* the merged row of the synthetic run holds its three CPUs */
	assert_int_equal(count_of(find(&e, "latscope_latency_seconds_count", "run", "2", "cpu", "all", NULL)), 900);
	expo_free(&e);
	free(text);
	result_free(&real);
	result_free(&syn);
}

static void test_bucket_bounds_are_the_canonical_1_2_5_ladder(void **state)
{
	(void)state;
	static const char *const ladder[] = {
		"1e-06", "2e-06", "5e-06", "1e-05", "2e-05", "5e-05", "0.0001", "0.0002", "0.0005",
		"0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5",
		"1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "+Inf",
	};
	struct result res;
	struct expo e;
	const uint64_t v[] = { 5 };

	synth_result(&res, "0", v, 1, 1, 0);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	const struct pfamily *f = family_named(&e, "latscope_latency_seconds");
	assert_non_null(f);
	for (size_t i = 0; i < ARRAY_SIZE(ladder); i++) {
		const struct psample *s = &e.s[f->first + i];
		assert_string_equal(s->name, "latscope_latency_seconds_bucket");
		assert_string_equal(lab(s, "le"), ladder[i]);
		assert_string_equal(lab(s, "cpu"), "0");
		assert_string_equal(s->value, "1");      /* 5 ns is below every bound */
	}
	expo_free(&e);
	free(text);
	result_free(&res);
}

/* The count at X is exact for a bound within one of our buckets below X. */
static void test_a_bucket_counts_toward_a_bound_only_when_its_upper_end_is_within_it(void **state)
{
	(void)state;
	static const uint64_t bounds[] = {
		1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000, 5000000,
		10000000, 20000000, 50000000, 100000000, 200000000, 500000000, 1000000000,
		2000000000, 5000000000, 10000000000, 20000000000, 50000000000, 100000000000,
	};
	static uint64_t v[4000];
	struct result res;
	struct expo e;

	/* log-uniform from 0.5us to 400s, and values right at and around the bounds */
	rng_seed(11);
	size_t n = 0;
	for (; n < 3000; n++)
		v[n] = (uint64_t)exp(log(500.0) + (log(4e11) - log(500.0)) * rng_unit_open0());
	for (size_t b = 0; b < ARRAY_SIZE(bounds); b++) {
		v[n++] = bounds[b] - 1;
		v[n++] = bounds[b];
		v[n++] = bounds[b] + 1;
		v[n++] = bounds[b] - bounds[b] / 64;
	}
	synth_result(&res, "0", v, n, 1, 0);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	const struct pfamily *f = family_named(&e, "latscope_latency_seconds");
	for (size_t b = 0; b < ARRAY_SIZE(bounds); b++) {
		uint64_t x = bounds[b], exact = 0, below = 0;
		for (size_t i = 0; i < n; i++) {
			exact += v[i] <= x;
			below += v[i] <= x - x / 64;
		}
		uint64_t got = count_of(&e.s[f->first + b]);
		if (got > exact || got < below) {
			print_error("le=%" PRIu64 "ns: %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]\n", x, got, below, exact);
			fail();
		}
	}
	/* 1000 ns lands in [1000, 1007], past the 1us bound; 999 ns is within it */
	assert_int_equal(hist_bucket_low(hist_index(1000)), 1000);
	const uint64_t w[] = { 999, 1000, 150000000000 };
	struct result r2;
	struct expo e2;
	synth_result(&r2, "0", w, 3, 1, 0);
	const struct result *rs2[] = { &r2 };
	char *t2 = render(rs2, NULL, 1);
	parse(t2, &e2);
	assert_int_equal(count_of(find(&e2, "latscope_latency_seconds_bucket", "le", "1e-06", NULL)), 1);
	assert_int_equal(count_of(find(&e2, "latscope_latency_seconds_bucket", "le", "2e-06", NULL)), 2);
	assert_int_equal(count_of(find(&e2, "latscope_latency_seconds_bucket", "le", "100.0", NULL)), 2);
	assert_int_equal(count_of(find(&e2, "latscope_latency_seconds_bucket", "le", "+Inf", NULL)), 3);
	expo_free(&e2);
	free(t2);
	result_free(&r2);
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_sum_is_mean_times_count_in_seconds_and_figures_are_exact_seconds(void **state)
{
	(void)state;
	const uint64_t v[] = { 11450, 20000, 1000000000, 2500000001 };
	struct result res;
	struct expo e;

	synth_result(&res, "0", v, ARRAY_SIZE(v), 1, 0);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	/* 11450 + 20000 + 1e9 + 2500000001 ns */
	assert_string_equal(find(&e, "latscope_latency_seconds_sum", "cpu", "0", NULL)->value, "3.500031451");
	assert_string_equal(find(&e, "latscope_latency_quantile_seconds_sum", "cpu", "0", NULL)->value, "3.500031451");
	assert_string_equal(find(&e, "latscope_latency_min_seconds", "cpu", "0", NULL)->value, "0.00001145");
	assert_string_equal(find(&e, "latscope_latency_max_seconds", "cpu", "0", NULL)->value, "2.500000001");
	/* the median, 20000 ns, as the midpoint of its bucket [19968, 20223] */
	assert_string_equal(find(&e, "latscope_latency_quantile_seconds", "cpu", "0", "quantile", "0.5", NULL)->value,
			    "0.000020095");
	const char *q[] = { "0.5", "0.9", "0.99", "0.999", "0.9999" };
	for (size_t i = 0; i < ARRAY_SIZE(q); i++)
		assert_true(exists(&e, "latscope_latency_quantile_seconds", "cpu", "all", "quantile", q[i], NULL));
	assert_int_equal(count_of(find(&e, "latscope_latency_quantile_seconds_count", "cpu", "0", NULL)), 4);
	/* the run was one window, not after a warm-up of 0 windows: it has a warm max */
	assert_string_equal(find(&e, "latscope_latency_warm_max_seconds", "cpu", "0", NULL)->value, "2.500000001");
	assert_string_equal(find(&e, "latscope_missed_periods", "cpu", "0", NULL)->value, "1");
	/* the run label numbers runs from 1 when no ids are given */
	assert_string_equal(lab(&e.s[0], "run"), "1");
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_figures_that_do_not_exist_are_left_out(void **state)
{
	(void)state;
	struct result res;
	struct expo e;
	const uint64_t v[] = { 1 };

	/* no sample on any CPU: buckets all 0, no quantile, min, max or warm max */
	synth_result(&res, "0-1", v, 0, 1, 0);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	check_histograms(&e, rs, (const int64_t[]){ 1 }, 1);
	assert_int_equal(count_of(find(&e, "latscope_latency_seconds_bucket", "cpu", "all", "le", "+Inf", NULL)), 0);
	assert_string_equal(find(&e, "latscope_latency_seconds_sum", "cpu", "1", NULL)->value, "0.0");
	assert_false(exists(&e, "latscope_latency_quantile_seconds", NULL));
	assert_int_equal(count_of(find(&e, "latscope_latency_quantile_seconds_count", "cpu", "1", NULL)), 0);
	assert_int_equal(family_named(&e, "latscope_latency_min_seconds")->n, 0);
	assert_int_equal(family_named(&e, "latscope_latency_max_seconds")->n, 0);
	assert_int_equal(family_named(&e, "latscope_latency_warm_max_seconds")->n, 0);
	expo_free(&e);
	free(text);
	result_free(&res);

	/* samples, but every window inside the warm-up: no warm max, the rest there */
	const uint64_t w[] = { 100, 200, 300 };
	synth_result(&res, "0", w, 3, 1, 5);
	text = render(rs, NULL, 1);
	parse(text, &e);
	assert_int_equal(family_named(&e, "latscope_latency_warm_max_seconds")->n, 0);
	assert_int_equal(family_named(&e, "latscope_latency_max_seconds")->n, 2);
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_long_run_figures_are_there_for_runs_that_counted_spikes_only(void **state)
{
	(void)state;
	struct result res, old;
	struct expo e;
	const uint64_t v[] = { 100, 200, 300, 400 };

	synth_result(&res, "0", v, 4, 2, 0);
	res.cpus[0].spikes = 3;         /* as windows would have added them */
	res.cpus[0].win[1].w.spikes = 3;
	assert_int_equal(result_finalize(&res), 0);
	load_real(&old);                /* a file of a latscope that did not count spikes */
	const struct result *rs[] = { &res, &old };
	char *text = render(rs, (const int64_t[]){ 1, 2 }, 2);
	parse(text, &e);
	assert_string_equal(find(&e, "latscope_spikes", "run", "1", "cpu", "0", NULL)->value, "3");
	assert_string_equal(find(&e, "latscope_spikes", "run", "1", "cpu", "all", NULL)->value, "3");
	assert_false(exists(&e, "latscope_spikes", "run", "2", NULL));
	/* 3 spikes in 2 s: one every 2/3 s, 5400 an hour */
	assert_true(fabs(strtod(find(&e, "latscope_spike_mtbf_seconds", "run", "1", "cpu", "0", NULL)->value, NULL) -
			 2.0 / 3.0) < 1e-6);
	assert_true(fabs(strtod(find(&e, "latscope_spikes_per_hour", "run", "1", "cpu", "0", NULL)->value, NULL) -
			 5400.0) < 1e-3);
	assert_string_equal(find(&e, "latscope_last_band_max_seconds", "run", "1", "cpu", "0", NULL)->value, "0.0000004");
	expo_free(&e);
	free(text);
	result_free(&old);
	result_free(&res);
}

static void test_label_values_escape_quote_backslash_and_newline(void **state)
{
	(void)state;
	struct result res;
	struct expo e;
	static const char host[] = "h\"o\\s\nt";
	static const char value[] = "a\"b\\c d=e";

	load_real(&res);
	snprintf(res.sys.hostname, sizeof(res.sys.hostname), "%s", host);
	res.labels.n = 1;
	snprintf(res.labels.items[0].key, LABEL_KEY_MAX, "config");
	snprintf(res.labels.items[0].value, LABEL_VALUE_MAX, "%s", value);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	assert_non_null(strstr(text, "host=\"h\\\"o\\\\s\\nt\""));
	assert_non_null(strstr(text, "label_config=\"a\\\"b\\\\c d=e\""));
	parse(text, &e);
	for (size_t i = 0; i < e.ns; i++) {
		assert_string_equal(lab(&e.s[i], "host"), host);
		assert_string_equal(lab(&e.s[i], "label_config"), value);
	}
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_bytes_that_are_not_utf8_become_the_replacement_character(void **state)
{
	(void)state;
	struct result res;
	struct expo e;

	load_real(&res);
	/* a stray continuation byte, a truncated sequence, an overlong '/', a surrogate */
	snprintf(res.sys.hostname, sizeof(res.sys.hostname), "a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xc3\xa9");
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	assert_string_equal(lab(&e.s[0], "host"),
			    "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd"
			    "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "e\xc3\xa9");
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_label_names_are_mapped_to_the_allowed_characters_and_prefixed(void **state)
{
	(void)state;
	struct result res;
	struct expo e;
	static const char *const kv[][2] = {
		{ "site-name.x", "lab" }, { "a.b", "second" }, { "a-b", "first" }, { "a_b", "third" },
		{ "run", "not ours" }, { "Config", "guest" },
	};

	load_real(&res);
	res.labels.n = ARRAY_SIZE(kv);
	for (size_t i = 0; i < ARRAY_SIZE(kv); i++) {
		char text[LABEL_KEY_MAX + LABEL_VALUE_MAX];
		snprintf(text, sizeof(text), "%s=%s", kv[i][0], kv[i][1]);
		assert_int_equal(parse_label(text, &res.labels.items[i]), 0);
	}
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	const struct psample *s = find(&e, "latscope_run_info", NULL);
	assert_string_equal(lab(s, "label_site_name_x"), "lab");
	/* keys meeting on one name: in key order, "-" < "." < "_" */
	assert_string_equal(lab(s, "label_a_b"), "first");
	assert_string_equal(lab(s, "label_a_b_2"), "second");
	assert_string_equal(lab(s, "label_a_b_3"), "third");
	assert_string_equal(lab(s, "label_run"), "not ours");
	assert_string_equal(lab(s, "run"), "1");
	assert_string_equal(lab(s, "label_Config"), "guest");
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_two_runs_keep_each_family_contiguous_and_share_label_names(void **state)
{
	(void)state;
	struct result a, b;
	struct expo e, one;

	load_real(&a);
	const uint64_t v[] = { 1500, 25000, 70000 };
	synth_result(&b, "0,1", v, ARRAY_SIZE(v), 2, 1);
	b.labels.n = 1;
	assert_int_equal(parse_label("config=guest", &b.labels.items[0]), 0);
	const struct result *rs[] = { &a, &b };
	const int64_t ids[] = { 42, -3 };
	char *text = render(rs, ids, 2);
	parse(text, &e);                        /* fails on a family seen twice */

	const struct result *rb[] = { &b };     /* b has every family: a's and the long-run ones */
	char *t1 = render(rb, ids + 1, 1);
	parse(t1, &one);
	assert_int_equal(e.nfam, one.nfam);     /* the same families, not one set per run */
	for (size_t f = 0; f < e.nfam; f++) {
		const struct pfamily *fam = &e.fam[f];
		/* run 42's samples, then run -3's (the real run has no warm max) */
		bool second = false;
		for (size_t i = fam->first; i < fam->first + fam->n; i++) {
			if (strcmp(lab(&e.s[i], "run"), "-3") == 0)
				second = true;
			else
				assert_false(second);
		}
		if (fam->n)
			assert_true(second);
	}
	/* every sample names label_config, empty where the run has none */
	for (size_t i = 0; i < e.ns; i++) {
		const char *run = lab(&e.s[i], "run"), *cfg = lab(&e.s[i], "label_config");
		assert_string_equal(cfg, strcmp(run, "42") == 0 ? "" : "guest");
	}
	check_histograms(&e, rs, ids, 2);
	assert_string_equal(find(&e, "latscope_missed_periods", "run", "-3", "cpu", "1", NULL)->value, "2");
	assert_string_equal(find(&e, "latscope_missed_periods", "run", "-3", "cpu", "all", NULL)->value, "3");
	expo_free(&one);
	free(t1);
	expo_free(&e);
	free(text);
	result_free(&a);
	result_free(&b);
}

static void test_the_output_depends_on_the_input_only(void **state)
{
	(void)state;
	struct result a, b;

	load_real(&a);
	load_real(&b);
	const struct result *rs[] = { &a, &b };
	const int64_t ids[] = { 1, 2 };
	char *t1 = render(rs, ids, 2), *t2 = render(rs, ids, 2);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	result_free(&a);
	result_free(&b);
}

static void test_no_run_gives_just_eof(void **state)
{
	(void)state;
	char *text = render(NULL, NULL, 0);
	assert_string_equal(text, "# EOF\n");
	free(text);
}

static void test_repeated_ids_and_missing_results_are_rejected(void **state)
{
	(void)state;
	struct result a;
	struct lat_error err;
	char *buf = NULL;
	size_t len = 0;

	load_real(&a);
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	const struct result *rs[] = { &a, &a };
	assert_int_equal(openmetrics_write(f, rs, (const int64_t[]){ 5, 5 }, 2, &err), -EINVAL);
	assert_string_equal(err.msg, "run 5 is given twice");
	const struct result *holes[] = { &a, NULL };
	assert_int_equal(openmetrics_write(f, holes, NULL, 2, &err), -EINVAL);
	assert_int_equal(openmetrics_write(NULL, rs, NULL, 1, &err), -EINVAL);
	/* two metrics of one run that meet on one name: the message names the run and both */
	snprintf(a.metric_names[0], RESULT_NAME_LEN, "lat-x");
	a.nmetrics = 2;
	snprintf(a.metric_names[1], RESULT_NAME_LEN, "lat_x");
	assert_int_equal(openmetrics_write(f, rs, (const int64_t[]){ 7 }, 1, &err), -EINVAL);
	assert_string_equal(err.msg, "run 7: metrics 'lat-x' and 'lat_x' would both be named lat_x");
	/* or whose families would: latency's max and latency_max's histogram */
	snprintf(a.metric_names[0], RESULT_NAME_LEN, "latency");
	snprintf(a.metric_names[1], RESULT_NAME_LEN, "latency_max");
	assert_int_equal(openmetrics_write(f, rs, (const int64_t[]){ 7 }, 1, &err), -EINVAL);
	assert_string_equal(err.msg, "metric 'latency' of run 7 and metric 'latency_max' of run 7 would both write "
				 "latscope_latency_max_seconds");
	a.nmetrics = 1;
	assert_int_equal(fclose(f), 0);
	assert_int_equal(len, 0);               /* nothing written before the checks */
	free(buf);
	result_free(&a);
}

/* A sum past 2^63 ns (292 years of latency, over many CPUs and runs) is still
 * written as its value, not as whatever llround makes of it. */
static void test_a_sum_above_two_to_the_63_ns_stays_exact(void **state)
{
	(void)state;
	const uint64_t v[] = { UINT64_C(6000000000000000000), UINT64_C(6000000000000000000) };
	struct result res;
	struct expo e;

	synth_result(&res, "0", v, ARRAY_SIZE(v), 1, 0);
	const struct result *rs[] = { &res };
	char *text = render(rs, NULL, 1);
	parse(text, &e);
	assert_string_equal(find(&e, "latscope_latency_seconds_sum", "cpu", "0", NULL)->value, "12000000000.0");
	assert_string_equal(find(&e, "latscope_latency_quantile_seconds_sum", "cpu", "all", NULL)->value,
			    "12000000000.0");
	expo_free(&e);
	free(text);
	result_free(&res);
}

static void test_a_failed_write_gives_its_errno(void **state)
{
	(void)state;
	struct result a;
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		skip_because("this machine has no writable /dev/full");
	load_real(&a);
	const struct result *rs[] = { &a };
	assert_int_equal(openmetrics_write(f, rs, NULL, 1, NULL), -ENOSPC);
	fclose(f);
	result_free(&a);
}

/* ---- JUnit ---- */

static char *tmpdir(void)
{
	char *dir = strdup("/tmp/latscope-junit-XXXXXX");
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;
	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 16);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;

	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_junit_counts_tests_and_failures(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path = path_in(dir, "gates.xml");
	const struct junit_case cases[] = {
		{ "latscope.timer", "cpu0 max below 100us", false, NULL, NULL },
		{ "latscope.timer", "cpu1 max below 100us", true, "max 812.4us > 100us", "cpu 1: max 812.4us" },
		{ NULL, "all p99 below 50us", true, NULL, NULL },
	};

	assert_int_equal(junit_write(path, "latscope", cases, ARRAY_SIZE(cases)), 0);
	char *xml = slurp(path);
	assert_true(strncmp(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"latscope\" tests=\"3\" failures=\"2\"", 86) == 0);
	assert_non_null(strstr(xml, "<testsuite name=\"latscope\" tests=\"3\" failures=\"2\" errors=\"0\" skipped=\"0\">"));
	assert_non_null(strstr(xml, "<testcase classname=\"latscope.timer\" name=\"cpu0 max below 100us\"/>"));
	assert_non_null(strstr(xml, "<testcase classname=\"latscope.timer\" name=\"cpu1 max below 100us\">\n"
				    "   <failure message=\"max 812.4us &gt; 100us\">cpu 1: max 812.4us</failure>\n"
				    "  </testcase>"));
	/* no class name: the suite's; no message or detail: an empty failure */
	assert_non_null(strstr(xml, "<testcase classname=\"latscope\" name=\"all p99 below 50us\">\n   <failure/>"));
	assert_non_null(strstr(xml, "</testsuite>\n</testsuites>\n"));
	free(xml);

	/* no case at all */
	assert_int_equal(junit_write(path, "empty", NULL, 0), 0);
	xml = slurp(path);
	assert_non_null(strstr(xml, "<testsuite name=\"empty\" tests=\"0\" failures=\"0\""));
	assert_null(strstr(xml, "<testcase"));
	free(xml);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

static void test_junit_escapes_markup_and_drops_what_xml_does_not_allow(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path = path_in(dir, "j.xml");
	const struct junit_case cases[] = {
		{ "a<b>&c", "say \"hi\" it's", true, "line1\nline2\ttab\x01\x1b\x7f",
		  "x ]]> y\r\nz\x0b\x0c\xff\xef\xbf\xbe\xef\xbf\xbf \xc3\xa9 \xf0\x9f\x98\x80" },
	};

	assert_int_equal(junit_write(path, "s&<>\"'", cases, 1), 0);
	char *xml = slurp(path);
	assert_non_null(strstr(xml, "<testsuites name=\"s&amp;&lt;&gt;&quot;&apos;\""));
	assert_non_null(strstr(xml, "classname=\"a&lt;b&gt;&amp;c\" name=\"say &quot;hi&quot; it&apos;s\""));
	/* in attributes newline and tab survive as references; C0 controls go; DEL is allowed */
	assert_non_null(strstr(xml, "message=\"line1&#10;line2&#9;tab\x7f\""));
	/* in text: CR kept as a reference, forbidden controls, U+FFFE and U+FFFF dropped, a bad byte replaced */
	assert_non_null(strstr(xml, ">x ]]&gt; y&#13;\nz\xef\xbf\xbd \xc3\xa9 \xf0\x9f\x98\x80</failure>"));
	for (const char *p = xml; *p; p++) {
		unsigned char c = (unsigned char)*p;
		assert_true(c >= 0x20 || c == '\n' || c == '\t');
	}
	free(xml);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

static void test_junit_replaces_the_file_whole_and_leaves_no_temporary(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path = path_in(dir, "report.xml");
	const struct junit_case c = { "k", "n", false, NULL, NULL };
	char old[8] = "";

	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);

	assert_int_equal(junit_write(path, "s", &c, 1), 0);
	/* a reader holding the old file still sees it whole: it was replaced, not rewritten */
	assert_int_equal(read(fd, old, sizeof(old) - 1), 3);
	assert_string_equal(old, "old");
	close(fd);
	char *xml = slurp(path);
	assert_non_null(strstr(xml, "<testcase classname=\"k\" name=\"n\"/>"));
	free(xml);
	assert_int_equal(entries(dir), 1);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0044, 0044);        /* readable by CI, not 0600 */

	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

static void test_junit_reports_an_unwritable_path_as_a_negative_errno(void **state)
{
	(void)state;
	char *dir = tmpdir(), *missing = path_in(dir, "no/such/dir/j.xml");
	const struct junit_case c = { "k", "n", true, "m", "d" };

	assert_int_equal(junit_write(missing, "s", &c, 1), -ENOENT);
	assert_int_equal(junit_write(dir, "s", &c, 1), -EISDIR);
	if (geteuid() != 0) {
		/* root writes anywhere: the permission case needs another user */
		char *locked = path_in(dir, "locked"), *inside = path_in(locked, "j.xml");
		assert_int_equal(mkdir(locked, 0500), 0);
		assert_int_equal(junit_write(inside, "s", &c, 1), -EACCES);
		rmdir(locked);
		free(inside);
		free(locked);
	}
	assert_int_equal(entries(dir), 0);
	rmdir(dir);
	free(missing);
	free(dir);
}

static void test_junit_rejects_a_missing_suite_or_case_name(void **state)
{
	(void)state;
	const struct junit_case nameless = { "k", NULL, false, NULL, NULL };
	const struct junit_case c = { "k", "n", false, NULL, NULL };

	assert_int_equal(junit_write("/tmp/never-written.xml", NULL, &c, 1), -EINVAL);
	assert_int_equal(junit_write("/tmp/never-written.xml", "s", &nameless, 1), -EINVAL);
	assert_int_equal(junit_write(NULL, "s", &c, 1), -EINVAL);
	assert_int_equal(junit_write("/tmp/never-written.xml", "s", NULL, 1), -EINVAL);
	assert_int_equal(access("/tmp/never-written.xml", F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_line_of_a_real_run_is_metadata_a_sample_or_the_final_eof),
		cmocka_unit_test(test_smis_are_a_gauge_per_row_of_a_run_that_counted_them_and_absent_without_a_source),
		cmocka_unit_test(test_histogram_buckets_are_cumulative_and_inf_equals_count_and_the_summary_count),
		cmocka_unit_test(test_bucket_bounds_are_the_canonical_1_2_5_ladder),
		cmocka_unit_test(test_a_bucket_counts_toward_a_bound_only_when_its_upper_end_is_within_it),
		cmocka_unit_test(test_sum_is_mean_times_count_in_seconds_and_figures_are_exact_seconds),
		cmocka_unit_test(test_figures_that_do_not_exist_are_left_out),
		cmocka_unit_test(test_long_run_figures_are_there_for_runs_that_counted_spikes_only),
		cmocka_unit_test(test_label_values_escape_quote_backslash_and_newline),
		cmocka_unit_test(test_bytes_that_are_not_utf8_become_the_replacement_character),
		cmocka_unit_test(test_label_names_are_mapped_to_the_allowed_characters_and_prefixed),
		cmocka_unit_test(test_two_runs_keep_each_family_contiguous_and_share_label_names),
		cmocka_unit_test(test_the_output_depends_on_the_input_only),
		cmocka_unit_test(test_no_run_gives_just_eof),
		cmocka_unit_test(test_repeated_ids_and_missing_results_are_rejected),
		cmocka_unit_test(test_a_sum_above_two_to_the_63_ns_stays_exact),
		cmocka_unit_test(test_a_failed_write_gives_its_errno),
		cmocka_unit_test(test_junit_counts_tests_and_failures),
		cmocka_unit_test(test_junit_escapes_markup_and_drops_what_xml_does_not_allow),
		cmocka_unit_test(test_junit_replaces_the_file_whole_and_leaves_no_temporary),
		cmocka_unit_test(test_junit_reports_an_unwritable_path_as_a_negative_errno),
		cmocka_unit_test(test_junit_rejects_a_missing_suite_or_case_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* `latscope timer -a 0 -D 1 -q --no-store --json FILE` on this project's 2-vCPU KVM guest, compacted. */
static const char *real_run_json(void)
{
	/* in pieces: C11 compilers need not take a string literal past 4095 characters */
	static const char *const parts[] = {
		"{\"schema\":\"latscope.result\",\"schema_version\":1,\"tool\":{\"name\":\"latscope\",\"version\":\"0.1.0\"},\"pro",
		"be\":\"timer\",\"start_time\":\"2026-11-30T09:14:59.155Z\",\"start_realtime_ns\":1796030099155510531,\"ela",
		"psed_ns\":999031702,\"interrupted\":false,\"stop_reason\":\"duration\",\"command_line\":[\"latscope\",\"time",
		"r\",\"-a\",\"0\",\"-D\",\"1\",\"-q\",\"--no-store\",\"--json\",\"/tmp/r1.json\"],\"params\":{\"interval_ns\":1000000,",
		"\"mode\":\"nanosleep\",\"co_correct\":false,\"cpus\":\"0\",\"priority\":95,\"policy\":\"fifo\",\"duration_ns\":100",
		"0000000,\"loops\":0,\"threshold_ns\":100000,\"window_ns\":1000000000,\"warmup\":2,\"fail_above_ns\":0,\"fai",
		"l_stat\":\"max\",\"no_pm_qos\":false,\"strict\":false},\"labels\":{},\"system\":{\"hostname\":\"vm\",\"kernel_re",
		"lease\":\"6.18.44-fc-v782\",\"kernel_version\":\"#1 SMP PREEMPT_DYNAMIC @0\",\"machine\":\"x86_64\",\"preemp",
		"t\":\"PREEMPT_DYNAMIC\",\"preempt_mode\":\"\",\"clocksource\":\"tsc\",\"clocksources_available\":\"tsc kvm-clo",
		"ck\",\"cpu_model\":\"AMD EPYC\",\"hypervisor\":\"KVM\",\"online_cpus\":\"0-1\",\"ncpus_online\":2},\"applied\":{\"",
		"rt_policy\":true,\"memlock\":true,\"pm_qos\":true,\"timer_slack\":true,\"main_thread_off_measured_cpus\":",
		"true},\"notes\":[],\"threshold_ns\":100000,\"warmup_windows\":2,\"metrics\":[\"latency\"],\"cpus\":[{\"cpu\":0",
		",\"metrics\":{\"latency\":{\"count\":999,\"min_ns\":11450,\"mean_ns\":35929.7267267,\"stddev_ns\":56802.6081",
		"839,\"p50_ns\":30847,\"p90_ns\":40191,\"p99_ns\":173055,\"p99_9_ns\":1410671,\"p99_99_ns\":1410671,\"max_ns",
		"\":1410671,\"warm_max_ns\":null,\"above\":21,\"above_pct\":2.1021021021,\"histogram\":{\"relative_error\":0",
		".0078125,\"count\":999,\"buckets\":[[11392,11519,1],[11904,12031,1],[12032,12159,1],[12800,12927,1],",
		"[12928,13055,3],[13056,13183,1],[13184,13311,1],[13312,13439,1],[13440,13567,2],[13568,13695,2],",
		"[13824,13951,1],[13952,14079,1],[14080,14207,1],[14336,14463,1],[14464,14591,1],[14720,14847,2],",
		"[14976,15103,1],[15488,15615,3],[15616,15743,1],[15872,15999,2],[16000,16127,1],[16128,16255,1],",
		"[16256,16383,1],[16384,16639,3],[16640,16895,1],[16896,17151,5],[17152,17407,2],[17408,17663,2],",
		"[17664,17919,4],[18176,18431,3],[18432,18687,3],[18688,18943,3],[18944,19199,5],[19200,19455,3],",
		"[19456,19711,4],[19712,19967,5],[19968,20223,6],[20224,20479,6],[20480,20735,8],[20736,20991,11]",
		",[20992,21247,5],[21248,21503,10],[21504,21759,11],[21760,22015,5],[22016,22271,7],[22272,22527,",
		"5],[22528,22783,11],[22784,23039,8],[23040,23295,7],[23296,23551,4],[23552,23807,10],[23808,2406",
		"3,7],[24064,24319,9],[24320,24575,9],[24576,24831,5],[24832,25087,10],[25088,25343,8],[25344,255",
		"99,11],[25600,25855,8],[25856,26111,10],[26112,26367,12],[26368,26623,4],[26624,26879,9],[26880,",
		"27135,5],[27136,27391,11],[27392,27647,11],[27648,27903,13],[27904,28159,13],[28160,28415,10],[2",
		"8416,28671,16],[28672,28927,12],[28928,29183,12],[29184,29439,9],[29440,29695,13],[29696,29951,1",
		"9],[29952,30207,22],[30208,30463,25],[30464,30719,14],[30720,30975,19],[30976,31231,20],[31232,3",
		"1487,14],[31488,31743,20],[31744,31999,19],[32000,32255,22],[32256,32511,16],[32512,32767,20],[3",
		"2768,33279,34],[33280,33791,32],[33792,34303,25],[34304,34815,22],[34816,35327,24],[35328,35839,",
		"15],[35840,36351,16],[36352,36863,14],[36864,37375,14],[37376,37887,14],[37888,38399,10],[38400,",
		"38911,9],[38912,39423,13],[39424,39935,8],[39936,40447,5],[40448,40959,5],[40960,41471,6],[41472",
		",41983,3],[41984,42495,4],[42496,43007,4],[43008,43519,3],[43520,44031,2],[44032,44543,1],[44544",
		",45055,2],[45056,45567,3],[45568,46079,1],[46080,46591,7],[46592,47103,1],[47616,48127,2],[48128",
		",48639,1],[48640,49151,2],[49664,50175,3],[50176,50687,1],[51712,52223,2],[53248,53759,3],[54272",
		",54783,1],[54784,55295,1],[55808,56319,2],[56832,57343,1],[57344,57855,1],[58368,58879,1],[59392",
		",59903,1],[60928,61439,1],[61440,61951,1],[61952,62463,1],[62464,62975,1],[64512,65023,1],[65024",
		",65535,1],[68608,69631,1],[69632,70655,1],[73728,74751,1],[74752,75775,1],[79872,80895,1],[91136",
		",92159,1],[93184,94207,1],[94208,95231,1],[102400,103423,1],[103424,104447,1],[104448,105471,1],",
		"[108544,109567,1],[123904,124927,1],[131072,133119,1],[135168,137215,1],[137216,139263,1],[14131",
		"2,143359,1],[143360,145407,1],[151552,153599,1],[172032,174079,1],[182272,184319,1],[196608,1986",
		"55,1],[243712,245759,1],[278528,282623,1],[286720,290815,1],[368640,372735,1],[385024,389119,1],",
		"[843776,851967,1],[1409024,1425407,1]]}}},\"missed\":1,\"overhead\":{\"clock_read_ns\":{\"count\":2000,\"",
		"min_ns\":20,\"max_ns\":71,\"mean_ns\":29.541,\"stddev_ns\":6.21380068879},\"wakeup_to_recorded_ns\":{\"cou",
		"nt\":999,\"min_ns\":60,\"max_ns\":3166,\"mean_ns\":552.127127127,\"stddev_ns\":375.455626916}},\"windows\":",
		"[{\"index\":0,\"start_ns\":0,\"end_ns\":999031702,\"missed\":1,\"latency\":{\"count\":999,\"min_ns\":11450,\"ma",
		"x_ns\":1410671,\"mean_ns\":35929.7267267,\"stddev_ns\":56802.6081839,\"above\":21,\"p50_ns\":30847,\"p99_n",
		"s\":173055,\"histogram\":{\"count\":999,\"buckets\":[[11392,11519,1],[11904,12031,1],[12032,12159,1],[1",
		"2800,12927,1],[12928,13055,3],[13056,13183,1],[13184,13311,1],[13312,13439,1],[13440,13567,2],[1",
		"3568,13695,2],[13824,13951,1],[13952,14079,1],[14080,14207,1],[14336,14463,1],[14464,14591,1],[1",
		"4720,14847,2],[14976,15103,1],[15488,15615,3],[15616,15743,1],[15872,15999,2],[16000,16127,1],[1",
		"6128,16255,1],[16256,16383,1],[16384,16639,3],[16640,16895,1],[16896,17151,5],[17152,17407,2],[1",
		"7408,17663,2],[17664,17919,4],[18176,18431,3],[18432,18687,3],[18688,18943,3],[18944,19199,5],[1",
		"9200,19455,3],[19456,19711,4],[19712,19967,5],[19968,20223,6],[20224,20479,6],[20480,20735,8],[2",
		"0736,20991,11],[20992,21247,5],[21248,21503,10],[21504,21759,11],[21760,22015,5],[22016,22271,7]",
		",[22272,22527,5],[22528,22783,11],[22784,23039,8],[23040,23295,7],[23296,23551,4],[23552,23807,1",
		"0],[23808,24063,7],[24064,24319,9],[24320,24575,9],[24576,24831,5],[24832,25087,10],[25088,25343",
		",8],[25344,25599,11],[25600,25855,8],[25856,26111,10],[26112,26367,12],[26368,26623,4],[26624,26",
		"879,9],[26880,27135,5],[27136,27391,11],[27392,27647,11],[27648,27903,13],[27904,28159,13],[2816",
		"0,28415,10],[28416,28671,16],[28672,28927,12],[28928,29183,12],[29184,29439,9],[29440,29695,13],",
		"[29696,29951,19],[29952,30207,22],[30208,30463,25],[30464,30719,14],[30720,30975,19],[30976,3123",
		"1,20],[31232,31487,14],[31488,31743,20],[31744,31999,19],[32000,32255,22],[32256,32511,16],[3251",
		"2,32767,20],[32768,33279,34],[33280,33791,32],[33792,34303,25],[34304,34815,22],[34816,35327,24]",
		",[35328,35839,15],[35840,36351,16],[36352,36863,14],[36864,37375,14],[37376,37887,14],[37888,383",
		"99,10],[38400,38911,9],[38912,39423,13],[39424,39935,8],[39936,40447,5],[40448,40959,5],[40960,4",
		"1471,6],[41472,41983,3],[41984,42495,4],[42496,43007,4],[43008,43519,3],[43520,44031,2],[44032,4",
		"4543,1],[44544,45055,2],[45056,45567,3],[45568,46079,1],[46080,46591,7],[46592,47103,1],[47616,4",
		"8127,2],[48128,48639,1],[48640,49151,2],[49664,50175,3],[50176,50687,1],[51712,52223,2],[53248,5",
		"3759,3],[54272,54783,1],[54784,55295,1],[55808,56319,2],[56832,57343,1],[57344,57855,1],[58368,5",
		"8879,1],[59392,59903,1],[60928,61439,1],[61440,61951,1],[61952,62463,1],[62464,62975,1],[64512,6",
		"5023,1],[65024,65535,1],[68608,69631,1],[69632,70655,1],[73728,74751,1],[74752,75775,1],[79872,8",
		"0895,1],[91136,92159,1],[93184,94207,1],[94208,95231,1],[102400,103423,1],[103424,104447,1],[104",
		"448,105471,1],[108544,109567,1],[123904,124927,1],[131072,133119,1],[135168,137215,1],[137216,13",
		"9263,1],[141312,143359,1],[143360,145407,1],[151552,153599,1],[172032,174079,1],[182272,184319,1",
		"],[196608,198655,1],[243712,245759,1],[278528,282623,1],[286720,290815,1],[368640,372735,1],[385",
		"024,389119,1],[843776,851967,1],[1409024,1425407,1]]}},\"overhead_ns\":{\"count\":999,\"min_ns\":60,\"m",
		"ax_ns\":3166,\"mean_ns\":552.127127127,\"stddev_ns\":375.455626916}}]}],\"all\":{\"cpu\":\"all\",\"metrics\":",
		"{\"latency\":{\"count\":999,\"min_ns\":11450,\"mean_ns\":35929.7267267,\"stddev_ns\":56802.6081839,\"p50_ns",
		"\":30847,\"p90_ns\":40191,\"p99_ns\":173055,\"p99_9_ns\":1410671,\"p99_99_ns\":1410671,\"max_ns\":1410671,\"",
		"warm_max_ns\":null,\"above\":21,\"above_pct\":2.1021021021,\"histogram\":{\"relative_error\":0.0078125,\"c",
		"ount\":999,\"buckets\":[[11392,11519,1],[11904,12031,1],[12032,12159,1],[12800,12927,1],[12928,1305",
		"5,3],[13056,13183,1],[13184,13311,1],[13312,13439,1],[13440,13567,2],[13568,13695,2],[13824,1395",
		"1,1],[13952,14079,1],[14080,14207,1],[14336,14463,1],[14464,14591,1],[14720,14847,2],[14976,1510",
		"3,1],[15488,15615,3],[15616,15743,1],[15872,15999,2],[16000,16127,1],[16128,16255,1],[16256,1638",
		"3,1],[16384,16639,3],[16640,16895,1],[16896,17151,5],[17152,17407,2],[17408,17663,2],[17664,1791",
		"9,4],[18176,18431,3],[18432,18687,3],[18688,18943,3],[18944,19199,5],[19200,19455,3],[19456,1971",
		"1,4],[19712,19967,5],[19968,20223,6],[20224,20479,6],[20480,20735,8],[20736,20991,11],[20992,212",
		"47,5],[21248,21503,10],[21504,21759,11],[21760,22015,5],[22016,22271,7],[22272,22527,5],[22528,2",
		"2783,11],[22784,23039,8],[23040,23295,7],[23296,23551,4],[23552,23807,10],[23808,24063,7],[24064",
		",24319,9],[24320,24575,9],[24576,24831,5],[24832,25087,10],[25088,25343,8],[25344,25599,11],[256",
		"00,25855,8],[25856,26111,10],[26112,26367,12],[26368,26623,4],[26624,26879,9],[26880,27135,5],[2",
		"7136,27391,11],[27392,27647,11],[27648,27903,13],[27904,28159,13],[28160,28415,10],[28416,28671,",
		"16],[28672,28927,12],[28928,29183,12],[29184,29439,9],[29440,29695,13],[29696,29951,19],[29952,3",
		"0207,22],[30208,30463,25],[30464,30719,14],[30720,30975,19],[30976,31231,20],[31232,31487,14],[3",
		"1488,31743,20],[31744,31999,19],[32000,32255,22],[32256,32511,16],[32512,32767,20],[32768,33279,",
		"34],[33280,33791,32],[33792,34303,25],[34304,34815,22],[34816,35327,24],[35328,35839,15],[35840,",
		"36351,16],[36352,36863,14],[36864,37375,14],[37376,37887,14],[37888,38399,10],[38400,38911,9],[3",
		"8912,39423,13],[39424,39935,8],[39936,40447,5],[40448,40959,5],[40960,41471,6],[41472,41983,3],[",
		"41984,42495,4],[42496,43007,4],[43008,43519,3],[43520,44031,2],[44032,44543,1],[44544,45055,2],[",
		"45056,45567,3],[45568,46079,1],[46080,46591,7],[46592,47103,1],[47616,48127,2],[48128,48639,1],[",
		"48640,49151,2],[49664,50175,3],[50176,50687,1],[51712,52223,2],[53248,53759,3],[54272,54783,1],[",
		"54784,55295,1],[55808,56319,2],[56832,57343,1],[57344,57855,1],[58368,58879,1],[59392,59903,1],[",
		"60928,61439,1],[61440,61951,1],[61952,62463,1],[62464,62975,1],[64512,65023,1],[65024,65535,1],[",
		"68608,69631,1],[69632,70655,1],[73728,74751,1],[74752,75775,1],[79872,80895,1],[91136,92159,1],[",
		"93184,94207,1],[94208,95231,1],[102400,103423,1],[103424,104447,1],[104448,105471,1],[108544,109",
		"567,1],[123904,124927,1],[131072,133119,1],[135168,137215,1],[137216,139263,1],[141312,143359,1]",
		",[143360,145407,1],[151552,153599,1],[172032,174079,1],[182272,184319,1],[196608,198655,1],[2437",
		"12,245759,1],[278528,282623,1],[286720,290815,1],[368640,372735,1],[385024,389119,1],[843776,851",
		"967,1],[1409024,1425407,1]]}}},\"missed\":1,\"overhead\":{\"clock_read_ns\":{\"count\":2000,\"min_ns\":20,",
		"\"max_ns\":71,\"mean_ns\":29.541,\"stddev_ns\":6.21380068879},\"wakeup_to_recorded_ns\":{\"count\":999,\"mi",
		"n_ns\":60,\"max_ns\":3166,\"mean_ns\":552.127127127,\"stddev_ns\":375.455626916}},\"windows\":[{\"index\":0",
		",\"start_ns\":0,\"end_ns\":999031702,\"missed\":1,\"latency\":{\"count\":999,\"min_ns\":11450,\"max_ns\":14106",
		"71,\"mean_ns\":35929.7267267,\"stddev_ns\":56802.6081839,\"above\":21,\"histogram\":{\"count\":999,\"bucket",
		"s\":[[11392,11519,1],[11904,12031,1],[12032,12159,1],[12800,12927,1],[12928,13055,3],[13056,13183",
		",1],[13184,13311,1],[13312,13439,1],[13440,13567,2],[13568,13695,2],[13824,13951,1],[13952,14079",
		",1],[14080,14207,1],[14336,14463,1],[14464,14591,1],[14720,14847,2],[14976,15103,1],[15488,15615",
		",3],[15616,15743,1],[15872,15999,2],[16000,16127,1],[16128,16255,1],[16256,16383,1],[16384,16639",
		",3],[16640,16895,1],[16896,17151,5],[17152,17407,2],[17408,17663,2],[17664,17919,4],[18176,18431",
		",3],[18432,18687,3],[18688,18943,3],[18944,19199,5],[19200,19455,3],[19456,19711,4],[19712,19967",
		",5],[19968,20223,6],[20224,20479,6],[20480,20735,8],[20736,20991,11],[20992,21247,5],[21248,2150",
		"3,10],[21504,21759,11],[21760,22015,5],[22016,22271,7],[22272,22527,5],[22528,22783,11],[22784,2",
		"3039,8],[23040,23295,7],[23296,23551,4],[23552,23807,10],[23808,24063,7],[24064,24319,9],[24320,",
		"24575,9],[24576,24831,5],[24832,25087,10],[25088,25343,8],[25344,25599,11],[25600,25855,8],[2585",
		"6,26111,10],[26112,26367,12],[26368,26623,4],[26624,26879,9],[26880,27135,5],[27136,27391,11],[2",
		"7392,27647,11],[27648,27903,13],[27904,28159,13],[28160,28415,10],[28416,28671,16],[28672,28927,",
		"12],[28928,29183,12],[29184,29439,9],[29440,29695,13],[29696,29951,19],[29952,30207,22],[30208,3",
		"0463,25],[30464,30719,14],[30720,30975,19],[30976,31231,20],[31232,31487,14],[31488,31743,20],[3",
		"1744,31999,19],[32000,32255,22],[32256,32511,16],[32512,32767,20],[32768,33279,34],[33280,33791,",
		"32],[33792,34303,25],[34304,34815,22],[34816,35327,24],[35328,35839,15],[35840,36351,16],[36352,",
		"36863,14],[36864,37375,14],[37376,37887,14],[37888,38399,10],[38400,38911,9],[38912,39423,13],[3",
		"9424,39935,8],[39936,40447,5],[40448,40959,5],[40960,41471,6],[41472,41983,3],[41984,42495,4],[4",
		"2496,43007,4],[43008,43519,3],[43520,44031,2],[44032,44543,1],[44544,45055,2],[45056,45567,3],[4",
		"5568,46079,1],[46080,46591,7],[46592,47103,1],[47616,48127,2],[48128,48639,1],[48640,49151,2],[4",
		"9664,50175,3],[50176,50687,1],[51712,52223,2],[53248,53759,3],[54272,54783,1],[54784,55295,1],[5",
		"5808,56319,2],[56832,57343,1],[57344,57855,1],[58368,58879,1],[59392,59903,1],[60928,61439,1],[6",
		"1440,61951,1],[61952,62463,1],[62464,62975,1],[64512,65023,1],[65024,65535,1],[68608,69631,1],[6",
		"9632,70655,1],[73728,74751,1],[74752,75775,1],[79872,80895,1],[91136,92159,1],[93184,94207,1],[9",
		"4208,95231,1],[102400,103423,1],[103424,104447,1],[104448,105471,1],[108544,109567,1],[123904,12",
		"4927,1],[131072,133119,1],[135168,137215,1],[137216,139263,1],[141312,143359,1],[143360,145407,1",
		"],[151552,153599,1],[172032,174079,1],[182272,184319,1],[196608,198655,1],[243712,245759,1],[278",
		"528,282623,1],[286720,290815,1],[368640,372735,1],[385024,389119,1],[843776,851967,1],[1409024,1",
		"425407,1]]}},\"overhead_ns\":{\"count\":999,\"min_ns\":60,\"max_ns\":3166,\"mean_ns\":552.127127127,\"stdde",
		"v_ns\":375.455626916}}]}}",
	};
	static char text[16384];

	if (!text[0])
		for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
			strcat(text, parts[i]);
	return text;
}
