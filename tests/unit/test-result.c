/*
 * Unit tests for the result model (src/result/result.c), its JSON form
 * (src/result/json.c) and the all-or-nothing JSON file (src/result/jsonfile.c).
 *
 * Results are built by hand from synthetic windows, and every figure is checked
 * against a reference accumulated directly from the same values.
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
#include <jansson.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "core/hist.h"
#include "core/nstime.h"
#include "core/stats.h"
#include "probe/recorder.h"
#include "result/compare.h"
#include "result/json.h"
#include "result/merge.h"
#include "result/bands.h"
#include "result/result.h"

#include "rng.h"
#include "tmpdir.h"


#define WIN       UINT64_C(1000000)     /* 1 ms windows */
#define THRESHOLD UINT64_C(100)         /* metric 0: above when > 100 */

static const char *const names[] = { "latency", "other", "third", "fourth", "fifth", "sixth", "seventh", "eighth" };
_Static_assert(ARRAY_SIZE(names) >= REC_MAX_METRICS, "a name for every metric a result can hold");

/* ---- synthetic windows ---- */

struct synth {
	struct rec_window w;
	struct hist h[REC_MAX_METRICS];
};

/*
 * Windows handed over are kept for the next synth_new: the long-run tests add
 * tens of thousands, and a fresh 180 KB block each (filled by cmocka's
 * allocator, mapped and unmapped by AddressSanitizer's) made the sanitizer
 * pass take minutes.  A kept one is cleared only where it holds samples.
 * Plain malloc: reachable from here, the blocks are no test's leak.
 */
#define SYNTH_SPARES 4
static struct synth *spares[SYNTH_SPARES];
static unsigned nspares;

static struct synth *synth_new(uint64_t index)
{
	struct synth *s = nspares ? spares[--nspares] : calloc(1, sizeof(*s));

	assert_non_null(s);
	memset(&s->w, 0, sizeof(s->w));
	s->w.index = index;
	s->w.start_ns = index * WIN;
	s->w.end_ns = (index + 1u) * WIN;
	stats_reset(&s->w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++) {
		stats_reset(&s->w.m[m].st);
		if (s->h[m].total)
			hist_reset(&s->h[m]);
	}
	return s;
}

static void synth_done(struct synth *s)
{
	if (nspares < SYNTH_SPARES)
		spares[nspares++] = s;
	else
		free(s);
}

static void synth_add(struct synth *s, unsigned m, uint64_t v)
{
	stats_add(&s->w.m[m].st, v);
	hist_record(&s->h[m], v);
	if (m == 0 && v > THRESHOLD)
		s->w.m[0].above++;
}

/* What a CPU's totals must be: every value added directly. */
struct ref {
	struct stats st[REC_MAX_METRICS];
	struct hist *h;                 /* REC_MAX_METRICS histograms */
	uint64_t above, missed, overhead_n, nwin;
};

static void ref_init(struct ref *r)
{
	memset(r, 0, sizeof(*r));
	r->h = test_malloc(REC_MAX_METRICS * sizeof(struct hist));
	for (unsigned m = 0; m < REC_MAX_METRICS; m++) {
		stats_reset(&r->st[m]);
		hist_reset(&r->h[m]);
	}
}

static void ref_free(struct ref *r)
{
	test_free(r->h);
	r->h = NULL;
}

/* Add v to the window and to the reference. */
static void put(struct synth *s, struct ref *r, unsigned m, uint64_t v)
{
	synth_add(s, m, v);
	if (r) {
		stats_add(&r->st[m], v);
		hist_record(&r->h[m], v);
		r->above += m == 0 && v > THRESHOLD;
	}
}

/* Hand the window to the result's CPU i, account it in ref, and free it. */
static void add_window(struct result *res, size_t i, struct synth *s, struct ref *r)
{
	assert_int_equal(result_add_window(res, &res->cpus[i], &s->w, s->h), 0);
	if (r) {
		r->missed += s->w.missed;
		r->overhead_n += s->w.overhead.n;
		r->nwin++;
	}
	synth_done(s);
}

static void init_result(struct result *res, unsigned nmetrics, const char *cpulist)
{
	struct cpuset set;

	assert_int_equal(cpuset_parse(cpulist, &set), 0);
	assert_int_equal(result_init(res, "timer", nmetrics, names, &set), 0);
	res->threshold_ns = THRESHOLD;
	res->warmup = 0;
}

static void assert_close(double got, double want)
{
	double tol = 1e-9 * fmax(1.0, fabs(want));
	if (fabs(got - want) > tol) {
		print_error("got %.17g, want %.17g\n", got, want);
		fail();
	}
}

static void assert_same_hist(const struct hist *got, const struct hist *want)
{
	assert_int_equal(got->total, want->total);
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		if (got->counts[i] != want->counts[i]) {
			print_error("bucket %u: %" PRIu64 ", want %" PRIu64 "\n", i, got->counts[i], want->counts[i]);
			fail();
		}
}

static void assert_same_stats(const struct stats *got, const struct stats *want)
{
	assert_int_equal(got->n, want->n);
	assert_int_equal(got->min, want->min);
	assert_int_equal(got->max, want->max);
	assert_close(got->mean, want->mean);
	assert_close(got->m2, want->m2);
}

static void assert_summary_sane(const struct summary *s)
{
	const uint64_t p[] = { s->min, s->p50, s->p90, s->p99, s->p999, s->p9999, s->max };

	for (size_t i = 1; i < ARRAY_SIZE(p); i++)
		if (p[i - 1u] > p[i]) {
			print_error("min/p50/p90/p99/p99.9/p99.99/max out of order: %" PRIu64 " %" PRIu64 " %" PRIu64
				    " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				    p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
			fail();
		}
}

/* A value from a heavy-tailed spread over many magnitudes, at most max_bits bits. */
static uint64_t spread_value(unsigned max_bits)
{
	return rng_next() >> (64u - max_bits + rng_below(max_bits));
}

/* ---- building the result ---- */

static void test_result_init_makes_one_row_per_cpu_in_order_and_an_all_row(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 2, "1,3,64,4095");
	assert_int_equal(res.ncpus, 4);
	assert_int_equal(res.cpus[0].cpu, 1);
	assert_int_equal(res.cpus[1].cpu, 3);
	assert_int_equal(res.cpus[2].cpu, 64);
	assert_int_equal(res.cpus[3].cpu, 4095);
	assert_int_equal(res.all.cpu, -1);
	assert_int_equal(res.nmetrics, 2);
	assert_string_equal(res.probe, "timer");
	assert_string_equal(res.metric_names[0], "latency");
	assert_string_equal(res.metric_names[1], "other");
	for (size_t i = 0; i < res.ncpus; i++) {
		const struct cpu_result *cr = &res.cpus[i];
		assert_non_null(cr->hist);
		assert_int_equal(cr->hist[0].total, 0);
		assert_int_equal(hist_count_buckets(&cr->hist[1]), 0);
		assert_int_equal(cr->st[0].n, 0);
		assert_int_equal(cr->st[0].min, UINT64_MAX);
		assert_int_equal(cr->nwin, 0);
	}
	assert_non_null(res.all.hist);
	result_free(&res);
	result_free(&res);      /* twice is harmless */
}

static void test_result_init_rejects_no_metrics_and_too_many(void **state)
{
	(void)state;
	struct result res;
	struct cpuset set;

	cpuset_clear(&set);
	cpuset_add(&set, 0);
	assert_int_equal(result_init(&res, "timer", 0, names, &set), -EINVAL);
	assert_int_equal(result_init(&res, "timer", REC_MAX_METRICS + 1u, names, &set), -EINVAL);
	assert_int_equal(result_init(&res, "timer", REC_MAX_METRICS, names, &set), 0);
	result_free(&res);
}

static void test_a_result_with_no_cpu_and_no_window_finalizes_to_zeros(void **state)
{
	(void)state;
	struct result res;
	struct cpuset none;

	cpuset_clear(&none);
	assert_int_equal(result_init(&res, "timer", 1, names, &none), 0);
	assert_int_equal(res.ncpus, 0);
	assert_int_equal(result_finalize(&res), 0);
	const struct summary *s = &res.all.sum[0];
	assert_int_equal(s->count, 0);
	assert_int_equal(s->min, 0);
	assert_int_equal(s->max, 0);
	assert_int_equal(s->p50, 0);
	assert_int_equal(s->p9999, 0);
	assert_false(s->has_warm_max);
	assert_true(s->above_pct == 0.0);

	json_t *j = result_to_json(&res);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "cpus")), 0);
	json_decref(j);
	result_free(&res);
}

static void test_cpu_totals_are_the_sum_of_their_windows(void **state)
{
	(void)state;
	struct result res;
	struct ref ref[2];

	rng_seed(11);
	init_result(&res, 2, "0-1");
	for (size_t c = 0; c < 2; c++) {
		ref_init(&ref[c]);
		for (uint64_t k = 0; k < 40; k++) {
			struct synth *s = synth_new(k);
			uint64_t n = rng_below(300);          /* some windows are empty */
			for (uint64_t i = 0; i < n; i++) {
				put(s, &ref[c], 0, spread_value(30));
				put(s, &ref[c], 1, rng_below(1000));
			}
			s->w.missed = rng_below(5);
			for (uint64_t i = rng_below(3); i > 0; i--)
				stats_add(&s->w.overhead, 50u + rng_below(50));
			add_window(&res, c, s, &ref[c]);
		}
	}
	for (size_t c = 0; c < 2; c++) {
		const struct cpu_result *cr = &res.cpus[c];
		for (unsigned m = 0; m < 2; m++) {
			assert_same_stats(&cr->st[m], &ref[c].st[m]);
			assert_same_hist(&cr->hist[m], &ref[c].h[m]);
			assert_int_equal(cr->gwin[m].n, ref[c].st[m].n);
		}
		assert_int_equal(cr->above[0], ref[c].above);
		assert_int_equal(cr->above[1], 0);
		assert_int_equal(cr->missed, ref[c].missed);
		assert_int_equal(cr->overhead.n, ref[c].overhead_n);
		assert_int_equal(cr->nwin, ref[c].nwin);
		/* Windows are kept in order, with their own percentiles. */
		uint64_t n = 0;
		for (size_t k = 0; k < cr->nwin; k++) {
			assert_int_equal(cr->win[k].w.index, k);
			assert_true(cr->win[k].p50[0] <= cr->win[k].p99[0]);
			n += cr->win[k].w.m[0].st.n;
		}
		assert_int_equal(n, ref[c].st[0].n);
	}
	for (size_t c = 0; c < 2; c++)
		ref_free(&ref[c]);
	result_free(&res);
}

static void test_window_percentiles_are_those_of_the_window_histogram(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 1, "0");
	struct synth *s = synth_new(0);
	for (uint64_t v = 1; v <= 100; v++)
		synth_add(s, 0, v);
	uint64_t p50 = hist_percentile(&s->h[0], 50.0), p99 = hist_percentile(&s->h[0], 99.0);
	add_window(&res, 0, s, NULL);
	assert_int_equal(res.cpus[0].win[0].p50[0], p50);
	assert_int_equal(res.cpus[0].win[0].p99[0], p99);
	assert_int_equal(p50, 50);
	assert_int_equal(p99, 99);
	result_free(&res);
}

/* ---- long runs: folded windows ---- */

static json_t *jget(json_t *o, const char *key);

/* Windows 0..n-1 on CPU c with random values (some empty, some with spikes), into ref. */
static void add_long_run(struct result *res, size_t c, uint64_t n, uint64_t skip_every, struct ref *ref)
{
	for (uint64_t k = 0; k < n; k++) {
		if (skip_every && k % skip_every == skip_every - 1u)
			continue;               /* a window this CPU never handed over */
		struct synth *s = synth_new(k);
		uint64_t samples = rng_below(20);
		for (uint64_t i = 0; i < samples; i++)
			put(s, ref, 0, spread_value(12));
		s->w.missed = rng_below(3);
		s->w.spikes = s->w.m[0].above ? rng_below(s->w.m[0].above + 1u) : 0;
		add_window(res, c, s, ref);
	}
}

/* Windows in order, none covering the next one's index, spans as result.h says. */
static void assert_well_folded(const struct result *res, const struct cpu_result *cr)
{
	for (size_t k = 0; k < cr->nwin; k++) {
		const struct result_window *rw = &cr->win[k];
		assert_true(rw->span >= 1);
		assert_true(rw->w.start_ns < rw->w.end_ns);
		if (k + 1u < cr->nwin && rw->w.index + rw->span > cr->win[k + 1u].w.index)
			print_error("window %zu of %zu: [%" PRIu64 ", +%" PRIu64 ") covers the next, %" PRIu64 " +%" PRIu64 "\n", k,
				    cr->nwin, rw->w.index, rw->span, cr->win[k + 1u].w.index, cr->win[k + 1u].span);
		if (k + 1u < cr->nwin)
			assert_true(rw->w.index + rw->span <= cr->win[k + 1u].w.index);
		if (rw->w.index < res->warmup)
			assert_true(rw->w.index + rw->span <= res->warmup);  /* no block across the warm-up's end */
	}
}

static void test_a_long_run_keeps_bounded_windows_whose_sums_are_the_totals(void **state)
{
	(void)state;
	struct result res;
	struct ref ref;

	rng_seed(31);
	init_result(&res, 1, "0");
	res.warmup = 3;
	ref_init(&ref);
	add_long_run(&res, 0, 20000, 0, &ref);
	const struct cpu_result *cr = &res.cpus[0];
	assert_true(cr->nwin <= 1u + RESULT_RECENT_WINDOWS + RESULT_FOLD_BATCH + RESULT_OLD_WINDOWS);
	assert_true(cr->nwin > RESULT_RECENT_WINDOWS);
	assert_well_folded(&res, cr);
	/* The newest windows are as measured. */
	for (size_t k = cr->nwin - RESULT_RECENT_WINDOWS; k < cr->nwin; k++) {
		assert_int_equal(cr->win[k].span, 1);
		assert_int_equal(cr->win[k].w.index, 20000u - (cr->nwin - k));
	}
	/* Every count, extreme and bucket of the windows adds up to what was measured. */
	static struct hist h;
	struct stats st = STATS_INIT;
	uint64_t above = 0, missed = 0, spikes = 0, covered = 0;
	hist_reset(&h);
	for (size_t k = 0; k < cr->nwin; k++) {
		const struct result_window *rw = &cr->win[k];
		assert_int_equal(stats_merge(&st, &rw->w.m[0].st), 0);
		sparse_add_to(&rw->hist[0], &h);
		assert_int_equal(sparse_total(&rw->hist[0]), rw->w.m[0].st.n);
		above += rw->w.m[0].above;
		missed += rw->w.missed;
		spikes += rw->w.spikes;
		covered += rw->w.end_ns - rw->w.start_ns;
		if (rw->w.m[0].st.n)
			assert_int_equal(rw->p99[0], sparse_percentile(&rw->hist[0], 99.0));
	}
	assert_int_equal(st.n, ref.st[0].n);
	assert_int_equal(st.min, ref.st[0].min);
	assert_int_equal(st.max, ref.st[0].max);
	assert_true(fabs(st.mean - ref.st[0].mean) <= 1e-9 * ref.st[0].mean);
	assert_same_hist(&h, &ref.h[0]);
	assert_int_equal(above, ref.above);
	assert_int_equal(missed, ref.missed);
	assert_int_equal(spikes, cr->spikes);
	assert_int_equal(covered, 20000u * WIN);
	assert_int_equal(cr->above[0], ref.above);
	assert_same_stats(&cr->st[0], &ref.st[0]);
	ref_free(&ref);
	result_free(&res);
}

static void test_windows_never_cover_the_next_one_whatever_the_runs_length(void **state)
{
	(void)state;
	/* every phase of the fold: a batch ending inside a block, a batch all taken by the block
	 * before it (spans past the batch), a doubling */
	static const uint64_t lengths[] = { 150, 161, 200, 300, 417, 1000, 2345, 5000, 9001, 17003 };
	for (size_t i = 0; i < ARRAY_SIZE(lengths); i++) {
		uint64_t n = lengths[i];
		struct result res;
		struct ref ref;
		rng_seed(n);
		init_result(&res, 1, "0");
		res.warmup = i % 3 == 2 ? n / 2u : n % 4;   /* a warm-up of half the run folds too */
		ref_init(&ref);
		add_long_run(&res, 0, n, n % 3 ? 0 : 7, &ref);
		assert_well_folded(&res, &res.cpus[0]);
		assert_true(res.cpus[0].nwin <= 2u + RESULT_RECENT_WINDOWS + RESULT_FOLD_BATCH + RESULT_OLD_WINDOWS);
		assert_int_equal(result_finalize(&res), 0);
		assert_well_folded(&res, &res.all);
		ref_free(&ref);
		result_free(&res);
	}
}

static void test_folded_cpus_with_different_windows_merge_into_one_grid(void **state)
{
	(void)state;
	struct result res;
	struct ref ref[2];

	rng_seed(32);
	init_result(&res, 1, "0-1");
	res.warmup = 1;
	ref_init(&ref[0]);
	ref_init(&ref[1]);
	add_long_run(&res, 0, 9000, 0, &ref[0]);
	add_long_run(&res, 1, 7000, 5, &ref[1]);      /* shorter, and missing every fifth window */
	assert_int_equal(result_finalize(&res), 0);
	const struct cpu_result *a = &res.all;
	assert_well_folded(&res, a);
	assert_true(a->nwin <= res.cpus[0].nwin + res.cpus[1].nwin);
	/* Each CPU window lies inside exactly one window of all. */
	for (size_t c = 0; c < 2; c++) {
		const struct cpu_result *cr = &res.cpus[c];
		size_t j = 0;
		for (size_t k = 0; k < cr->nwin; k++) {
			while (j < a->nwin && a->win[j].w.index + a->win[j].span <= cr->win[k].w.index)
				j++;
			assert_true(j < a->nwin);
			assert_true(a->win[j].w.index <= cr->win[k].w.index);
			assert_true(cr->win[k].w.index + cr->win[k].span <= a->win[j].w.index + a->win[j].span);
		}
	}
	uint64_t n = 0, above = 0, spikes = 0;
	for (size_t k = 0; k < a->nwin; k++) {
		n += a->win[k].w.m[0].st.n;
		above += a->win[k].w.m[0].above;
		spikes += a->win[k].w.spikes;
	}
	assert_int_equal(n, ref[0].st[0].n + ref[1].st[0].n);
	assert_int_equal(above, ref[0].above + ref[1].above);
	assert_int_equal(spikes, res.cpus[0].spikes + res.cpus[1].spikes);
	assert_int_equal(a->spikes, spikes);
	ref_free(&ref[0]);
	ref_free(&ref[1]);
	result_free(&res);
}

static void test_a_folded_run_read_back_and_written_again_is_the_same_text(void **state)
{
	(void)state;
	struct result res, back;
	struct lat_error err;

	rng_seed(33);
	struct ref ref;
	init_result(&res, 1, "0");
	res.warmup = 2;
	ref_init(&ref);
	add_long_run(&res, 0, 3000, 7, &ref);
	assert_int_equal(result_finalize(&res), 0);
	char *first = result_store_text(&res);
	assert_non_null(first);
	assert_non_null(strstr(first, "\"span\""));
	assert_int_equal(result_from_text(first, strlen(first), &back, &err), 0);
	assert_int_equal(back.cpus[0].nwin, res.cpus[0].nwin);
	assert_int_equal(back.cpus[0].spikes, res.cpus[0].spikes);
	char *second = result_store_text(&back);
	assert_non_null(second);
	assert_string_equal(second, first);
	free(first);
	free(second);
	ref_free(&ref);
	result_free(&back);
	result_free(&res);
}

static void test_a_file_whose_span_covers_the_next_window_is_refused(void **state)
{
	(void)state;
	struct result res, back;
	struct lat_error err;

	rng_seed(34);
	struct ref ref;
	init_result(&res, 1, "0");
	ref_init(&ref);
	add_long_run(&res, 0, 2000, 0, &ref);
	assert_int_equal(result_finalize(&res), 0);
	json_t *doc = result_to_json(&res);
	json_t *w = json_array_get(jget(json_array_get(jget(doc, "cpus"), 0), "windows"), 0);
	json_object_set_new(w, "span", json_integer(1000000));
	char *text = json_dumps(doc, JSON_INDENT(2));
	assert_int_equal(result_from_text(text, strlen(text), &back, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "span covers the next window"));
	free(text);
	json_decref(doc);
	ref_free(&ref);
	result_free(&res);
}

/* One window of one sample v at start. */
static void add_one(struct result *res, uint64_t index, uint64_t start_ns, uint64_t v)
{
	struct synth *s = synth_new(index);
	s->w.start_ns = start_ns;
	s->w.end_ns = start_ns + WIN;
	synth_add(s, 0, v);
	add_window(res, 0, s, NULL);
}

static void test_bands_keep_the_maximum_of_every_five_minutes_and_fold_past_their_limit(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 1, "0");
	/* Bands 0, 1 and 3 hold a sample; 2 none. */
	add_one(&res, 0, 0, 10);
	add_one(&res, 1, 299u * NS_PER_SEC, 40);
	add_one(&res, 2, 300u * NS_PER_SEC, 30);
	add_one(&res, 3, 3u * RESULT_BAND_NS + 5u, 20);
	const struct band_max *b = &res.cpus[0].bands;
	assert_int_equal(b->band_ns, RESULT_BAND_NS);
	assert_int_equal(b->n, 4);
	assert_int_equal(b->max[0], 40);
	assert_int_equal(b->max[1], 30);
	assert_int_equal(b->max[2], RESULT_NO_BAND_MAX);
	assert_int_equal(b->max[3], 20);
	/* A window past the last band there is room for: bands double, maxima kept. */
	add_one(&res, 4, (uint64_t)RESULT_BANDS_MAX * RESULT_BAND_NS, 5);
	assert_int_equal(b->band_ns, 2u * RESULT_BAND_NS);
	assert_int_equal(b->max[0], 40);
	assert_int_equal(b->max[1], 20);
	assert_int_equal(b->n, RESULT_BANDS_MAX / 2u + 1u);
	assert_int_equal(b->max[RESULT_BANDS_MAX / 2u], 5);
	assert_int_equal(result_finalize(&res), 0);
	assert_int_equal(res.all.bands.band_ns, 2u * RESULT_BAND_NS);
	assert_int_equal(res.all.bands.max[0], 40);
	result_free(&res);
}

static void test_spike_rate_and_mtbf_follow_from_the_spikes_and_the_time_observed(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 1, "0");
	/* 3600 windows of a second: an hour, with 10 spikes. */
	for (uint64_t k = 0; k < 3600; k++) {
		struct synth *s = synth_new(k);
		s->w.start_ns = k * NS_PER_SEC;
		s->w.end_ns = (k + 1u) * NS_PER_SEC;
		synth_add(s, 0, k % 360 == 7 ? THRESHOLD + 1u : 1u);
		s->w.spikes = k % 360 == 7;
		add_window(&res, 0, s, NULL);
	}
	assert_int_equal(result_finalize(&res), 0);
	const struct long_run *lr = &res.cpus[0].lr;
	assert_int_equal(res.cpus[0].spikes, 10);
	assert_int_equal(lr->observed_ns, 3600u * NS_PER_SEC);
	assert_close(lr->per_hour, 10.0);
	assert_true(lr->has_mtbf);
	assert_close(lr->mtbf_ns, 360e9);
	/* Garwood's 95 % interval of a Poisson mean of 10 seen: 4.795 to 18.39. */
	assert_true(fabs(lr->mtbf_lo_ns - 3600e9 / 18.390) < 1e-3 * lr->mtbf_lo_ns);
	assert_true(fabs(lr->mtbf_hi_ns - 3600e9 / 4.7954) < 1e-3 * lr->mtbf_hi_ns);
	assert_close(res.all.lr.per_hour, 10.0);
	result_free(&res);
}

/* ---- the merged "all" row ---- */

static void test_finalize_merges_every_cpu_into_the_all_row(void **state)
{
	(void)state;
	struct result res;
	struct ref all;

	rng_seed(12);
	init_result(&res, 1, "0,2,5");
	ref_init(&all);
	for (size_t c = 0; c < 3; c++)
		for (uint64_t k = 0; k < 10; k++) {
			struct synth *s = synth_new(k);
			for (uint64_t i = 0; i < 100u + 50u * c; i++)
				put(s, &all, 0, 20u * c + spread_value(20));
			s->w.missed = c + 1u;
			stats_add(&s->w.overhead, 7u * (c + 1u));
			add_window(&res, c, s, &all);
		}
	assert_int_equal(result_finalize(&res), 0);

	const struct cpu_result *a = &res.all;
	assert_same_stats(&a->st[0], &all.st[0]);
	assert_same_hist(&a->hist[0], &all.h[0]);
	assert_int_equal(a->above[0], all.above);
	assert_int_equal(a->missed, all.missed);
	assert_int_equal(a->missed, 10u * (1u + 2u + 3u));
	assert_int_equal(a->overhead.n, 30);
	assert_int_equal(a->overhead.min, 7);
	assert_int_equal(a->overhead.max, 21);

	uint64_t count = 0, lo = UINT64_MAX, hi = 0;
	for (size_t c = 0; c < res.ncpus; c++) {
		count += res.cpus[c].sum[0].count;
		if (res.cpus[c].sum[0].min < lo)
			lo = res.cpus[c].sum[0].min;
		if (res.cpus[c].sum[0].max > hi)
			hi = res.cpus[c].sum[0].max;
	}
	assert_int_equal(a->sum[0].count, count);
	assert_int_equal(a->sum[0].min, lo);
	assert_int_equal(a->sum[0].max, hi);
	assert_int_equal(a->sum[0].above, all.above);
	ref_free(&all);
	result_free(&res);
}

static void test_finalize_merges_windows_with_the_same_index(void **state)
{
	(void)state;
	struct result res;
	/* CPU 0 has windows 0, 2, 4; CPU 1 has 1, 2, 3; CPU 2 has 2 and 7. */
	static const uint64_t idx[3][3] = { { 0, 2, 4 }, { 1, 2, 3 }, { 2, 7, UINT64_MAX } };

	init_result(&res, 2, "0-2");
	for (size_t c = 0; c < 3; c++)
		for (size_t k = 0; k < 3 && idx[c][k] != UINT64_MAX; k++) {
			struct synth *s = synth_new(idx[c][k]);
			/* c + 1 samples of 1000 * (c + 1) + index, and one of the other metric. */
			for (size_t i = 0; i <= c; i++)
				synth_add(s, 0, 1000u * (c + 1u) + idx[c][k]);
			synth_add(s, 1, c);
			s->w.missed = 10u * (c + 1u);
			s->w.end_ns = s->w.start_ns + WIN - c;      /* CPUs end their windows a bit apart */
			add_window(&res, c, s, NULL);
		}
	assert_int_equal(result_finalize(&res), 0);

	const struct cpu_result *a = &res.all;
	static const uint64_t want_idx[] = { 0, 1, 2, 3, 4, 7 };
	assert_int_equal(a->nwin, ARRAY_SIZE(want_idx));
	for (size_t k = 0; k < a->nwin; k++) {
		const struct result_window *rw = &a->win[k];
		assert_int_equal(rw->w.index, want_idx[k]);
		/* Percentiles do not add up: the merged window takes them from its merged histogram. */
		for (unsigned m = 0; m < 2; m++) {
			static struct hist h;
			hist_reset(&h);
			sparse_add_to(&rw->hist[m], &h);
			assert_int_equal(h.total, rw->w.m[m].st.n);
			assert_int_equal(rw->p50[m], hist_percentile(&h, 50.0));
			assert_int_equal(rw->p99[m], hist_percentile(&h, 99.0));
		}
	}
	/* Window 2 is on every CPU: 1 + 2 + 3 samples, 10 + 20 + 30 missed. */
	const struct rec_window *w2 = &a->win[2].w;
	assert_int_equal(w2->m[0].st.n, 6);
	assert_int_equal(w2->m[0].st.min, 1002);
	assert_int_equal(w2->m[0].st.max, 3002);
	assert_close(w2->m[0].st.mean, (1002.0 + 2.0 * 2002.0 + 3.0 * 3002.0) / 6.0);
	assert_int_equal(w2->m[1].st.n, 3);
	assert_int_equal(w2->missed, 60);
	assert_int_equal(w2->m[0].above, 6);
	assert_int_equal(w2->start_ns, 2u * WIN);
	assert_int_equal(w2->end_ns, 3u * WIN);         /* the latest end */
	/* Window 0 is CPU 0's alone, window 3 CPU 1's, window 7 CPU 2's. */
	assert_int_equal(a->win[0].w.m[0].st.n, 1);
	assert_int_equal(a->win[0].w.missed, 10);
	assert_int_equal(a->win[3].w.m[0].st.n, 2);
	assert_int_equal(a->win[3].w.missed, 20);
	assert_int_equal(a->win[5].w.m[0].st.n, 3);
	assert_int_equal(a->win[5].w.end_ns, 8u * WIN - 2u);

	/* Merging left the CPUs' own windows alone, percentiles included. */
	assert_int_equal(res.cpus[1].nwin, 3);
	assert_int_equal(res.cpus[1].win[1].w.m[0].st.n, 2);
	assert_int_equal(res.cpus[1].win[1].w.missed, 20);
	assert_true(res.cpus[1].win[1].p50[0] > 0);

	/* Counts add up across the merged windows too. */
	uint64_t n = 0, missed = 0;
	for (size_t k = 0; k < a->nwin; k++) {
		n += a->win[k].w.m[0].st.n;
		missed += a->win[k].w.missed;
	}
	assert_int_equal(n, a->sum[0].count);
	assert_int_equal(missed, a->missed);
	result_free(&res);
}

static void test_finalize_twice_gives_the_same_all_row(void **state)
{
	(void)state;
	struct result res;

	rng_seed(13);
	init_result(&res, 1, "0-1");
	for (size_t c = 0; c < 2; c++)
		for (uint64_t k = 0; k < 5; k++) {
			struct synth *s = synth_new(k);
			for (int i = 0; i < 50; i++)
				synth_add(s, 0, spread_value(24));
			s->w.missed = 1;
			add_window(&res, c, s, NULL);
		}
	assert_int_equal(result_finalize(&res), 0);
	struct summary first = res.all.sum[0];
	uint64_t missed = res.all.missed, nwin = res.all.nwin, n2 = res.all.win[2].w.m[0].st.n;
	assert_int_equal(result_finalize(&res), 0);
	assert_int_equal(res.all.sum[0].count, first.count);
	assert_int_equal(res.all.sum[0].p99, first.p99);
	assert_int_equal(res.all.hist[0].total, first.count);
	assert_int_equal(res.all.missed, missed);
	assert_int_equal(res.all.nwin, nwin);
	assert_int_equal(res.all.win[2].w.m[0].st.n, n2);
	assert_int_equal(n2, 100);
	result_free(&res);
}

/* ---- adding up: no sum may pass INT64_MAX (the JSON integer every count is written as) ---- */

#define BIG (UINT64_C(1) << 62)          /* twice this is 2^63: one past INT64_MAX */

enum big_field {
	BIG_COUNT, BIG_ABOVE, BIG_ABOVE_NS, BIG_MISSED, BIG_OVERHEAD, BIG_CLOCK, BIG_CTX_IRQS, BIG_CTX_STEAL,
	BIG_NAMED, BIG_WINDOW_ABOVE_NS, BIG_FIELDS
};

/* The reason result_merge must give when two runs hold field at 2^62 each. */
static const char *const big_reason[BIG_FIELDS] = {
	"cpu 3's sample count would reach 2^63",
	"cpu 3's count above the threshold would reach 2^63",
	"cpu 3's time above the threshold would reach 2^63",
	"cpu 3's missed periods would reach 2^63",
	"cpu 3's wakeup-to-recorded count would reach 2^63",
	"cpu 3's clock read count would reach 2^63",
	"cpu 3's interrupts in window 4 would reach 2^63",
	"cpu 3's steal time in window 4 would reach 2^63",
	"cpu 3's interrupts from 'LOC' would reach 2^63",
	"cpu 3's time above the threshold in window 4 would reach 2^63",
};

/* One CPU (3), one window (4) of two samples of 5 ns, with field at 2^62. */
static void big_result(struct result *res, enum big_field field)
{
	struct synth *s = synth_new(4);
	init_result(res, 1, "3");
	res->params = json_object();            /* as a stored run has */
	synth_add(s, 0, 5);
	synth_add(s, 0, 5);
	switch (field) {
	case BIG_COUNT:
		s->w.m[0].st.n = BIG;
		s->h[0].counts[5] = BIG;
		s->h[0].total = BIG;
		break;
	case BIG_ABOVE:
		s->w.m[0].above = BIG;
		break;
	case BIG_ABOVE_NS:
	case BIG_WINDOW_ABOVE_NS:
		s->w.m[0].above_ns = BIG;
		break;
	case BIG_MISSED:
		s->w.missed = BIG;
		break;
	case BIG_OVERHEAD:
		stats_add(&s->w.overhead, 7);
		s->w.overhead.n = BIG;
		break;
	case BIG_CLOCK:
	case BIG_CTX_IRQS:
	case BIG_CTX_STEAL:
	case BIG_NAMED:
	case BIG_FIELDS:
		break;
	}
	add_window(res, 0, s, NULL);
	struct cpu_result *cr = &res->cpus[0];
	struct win_context ctx = { .valid = true };
	switch (field) {
	case BIG_CLOCK:
		stats_add(&cr->clock_cost, 20);
		cr->clock_cost.n = BIG;
		break;
	case BIG_CTX_IRQS:
		ctx.irqs = BIG;
		result_add_context(cr, 4, &ctx);
		break;
	case BIG_CTX_STEAL:
		ctx.cpu_ns[CPU_STEAL] = BIG;
		result_add_context(cr, 4, &ctx);
		break;
	case BIG_NAMED:
		cr->has_context = true;
		assert_int_equal(named_counts_add(&cr->irqs, "LOC", BIG), 0);
		break;
	case BIG_WINDOW_ABOVE_NS:
		cr->above_ns[0] = 1;    /* the window's sum alone passes the limit */
		break;
	case BIG_COUNT:
	case BIG_ABOVE:
	case BIG_ABOVE_NS:
	case BIG_MISSED:
	case BIG_OVERHEAD:
	case BIG_FIELDS:
		break;
	}
	assert_int_equal(result_finalize(res), 0);
}

/* compare's row of several runs adds them up like a merge: past 2^63 - 1 it refuses, it does not wrap. */
static void test_a_compare_row_refuses_runs_whose_counts_add_up_past_int64_max(void **state)
{
	(void)state;
	struct result a, b;
	struct cmp_row w;
	big_result(&a, BIG_COUNT);
	big_result(&b, BIG_COUNT);
	assert_int_equal(cmp_row_init(&w), 0);
	assert_int_equal(cmp_row_add(&w, &a.all, 0), 0);
	uint64_t before = w.st.n;
	assert_int_equal(cmp_row_add(&w, &b.all, 0), -EOVERFLOW);
	assert_int_equal(w.st.n, before);
	cmp_row_free(&w);
	result_free(&a);
	result_free(&b);
}

/* An hour of 1 s windows on one CPU with spikes in the given windows. */
static void hour_with_spikes(struct result *res, uint64_t every)
{
	init_result(res, 1, "0");
	for (uint64_t k = 0; k < 3600; k++) {
		struct synth *s = synth_new(k);
		s->w.start_ns = k * NS_PER_SEC;
		s->w.end_ns = (k + 1u) * NS_PER_SEC;
		bool spike = k % every == 0;
		synth_add(s, 0, spike ? THRESHOLD + 1u : 1u);
		s->w.spikes = spike;
		add_window(res, 0, s, NULL);
	}
	assert_int_equal(result_finalize(res), 0);
}

static void test_a_compare_row_adds_spikes_over_its_runs_and_has_none_from_a_run_that_did_not_count_them(void **state)
{
	(void)state;
	struct result a, b;
	struct cmp_row w;
	bool none;

	hour_with_spikes(&a, 360);      /* 10 */
	hour_with_spikes(&b, 120);      /* 30 */
	assert_int_equal(cmp_row_init(&w), 0);
	assert_int_equal(cmp_row_add(&w, &a.all, 0), 0);
	assert_int_equal(cmp_row_add(&w, &b.all, 0), 0);
	assert_close(cmp_row_stat(&w, EXPR_SPIKES, &none), 40.0);
	assert_false(none);
	assert_close(cmp_row_stat(&w, EXPR_SPIKES_PER_HOUR, &none), 20.0);     /* 40 in two hours */
	assert_close(cmp_row_stat(&w, EXPR_MTBF, &none), 180e9);
	assert_false(none);
	assert_false(cmp_stat_is_time(EXPR_SPIKES_PER_HOUR));
	assert_true(cmp_stat_is_time(EXPR_MTBF));
	cmp_row_free(&w);
	b.long_run = false;             /* as read from an older latscope's file */
	assert_int_equal(result_finalize(&b), 0);
	assert_int_equal(cmp_row_init(&w), 0);
	assert_int_equal(cmp_row_add(&w, &a.all, 0), 0);
	assert_int_equal(cmp_row_add(&w, &b.all, 0), 0);
	cmp_row_stat(&w, EXPR_SPIKES_PER_HOUR, &none);
	assert_true(none);
	cmp_row_free(&w);
	result_free(&a);
	result_free(&b);
}

static void test_merge_refuses_counts_that_would_overflow(void **state)
{
	(void)state;
	for (int f = 0; f < BIG_FIELDS; f++) {
		struct result in[2], out;
		static const int64_t ids[] = { 3, 4 };
		struct lat_error err = { "" };
		big_result(&in[0], (enum big_field)f);
		big_result(&in[1], (enum big_field)f);
		static const char *const identities[] = { "run:a", "run:b" };
		int r = result_merge(in, ids, identities, 2, &out, &err);
		if (r != -EOVERFLOW || !strstr(err.msg, big_reason[f])) {
			print_error("field %d: %d '%s', want -EOVERFLOW and '%s'\n", f, r, err.msg, big_reason[f]);
			fail();
		}
		assert_non_null(strstr(err.msg, "runs 3 and 4 cannot be merged: "));
		result_free(&in[0]);
		result_free(&in[1]);
	}
	/* One below the limit is fine, and adds up. */
	struct result in[2], out;
	static const int64_t ids[] = { 3, 4 };
	struct lat_error err;
	big_result(&in[0], BIG_COUNT);
	big_result(&in[1], BIG_MISSED);
	in[1].cpus[0].missed = in[1].cpus[0].win[0].w.missed = (uint64_t)INT64_MAX;
	static const char *const identities[] = { "run:a", "run:b" };
	int r = result_merge(in, ids, identities, 2, &out, &err);
	if (r != 0)
		print_error("%s\n", err.msg);
	assert_int_equal(r, 0);
	assert_int_equal(out.cpus[0].missed, (uint64_t)INT64_MAX);
	assert_int_equal(out.all.sum[0].count, BIG + 2u);
	result_free(&out);
	result_free(&in[0]);
	result_free(&in[1]);
}

static void test_finalize_refuses_cpus_whose_counts_add_up_past_int64_max(void **state)
{
	(void)state;
	struct result res;
	struct lat_error err = { "" };

	init_result(&res, 1, "0-1");
	for (size_t c = 0; c < 2; c++) {
		struct synth *s = synth_new(0);
		synth_add(s, 0, 5);
		s->w.m[0].st.n = BIG + c;
		s->h[0].counts[5] = BIG + c;
		s->h[0].total = BIG + c;
		add_window(&res, c, s, NULL);
	}
	assert_int_equal(result_finalize_why(&res, &err), -EOVERFLOW);
	assert_string_equal(err.msg, "all CPUs' sample count would reach 2^63");
	assert_int_equal(result_finalize(&res), -EOVERFLOW);
	result_free(&res);
}

static void test_result_from_text_refuses_a_text_past_the_limit_without_reading_it(void **state)
{
	(void)state;
	struct result res;
	struct lat_error err;
	static const char text[] = "{";     /* what a reader would run off the end of */
	assert_int_equal(result_from_text(text, (size_t)RESULT_TEXT_MAX + 1u, &res, &err), -EINVAL);
	assert_string_equal(err.msg, "larger than 256 MiB, the most a result may be");
}

/* ---- summaries ---- */

static void test_summary_percentiles_are_ordered_and_within_min_and_max(void **state)
{
	(void)state;
	static const unsigned bits[] = { 7, 12, 20, 34, 50, 64 };

	rng_seed(14);
	for (size_t b = 0; b < ARRAY_SIZE(bits); b++) {
		struct result res;
		init_result(&res, 1, "0-2");
		for (size_t c = 0; c < 3; c++)
			for (uint64_t k = 0; k < 4; k++) {
				struct synth *s = synth_new(k);
				uint64_t n = 1u + rng_below(2000);
				for (uint64_t i = 0; i < n; i++)
					synth_add(s, 0, spread_value(bits[b]));
				add_window(&res, c, s, NULL);
			}
		assert_int_equal(result_finalize(&res), 0);
		for (size_t c = 0; c <= res.ncpus; c++) {
			const struct cpu_result *cr = c < res.ncpus ? &res.cpus[c] : &res.all;
			const struct summary *s = &cr->sum[0];
			assert_summary_sane(s);
			assert_int_equal(s->count, cr->st[0].n);
			assert_int_equal(s->min, cr->st[0].min);
			assert_int_equal(s->max, cr->st[0].max);
			assert_close(s->mean, cr->st[0].mean);
			assert_close(s->stddev, stats_stddev(&cr->st[0]));
		}
		result_free(&res);
	}
}

static void test_summary_of_a_single_value_is_that_value_at_every_percentile(void **state)
{
	(void)state;
	static const uint64_t values[] = { 0, 1, 127, 128, 1000, 1001, 123456789, UINT64_C(1) << 40,
					   (UINT64_C(1) << 40) + 12345u };

	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		struct result res;
		init_result(&res, 1, "0");
		struct synth *s = synth_new(0);
		synth_add(s, 0, values[i]);
		add_window(&res, 0, s, NULL);
		assert_int_equal(result_finalize(&res), 0);
		for (int pass = 0; pass < 2; pass++) {
			const struct summary *sum = pass ? &res.all.sum[0] : &res.cpus[0].sum[0];
			/* The bucket midpoint is clamped to the exact extremes. */
			assert_int_equal(sum->p50, values[i]);
			assert_int_equal(sum->p90, values[i]);
			assert_int_equal(sum->p99, values[i]);
			assert_int_equal(sum->p999, values[i]);
			assert_int_equal(sum->p9999, values[i]);
			assert_int_equal(sum->min, values[i]);
			assert_int_equal(sum->max, values[i]);
			assert_true(sum->stddev == 0.0);
		}
		result_free(&res);
	}
}

static void test_warm_max_skips_windows_before_the_warmup(void **state)
{
	(void)state;
	struct result res;
	static const uint64_t cpu0_max[] = { 1000, 900, 50, 70 };
	static const uint64_t cpu1_max[] = { 5000, 10, 80, 20 };

	init_result(&res, 1, "0-1");
	res.warmup = 2;
	for (uint64_t k = 0; k < 4; k++) {
		struct synth *s = synth_new(k);
		synth_add(s, 0, 1);
		synth_add(s, 0, cpu0_max[k]);
		add_window(&res, 0, s, NULL);
		s = synth_new(k);
		synth_add(s, 0, cpu1_max[k]);
		add_window(&res, 1, s, NULL);
	}
	assert_int_equal(result_finalize(&res), 0);
	assert_true(res.cpus[0].sum[0].has_warm_max);
	assert_int_equal(res.cpus[0].sum[0].warm_max, 70);
	assert_int_equal(res.cpus[0].sum[0].max, 1000);
	assert_true(res.cpus[1].sum[0].has_warm_max);
	assert_int_equal(res.cpus[1].sum[0].warm_max, 80);
	assert_int_equal(res.cpus[1].sum[0].max, 5000);
	assert_true(res.all.sum[0].has_warm_max);
	assert_int_equal(res.all.sum[0].warm_max, 80);
	assert_int_equal(res.all.sum[0].max, 5000);

	/* Warm-up 0: every window counts. */
	res.warmup = 0;
	assert_int_equal(result_finalize(&res), 0);
	assert_int_equal(res.cpus[0].sum[0].warm_max, 1000);
	assert_int_equal(res.all.sum[0].warm_max, 5000);
	result_free(&res);
}

static void test_warm_max_is_absent_when_no_window_follows_the_warmup(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 1, "0-1");
	res.warmup = 2;
	for (uint64_t k = 0; k < 2; k++) {
		struct synth *s = synth_new(k);
		synth_add(s, 0, 500u + k);
		add_window(&res, 0, s, NULL);
	}
	/* CPU 1: a window after the warm-up, but empty. */
	struct synth *e = synth_new(5);
	add_window(&res, 1, e, NULL);
	assert_int_equal(result_finalize(&res), 0);
	assert_false(res.cpus[0].sum[0].has_warm_max);
	assert_int_equal(res.cpus[0].sum[0].warm_max, 0);
	assert_int_equal(res.cpus[0].sum[0].max, 501);
	assert_false(res.cpus[1].sum[0].has_warm_max);
	assert_false(res.all.sum[0].has_warm_max);

	/* A window far after a gap counts: the index, not the position, decides. */
	e = synth_new(9);
	synth_add(e, 0, 42);
	add_window(&res, 0, e, NULL);
	res.warmup = 3;
	assert_int_equal(result_finalize(&res), 0);
	assert_true(res.cpus[0].sum[0].has_warm_max);
	assert_int_equal(res.cpus[0].sum[0].warm_max, 42);
	assert_true(res.all.sum[0].has_warm_max);
	assert_int_equal(res.all.sum[0].warm_max, 42);
	result_free(&res);
}

static void test_above_pct_is_the_share_of_samples_above_the_threshold(void **state)
{
	(void)state;
	struct result res;

	init_result(&res, 1, "0-1");
	struct synth *s = synth_new(0);
	for (uint64_t i = 0; i < 200; i++)
		synth_add(s, 0, i < 25 ? THRESHOLD + 1u + i : THRESHOLD - (i % 2u));   /* 100 is not above */
	add_window(&res, 0, s, NULL);
	s = synth_new(0);
	for (uint64_t i = 0; i < 50; i++)
		synth_add(s, 0, THRESHOLD);
	add_window(&res, 1, s, NULL);
	assert_int_equal(result_finalize(&res), 0);
	assert_int_equal(res.cpus[0].sum[0].above, 25);
	assert_true(res.cpus[0].sum[0].above_pct == 12.5);
	assert_int_equal(res.cpus[1].sum[0].above, 0);
	assert_true(res.cpus[1].sum[0].above_pct == 0.0);
	assert_int_equal(res.all.sum[0].above, 25);
	assert_true(res.all.sum[0].above_pct == 10.0);
	result_free(&res);
}

/* ---- notes ---- */

static void test_result_note_truncates_safely_and_drops_notes_beyond_the_maximum(void **state)
{
	(void)state;
	struct result res;
	char big[3 * RESULT_NOTE_LEN];

	init_result(&res, 1, "0");
	memset(big, 'x', sizeof(big) - 1u);
	big[sizeof(big) - 1u] = '\0';
	result_note(&res, "%s", big);
	assert_int_equal(res.nnotes, 1);
	assert_int_equal(strlen(res.notes[0]), RESULT_NOTE_LEN - 1u);
	for (unsigned i = 1; i < RESULT_NOTES_MAX + 5u; i++)
		result_note(&res, "note %u", i);
	assert_int_equal(res.nnotes, RESULT_NOTES_MAX);
	assert_string_equal(res.notes[1], "note 1");
	char want[32];
	snprintf(want, sizeof(want), "note %u", RESULT_NOTES_MAX - 1u);
	assert_string_equal(res.notes[RESULT_NOTES_MAX - 1u], want);
	/* The long note did not spill into the next one. */
	assert_int_equal(strlen(res.notes[0]), RESULT_NOTE_LEN - 1u);

	assert_int_equal(result_finalize(&res), 0);
	json_t *j = result_to_json(&res);
	assert_non_null(j);
	json_t *notes = json_object_get(j, "notes");
	assert_int_equal(json_array_size(notes), RESULT_NOTES_MAX);
	assert_string_equal(json_string_value(json_array_get(notes, 1)), "note 1");
	json_decref(j);
	result_free(&res);
}

static void test_a_note_cut_inside_a_multibyte_character_still_makes_valid_json(void **state)
{
	(void)state;
	/* Two-, three- and four-byte UTF-8 characters: "é", "€" and U+1F600. */
	static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
	char text[2 * RESULT_NOTE_LEN];

	for (size_t c = 0; c < ARRAY_SIZE(chars); c++)
		for (size_t pad = 0; pad < 4; pad++) {
			struct result res;
			size_t len = 0, clen = strlen(chars[c]);

			/* pad ASCII bytes, then the character over and over: the note buffer
			 * cuts through a character for some pad. */
			memset(text, 'x', pad);
			len = pad;
			while (len + clen < sizeof(text)) {
				memcpy(text + len, chars[c], clen);
				len += clen;
			}
			text[len] = '\0';

			init_result(&res, 1, "0");
			result_note(&res, "%s", text);
			assert_int_equal(res.nnotes, 1);
			size_t kept = strlen(res.notes[0]);
			assert_true(kept < RESULT_NOTE_LEN);
			assert_true(kept + clen >= RESULT_NOTE_LEN);     /* no more than one character is dropped */
			assert_int_equal(memcmp(res.notes[0], text, kept), 0);
			assert_int_equal(result_finalize(&res), 0);

			json_t *j = result_to_json(&res);
			if (!j) {
				print_error("result_to_json failed on a %zu-byte character note cut at %zu bytes\n",
					    clen, kept);
				fail();
			}
			const char *note = json_string_value(json_array_get(json_object_get(j, "notes"), 0));
			assert_non_null(note);
			assert_string_equal(note, res.notes[0]);
			assert_int_equal((kept - pad) % clen, 0);        /* whole characters only */
			json_decref(j);
			result_free(&res);
		}
}

/* ---- JSON ---- */

static json_t *jget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		print_error("JSON object lacks \"%s\"\n", key);
		fail();
	}
	return v;
}

static uint64_t jint(json_t *o, const char *key)
{
	json_t *v = jget(o, key);
	assert_true(json_is_integer(v));
	assert_true(json_integer_value(v) >= 0);
	return (uint64_t)json_integer_value(v);
}

/* The histogram's rows are [low, high, count], in order, and add up to count. */
static void check_hist_json(json_t *h, uint64_t want_count)
{
	json_t *buckets = jget(h, "buckets");
	uint64_t sum = 0, prev_high = 0;
	size_t i;
	json_t *row;

	assert_true(json_is_array(buckets));
	assert_int_equal(jint(h, "count"), want_count);
	json_array_foreach(buckets, i, row) {
		assert_int_equal(json_array_size(row), 3);
		json_int_t lo = json_integer_value(json_array_get(row, 0));
		json_int_t hi = json_integer_value(json_array_get(row, 1));
		json_int_t n = json_integer_value(json_array_get(row, 2));
		assert_true(lo >= 0 && lo <= hi);
		assert_true(i == 0 || (uint64_t)lo > prev_high);
		assert_true(n > 0);
		assert_int_equal((uint64_t)lo, hist_bucket_low(hist_index((uint64_t)lo)));
		assert_int_equal((uint64_t)hi, hist_bucket_high(hist_index((uint64_t)lo)));
		prev_high = (uint64_t)hi;
		sum += (uint64_t)n;
	}
	assert_int_equal(sum, want_count);
}

/* Two CPUs, warm-up 2: CPU 0 has windows 0..3, CPU 1 only windows 0..1 (no warm max). */
static void build_json_result(struct result *res)
{
	static char a0[] = "latscope", a1[] = "timer", a2[] = "-q";
	char *const argv[] = { a0, a1, a2 };

	rng_seed(15);
	init_result(res, 2, "0,3");
	res->warmup = 2;
	res->start_realtime_ns = UINT64_C(1700000000123456789);
	res->elapsed_ns = 4u * WIN;
	snprintf(res->stop_reason, sizeof(res->stop_reason), "duration");
	assert_int_equal(result_set_argv(res, 3, argv), 0);
	res->labels.n = 1;
	snprintf(res->labels.items[0].key, sizeof(res->labels.items[0].key), "config");
	snprintf(res->labels.items[0].value, sizeof(res->labels.items[0].value), "guest");
	for (size_t c = 0; c < 2; c++)
		for (uint64_t k = 0; k < (c == 0 ? 4u : 2u); k++) {
			struct synth *s = synth_new(k);
			for (int i = 0; i < 500; i++) {
				synth_add(s, 0, spread_value(22));
				synth_add(s, 1, rng_below(100));
			}
			s->w.missed = k;
			stats_add(&s->w.overhead, 40);
			add_window(res, c, s, NULL);
		}
	stats_add(&res->cpus[0].clock_cost, 25);
	result_note(res, "a note");
	assert_int_equal(result_finalize(res), 0);
}

static void check_cpu_json(const struct result *res, json_t *cj, const struct cpu_result *cr)
{
	json_t *metrics = jget(cj, "metrics");
	bool merged = cr->cpu < 0;

	if (merged)
		assert_string_equal(json_string_value(jget(cj, "cpu")), "all");
	else
		assert_int_equal(jint(cj, "cpu"), (uint64_t)cr->cpu);
	assert_int_equal(jint(cj, "missed"), cr->missed);
	assert_int_equal(json_object_size(metrics), res->nmetrics);
	for (unsigned m = 0; m < res->nmetrics; m++) {
		json_t *mj = jget(metrics, res->metric_names[m]);
		const struct summary *s = &cr->sum[m];
		uint64_t count = jint(mj, "count");
		assert_int_equal(count, s->count);
		assert_int_equal(count, cr->st[m].n);
		check_hist_json(jget(mj, "histogram"), count);
		assert_int_equal(jint(mj, "min_ns"), s->min);
		assert_int_equal(jint(mj, "max_ns"), s->max);
		assert_int_equal(jint(mj, "p50_ns"), s->p50);
		assert_int_equal(jint(mj, "p90_ns"), s->p90);
		assert_int_equal(jint(mj, "p99_ns"), s->p99);
		assert_int_equal(jint(mj, "p99_9_ns"), s->p999);
		assert_int_equal(jint(mj, "p99_99_ns"), s->p9999);
		assert_int_equal(jint(mj, "above"), s->above);
		json_t *wm = jget(mj, "warm_max_ns");
		if (s->has_warm_max)
			assert_int_equal(json_integer_value(wm), s->warm_max);
		else
			assert_true(json_is_null(wm));
	}

	json_t *wins = jget(cj, "windows"), *w;
	size_t i;
	uint64_t n = 0;
	assert_int_equal(json_array_size(wins), cr->nwin);
	json_array_foreach(wins, i, w) {
		json_t *mj = jget(w, "latency");
		assert_int_equal(jint(w, "index"), cr->win[i].w.index);
		assert_int_equal(jint(w, "start_ns"), cr->win[i].w.start_ns);
		assert_int_equal(jint(w, "end_ns"), cr->win[i].w.end_ns);
		assert_int_equal(jint(w, "missed"), cr->win[i].w.missed);
		assert_int_equal(jint(mj, "count"), cr->win[i].w.m[0].st.n);
		n += jint(mj, "count");
		assert_int_equal(jint(mj, "p50_ns"), cr->win[i].p50[0]);
		assert_int_equal(jint(mj, "p99_ns"), cr->win[i].p99[0]);
		jget(jget(w, "other"), "above");
		jget(w, "overhead_ns");
	}
	assert_int_equal(n, cr->sum[0].count);
}

static void test_result_to_json_describes_every_cpu_and_the_merged_row(void **state)
{
	(void)state;
	struct result res;

	build_json_result(&res);
	json_t *j = result_to_json(&res);
	assert_non_null(j);
	assert_string_equal(json_string_value(jget(j, "schema")), RESULT_SCHEMA);
	assert_int_equal(jint(j, "schema_version"), RESULT_SCHEMA_VERSION);
	assert_string_equal(json_string_value(jget(j, "probe")), "timer");
	assert_string_equal(json_string_value(jget(j, "start_time")), "2023-11-14T22:13:20.123Z");
	assert_int_equal(jint(j, "warmup_windows"), 2);
	assert_int_equal(jint(j, "threshold_ns"), THRESHOLD);
	assert_string_equal(json_string_value(jget(j, "stop_reason")), "duration");
	assert_true(json_is_object(jget(j, "params")));        /* {} when none was set */
	assert_int_equal(json_object_size(jget(j, "params")), 0);
	assert_string_equal(json_string_value(jget(jget(j, "labels"), "config")), "guest");
	assert_int_equal(json_array_size(jget(j, "command_line")), 3);
	assert_string_equal(json_string_value(json_array_get(jget(j, "command_line"), 2)), "-q");
	assert_int_equal(json_array_size(jget(j, "metrics")), 2);
	assert_string_equal(json_string_value(json_array_get(jget(j, "metrics"), 1)), "other");

	json_t *cpus = jget(j, "cpus");
	assert_int_equal(json_array_size(cpus), res.ncpus);
	for (size_t c = 0; c < res.ncpus; c++)
		check_cpu_json(&res, json_array_get(cpus, c), &res.cpus[c]);
	check_cpu_json(&res, jget(j, "all"), &res.all);

	/* CPU 0 has windows after the warm-up; CPU 1 has none: null, not 0. */
	json_t *lat1 = jget(jget(json_array_get(cpus, 1), "metrics"), "latency");
	assert_true(json_is_null(jget(lat1, "warm_max_ns")));
	json_t *lat0 = jget(jget(json_array_get(cpus, 0), "metrics"), "latency");
	assert_true(json_is_integer(jget(lat0, "warm_max_ns")));
	assert_int_equal(jint(jget(jget(json_array_get(cpus, 0), "overhead"), "clock_read_ns"), "count"), 1);

	/* It serializes. */
	char *text = json_dumps(j, JSON_COMPACT);
	assert_non_null(text);
	free(text);
	json_decref(j);
	result_free(&res);
}

/* res written, read back into back, and written again: the same text. */
static void read_back_as_written(const struct result *res, struct result *back)
{
	struct lat_error err;
	char *first = result_store_text(res);
	assert_non_null(first);
	assert_int_equal(result_from_text(first, strlen(first), back, &err), 0);
	char *second = result_store_text(back);
	assert_non_null(second);
	assert_string_equal(second, first);
	free(first);
	free(second);
}

static void test_a_result_read_back_and_written_again_is_the_same_text(void **state)
{
	(void)state;
	struct result res, back;

	build_json_result(&res);
	/* Means and deviations that 12 digits cannot hold: all's sums must come out the same either way. */
	res.cpus[0].st[0].mean += 1.0 / 3.0;
	res.cpus[1].st[0].m2 *= 1.0 + 1.0 / 7.0;
	assert_int_equal(result_finalize(&res), 0);
	read_back_as_written(&res, &back);
	result_free(&back);
	result_free(&res);
}

/* build_json_result as a run of 4 KiB reads, with the machine's CPU time counted. */
static void build_reads_result(struct result *res)
{
	build_json_result(res);
	res->ops.per_op = true;
	res->params = json_pack("{s:I}", "bs_bytes", (json_int_t)4096);
	assert_non_null(res->params);
	const struct machine_window w = { .index = 0, .cpu_ns = { [CPU_SYSTEM] = 3000000, [CPU_IOWAIT] = 1000000,
								  [CPU_IDLE] = 4000000 },
					  .self_user_ns = 30000, .self_system_ns = 2000000 };
	assert_int_equal(machine_append(&res->machine, &w), 0);
	assert_int_equal(result_finalize(res), 0);
}

static double jreal_of(json_t *o, const char *key)
{
	json_t *v = jget(o, key);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_a_run_of_reads_writes_its_throughput_and_cpu_per_read_and_reads_them_back(void **state)
{
	(void)state;
	struct result res, back;

	build_reads_result(&res);
	const uint64_t reads = res.all.sum[0].count;
	assert_int_equal(reads, 3000);
	json_t *doc = result_to_json(&res);
	assert_non_null(doc);
	json_t *tp = jget(doc, "throughput"), *cpu = jget(doc, "cpu_per_op_ns");
	const double secs = (double)res.elapsed_ns / 1e9;
	assert_close(jreal_of(tp, "ops_per_sec"), (double)reads / secs);
	assert_close(jreal_of(tp, "bytes_per_sec"), (double)reads * 4096.0 / secs);
	assert_int_equal(jint(tp, "bytes_per_op"), 4096);
	assert_close(jreal_of(cpu, "system"), 1000.0);
	assert_close(jreal_of(cpu, "iowait"), 1000000.0 / 3000.0);
	assert_close(jreal_of(cpu, "idle"), 4000000.0 / 3000.0);
	assert_close(jreal_of(cpu, "steal"), 0.0);
	assert_close(jreal_of(cpu, "latscope_user"), 10.0);
	assert_close(jreal_of(cpu, "latscope_system"), 2000000.0 / 3000.0);
	json_decref(doc);

	read_back_as_written(&res, &back);
	assert_true(back.ops.valid && back.ops.has_cpu);
	assert_close(back.ops.ops_per_sec, res.ops.ops_per_sec);
	assert_close(back.ops.cpu_ns_per_op[CPU_SYSTEM], 1000.0);
	result_free(&back);
	result_free(&res);
}

static void test_a_result_without_throughput_reads_back_without_it_as_one_of_another_probe_is_written(void **state)
{
	(void)state;
	struct result res, back;
	struct lat_error err;

	build_json_result(&res);        /* a timer run, or an io run written before throughput was kept */
	json_t *doc = result_to_json(&res);
	assert_non_null(doc);
	assert_null(json_object_get(doc, "throughput"));
	assert_null(json_object_get(doc, "cpu_per_op_ns"));
	json_decref(doc);
	char *text = result_store_text(&res);
	assert_non_null(text);
	assert_int_equal(result_from_text(text, strlen(text), &back, &err), 0);
	assert_false(back.ops.per_op);
	assert_false(back.ops.valid);
	free(text);
	result_free(&back);
	result_free(&res);
}

static void test_the_idle_states_fact_reads_back_and_is_absent_when_not_asked(void **state)
{
	(void)state;
	struct result res, back;
	struct lat_error err;

	build_json_result(&res);
	json_t *doc = result_to_json(&res);
	assert_non_null(doc);
	assert_null(json_object_get(json_object_get(doc, "applied"), "idle_states"));
	json_decref(doc);
	snprintf(res.applied.idle_states, sizeof(res.applied.idle_states), "state2 (C6) disabled on cpu 0-1");
	char *text = result_store_text(&res);
	assert_non_null(text);
	assert_int_equal(result_from_text(text, strlen(text), &back, &err), 0);
	assert_string_equal(back.applied.idle_states, "state2 (C6) disabled on cpu 0-1");
	free(text);
	result_free(&back);
	result_free(&res);
}

static void test_a_merge_of_runs_that_limited_idle_states_differently_says_so(void **state)
{
	(void)state;
	struct result in[2], out;
	static const int64_t ids[] = { 3, 4 };
	static const char *const identities[] = { "run:a", "run:b" };
	struct lat_error err;

	for (int differ = 0; differ < 2; differ++) {
		build_json_result(&in[0]);
		build_json_result(&in[1]);
		for (int k = 0; k < 2; k++)
			if (!in[k].params)
				in[k].params = json_object();   /* as a stored run has */
		snprintf(in[0].applied.idle_states, sizeof(in[0].applied.idle_states), "state2 (C6) disabled on cpu 0");
		snprintf(in[1].applied.idle_states, sizeof(in[1].applied.idle_states), "%s",
			 differ ? "nothing to limit: no cpuidle driver" : "state2 (C6) disabled on cpu 0");
		assert_int_equal(result_merge(in, ids, identities, 2, &out, &err), 0);
		assert_string_equal(out.applied.idle_states,
				    differ ? "not the same in the merged runs" : "state2 (C6) disabled on cpu 0");
		result_free(&out);
		result_free(&in[0]);
		result_free(&in[1]);
	}
}

static void test_a_compare_row_of_runs_of_reads_gives_their_rate_and_cpu_per_read_over_them_all(void **state)
{
	(void)state;
	struct result a, b, timer;
	struct cmp_row w, none;
	bool no;

	build_reads_result(&a);
	build_reads_result(&b);
	b.elapsed_ns *= 3;              /* the same reads in three times the time */
	assert_int_equal(result_finalize(&b), 0);
	assert_int_equal(cmp_row_init(&w), 0);
	cmp_row_add_ops(&w, &a);
	cmp_row_add_ops(&w, &b);
	const double secs = (double)(a.elapsed_ns + b.elapsed_ns) / 1e9;
	assert_close(cmp_row_stat(&w, EXPR_OPS_PER_SEC, &no), 6000.0 / secs);
	assert_false(no);
	assert_close(cmp_row_stat(&w, EXPR_BYTES_PER_SEC, &no), 6000.0 * 4096.0 / secs);
	assert_close(cmp_row_stat(&w, EXPR_CPU_SYSTEM_PER_OP, &no), 1000.0);
	assert_close(cmp_row_stat(&w, EXPR_CPU_IOWAIT_PER_OP, &no), 1000000.0 / 3000.0);
	assert_close(cmp_row_stat(&w, EXPR_CPU_STEAL_PER_OP, &no), 0.0);
	assert_false(no);
	/* a run without them (another probe's) leaves the row without them */
	build_json_result(&timer);
	assert_int_equal(cmp_row_init(&none), 0);
	cmp_row_add_ops(&none, &a);
	cmp_row_add_ops(&none, &timer);
	cmp_row_stat(&none, EXPR_OPS_PER_SEC, &no);
	assert_true(no);
	cmp_row_stat(&none, EXPR_CPU_SYSTEM_PER_OP, &no);
	assert_true(no);
	cmp_row_free(&w);
	cmp_row_free(&none);
	result_free(&a);
	result_free(&b);
	result_free(&timer);
}

static void test_result_to_json_keeps_the_params_object(void **state)
{
	(void)state;
	struct result res;

	build_json_result(&res);
	res.params = json_pack("{s:I, s:s}", "interval_ns", (json_int_t)1000000, "policy", "fifo");
	assert_non_null(res.params);
	json_t *j = result_to_json(&res);
	assert_non_null(j);
	assert_true(json_equal(jget(j, "params"), res.params));
	json_decref(j);
	/* The result still owns its params. */
	assert_int_equal(res.params->refcount, 1);
	result_free(&res);
}

/* ---- the JSON file ---- */

/* The entries of the temporary directory, "." and ".." left out. */
static size_t dir_entries(char names_out[][256], size_t max)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			if (n < max)
				snprintf(names_out[n], 256, "%s", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* The sink takes text: dump as the result writer does. */
static int commit_doc(struct atomic_file *sink, const json_t *doc)
{
	char *text = result_json_dump(doc);
	assert_non_null(text);
	int r = json_file_commit(sink, text);
	free(text);
	return r;
}

static void test_json_file_commit_writes_the_file_and_leaves_no_temporary_file(void **state)
{
	(void)state;
	struct atomic_file sink;
	char path[256], names_found[4][256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/out.json", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), 0);
	assert_true(sink.fd >= 0);
	/* Opening proves the directory writable but does not create the target yet
	 * (the temporary file's own name, when it has one: test-atomicfile.c). */
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);

	json_t *doc = json_pack("{s:s, s:i, s:[i,i]}", "schema", "x", "n", 3, "a", 1, 2);
	assert_non_null(doc);
	assert_int_equal(commit_doc(&sink, doc), 0);
	atomic_file_close(&sink);

	assert_int_equal(dir_entries(names_found, 4), 1);
	assert_string_equal(names_found[0], "out.json");
	json_error_t jerr;
	json_t *back = json_load_file(path, 0, &jerr);
	assert_non_null(back);
	assert_true(json_equal(back, doc));
	json_decref(back);

	/* Committing again replaces the file whole. */
	json_t *doc2 = json_pack("{s:s}", "schema", "y");
	assert_int_equal(atomic_file_open(path, &sink), 0);
	assert_int_equal(commit_doc(&sink, doc2), 0);
	atomic_file_close(&sink);
	back = json_load_file(path, 0, &jerr);
	assert_non_null(back);
	assert_true(json_equal(back, doc2));
	json_decref(back);
	assert_int_equal(dir_entries(names_found, 4), 1);

	json_decref(doc);
	json_decref(doc2);
	unlink(path);
}

static void test_atomic_file_close_without_commit_leaves_no_file_at_all(void **state)
{
	(void)state;
	struct atomic_file sink;
	char path[256], names_found[4][256];

	snprintf(path, sizeof(path), "%s/never.json", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), 0);
	assert_true(dir_entries(names_found, 4) <= 1);          /* at most the temporary file */
	atomic_file_close(&sink);
	assert_int_equal(dir_entries(names_found, 4), 0);
	assert_int_equal(sink.fd, -1);
	assert_null(sink.tmp);
	assert_null(sink.path);
	atomic_file_close(&sink);         /* again: harmless */

	/* An existing file is left as it was. */
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs("old\n", f);
	fclose(f);
	assert_int_equal(atomic_file_open(path, &sink), 0);
	atomic_file_close(&sink);
	assert_int_equal(dir_entries(names_found, 4), 1);
	char buf[16] = { 0 };
	f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "old\n");
	unlink(path);
}

static void test_atomic_file_open_fails_in_a_missing_directory_and_on_a_directory(void **state)
{
	(void)state;
	struct atomic_file sink, before;
	char path[256], names_found[4][256];

	memset(&sink, 0x5a, sizeof(sink));
	before = sink;
	snprintf(path, sizeof(path), "%s/no-such-dir/out.json", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), -ENOENT);
	assert_memory_equal(&sink, &before, sizeof(sink));      /* untouched on failure */

	assert_int_equal(atomic_file_open(tmpdir, &sink), -EISDIR);
	snprintf(path, sizeof(path), "%s/", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), -EISDIR);
	snprintf(path, sizeof(path), "%s/.", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), -EISDIR);
	assert_memory_equal(&sink, &before, sizeof(sink));
	assert_int_equal(dir_entries(names_found, 4), 0);
}

static void test_json_file_commit_after_close_is_refused(void **state)
{
	(void)state;
	struct atomic_file sink;
	char path[256], names_found[4][256];

	snprintf(path, sizeof(path), "%s/late.json", tmpdir);
	assert_int_equal(atomic_file_open(path, &sink), 0);
	atomic_file_close(&sink);
	json_t *doc = json_object();
	assert_int_equal(commit_doc(&sink, doc), -EBADF);
	json_decref(doc);
	assert_int_equal(dir_entries(names_found, 4), 0);
}

static void test_atomic_file_close_on_a_zeroed_sink_closes_no_descriptor(void **state)
{
	(void)state;
	struct atomic_file sink;
	int saved = dup(0);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	/* Make sure descriptor 0 is open, whatever the test runner gave us. */
	assert_true(fd >= 0);
	assert_true(dup2(fd, 0) == 0);
	close(fd);
	memset(&sink, 0, sizeof(sink));
	atomic_file_close(&sink);
	bool still_open = fcntl(0, F_GETFD) != -1;
	/* Put standard input back before judging. */
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	assert_true(still_open);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_init_makes_one_row_per_cpu_in_order_and_an_all_row),
		cmocka_unit_test(test_result_init_rejects_no_metrics_and_too_many),
		cmocka_unit_test(test_a_result_with_no_cpu_and_no_window_finalizes_to_zeros),
		cmocka_unit_test(test_cpu_totals_are_the_sum_of_their_windows),
		cmocka_unit_test(test_window_percentiles_are_those_of_the_window_histogram),
		cmocka_unit_test(test_a_long_run_keeps_bounded_windows_whose_sums_are_the_totals),
		cmocka_unit_test(test_windows_never_cover_the_next_one_whatever_the_runs_length),
		cmocka_unit_test(test_folded_cpus_with_different_windows_merge_into_one_grid),
		cmocka_unit_test(test_a_folded_run_read_back_and_written_again_is_the_same_text),
		cmocka_unit_test(test_a_file_whose_span_covers_the_next_window_is_refused),
		cmocka_unit_test(test_bands_keep_the_maximum_of_every_five_minutes_and_fold_past_their_limit),
		cmocka_unit_test(test_spike_rate_and_mtbf_follow_from_the_spikes_and_the_time_observed),
		cmocka_unit_test(test_finalize_merges_every_cpu_into_the_all_row),
		cmocka_unit_test(test_finalize_merges_windows_with_the_same_index),
		cmocka_unit_test(test_finalize_twice_gives_the_same_all_row),
		cmocka_unit_test(test_a_compare_row_adds_spikes_over_its_runs_and_has_none_from_a_run_that_did_not_count_them),
		cmocka_unit_test(test_merge_refuses_counts_that_would_overflow),
		cmocka_unit_test(test_a_compare_row_refuses_runs_whose_counts_add_up_past_int64_max),
		cmocka_unit_test(test_finalize_refuses_cpus_whose_counts_add_up_past_int64_max),
		cmocka_unit_test(test_result_from_text_refuses_a_text_past_the_limit_without_reading_it),
		cmocka_unit_test(test_a_run_of_reads_writes_its_throughput_and_cpu_per_read_and_reads_them_back),
		cmocka_unit_test(test_a_result_without_throughput_reads_back_without_it_as_one_of_another_probe_is_written),
		cmocka_unit_test(test_the_idle_states_fact_reads_back_and_is_absent_when_not_asked),
		cmocka_unit_test(test_a_merge_of_runs_that_limited_idle_states_differently_says_so),
		cmocka_unit_test(test_a_compare_row_of_runs_of_reads_gives_their_rate_and_cpu_per_read_over_them_all),
		cmocka_unit_test(test_summary_percentiles_are_ordered_and_within_min_and_max),
		cmocka_unit_test(test_summary_of_a_single_value_is_that_value_at_every_percentile),
		cmocka_unit_test(test_warm_max_skips_windows_before_the_warmup),
		cmocka_unit_test(test_warm_max_is_absent_when_no_window_follows_the_warmup),
		cmocka_unit_test(test_above_pct_is_the_share_of_samples_above_the_threshold),
		cmocka_unit_test(test_result_note_truncates_safely_and_drops_notes_beyond_the_maximum),
		cmocka_unit_test(test_a_note_cut_inside_a_multibyte_character_still_makes_valid_json),
		cmocka_unit_test(test_result_to_json_describes_every_cpu_and_the_merged_row),
		cmocka_unit_test(test_result_to_json_keeps_the_params_object),
		cmocka_unit_test(test_a_result_read_back_and_written_again_is_the_same_text),
		cmocka_unit_test(test_json_file_commit_writes_the_file_and_leaves_no_temporary_file),
		cmocka_unit_test(test_atomic_file_close_without_commit_leaves_no_file_at_all),
		cmocka_unit_test(test_atomic_file_open_fails_in_a_missing_directory_and_on_a_directory),
		cmocka_unit_test(test_json_file_commit_after_close_is_refused),
		cmocka_unit_test(test_atomic_file_close_on_a_zeroed_sink_closes_no_descriptor),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
