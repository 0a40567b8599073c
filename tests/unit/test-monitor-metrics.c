/* The monitor's /metrics text: cumulative counts, the ladder, the 5-minute
 * max, both formats, and the series count the man page states. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hist.h"
#include "core/nstime.h"
#include "monitor/metrics.h"
#include "report/omtext.h"

#define SEC NS_PER_SEC

/* A window of cpu with these samples, as the recorder would close it. */
static void add(struct mon_metrics *m, int cpu, const uint64_t *v, size_t n, uint64_t missed, uint64_t end_mono)
{
	struct rec_window w = { .missed = missed };
	struct hist_bucket b[16];
	struct sparse_hist h = { .n = 0, .b = b };

	w.m[0].st = (struct stats)STATS_INIT;
	for (size_t i = 0; i < n; i++) {
		stats_add(&w.m[0].st, v[i]);
		if (v[i] > 100u * NS_PER_US)
			w.m[0].above++;
		/* one bucket per value, in order: the test gives them sorted */
		uint32_t idx = hist_index(v[i]);
		if (h.n && b[h.n - 1u].index == idx)
			b[h.n - 1u].count++;
		else
			b[h.n++] = (struct hist_bucket){ idx, 1 };
	}
	w.spikes = w.m[0].above ? 1 : 0;
	assert_int_equal(mon_metrics_add_window(m, cpu, &w, &h, n ? v[n - 1] : 0, end_mono), 0);
}

static struct mon_metrics *make(const char *cpus, bool per_cpu, const struct labels *ls)
{
	struct cpuset set;
	struct mon_metrics *m;
	struct mon_identity id = { .host = "host-a", .probe = "timer", .version = "0.1.0", .labels = ls,
				   .threshold_ns = 100u * NS_PER_US, .per_cpu_hist = per_cpu };

	assert_int_equal(cpuset_parse(cpus, &set), 0);
	assert_int_equal(mon_metrics_new(&set, &id, &m), 0);
	return m;
}

/* The value of the first sample line that starts with prefix (name and labels), or -1. */
static double value(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	while (p && *p) {
		if (strncmp(p, prefix, n) == 0)
			return strtod(strchr(p + n, ' ') + 1, NULL);
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return -1.0;
}

static char *render(const struct mon_metrics *m, enum mon_format f, uint64_t now)
{
	const struct mon_metrics *one[] = { m };
	return mon_metrics_render(one, 1, f, now);
}

static size_t series(const char *text)
{
	size_t n = 0;

	for (const char *p = text; *p; p = strchr(p, '\n') + 1)
		if (*p != '#')
			n++;
	return n;
}

static void test_the_histogram_counts_each_sample_in_the_first_bound_at_or_above_it(void **state)
{
	(void)state;
	struct mon_metrics *m = make("1,2", false, NULL);
	const uint64_t a[] = { 3 * NS_PER_US, 150 * NS_PER_US }, b[] = { 2500 * NS_PER_MS };

	/* a bucket whose upper bound is a bound counts there; one past it, at the next */
	assert_int_equal(om_ladder_slot(1000), 0);
	assert_int_equal(om_ladder_slot(1001), 1);
	assert_int_equal(om_ladder_slot(100 * SEC), OM_LADDER_N - 1u);
	assert_int_equal(om_ladder_slot(100 * SEC + 1), OM_LADDER_N);
	add(m, 1, a, 2, 0, 10 * SEC);
	add(m, 2, b, 1, 4, 10 * SEC);
	char *t = render(m, MON_PROMETHEUS, 10 * SEC);
	assert_non_null(t);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"2e-06\"}") == 0.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"5e-06\"}") == 1.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"0.0001\"}") == 1.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"0.0002\"}") == 2.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"2.0\"}") == 2.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"5.0\"}") == 3.0);
	assert_true(value(t, "latscope_latency_seconds_bucket{host=\"host-a\",probe=\"timer\",le=\"+Inf\"}") == 3.0);
	assert_true(value(t, "latscope_latency_seconds_count{") == 3.0);
	assert_true(value(t, "latscope_samples_total{") == 3.0);
	assert_true(value(t, "latscope_missed_periods_total{") == 4.0);
	assert_true(value(t, "latscope_above_threshold_total{") == 2.0);
	/* the sum counter and the histogram's _sum are the same figure */
	double sum = value(t, "latscope_latency_sum_seconds_total{");
	assert_true(sum > 2.5001 && sum < 2.5002);
	assert_true(value(t, "latscope_latency_seconds_sum{") == sum);
	assert_true(value(t, "latscope_window_max_seconds{host=\"host-a\",probe=\"timer\",cpu=\"2\"}") == 2.5);
	free(t);
	mon_metrics_free(m);
}

static void test_counters_only_grow_as_windows_come(void **state)
{
	(void)state;
	struct mon_metrics *m = make("0", false, NULL);
	const uint64_t v[] = { 20 * NS_PER_US, 30 * NS_PER_US, 200 * NS_PER_US };
	double last = 0.0;

	for (int i = 1; i <= 5; i++) {
		add(m, 0, v, 3, 1, (uint64_t)i * SEC);
		char *t = render(m, MON_PROMETHEUS, (uint64_t)i * SEC);
		double now = value(t, "latscope_samples_total{");
		assert_true(now == 3.0 * i);
		assert_true(now > last);
		assert_true(value(t, "latscope_spikes_total{") == (double)i);
		last = now;
		free(t);
	}
	mon_metrics_free(m);
}

static void test_the_5_minute_max_forgets_windows_older_than_5_minutes(void **state)
{
	(void)state;
	struct mon_metrics *m = make("0", false, NULL);
	const uint64_t big[] = { 900 * NS_PER_US }, small[] = { 10 * NS_PER_US };
	const char *key = "latscope_last_5m_max_seconds{host=\"host-a\",probe=\"timer\",cpu=\"0\"}";

	add(m, 0, big, 1, 0, 1000 * SEC);
	add(m, 0, small, 1, 0, 1200 * SEC);
	char *t = render(m, MON_PROMETHEUS, 1200 * SEC);
	assert_true(value(t, key) == 0.0009);
	free(t);
	add(m, 0, small, 1, 0, 1310 * SEC);
	t = render(m, MON_PROMETHEUS, 1310 * SEC);
	assert_true(value(t, key) == 0.00001);
	free(t);
	/* nothing in the last 5 minutes: no sample rather than a stale one */
	t = render(m, MON_PROMETHEUS, 2000 * SEC);
	assert_true(value(t, key) == -1.0);
	free(t);
	mon_metrics_free(m);
}

static void test_the_series_count_is_the_formula_the_man_page_states(void **state)
{
	(void)state;
	for (int per_cpu = 0; per_cpu < 2; per_cpu++) {
		struct mon_metrics *m = make("0-3", per_cpu, NULL);
		const uint64_t v[] = { 5 * NS_PER_US };
		for (int c = 0; c < 4; c++) {
			add(m, c, v, 1, 0, SEC);
			mon_metrics_set_context(m, c, 1000, 7);
		}
		mon_metrics_set_up(m, true);
		char *t = render(m, MON_PROMETHEUS, SEC);
		assert_int_equal(series(t), mon_metrics_series(4, per_cpu));
		free(t);
		mon_metrics_free(m);
	}
	assert_int_equal(mon_metrics_series(64, false), 356);
	assert_true(mon_metrics_series(64, false) < 400);
}

static void test_smis_are_a_counter_per_cpu_only_where_a_source_set_them(void **state)
{
	(void)state;
	struct mon_metrics *m = make("0-1", false, NULL);
	const uint64_t v[] = { 5 * NS_PER_US };

	for (int c = 0; c < 2; c++) {
		add(m, c, v, 1, 0, SEC);
		mon_metrics_set_context(m, c, 1000, 7);
	}
	mon_metrics_set_up(m, true);
	char *t = render(m, MON_PROMETHEUS, SEC);
	assert_null(strstr(t, "latscope_smi_total"));   /* no source: no series, never a 0 */
	free(t);
	mon_metrics_set_smis(m, 0, 3);
	mon_metrics_set_smis(m, 1, 0);
	t = render(m, MON_PROMETHEUS, SEC);
	assert_non_null(strstr(t, "# TYPE latscope_smi_total counter\n"));
	assert_true(value(t, "latscope_smi_total{host=\"host-a\",cpu=\"0\"}") == 3.0);
	assert_true(value(t, "latscope_smi_total{host=\"host-a\",cpu=\"1\"}") == 0.0);
	assert_int_equal(series(t), mon_metrics_series(2, false) + 2);
	free(t);
	mon_metrics_free(m);
}

static void test_a_second_probe_shares_each_family_and_adds_its_own_series(void **state)
{
	(void)state;
	struct cpuset set;
	struct mon_metrics *t = make("0-1", false, NULL), *n;
	struct mon_identity id = { .host = "host-a", .probe = "noise", .version = "0.1.0", .threshold_ns = 5000 };
	const uint64_t v[] = { 5 * NS_PER_US }, g[] = { 40 * NS_PER_US, 50 * NS_PER_US };

	assert_int_equal(cpuset_parse("1", &set), 0);
	assert_int_equal(mon_metrics_new(&set, &id, &n), 0);
	for (int c = 0; c < 2; c++) {
		add(t, c, v, 1, 0, SEC);
		mon_metrics_set_context(t, c, 1000, 7);
	}
	add(n, 1, g, 2, 0, SEC);
	const struct mon_metrics *both[] = { t, n };
	char *text = mon_metrics_render(both, 2, MON_PROMETHEUS, SEC);
	assert_non_null(text);
	/* one metadata block a family, with both probes' samples in it */
	const char *p = text;
	int types = 0;
	while ((p = strstr(p, "# TYPE latscope_samples_total ")))
		types++, p++;
	assert_int_equal(types, 1);
	assert_true(value(text, "latscope_samples_total{host=\"host-a\",probe=\"timer\"}") == 2.0);
	assert_true(value(text, "latscope_samples_total{host=\"host-a\",probe=\"noise\"}") == 2.0);
	assert_true(value(text, "latscope_latency_seconds_count{host=\"host-a\",probe=\"noise\"}") == 2.0);
	assert_int_equal(series(text), mon_metrics_series(2, false) + 34 + 3);
	free(text);
	mon_metrics_free(n);
	mon_metrics_free(t);
}

static void test_openmetrics_names_counter_families_without_total_and_ends_with_eof(void **state)
{
	(void)state;
	struct mon_metrics *m = make("0", false, NULL);
	const uint64_t v[] = { 5 * NS_PER_US };

	add(m, 0, v, 1, 0, SEC);
	char *om = render(m, MON_OPENMETRICS, SEC);
	char *prom = render(m, MON_PROMETHEUS, SEC);
	assert_non_null(strstr(om, "# TYPE latscope_samples counter\n"));
	assert_non_null(strstr(om, "# TYPE latscope_build info\n"));
	assert_non_null(strstr(om, "# UNIT latscope_latency_seconds seconds\n"));
	assert_non_null(strstr(om, "\nlatscope_samples_total{"));
	assert_int_equal(strcmp(om + strlen(om) - 6, "# EOF\n"), 0);
	assert_non_null(strstr(prom, "# TYPE latscope_samples_total counter\n"));
	assert_non_null(strstr(prom, "# TYPE latscope_build_info gauge\n"));
	assert_null(strstr(prom, "# EOF"));
	assert_null(strstr(prom, "# UNIT"));
	free(om);
	free(prom);
	mon_metrics_free(m);
}

static void test_user_labels_become_label_names_with_their_values_escaped(void **state)
{
	(void)state;
	struct labels ls = { .n = 1 };
	snprintf(ls.items[0].key, sizeof(ls.items[0].key), "rack.row");
	snprintf(ls.items[0].value, sizeof(ls.items[0].value), "a\"b\\c");
	struct mon_metrics *m = make("0", false, &ls);

	char *t = render(m, MON_PROMETHEUS, SEC);
	assert_non_null(strstr(t, "latscope_samples_total{host=\"host-a\",probe=\"timer\",label_rack_row=\"a\\\"b\\\\c\"} 0\n"));
	free(t);
	mon_metrics_free(m);
}

static void test_spike_causes_are_exported_by_kind_only_when_traced(void **state)
{
	(void)state;
	static const char *const kinds[] = { "irq", "softirq", "task", "no_event" };
	struct mon_metrics *m = make("0", false, NULL);

	char *t = render(m, MON_PROMETHEUS, SEC);
	assert_null(strstr(t, "latscope_spike_causes_total"));
	free(t);
	mon_metrics_set_cause_kinds(m, kinds, 4);
	mon_metrics_add_cause(m, 2);
	mon_metrics_add_cause(m, 2);
	mon_metrics_add_cause(m, 3);
	mon_metrics_add_cause(m, 9);    /* out of range: ignored */
	t = render(m, MON_PROMETHEUS, SEC);
	assert_true(value(t, "latscope_spike_causes_total{host=\"host-a\",probe=\"timer\",kind=\"irq\"}") == 0.0);
	assert_true(value(t, "latscope_spike_causes_total{host=\"host-a\",probe=\"timer\",kind=\"task\"}") == 2.0);
	assert_true(value(t, "latscope_spike_causes_total{host=\"host-a\",probe=\"timer\",kind=\"no_event\"}") == 1.0);
	free(t);
	mon_metrics_free(m);
}

static void test_a_window_of_a_cpu_not_measured_is_refused(void **state)
{
	(void)state;
	struct mon_metrics *m = make("1", false, NULL);
	struct rec_window w = { 0 };
	struct sparse_hist h = { 0 };

	assert_int_equal(mon_metrics_add_window(m, 0, &w, &h, 0, SEC), -ENOENT);
	mon_metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_histogram_counts_each_sample_in_the_first_bound_at_or_above_it),
		cmocka_unit_test(test_counters_only_grow_as_windows_come),
		cmocka_unit_test(test_the_5_minute_max_forgets_windows_older_than_5_minutes),
		cmocka_unit_test(test_the_series_count_is_the_formula_the_man_page_states),
		cmocka_unit_test(test_smis_are_a_counter_per_cpu_only_where_a_source_set_them),
		cmocka_unit_test(test_a_second_probe_shares_each_family_and_adds_its_own_series),
		cmocka_unit_test(test_openmetrics_names_counter_families_without_total_and_ends_with_eof),
		cmocka_unit_test(test_user_labels_become_label_names_with_their_values_escaped),
		cmocka_unit_test(test_spike_causes_are_exported_by_kind_only_when_traced),
		cmocka_unit_test(test_a_window_of_a_cpu_not_measured_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
