#include "result/result.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "core/count.h"
#include "core/poisson.h"
#include "result/bands.h"
#include "result/fold.h"

/*
 * A dense histogram is HIST_BUCKETS counters (30 KB) per metric, and a result
 * read from a file may list thousands of CPUs that hold no sample: they all
 * share these, zero pages mapped read-only (a write is a crash, never a
 * corruption), until result_cpu_hists gives the CPU its own.
 */
static struct hist *shared_empty;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void map_shared_empty(void)
{
	void *p = mmap(NULL, REC_MAX_METRICS * sizeof(struct hist), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared_empty = p == MAP_FAILED ? NULL : p;
}

static struct hist *no_samples(void)
{
	pthread_once(&shared_once, map_shared_empty);
	return shared_empty;
}

static bool owns_hists(const struct cpu_result *cr)
{
	return cr->hist && cr->hist != shared_empty;
}

struct hist *result_cpu_hists(const struct result *res, struct cpu_result *cr)
{
	if (!owns_hists(cr)) {
		struct hist *h = calloc(res->nmetrics, sizeof(*h));
		if (!h)
			return NULL;
		cr->hist = h;
	}
	return cr->hist;
}

/* Back to sharing the empty histograms. */
static void drop_hists(struct cpu_result *cr)
{
	if (owns_hists(cr))
		free(cr->hist);
	cr->hist = shared_empty;
}

static int cpu_result_init(struct cpu_result *cr, int cpu)
{
	memset(cr, 0, sizeof(*cr));
	cr->cpu = cpu;
	if (!(cr->hist = no_samples()))
		return -ENOMEM;
	for (unsigned m = 0; m < REC_MAX_METRICS; m++) {
		stats_reset(&cr->st[m]);
		stats_reset(&cr->gwin[m]);
	}
	stats_reset(&cr->overhead);
	stats_reset(&cr->clock_cost);
	return 0;
}

static void free_window(struct result_window *rw)
{
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		sparse_free(&rw->hist[m]);
}

static void free_windows(struct cpu_result *cr)
{
	for (size_t i = 0; i < cr->nwin; i++)
		free_window(&cr->win[i]);
	cr->nwin = 0;
	cr->fold = (struct fold_state){ 0 };
}

static void cpu_result_free(struct cpu_result *cr)
{
	free_windows(cr);
	bands_free(&cr->bands);
	named_counts_free(&cr->irqs);
	named_counts_free(&cr->softirqs);
	drop_hists(cr);
	free(cr->win);
	if (cr->lin)
		lin_hist_free(cr->lin);
	free(cr->lin);
	cr->lin = NULL;
	cr->hist = NULL;
	cr->win = NULL;
	cr->nwin = cr->capwin = 0;
}

int result_init(struct result *res, const char *probe, unsigned nmetrics,
		const char *const *metric_names, const struct cpuset *cpus)
{
	size_t ncpus = cpuset_count(cpus), i = 0;

	if (nmetrics == 0 || nmetrics > REC_MAX_METRICS)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	if (strlen(probe) >= RESULT_NAME_LEN)
		return -EINVAL;
	snprintf(res->probe, sizeof(res->probe), "%s", probe);
	res->nmetrics = nmetrics;
	res->long_run = true;
	for (unsigned m = 0; m < nmetrics; m++) {
		if (strlen(metric_names[m]) >= RESULT_NAME_LEN)
			return -EINVAL;
		snprintf(res->metric_names[m], sizeof(res->metric_names[m]), "%s", metric_names[m]);
	}
	res->ncpus = ncpus;
	res->cpus = calloc(ncpus ? ncpus : 1, sizeof(*res->cpus));
	if (!res->cpus)
		goto fail;
	cpuset_foreach(cpu, cpus)
		if (cpu_result_init(&res->cpus[i++], cpu) < 0)
			goto fail;
	if (cpu_result_init(&res->all, -1) < 0)
		goto fail;
	return 0;
fail:
	result_free(res);
	return -ENOMEM;
}

int result_keep_lin(struct result *res, uint64_t unit_ns, uint32_t nbins)
{
	for (size_t i = 0; i < res->ncpus; i++) {
		struct cpu_result *cr = &res->cpus[i];
		int r;
		if (cr->lin)
			continue;
		if (!(cr->lin = malloc(sizeof(*cr->lin))))
			return -ENOMEM;
		if ((r = lin_hist_init(cr->lin, unit_ns, nbins)) < 0) {
			free(cr->lin);
			cr->lin = NULL;
			return r;
		}
	}
	return 0;
}

void result_free(struct result *res)
{
	if (res->cpus)
		for (size_t i = 0; i < res->ncpus; i++)
			cpu_result_free(&res->cpus[i]);
	free(res->cpus);
	res->cpus = NULL;
	cpu_result_free(&res->all);
	free(res->machine.win);
	memset(&res->machine, 0, sizeof(res->machine));
	if (res->argv)
		for (int i = 0; i < res->argc; i++)
			free(res->argv[i]);
	free(res->argv);
	res->argv = NULL;
	json_decref(res->params);
	res->params = NULL;
	json_decref(res->fingerprint);
	json_decref(res->findings);
	json_decref(res->trace);
	json_decref(res->host);
	json_decref(res->tool);
	json_decref(res->on_threshold);
	json_decref(res->until);
	json_decref(res->hwlat);
	res->fingerprint = res->findings = res->trace = res->host = res->tool = res->on_threshold = res->until = NULL;
	res->hwlat = NULL;
}

int result_set_argv(struct result *res, int argc, char *const *argv)
{
	char **copy = calloc((size_t)argc + 1u, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		copy[i] = strdup(argv[i]);
		if (!copy[i]) {
			while (i--)
				free(copy[i]);
			free(copy);
			return -ENOMEM;
		}
	}
	res->argc = argc;
	res->argv = copy;
	return 0;
}

/* Drop a UTF-8 character cut short at the end of s: the JSON string must stay valid. */
static void trim_partial_utf8(char *s)
{
	size_t len = strlen(s), i = len, want;

	while (i > 0 && len - i < 3u && ((unsigned char)s[i - 1u] & 0xc0u) == 0x80u)
		i--;                    /* back over continuation bytes */
	if (i == 0)
		return;
	unsigned char lead = (unsigned char)s[i - 1u];
	if (lead < 0xc0u)
		return;                 /* ASCII (or a stray continuation byte): nothing cut */
	want = lead >= 0xf0u ? 4u : lead >= 0xe0u ? 3u : 2u;
	if (len - (i - 1u) < want)
		s[i - 1u] = '\0';
}

__attribute__((format(printf, 4, 0)))
static void add_note(struct result *res, bool info, bool shown, const char *fmt, va_list ap)
{
	if (res->nnotes >= RESULT_NOTES_MAX)
		return;
	res->note_is_info[res->nnotes] = info;
	res->note_shown[res->nnotes] = shown;
	res->note_kept[res->nnotes] = false;
	char *note = res->notes[res->nnotes++];
	int n = vsnprintf(note, RESULT_NOTE_LEN, fmt, ap);
	if (n >= RESULT_NOTE_LEN)
		trim_partial_utf8(note);
}

void result_note(struct result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_note(res, false, true, fmt, ap);
	va_end(ap);
}

void result_info(struct result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_note(res, true, false, fmt, ap);
	va_end(ap);
}

void result_info_kept(struct result *res, const char *fmt, ...)
{
	va_list ap;
	unsigned before = res->nnotes;
	va_start(ap, fmt);
	add_note(res, true, false, fmt, ap);
	va_end(ap);
	if (res->nnotes > before)       /* not when the notes were full */
		res->note_kept[before] = true;
}

void result_info_shown(struct result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_note(res, true, true, fmt, ap);
	va_end(ap);
}

/* items (n of size bytes, room for *cap) with room for one more, grown by doubling: NULL
 * when out of memory, items untouched. */
static void *room_for_one(void *items, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return items;
	size_t c = *cap ? *cap * 2u : 16u;
	void *grown = realloc(items, c * size);
	if (grown)
		*cap = c;
	return grown;
}

static int fold_cpu(const struct result *res, struct cpu_result *cr);

int result_append_window(struct cpu_result *cr, const struct result_window *rw)
{
	struct result_window *win = room_for_one(cr->win, &cr->capwin, cr->nwin, sizeof(*win));
	if (!win)
		return -ENOMEM;
	cr->win = win;
	cr->win[cr->nwin++] = *rw;
	return 0;
}

int result_add_window(struct result *res, struct cpu_result *cr,
		      const struct rec_window *w, const struct hist *hist)
{
	struct result_window rw = { .w = *w, .span = 1 };
	int r;

	for (unsigned m = 0; m < res->nmetrics; m++) {
		if ((r = sparse_from_hist(&hist[m], &rw.hist[m])) < 0) {
			while (m--)
				sparse_free(&rw.hist[m]);
			return r;
		}
	}
	for (unsigned m = 0; m < res->nmetrics; m++) {
		rw.p50[m] = hist_percentile(&hist[m], 50.0);
		rw.p99[m] = hist_percentile(&hist[m], 99.0);
	}
	/* A measurement cannot count 2^63 of anything; the checks keep the sums true regardless. */
	r = result_cpu_hists(res, cr) ? 0 : -ENOMEM;
	for (unsigned m = 0; m < res->nmetrics && r == 0; m++) {
		stats_merge(&cr->gwin[m], &w->m[m].st);
		if (hist_add(&cr->hist[m], &hist[m]) < 0 || stats_merge(&cr->st[m], &w->m[m].st) < 0 ||
		    !count_add(&cr->above[m], w->m[m].above) || !count_add(&cr->above_ns[m], w->m[m].above_ns))
			r = -EOVERFLOW;
	}
	if (r == 0 && (!count_add(&cr->missed, w->missed) || stats_merge(&cr->overhead, &w->overhead) < 0 ||
		       !count_add(&cr->spikes, w->spikes)))
		r = -EOVERFLOW;
	if (r == 0 && w->m[0].st.n)
		r = bands_add(&cr->bands, w->start_ns, w->m[0].st.max);
	if (r == 0)
		r = result_append_window(cr, &rw);
	if (r < 0) {
		free_window(&rw);
		return r;
	}
	return fold_cpu(res, cr);
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Spikes by the hour and the time between them, with the interval a count of rare events has. */
static void long_run_figures(const struct result *res, struct cpu_result *cr)
{
	struct long_run *lr = &cr->lr;
	double lo, hi;

	memset(lr, 0, sizeof(*lr));
	lr->counted = res->long_run;
	/* From the first window's start to the last one's end: the same whether
	 * windows were folded or not (a stall with no window in it counts too). */
	if (cr->nwin && cr->win[cr->nwin - 1u].w.end_ns > cr->win[0].w.start_ns)
		lr->observed_ns = cr->win[cr->nwin - 1u].w.end_ns - cr->win[0].w.start_ns;
	double t = (double)lr->observed_ns, k = (double)cr->spikes;
	lr->per_hour = t > 0 ? k * 3600e9 / t : 0.0;
	poisson_interval(cr->spikes, 0.95, &lo, &hi);
	lr->has_mtbf = cr->spikes > 0 && t > 0;
	lr->mtbf_ns = lr->has_mtbf ? t / k : 0.0;
	lr->mtbf_lo_ns = t / hi;
	lr->mtbf_hi_ns = lo > 0 ? t / lo : (double)INFINITY;
	lr->has_worst = cr->ntop > 0;
	lr->worst_at_ns = cr->ntop ? cr->top[0].at_ns : 0;
}

static void summarize(const struct result *res, struct cpu_result *cr)
{
	long_run_figures(res, cr);
	for (unsigned m = 0; m < res->nmetrics; m++) {
		struct summary *s = &cr->sum[m];
		const struct stats *st = &cr->st[m];
		const struct hist *h = &cr->hist[m];
		uint64_t lo = stats_min(st), hi = st->max;

		memset(s, 0, sizeof(*s));
		s->count = st->n;
		s->min = lo;
		s->max = hi;
		s->mean = st->mean;
		s->stddev = stats_stddev(st);
		/* The exact extremes bound every bucket midpoint. */
		s->p50 = clamp_u64(hist_percentile(h, 50.0), lo, hi);
		s->p90 = clamp_u64(hist_percentile(h, 90.0), lo, hi);
		s->p99 = clamp_u64(hist_percentile(h, 99.0), lo, hi);
		s->p999 = clamp_u64(hist_percentile(h, 99.9), lo, hi);
		s->p9999 = clamp_u64(hist_percentile(h, 99.99), lo, hi);
		s->above = cr->above[m];
		s->above_ns = cr->above_ns[m];
		s->above_pct = st->n ? 100.0 * (double)cr->above[m] / (double)st->n : 0.0;
		for (size_t i = 0; i < cr->nwin; i++) {
			const struct result_window *rw = &cr->win[i];
			if (rw->w.index < res->warmup || rw->w.m[m].st.n == 0)
				continue;
			if (!s->has_warm_max || rw->w.m[m].st.max > s->warm_max)
				s->warm_max = rw->w.m[m].st.max;
			s->has_warm_max = true;
		}
	}
}

/*
 * Adding up results (CPUs into "all", runs into a merge): every count and sum of
 * ns goes through count_add, and the first one that would pass COUNT_MAX is
 * named in why, "cpu 3's sample count would reach 2^63".  On failure dst is
 * left part-added: the caller throws it away.
 */
struct adding {
	const struct result *res;
	const struct cpu_result *dst;
	struct lat_error *why;
	int r;                          /* 0, or the first failure */
};

/* Text from a result (a file from elsewhere) in a message: no control character. */
static void printable(char *dst, size_t size, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1u < size; i++)
		dst[i] = (unsigned char)src[i] < 0x20u || src[i] == 0x7f ? '?' : src[i];
	dst[i] = '\0';
}

static void too_big(struct adding *a, unsigned m, const char *what, const char *name, const struct result_window *w)
{
	char who[24], metric[RESULT_NAME_LEN + 1], in_window[40] = "", quoted[RESULT_SOURCE_LEN + 2];

	if (a->r < 0)
		return;
	a->r = -EOVERFLOW;
	if (!a->why)
		return;
	if (a->dst->cpu >= 0)
		snprintf(who, sizeof(who), "cpu %d's", a->dst->cpu);
	else
		snprintf(who, sizeof(who), "all CPUs'");
	printable(metric, sizeof(metric), m ? a->res->metric_names[m] : "");
	if (m)
		strcat(metric, " ");
	if (w)
		snprintf(in_window, sizeof(in_window), " in window %llu", (unsigned long long)w->w.index);
	printable(quoted, sizeof(quoted), name ? name : "");
	err_set(a->why, 0, "%s %s%s%s%s%s%s would reach 2^63", who, metric, what, name ? " '" : "", quoted,
		 name ? "'" : "", in_window);
}

static void add_count(struct adding *a, uint64_t *dst, uint64_t v, unsigned m, const char *what,
		      const struct result_window *w)
{
	if (!count_add(dst, v))
		too_big(a, m, what, NULL, w);
}

static void add_stats(struct adding *a, struct stats *dst, const struct stats *src, unsigned m, const char *what,
		      const struct result_window *w)
{
	if (stats_merge(dst, src) < 0)
		too_big(a, m, what, NULL, w);
}

static void add_context(struct adding *a, struct win_context *dst, const struct win_context *src,
			const struct result_window *w)
{
	static const char *const counters[] = { "interrupts", "softirqs", "involuntary switches" };
	char what[32];
	int field;

	if (win_context_add(dst, src, &field) == 0)
		return;
	if (field < 3)
		snprintf(what, sizeof(what), "%s", counters[field]);
	else if (field == 3 + CPU_TIME_KINDS)
		snprintf(what, sizeof(what), "SMIs");
	else
		snprintf(what, sizeof(what), "%s time", cpu_time_names[field - 3]);
	too_big(a, 0, what, NULL, w);
}

int win_context_add(struct win_context *dst, const struct win_context *src, int *ret_field)
{
	uint64_t *mine[4 + CPU_TIME_KINDS] = { &dst->irqs, &dst->softirqs, &dst->involuntary };
	uint64_t theirs[4 + CPU_TIME_KINDS] = { src->irqs, src->softirqs, src->involuntary };

	if (!src->valid)
		return 0;
	for (int k = 0; k < CPU_TIME_KINDS; k++) {
		mine[3 + k] = &dst->cpu_ns[k];
		theirs[3 + k] = src->cpu_ns[k];
	}
	mine[3 + CPU_TIME_KINDS] = &dst->smis;
	theirs[3 + CPU_TIME_KINDS] = src->smis;
	dst->valid = true;
	for (int i = 0; i < 4 + CPU_TIME_KINDS; i++)
		if (!count_add(mine[i], theirs[i])) {
			if (ret_field)
				*ret_field = i;
			return -EOVERFLOW;
		}
	return 0;
}

bool result_smis(const struct result *res, const struct cpu_result *cr, uint64_t *ret_smis)
{
	uint64_t n = 0;

	if (!res->smi_asked || res->smi_source == SMI_SOURCE_NONE || !cr->has_context)
		return false;
	for (size_t i = 0; i < cr->nwin; i++)
		if (!count_add(&n, cr->win[i].ctx.smis))
			n = COUNT_MAX;  /* past 2^63 SMIs: the windows' sum already failed */
	*ret_smis = n;
	return true;
}

int machine_window_add(struct machine_window *dst, const struct machine_window *src)
{
	bool ok = true;
	for (int k = 0; k < CPU_TIME_KINDS; k++)
		ok &= count_add(&dst->cpu_ns[k], src->cpu_ns[k]);
	ok &= count_add(&dst->irqs, src->irqs);
	ok &= count_add(&dst->softirqs, src->softirqs);
	ok &= count_add(&dst->switches, src->switches);
	ok &= count_add(&dst->self_user_ns, src->self_user_ns);
	ok &= count_add(&dst->self_system_ns, src->self_system_ns);
	return ok ? 0 : -EOVERFLOW;
}

/* st as the JSON text gives it back (RESULT_REAL_DIGITS), so that a row added up
 * from it is the same whether its parts were measured here or read from a file:
 * a result read back and written again is the same text. */
static void as_written(struct stats *out, const struct stats *in)
{
	if (in->n == 0) {
		stats_reset(out);
		return;
	}
	stats_from_figures(out, in->n, in->min, in->max, result_real_as_written(in->mean),
			   result_real_as_written(stats_stddev(in)));
}

static void add_stats_written(struct adding *a, struct stats *dst, const struct stats *src, unsigned m,
			      const char *what, const struct result_window *w)
{
	struct stats st;
	as_written(&st, src);
	add_stats(a, dst, &st, m, what, w);
}

/* One window of one source, for sorting them all by index. */
struct win_ref {
	uint64_t index;
	size_t src;                     /* the source's place: equal indices merge in that order */
	const struct result_window *w;
};

/* By index, the longest span first, then by source. */
static int by_index_then_source(const void *x, const void *y)
{
	const struct win_ref *a = x, *b = y;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	if (a->w->span != b->w->span)
		return a->w->span > b->w->span ? -1 : 1;
	return (a->src > b->src) - (a->src < b->src);
}

/* out = the windows ref[0..n-1] merged: one CPU's in a row (a fold), or the same
 * span of several (a sum).  On failure a->r says why and out holds nothing. */
static void merge_windows(struct adding *a, struct result_window *out, const struct win_ref *ref, size_t n,
			  uint64_t span)
{
	const struct result *res = a->res;
	struct result_window rw;

	memset(&rw, 0, sizeof(rw));
	rw.w.index = ref[0].index;
	rw.span = span;
	rw.w.start_ns = ref[0].w->w.start_ns;
	stats_reset(&rw.w.overhead);
	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		stats_reset(&rw.w.m[m].st);
	for (size_t i = 0; i < n; i++) {
		const struct result_window *src = ref[i].w;
		if (src->w.start_ns < rw.w.start_ns)
			rw.w.start_ns = src->w.start_ns;
		if (src->w.end_ns > rw.w.end_ns)
			rw.w.end_ns = src->w.end_ns;
		add_count(a, &rw.w.missed, src->w.missed, 0, "missed periods", src);
		add_count(a, &rw.w.spikes, src->w.spikes, 0, "spikes", src);
		add_stats_written(a, &rw.w.overhead, &src->w.overhead, 0, "wakeup-to-recorded count", src);
		add_context(a, &rw.ctx, &src->ctx, src);
		for (unsigned m = 0; m < res->nmetrics; m++) {
			add_stats_written(a, &rw.w.m[m].st, &src->w.m[m].st, m, "sample count", src);
			add_count(a, &rw.w.m[m].above, src->w.m[m].above, m, "count above the threshold", src);
			add_count(a, &rw.w.m[m].above_ns, src->w.m[m].above_ns, m, "time above the threshold", src);
		}
	}
	const struct sparse_hist **parts = a->r == 0 ? malloc(n * sizeof(*parts)) : NULL;
	if (a->r == 0 && !parts)
		a->r = -ENOMEM;
	for (unsigned m = 0; m < res->nmetrics && a->r == 0; m++) {
		for (size_t i = 0; i < n; i++)
			parts[i] = &ref[i].w->hist[m];
		int r = sparse_sum(parts, n, &rw.hist[m]);
		if (r == -EOVERFLOW)
			too_big(a, m, "sample count", NULL, ref[0].w);
		else if (r < 0)
			a->r = r;
		/* Percentiles do not add up; the merged histogram has them. */
		rw.p50[m] = sparse_percentile(&rw.hist[m], 50.0);
		rw.p99[m] = sparse_percentile(&rw.hist[m], 99.0);
	}
	free(parts);
	if (a->r < 0)
		free_window(&rw);
	else
		*out = rw;
}

/* The windows ref[0..n-1], overlapping spans of several sources, as one new window of dst. */
static void sum_window(struct adding *a, struct cpu_result *dst, const struct win_ref *ref, size_t n, uint64_t span)
{
	struct result_window rw;

	merge_windows(a, &rw, ref, n, span);
	if (a->r < 0)
		return;
	int r = result_append_window(dst, &rw);
	if (r < 0) {
		free_window(&rw);
		a->r = r;
	}
}

/* ---- folding a CPU's windows (result/fold.h) ---- */

static uint64_t window_index(const void *item)
{
	return ((const struct result_window *)item)->w.index;
}

static uint64_t window_span(const void *item)
{
	return ((const struct result_window *)item)->span;
}

static void window_place(void *item, uint64_t index, uint64_t span)
{
	struct result_window *rw = item;
	rw->w.index = index;
	rw->span = span;
}

static int window_absorb(void *ctx, void *dst, void *src)
{
	struct adding *a = ctx;
	struct result_window *into = dst, *next = src, merged;
	struct win_ref ref[2] = { { .index = into->w.index, .w = into }, { .index = next->w.index, .w = next } };

	a->r = 0;
	merge_windows(a, &merged, ref, 2, into->span);
	if (a->r < 0)
		return a->r;
	free_window(into);
	free_window(next);
	*into = merged;
	return 0;
}

static int fold_cpu(const struct result *res, struct cpu_result *cr)
{
	struct adding a = { .res = res, .dst = cr };
	const struct fold_ops ops = { .size = sizeof(struct result_window), .pin = res->warmup, .index = window_index,
				      .span = window_span, .place = window_place, .absorb = window_absorb, .ctx = &a };
	return fold_items(cr->win, &cr->nwin, &cr->fold, &ops);
}

/* Every window of the sources, merged by index and span: O(n log n) in the windows. */
static void sum_windows(struct adding *a, struct cpu_result *dst, const struct cpu_result *const *src, size_t n)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		total += src[i]->nwin;
	if (total == 0)
		return;
	struct win_ref *ref = malloc(total * sizeof(*ref));
	if (!ref) {
		a->r = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < src[i]->nwin; j++)
			ref[k++] = (struct win_ref){ .index = src[i]->win[j].w.index, .src = i, .w = &src[i]->win[j] };
	qsort(ref, total, sizeof(*ref), by_index_then_source);
	/* Windows whose spans overlap become one: folded sources (result.h) share
	 * the grid of the longest span that covers an index. */
	for (size_t i = 0; i < total && a->r == 0;) {
		size_t j = i + 1u;
		uint64_t end = ref[i].index + ref[i].w->span;
		for (; j < total && ref[j].index < end; j++)
			if (ref[j].index + ref[j].w->span > end)
				end = ref[j].index + ref[j].w->span;
		sum_window(a, dst, &ref[i], j - i, end - ref[i].index);
		i = j;
	}
	free(ref);
}

/* One named count of one source, for sorting them all by name. */
struct name_ref {
	const struct named_count *item;
	size_t src;
};

static int by_name_then_source(const void *x, const void *y)
{
	const struct name_ref *a = x, *b = y;
	int c = strcmp(a->item->name, b->item->name);
	if (c)
		return c;
	return (a->src > b->src) - (a->src < b->src);
}

/* dst = the named counts of the sources added by name, in name order: O(n log n). */
static void sum_named(struct adding *a, struct named_counts *dst, const struct cpu_result *const *src, size_t n,
		      bool softirqs)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		total += softirqs ? src[i]->softirqs.n : src[i]->irqs.n;
	if (total == 0 || a->r < 0)
		return;
	struct name_ref *ref = malloc(total * sizeof(*ref));
	struct named_count *items = malloc(total * sizeof(*items));
	if (!ref || !items) {
		free(ref);
		free(items);
		a->r = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct named_counts *c = softirqs ? &src[i]->softirqs : &src[i]->irqs;
		for (size_t j = 0; j < c->n; j++)
			ref[k++] = (struct name_ref){ .item = &c->items[j], .src = i };
	}
	qsort(ref, total, sizeof(*ref), by_name_then_source);
	size_t out = 0;
	for (size_t i = 0; i < total; i++) {
		if (out && strcmp(items[out - 1u].name, ref[i].item->name) == 0) {
			if (!count_add(&items[out - 1u].count, ref[i].item->count))
				too_big(a, 0, softirqs ? "softirqs from" : "interrupts from", ref[i].item->name, NULL);
			continue;
		}
		items[out++] = *ref[i].item;
	}
	free(ref);
	named_counts_free(dst);
	dst->items = items;
	dst->n = out;
}

int cpu_result_sum(const struct result *res, struct cpu_result *dst, const struct cpu_result *const *src, size_t n,
		   struct lat_error *why)
{
	struct adding a = { .res = res, .dst = dst, .why = why };

	if (dst->nwin || dst->irqs.n || dst->softirqs.n)
		return -EINVAL;
	for (size_t i = 0; i < n && a.r == 0; i++) {
		for (unsigned m = 0; m < res->nmetrics; m++) {
			add_stats_written(&a, &dst->st[m], &src[i]->st[m], m, "sample count", NULL);
			add_count(&a, &dst->above[m], src[i]->above[m], m, "count above the threshold", NULL);
			add_count(&a, &dst->above_ns[m], src[i]->above_ns[m], m, "time above the threshold", NULL);
			if (src[i]->hist[m].total == 0 || a.r < 0)
				continue;       /* an empty CPU costs no dense histogram */
			if (!result_cpu_hists(res, dst))
				a.r = -ENOMEM;
			else if (hist_add(&dst->hist[m], &src[i]->hist[m]) < 0)
				too_big(&a, m, "sample count", NULL, NULL);
		}
		add_count(&a, &dst->missed, src[i]->missed, 0, "missed periods", NULL);
		add_count(&a, &dst->spikes, src[i]->spikes, 0, "spikes", NULL);
		add_stats_written(&a, &dst->overhead, &src[i]->overhead, 0, "wakeup-to-recorded count", NULL);
		add_stats_written(&a, &dst->clock_cost, &src[i]->clock_cost, 0, "clock read count", NULL);
		dst->has_context |= src[i]->has_context;
		if (a.r == 0 && (a.r = bands_merge(&dst->bands, &src[i]->bands)) == -EINVAL)
			err_set(why, 0, "cpu %d's maxima per band are not in bands of 5 minutes times a power of two",
				src[i]->cpu);
	}
	sum_named(&a, &dst->irqs, src, n, false);
	sum_named(&a, &dst->softirqs, src, n, true);
	/* Windows by index: the k-th window of every run covers the same span of its run. */
	if (a.r == 0)
		sum_windows(&a, dst, src, n);
	if (a.r == -ENOMEM)
		err_set(why, 0, "out of memory");
	return a.r;
}

double result_real_as_written(double v)
{
	char text[48];
	snprintf(text, sizeof(text), "%.*g", RESULT_REAL_DIGITS, v);
	return strtod(text, NULL);
}

static uint64_t machine_index(const void *item)
{
	return ((const struct machine_window *)item)->index;
}

static uint64_t machine_span(const void *item)
{
	return ((const struct machine_window *)item)->span;
}

static void machine_place(void *item, uint64_t index, uint64_t span)
{
	struct machine_window *mw = item;
	mw->index = index;
	mw->span = span;
}

static int machine_absorb(void *ctx, void *dst, void *src)
{
	struct machine_window sum = *(struct machine_window *)dst;
	(void)ctx;
	if (machine_window_add(&sum, src) < 0)
		return -EOVERFLOW;
	*(struct machine_window *)dst = sum;
	return 0;
}

int machine_append(struct machine_context *m, const struct machine_window *w)
{
	struct machine_window *win = room_for_one(m->win, &m->capwin, m->nwin, sizeof(*win));
	if (!win)
		return -ENOMEM;
	m->win = win;
	struct machine_window total = m->total;
	if (machine_window_add(&total, w) < 0)
		return -EOVERFLOW;
	m->win[m->nwin] = *w;
	m->win[m->nwin++].span = w->span ? w->span : 1u;
	m->total = total;
	m->valid = true;
	return 0;
}

int machine_record(struct machine_context *m, const struct machine_window *w, uint64_t pin)
{
	int r = machine_append(m, w);
	const struct fold_ops ops = { .size = sizeof(*w), .pin = pin, .index = machine_index,
				      .span = machine_span, .place = machine_place, .absorb = machine_absorb };
	return r < 0 ? r : fold_items(m->win, &m->nwin, &m->fold, &ops);
}

void result_add_context(struct cpu_result *cr, uint64_t index, const struct win_context *ctx)
{
	/* Windows are sorted by index; a window covers up to the next one's. */
	for (size_t i = cr->nwin; i-- > 0;) {
		if (cr->win[i].w.index > index)
			continue;
		win_context_add(&cr->win[i].ctx, ctx, NULL);   /* a run cannot count 2^63 interrupts */
		return;
	}
}

int named_counts_add(struct named_counts *c, const char *name, uint64_t count)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->items[i].name, name) == 0)
			return count_add(&c->items[i].count, count) ? 0 : -EOVERFLOW;
	if (count > COUNT_MAX)
		return -EOVERFLOW;
	return named_counts_append(c, name, count);
}

int named_counts_append(struct named_counts *c, const char *name, uint64_t count)
{
	if (count > COUNT_MAX || strlen(name) >= RESULT_SOURCE_LEN)
		return -EINVAL;
	struct named_count *items = room_for_one(c->items, &c->cap, c->n, sizeof(*items));
	if (!items)
		return -ENOMEM;
	c->items = items;
	snprintf(c->items[c->n].name, sizeof(c->items[c->n].name), "%s", name);
	c->items[c->n++].count = count;
	return 0;
}

void named_counts_free(struct named_counts *c)
{
	free(c->items);
	c->items = NULL;
	c->n = c->cap = 0;
}

/* Largest first; equal values by time. */
static int cmp_event(const void *a, const void *b)
{
	const struct rec_event *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return (x->at_ns > y->at_ns) - (x->at_ns < y->at_ns);
}

void result_set_top(struct cpu_result *cr, const struct rec_event *ev, unsigned n)
{
	struct rec_event all[2u * REC_TOP];

	n = n < 2u * REC_TOP ? n : 2u * REC_TOP;
	memcpy(all, ev, n * sizeof(*ev));
	qsort(all, n, sizeof(*all), cmp_event);
	cr->ntop = n < REC_TOP ? n : REC_TOP;
	memcpy(cr->top, all, cr->ntop * sizeof(*all));
	for (unsigned i = 0; i < cr->ntop; i++)
		cr->top_cpu[i] = cr->cpu;
}

/* all's largest: the largest of every CPU's, with their CPU. */
static void merge_top(struct result *res)
{
	struct cpu_result *all = &res->all;
	all->ntop = 0;
	for (size_t i = 0; i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		for (unsigned k = 0; k < cr->ntop; k++) {
			unsigned at = all->ntop;
			if (all->ntop == REC_TOP) {
				at = REC_TOP - 1u;      /* kept sorted: the last is the smallest */
				if (cr->top[k].value <= all->top[at].value)
					continue;
			} else {
				all->ntop++;
			}
			/* insertion into the sorted list */
			while (at > 0 && cmp_event(&cr->top[k], &all->top[at - 1u]) < 0) {
				all->top[at] = all->top[at - 1u];
				all->top_cpu[at] = all->top_cpu[at - 1u];
				at--;
			}
			all->top[at] = cr->top[k];
			all->top_cpu[at] = cr->cpu;
		}
	}
}


int result_finalize_why(struct result *res, struct lat_error *why)
{
	struct cpu_result *all = &res->all;
	const struct cpu_result **cpus = malloc((res->ncpus ? res->ncpus : 1u) * sizeof(*cpus));
	int r;

	err_set(why, 0, "%s", "");
	if (!cpus)
		return -ENOMEM;
	free_windows(all);
	bands_free(&all->bands);
	all->spikes = 0;
	named_counts_free(&all->irqs);
	named_counts_free(&all->softirqs);
	drop_hists(all);
	all->has_context = false;
	for (unsigned m = 0; m < res->nmetrics; m++) {
		stats_reset(&all->st[m]);
		all->above[m] = 0;
		all->above_ns[m] = 0;
	}
	all->missed = 0;
	stats_reset(&all->overhead);
	stats_reset(&all->clock_cost);
	for (size_t i = 0; i < res->ncpus; i++) {
		summarize(res, &res->cpus[i]);
		cpus[i] = &res->cpus[i];
	}
	r = cpu_result_sum(res, all, cpus, res->ncpus, why);
	free(cpus);
	if (r < 0)
		return r;
	merge_top(res);
	summarize(res, all);
	result_op_figures(res);
	return 0;
}

int result_finalize(struct result *res)
{
	return result_finalize_why(res, NULL);
}
