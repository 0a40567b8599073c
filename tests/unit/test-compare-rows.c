/* compare's rows (src/result/rows.c): which runs, CPUs and metric make a row, and which runs cannot share a table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmpruns.h"
#include "core/array.h"
#include "result/rows.h"

#define US UINT64_C(1000)

static const int64_t ids[] = { 5, 3, 9, 4 };

/* Runs on CPU 0 whose label key holds values[i] ("" for none), windows of 20us. */
static void labelled_runs(struct result *res, const char *key, const char *const *values, size_t n)
{
	const uint64_t v[] = { 20 * US, 20 * US };
	for (size_t i = 0; i < n; i++) {
		run_of(&res[i], "timer", v, ARRAY_SIZE(v));
		if (values[i][0])
			run_label(&res[i], key, values[i]);
	}
}

static struct cmp_runs runs_by(const struct result *res, size_t n, const char (*by)[LABEL_KEY_MAX],
			       size_t nby)
{
	return (struct cmp_runs){ .res = res, .ids = ids, .n = n, .by = by, .nby = nby, .cpu = -1 };
}

/* Two runs of no label (ids 5 and 3), as a test's state. */
struct plain {
	struct result res[2];
	struct cmp_runs in;
};

static int plain_setup(void **state)
{
	const char *const none[] = { "", "" };
	struct plain *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	labelled_runs(p->res, "config", none, 2);
	p->in = runs_by(p->res, 2, NULL, 0);
	*state = p;
	return 0;
}

static int plain_free(void **state)
{
	struct plain *p = *state;

	runs_free(p->res, 2);
	free(p);
	return 0;
}

static void assert_row_runs(const struct cmp_group *w, const size_t *want, size_t n)
{
	assert_int_equal(w->nruns, n);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(w->runs[k], want[k]);
}

static void test_without_by_keys_each_run_is_a_row_of_its_own_in_the_order_given(void **state)
{
	const char *const none[] = { "", "", "" };
	struct result res[3];
	struct cmp_rows rows;
	char name[64];
	(void)state;

	labelled_runs(res, "config", none, 3);
	struct cmp_runs in = runs_by(res, 3, NULL, 0);
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(rows.ref, 0);
	for (size_t g = 0; g < 3; g++)
		assert_row_runs(&rows.row[g], &g, 1);
	cmp_group_name(&in, &rows.row[1], name, sizeof(name));
	assert_string_equal(name, "run 3");
	cmp_rows_free(&rows);
	runs_free(res, 3);
}

static void
test_runs_with_the_same_label_values_share_a_row_that_adds_up_their_samples(void **state)
{
	const char *const config[] = { "b", "a", "b", "a" };
	const char by[1][LABEL_KEY_MAX] = { "config" };
	const size_t a[] = { 1, 3 }, b[] = { 0, 2 };
	struct result res[4];
	struct cmp_rows rows;
	bool none;
	char name[64];
	(void)state;

	labelled_runs(res, "config", config, 4);
	struct cmp_runs in = runs_by(res, 4, by, 1);
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(rows.n, 2);
	assert_row_runs(&rows.row[0], a, 2);
	assert_row_runs(&rows.row[1], b, 2);
	assert_int_equal(cmp_row_stat(&rows.row[0].fig, EXPR_COUNT, &none), 400);
	assert_int_equal(rows.row[0].fig.nblocks, 4);
	cmp_group_name(&in, &rows.row[0], name, sizeof(name));
	assert_string_equal(name, "config=a");
	cmp_rows_free(&rows);
	runs_free(res, 4);
}

static void
test_rows_sort_numbers_as_numbers_and_runs_without_the_label_share_row_dash(void **state)
{
	const char *const n[] = { "10", "", "2", "x" };
	const char by[1][LABEL_KEY_MAX] = { "n" };
	const char *const want[] = { "-", "2", "10", "x" };
	struct result res[4];
	struct cmp_rows rows;
	(void)state;

	labelled_runs(res, "n", n, 4);
	struct cmp_runs in = runs_by(res, 4, by, 1);
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(rows.n, 4);
	for (size_t g = 0; g < 4; g++)
		assert_string_equal(rows.row[g].key.items[0].value, want[g]);
	cmp_rows_free(&rows);
	runs_free(res, 4);
}

static void
test_rows_by_two_keys_order_by_the_first_then_the_second_and_are_named_by_both(void **state)
{
	const char by[2][LABEL_KEY_MAX] = { "config", "sched" };
	const char *const config[] = { "b", "a", "a" }, *const sched[] = { "fifo", "rr", "fifo" };
	struct result res[3];
	struct cmp_rows rows;
	char name[64];
	(void)state;

	labelled_runs(res, "config", config, 3);
	for (size_t i = 0; i < 3; i++)
		run_label(&res[i], "sched", sched[i]);
	struct cmp_runs in = runs_by(res, 3, by, 2);
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(rows.row[0].runs[0], 2);
	assert_int_equal(rows.row[1].runs[0], 1);
	assert_int_equal(rows.row[2].runs[0], 0);
	cmp_group_name(&in, &rows.row[0], name, sizeof(name));
	assert_string_equal(name, "config=a sched=fifo");
	cmp_rows_free(&rows);
	runs_free(res, 3);
}

static void test_a_row_of_one_cpu_holds_that_cpus_samples_and_all_cpus_hold_both(void **state)
{
	struct result res;
	struct cmp_rows rows;
	bool none;
	(void)state;

	run_init(&res, "timer");
	run_window(&res, 0, 0, 100, 20 * US);
	run_window(&res, 1, 0, 50, 40 * US);
	assert_int_equal(result_finalize(&res), 0);
	struct cmp_runs in = runs_by(&res, 1, NULL, 0);
	in.cpu = 1;
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(cmp_row_stat(&rows.row[0].fig, EXPR_COUNT, &none), 50);
	assert_int_equal(cmp_row_stat(&rows.row[0].fig, EXPR_MIN, &none), 40 * US);
	cmp_rows_free(&rows);
	in.cpu = -1;
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	assert_int_equal(cmp_row_stat(&rows.row[0].fig, EXPR_COUNT, &none), 150);
	cmp_rows_free(&rows);
	result_free(&res);
}

static void
test_the_baseline_is_the_row_holding_its_run_and_row_zero_for_an_id_of_none(void **state)
{
	const char *const config[] = { "a", "b", "a" };
	const char by[1][LABEL_KEY_MAX] = { "config" };
	struct result res[3];
	struct cmp_rows rows;
	(void)state;

	labelled_runs(res, "config", config, 3);
	struct cmp_runs in = runs_by(res, 3, by, 1);
	assert_int_equal(cmp_rows_build(&in, &rows), 0);
	cmp_rows_set_baseline(&rows, &in, 3);
	assert_int_equal(rows.ref, 1);
	cmp_rows_set_baseline(&rows, &in, 9);
	assert_int_equal(rows.ref, 0);
	cmp_rows_set_baseline(&rows, &in, 0);
	assert_int_equal(rows.ref, 0);
	cmp_rows_free(&rows);
	runs_free(res, 3);
}

static void test_the_metric_named_is_the_one_every_run_is_compared_by(void **state)
{
	struct plain *p = *state;
	struct lat_error err;
	unsigned m = 7;

	assert_int_equal(cmp_runs_check(&p->in, NULL, &m, &err), 0);
	assert_int_equal(m, 0);
	assert_int_equal(cmp_runs_check(&p->in, "wakeup", &m, &err), 0);
	assert_int_equal(m, 1);
}

static void test_a_metric_the_first_run_lacks_is_refused_naming_the_run_and_the_metric(void **state)
{
	struct plain *p = *state;
	struct lat_error err;
	unsigned m = 7;

	assert_int_equal(cmp_runs_check(&p->in, "irq", &m, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--metric': run 5 has no metric 'irq'");
	assert_int_equal(m, 7);
	/* a later run whose metric of that index is another */
	snprintf(p->res[1].metric_names[1], sizeof(p->res[1].metric_names[1]), "irq");
	assert_int_equal(cmp_runs_check(&p->in, "wakeup", &m, &err), -EINVAL);
	assert_string_equal(err.msg, "run 3 does not have the metric 'wakeup'");
}

static void test_runs_of_different_probes_are_refused_naming_both(void **state)
{
	struct plain *p = *state;
	struct lat_error err;
	unsigned m;

	snprintf(p->res[1].probe, sizeof(p->res[1].probe), "wake");
	assert_int_equal(cmp_runs_check(&p->in, NULL, &m, &err), -EINVAL);
	assert_string_equal(err.msg, "runs 5 and 3 are of different probes (timer, wake): compare "
				     "runs of one probe");
}

static void test_a_cpu_a_run_did_not_measure_is_refused_and_makes_no_rows(void **state)
{
	struct plain *p = *state;
	struct cmp_rows rows;
	struct lat_error err;
	unsigned m;

	p->in.cpu = 4;
	assert_int_equal(cmp_runs_check(&p->in, NULL, &m, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--cpu': run 5 did not measure cpu 4");
	assert_int_equal(cmp_rows_build(&p->in, &rows), -EINVAL);
	cmp_rows_free(&rows);
}

#define PLAIN(t) cmocka_unit_test_setup_teardown(t, plain_setup, plain_free)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_without_by_keys_each_run_is_a_row_of_its_own_in_the_order_given),
		cmocka_unit_test(
			test_runs_with_the_same_label_values_share_a_row_that_adds_up_their_samples),
		cmocka_unit_test(
			test_rows_sort_numbers_as_numbers_and_runs_without_the_label_share_row_dash),
		cmocka_unit_test(
			test_rows_by_two_keys_order_by_the_first_then_the_second_and_are_named_by_both),
		cmocka_unit_test(
			test_a_row_of_one_cpu_holds_that_cpus_samples_and_all_cpus_hold_both),
		cmocka_unit_test(
			test_the_baseline_is_the_row_holding_its_run_and_row_zero_for_an_id_of_none),
		PLAIN(test_the_metric_named_is_the_one_every_run_is_compared_by),
		PLAIN(test_a_metric_the_first_run_lacks_is_refused_naming_the_run_and_the_metric),
		PLAIN(test_runs_of_different_probes_are_refused_naming_both),
		PLAIN(test_a_cpu_a_run_did_not_measure_is_refused_and_makes_no_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
