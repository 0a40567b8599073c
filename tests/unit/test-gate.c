/* compare's gates (src/result/gate.c): --fail-if expressions against rows and the verdict on them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmpruns.h"
#include "core/array.h"
#include "result/gate.h"

#define US   UINT64_C(1000)
#define NWIN 12

static const int64_t ids[] = { 1, 2 };

/* Two runs of one probe, a baseline and a candidate, as compare's rows. */
struct pair {
	struct result res[2];
	struct cmp_runs in;
	struct cmp_rows rows;
	struct gate_table t;
	struct gate_outcome out[8];
	size_t n;
};

/* Each run's windows: the first half at lo, the second at hi. */
static void pair_init(struct pair *p, uint64_t base_lo, uint64_t base_hi, uint64_t cand_lo,
		      uint64_t cand_hi)
{
	uint64_t v[2][NWIN];

	for (size_t k = 0; k < NWIN; k++) {
		v[0][k] = k < NWIN / 2 ? base_lo : base_hi;
		v[1][k] = k < NWIN / 2 ? cand_lo : cand_hi;
	}
	run_of(&p->res[0], "timer", v[0], NWIN);
	run_of(&p->res[1], "timer", v[1], NWIN);
	p->in = (struct cmp_runs){ .res = p->res, .ids = ids, .n = 2, .cpu = -1 };
	assert_int_equal(cmp_rows_build(&p->in, &p->rows), 0);
	p->t = (struct gate_table){ &p->in, &p->rows, 1000.0, "us", NULL };
}

static int pair_setup(void **state, uint64_t base_lo, uint64_t base_hi, uint64_t cand_lo,
		      uint64_t cand_hi)
{
	struct pair *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	pair_init(p, base_lo, base_hi, cand_lo, cand_hi);
	*state = p;
	return 0;
}

/* The candidate 50 % slower in every window: a change the verdict calls real. */
static int real_change(void **state)
{
	return pair_setup(state, 20 * US, 20 * US, 30 * US, 30 * US);
}

/* The candidate 17 % slower overall, but each run's halves differ threefold: noise to the verdict. */
static int noisy_change(void **state)
{
	return pair_setup(state, 10 * US, 30 * US, 12 * US, 35 * US);
}

static int pair_free(void **state)
{
	struct pair *p = *state;

	cmp_rows_free(&p->rows);
	runs_free(p->res, 2);
	free(p);
	return 0;
}

/* Run the gates written as texts on p; their outcomes in p->out. */
static void gate(struct pair *p, const char *const *texts, size_t n)
{
	struct expr e[4];
	struct lat_error err;

	assert_int_equal(gate_parse(texts, n, e, &err), 0);
	assert_int_equal(gate_run(&p->t, e, n, p->out, &p->n), 0);
}

static void assert_verdict(const struct pair *p, double stat, int direction)
{
	struct verdict v;
	assert_int_equal(cmp_judge(&p->rows.row[0].fig, &p->rows.row[1].fig, stat, &v), 0);
	assert_true(v.enough);
	assert_int_equal(v.direction, direction);
}

static void test_a_relative_gate_crossed_by_a_change_the_verdict_calls_noise_passes(void **state)
{
	const char *const g[] = { "mean>+10%", "p99>+10%" };
	struct pair *p = *state;

	assert_verdict(p, BOOT_MEAN, 0);
	assert_verdict(p, 99.0, 0);
	gate(p, g, 2);
	assert_int_equal(p->n, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_false(p->out[i].failed);
		assert_non_null(strstr(p->out[i].message, "no significant difference"));
		assert_non_null(strstr(
			p->out[i].message,
			": not failed, the change is not shown real (add '!' to compare raw)"));
	}
}

static void test_a_relative_gate_crossed_by_a_change_the_verdict_calls_real_fails(void **state)
{
	const char *const g[] = { "mean>+10%", "p99>+10%" };
	struct pair *p = *state;

	assert_verdict(p, BOOT_MEAN, 1);
	gate(p, g, 2);
	assert_int_equal(p->n, 2);
	assert_true(p->out[0].failed);
	assert_true(p->out[1].failed);
	assert_int_equal(p->out[1].row, 1);
	assert_int_equal(p->out[1].gate, 1);
	assert_string_equal(
		p->out[0].message,
		"run 2: mean 30.0us vs baseline 20.0us (+50.0%): mean > +10%; run 2 is slower "
		"than run 1 at mean by +50.0% (95% CI +50.0%..+50.0%; drift within runs 0.0%)");
	assert_string_equal(p->out[0].cls, "run 2");
}

static void test_a_relative_gate_with_a_bang_fails_on_a_change_the_verdict_calls_noise(void **state)
{
	const char *const g[] = { "p99>+10%!" };
	struct pair *p = *state;

	gate(p, g, 1);
	assert_int_equal(p->n, 1);
	assert_true(p->out[0].failed);
	assert_null(strstr(p->out[0].message, "significant"));
}

static void
test_a_relative_gate_the_change_does_not_cross_passes_without_asking_the_verdict(void **state)
{
	const char *const g[] = { "mean>+60%" };
	struct pair *p = *state;

	gate(p, g, 1);
	assert_false(p->out[0].failed);
	assert_string_equal(p->out[0].message,
			    "run 2: mean 30.0us vs baseline 20.0us (+50.0%): mean > +60%");
}

static void test_a_falling_gate_fails_a_real_fall_and_not_a_real_rise(void **state)
{
	const char *const g[] = { "mean<-10%" };
	struct pair *p = *state;

	gate(p, g, 1);
	assert_false(p->out[0].failed);
	/* against the slower run, the first is a third faster */
	cmp_rows_set_baseline(&p->rows, &p->in, 2);
	gate(p, g, 1);
	assert_int_equal(p->n, 1);
	assert_int_equal(p->out[0].row, 0);
	assert_true(p->out[0].failed);
	assert_non_null(strstr(p->out[0].message, "run 1 is faster than run 2 at mean"));
}

static void
test_an_absolute_gate_judges_every_row_the_baseline_too_and_a_relative_one_skips_it(void **state)
{
	const char *const g[] = { "max>25us", "max>+10%" };
	struct pair *p = *state;

	gate(p, g, 2);
	assert_int_equal(p->n, 3);
	assert_int_equal(p->out[0].row, 0);
	assert_false(p->out[0].failed);
	assert_int_equal(p->out[1].row, 1);
	assert_true(p->out[1].failed);
	assert_string_equal(p->out[1].message, "run 2: max 30.0us: max > 25us");
	/* the max has no verdict: its relative gate compares raw */
	assert_int_equal(p->out[2].row, 1);
	assert_true(p->out[2].failed);
}

/* A timer run has no operations to count a rate of. */
static void test_a_gate_on_a_figure_a_row_does_not_have_is_not_judged(void **state)
{
	const char *const g[] = { "ops_per_sec>0" };
	struct pair *p = *state;

	gate(p, g, 1);
	assert_false(p->out[1].failed);
	assert_string_equal(p->out[1].message, "run 2: ops_per_sec has no value: not judged");
}

static void
test_an_outcome_names_its_probe_when_there_are_several_and_reads_times_in_its_unit(void **state)
{
	const char *const g[] = { "max>25us" };
	struct pair *p = *state;

	p->t = (struct gate_table){ &p->in, &p->rows, 1.0, "ns", "timer" };
	gate(p, g, 1);
	assert_string_equal(p->out[1].cls, "timer: run 2");
	assert_string_equal(p->out[1].message, "run 2: max 30000ns: max > 25us");
}

static void test_bad_gate_expressions_are_refused_naming_the_option_and_the_text(void **state)
{
	const char *const bad[][2] = { { "p99>+10%", "p99>>5" },
				       { "max>1us", "p42>1us" },
				       { "missed>0", "" } };
	struct expr e[2];
	struct lat_error err;
	char want[64];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(gate_parse(bad[i], 2, e, &err), -EINVAL);
		snprintf(want, sizeof(want), "option '--fail-if': '%s': ", bad[i][1]);
		assert_memory_equal(err.msg, want, strlen(want));
		assert_true(strlen(err.msg) > strlen(want));
	}
}

/* A test on the pair of runs that differ really, or by noise only. */
#define REAL(t)	 cmocka_unit_test_setup_teardown(t, real_change, pair_free)
#define NOISY(t) cmocka_unit_test_setup_teardown(t, noisy_change, pair_free)

int main(void)
{
	const struct CMUnitTest tests[] = {
		NOISY(test_a_relative_gate_crossed_by_a_change_the_verdict_calls_noise_passes),
		REAL(test_a_relative_gate_crossed_by_a_change_the_verdict_calls_real_fails),
		NOISY(test_a_relative_gate_with_a_bang_fails_on_a_change_the_verdict_calls_noise),
		REAL(test_a_relative_gate_the_change_does_not_cross_passes_without_asking_the_verdict),
		REAL(test_a_falling_gate_fails_a_real_fall_and_not_a_real_rise),
		REAL(test_an_absolute_gate_judges_every_row_the_baseline_too_and_a_relative_one_skips_it),
		REAL(test_a_gate_on_a_figure_a_row_does_not_have_is_not_judged),
		REAL(test_an_outcome_names_its_probe_when_there_are_several_and_reads_times_in_its_unit),
		cmocka_unit_test(
			test_bad_gate_expressions_are_refused_naming_the_option_and_the_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
