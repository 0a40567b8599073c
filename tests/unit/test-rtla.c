/*
 * Unit tests for rtla's layouts (src/report/rtla.c): the hist histogram and
 * its rows, the columns each CPU shows, the Duration line, and the
 * auto-analysis block filled from a trace spike.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/nstime.h"
#include "report/rtla.h"

#define ENTRIES 4u


/* Not inlined: GCC then mistakes the memstream's buffer for the local that points to it. */
__attribute__((noinline)) static char *hist_text(const struct rtla_view *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rtla_print_hist(f, v), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static uint64_t bins[2][RTLA_CTXS][ENTRIES];

/* Two CPUs, 0 and 2: bucket 1 empty everywhere, one value over on CPU 2's Usr. */
static void two_cpus(struct rtla_view *v, struct rtla_cpu cpus[2], bool traced)
{
	static const uint64_t counts[RTLA_CTXS][ENTRIES] = { { 5, 0, 1, 0 }, { 2, 0, 3, 1 }, { 0, 0, 4, 2 } };
	memset(cpus, 0, 2 * sizeof(*cpus));
	for (int c = 0; c < 2; c++) {
		cpus[c].cpu = c * 2;
		for (int k = 0; k < RTLA_CTXS; k++) {
			struct rtla_col *col = &cpus[c].col[k];
			memcpy(bins[c][k], counts[k], sizeof(counts[k]));
			col->have = traced || k == RTLA_USR;
			col->bins = bins[c][k];
			col->over = c == 1 && k == RTLA_USR;
			for (unsigned b = 0; b < ENTRIES; b++)
				col->count += counts[k][b];
			col->count += col->over;
			col->min = k;
			col->max = 3u + (unsigned)k;
			col->sum = 2u * col->count;
		}
	}
	*v = (struct rtla_view){ .user = true, .entries = ENTRIES, .bucket = 1, .elapsed_ns = 10u * NS_PER_SEC,
				 .ncpus = 2, .cpus = cpus };
}

static void the_duration_is_days_then_hours_minutes_and_seconds(void **state)
{
	char buf[32];
	(void)state;
	rtla_duration(((1u * 24u + 2u) * 3600u + 3u * 60u + 4u) * NS_PER_SEC + 999u, buf, sizeof(buf));
	assert_string_equal(buf, "  1 02:03:04");
	rtla_duration(10u * NS_PER_SEC, buf, sizeof(buf));
	assert_string_equal(buf, "  0 00:00:10");
	/* a run of -d 1 that ended a little early is the second rtla counts */
	rtla_duration(NS_PER_SEC - NS_PER_MS, buf, sizeof(buf));
	assert_string_equal(buf, "  0 00:00:01");
}

static void the_histogram_has_rtlas_header_columns_by_cpu_and_only_non_empty_rows(void **state)
{
	struct rtla_cpu cpus[2];
	struct rtla_view v;
	(void)state;
	two_cpus(&v, cpus, true);
	char *text = hist_text(&v);
	const char *want =
		"# RTLA timerlat histogram\n"
		"# Time unit is microseconds (us)\n"
		"# Duration:   0 00:00:10\n"
		"Index   IRQ-000   Thr-000   Usr-000   IRQ-002   Thr-002   Usr-002\n"
		"0             5         2         0         5         2         0 \n"
		"2             1         3         4         1         3         4 \n"
		"3             0         1         2         0         1         2 \n"
		"over:         0         0         0         0         0         1 \n"
		"count:        6         6         6         6         6         7 \n"
		"min:          0         1         2         0         1         2 \n"
		"avg:          2         2         2         2         2         2 \n"
		"max:          3         4         5         3         4         5 \n"
		"ALL:        IRQ       Thr       Usr\n"
		"count:       12        12        13 \n"
		"min:          0         1         2 \n"
		"avg:          2         2         2 \n"
		"max:          3         4         5 \n";
	assert_string_equal(text, want);
	free(text);
}

static void with_zeros_every_bucket_is_a_row_and_no_index_drops_the_first_column(void **state)
{
	struct rtla_cpu cpus[2];
	struct rtla_view v;
	(void)state;
	two_cpus(&v, cpus, true);
	v.with_zeros = true;
	v.no_summary = true;
	char *text = hist_text(&v);
	assert_non_null(strstr(text, "\n1             0         0         0         0         0         0 \n"));
	free(text);
	v.no_index = true;
	v.no_header = true;
	text = hist_text(&v);
	assert_string_equal(strtok(text, "\n"), "        5         2         0         5         2         0 ");
	free(text);
}

static void without_the_trace_irq_and_thr_stay_empty_beside_usr_and_no_irq_drops_its_column(void **state)
{
	struct rtla_cpu cpus[2];
	struct rtla_view v;
	(void)state;
	two_cpus(&v, cpus, false);
	v.user = false;         /* Usr is the only figure there is: shown all the same */
	char *text = hist_text(&v);
	/* three columns a CPU, as rteval reads them by position */
	assert_non_null(strstr(text, "\nIndex   IRQ-000   Thr-000   Usr-000   IRQ-002   Thr-002   Usr-002\n"));
	assert_non_null(strstr(text, "\nALL:        IRQ       Thr       Usr\n"));
	free(text);
	two_cpus(&v, cpus, true);
	v.no_irq = true;
	v.user = false;
	text = hist_text(&v);
	assert_non_null(strstr(text, "\nIndex   Thr-000   Thr-002\n"));
	assert_non_null(strstr(text, "\nALL:         Thr\n"));
	free(text);
}

static void an_empty_column_shows_a_dash_for_min_avg_and_max(void **state)
{
	struct rtla_cpu cpus[2];
	struct rtla_view v;
	(void)state;
	two_cpus(&v, cpus, true);
	cpus[0].col[RTLA_IRQ] = (struct rtla_col){ .have = true };
	char *text = hist_text(&v);
	assert_non_null(strstr(text, "\nmin:          -         1 "));
	assert_non_null(strstr(text, "\ncount:        0         6 "));
	free(text);
}

__attribute__((noinline)) static char *analysis_text(const struct result *res, int cpu, int64_t at, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = rtla_print_analysis(f, res, cpu, at);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void the_analysis_names_the_blocking_task_and_the_interference_with_their_shares(void **state)
{
	struct result res = { 0 };
	json_error_t jerr;
	(void)state;
	/* a spike of 6 ms to the thread running: 2 us irq delay, 2 us handler, the rest held */
	res.trace = json_loads("{\"cpus\": [{\"cpu\": 1, \"spikes\": ["
			       "{\"at_ns\": 7, \"parts\": {\"irq delay\": 1, \"timer handler\": 1, \"wakeup to running\": 1,"
			       " \"return to user\": 1}},"
			       "{\"at_ns\": 5000, \"parts\": {\"irq delay\": 2000, \"timer handler\": 2000,"
			       " \"wakeup to running\": 5996000, \"return to user\": 1000},"
			       " \"after_expiry\": {\"by\": [{\"kind\": \"task\", \"name\": \"lat-inject\", \"id\": 42,"
			       " \"prio\": 9, \"ns\": 5400000, \"count\": 1}, {\"kind\": \"irq\", \"name\": \"virtio0\","
			       " \"id\": 11, \"ns\": 300000, \"count\": 2}, {\"kind\": \"task\", \"name\": \"kworker/1:0\","
			       " \"id\": 7, \"prio\": 120, \"ns\": 60000, \"count\": 1}],"
			       " \"by_kind_ns\": {\"task\": 5460000, \"irq\": 300000, \"softirq\": 0}}}]}]}",
			       0, &jerr);
	assert_non_null(res.trace);
	int rc;
	char *text = analysis_text(&res, 1, 5000, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "## CPU 1 hit stop tracing, analyzing it ##\n"));
	assert_non_null(strstr(text, "  IRQ latency:\t\t\t\t\t\t     2.00 us\n"));
	assert_non_null(strstr(text, "  Blocking thread:\t\t\t\t\t  5400.00 us (90.00 %)\n"));
	assert_non_null(strstr(text, "\t              lat-inject:42       \t\t  5400.00 us\n"));
	assert_non_null(strstr(text, "  IRQ interference\t\t\t\t\t   300.00 us (5.00 %)\n"));
	assert_non_null(strstr(text, "\t                 virtio0:11 "));
	assert_non_null(strstr(text, "  Thread interference\t\t\t\t\t    60.00 us (1.00 %)\n"));
	assert_null(strstr(text, "Softirq interference"));
	assert_non_null(strstr(text, "  Thread latency:\t\t\t\t\t  6000.00 us (100%)\n"));
	free(text);
	/* a CPU the trace has nothing for */
	text = analysis_text(&res, 0, 5000, &rc);
	assert_int_equal(rc, -ENOENT);
	free(text);
	json_decref(res.trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_duration_is_days_then_hours_minutes_and_seconds),
		cmocka_unit_test(the_histogram_has_rtlas_header_columns_by_cpu_and_only_non_empty_rows),
		cmocka_unit_test(with_zeros_every_bucket_is_a_row_and_no_index_drops_the_first_column),
		cmocka_unit_test(without_the_trace_irq_and_thr_stay_empty_beside_usr_and_no_irq_drops_its_column),
		cmocka_unit_test(an_empty_column_shows_a_dash_for_min_avg_and_max),
		cmocka_unit_test(the_analysis_names_the_blocking_task_and_the_interference_with_their_shares),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
