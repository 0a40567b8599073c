/*
 * Unit tests for regression-gate expressions (src/core/expr.c): parsing
 * "p99>+10%" and friends, the messages for bad ones, when a value fails the
 * gate, and writing an expression back as text.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/expr.h"
#include "core/nstime.h"

#include "rng.h"

#define ERR_LEN 128     /* the size the header promises to be enough */

static const struct expr SENTINEL = { .stat = EXPR_COUNT, .op = EXPR_LE, .kind = EXPR_RELATIVE, .value = -12345.0 };

/* ---- helpers that name the input on failure ---- */

/* Field by field: the padding of a struct copy is unspecified. */
static bool same_expr(const struct expr *a, const struct expr *b)
{
	/* The value bit for bit: "untouched" means the very same double. */
	return a->stat == b->stat && a->op == b->op && a->kind == b->kind &&
	       /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison,cert-exp42-c,cert-flp37-c) */
	       memcmp(&a->value, &b->value, sizeof(a->value)) == 0;
}

static struct expr parse_ok(const char *text)
{
	struct expr e = SENTINEL;
	struct lat_error err = { "" };
	int r = expr_parse(text, &e, &err);
	if (r != 0) {
		print_error("expr_parse(\"%s\"): r=%d (%s), want 0\n", text, r, err.msg);
		fail();
	}
	return e;
}

static void expect_expr(const char *text, enum expr_stat stat, enum expr_op op, enum expr_kind kind, double value)
{
	struct expr e = parse_ok(text);
	if (e.stat != stat || e.op != op || e.kind != kind || e.value != value) {
		print_error("expr_parse(\"%s\"): got stat %d op %d kind %d value %.17g, want %d %d %d %.17g\n", text,
			    e.stat, e.op, e.kind, e.value, stat, op, kind, value);
		fail();
	}
}

/* Fails with -EINVAL, leaves ret untouched and says something containing want_msg. */
static void expect_error(const char *text, const char *want_msg)
{
	struct expr e = SENTINEL;
	struct lat_error err;
	memset(err.msg, 'X', sizeof(err.msg));
	err.msg[sizeof(err.msg) - 1u] = '\0';
	int r = expr_parse(text, &e, &err);
	if (r != -EINVAL || !same_expr(&e, &SENTINEL) || !strstr(err.msg, want_msg)) {
		print_error("expr_parse(\"%s\"): r=%d (want %d), ret %s, message \"%s\" (want it to contain \"%s\")\n",
			    text ? text : "(null)", r, -EINVAL, same_expr(&e, &SENTINEL) ? "untouched" : "CHANGED",
			    err.msg, want_msg);
		fail();
	}
}

static void expect_fails(const char *text, double value, double base, bool want)
{
	struct expr e = parse_ok(text);
	if (expr_fails(&e, value, base) != want) {
		print_error("\"%s\" with value %g, base %g: fails=%d, want %d\n", text, value, base, !want, want);
		fail();
	}
}

static void expect_format(const char *text, const char *want)
{
	struct expr e = parse_ok(text);
	char buf[64];
	memset(buf, 'X', sizeof(buf));
	expr_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void expect_round_trip(const struct expr *e)
{
	struct lat_error err = { "" };
	char buf[128];
	struct expr back = SENTINEL;
	expr_format(e, buf, sizeof(buf));
	int r = expr_parse(buf, &back, &err);
	if (r != 0 || back.stat != e->stat || back.op != e->op || back.kind != e->kind || back.value != e->value ||
	    signbit(back.value) != signbit(e->value)) {
		print_error("\"%s\" (value %.17g) read back: r=%d (%s) value %.17g\n", buf, e->value, r, err.msg, back.value);
		fail();
	}
}

static const char *const stat_names[] = {
	[EXPR_MIN] = "min", [EXPR_MEAN] = "mean", [EXPR_STDDEV] = "stddev", [EXPR_P50] = "p50",
	[EXPR_P90] = "p90", [EXPR_P99] = "p99", [EXPR_P999] = "p99.9", [EXPR_P9999] = "p99.99",
	[EXPR_MAX] = "max", [EXPR_WARM_MAX] = "warm_max", [EXPR_ABOVE_PCT] = "above_pct",
	[EXPR_MISSED] = "missed", [EXPR_COUNT] = "count", [EXPR_SPIKES] = "spikes",
	[EXPR_SPIKES_PER_HOUR] = "spikes_per_hour", [EXPR_MTBF] = "mtbf",
	[EXPR_OPS_PER_SEC] = "ops_per_sec", [EXPR_BYTES_PER_SEC] = "bytes_per_sec",
	[EXPR_CPU_USER_PER_OP] = "cpu_user_per_op", [EXPR_CPU_NICE_PER_OP] = "cpu_nice_per_op",
	[EXPR_CPU_SYSTEM_PER_OP] = "cpu_system_per_op", [EXPR_CPU_IDLE_PER_OP] = "cpu_idle_per_op",
	[EXPR_CPU_IOWAIT_PER_OP] = "cpu_iowait_per_op", [EXPR_CPU_IRQ_PER_OP] = "cpu_irq_per_op",
	[EXPR_CPU_SOFTIRQ_PER_OP] = "cpu_softirq_per_op", [EXPR_CPU_STEAL_PER_OP] = "cpu_steal_per_op",
	[EXPR_SMIS] = "smis",
};

static bool is_time_stat(enum expr_stat s)
{
	return s != EXPR_ABOVE_PCT && s != EXPR_MISSED && s != EXPR_COUNT && s != EXPR_SPIKES &&
	       s != EXPR_SPIKES_PER_HOUR && s != EXPR_OPS_PER_SEC && s != EXPR_BYTES_PER_SEC && s != EXPR_SMIS;
}

static void test_a_read_rate_is_a_number_and_a_cpu_time_per_read_a_duration(void **state)
{
	(void)state;
	struct expr e;
	struct lat_error err;
	expect_expr("ops_per_sec<1000", EXPR_OPS_PER_SEC, EXPR_LT, EXPR_ABSOLUTE, 1000.0);
	expect_expr("bytes_per_sec<-10%", EXPR_BYTES_PER_SEC, EXPR_LT, EXPR_RELATIVE, -10.0);
	expect_expr("cpu_system_per_op>20us", EXPR_CPU_SYSTEM_PER_OP, EXPR_GT, EXPR_ABSOLUTE, 20000.0);
	expect_expr("cpu_steal_per_op>+5%", EXPR_CPU_STEAL_PER_OP, EXPR_GT, EXPR_RELATIVE, 5.0);
	assert_int_equal(expr_parse("ops_per_sec<fast", &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "ops_per_sec"));
}

static void test_a_spike_rate_is_any_number_of_zero_or_more_and_mtbf_a_duration(void **state)
{
	(void)state;
	struct expr e;
	struct lat_error err;
	expect_expr("spikes_per_hour>1.5", EXPR_SPIKES_PER_HOUR, EXPR_GT, EXPR_ABSOLUTE, 1.5);
	expect_expr("spikes_per_hour<=250", EXPR_SPIKES_PER_HOUR, EXPR_LE, EXPR_ABSOLUTE, 250.0);
	expect_expr("mtbf<10m", EXPR_MTBF, EXPR_LT, EXPR_ABSOLUTE, 600e9);
	assert_int_equal(expr_parse("spikes_per_hour>-1", &e, &err), -EINVAL);   /* a change needs a %: -1 is no rate */
	assert_int_equal(expr_parse("spikes_per_hour>fast", &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "spikes_per_hour"));
	assert_int_equal(expr_parse("spikes>1.5", &e, &err), -EINVAL);
}

static void test_smis_is_a_whole_count(void **state)
{
	(void)state;
	struct expr e;
	struct lat_error err;
	expect_expr("smis>0", EXPR_SMIS, EXPR_GT, EXPR_ABSOLUTE, 0.0);
	assert_int_equal(expr_parse("smis>1.5", &e, &err), -EINVAL);
	assert_int_equal(expr_parse("smis>1us", &e, &err), -EINVAL);
}

/* ---- parsing ---- */

static void test_expr_stat_name_gives_every_statistic_its_documented_name(void **state)
{
	(void)state;
	for (size_t s = 0; s < ARRAY_SIZE(stat_names); s++)
		assert_string_equal(expr_stat_name((enum expr_stat)s), stat_names[s]);
	assert_string_equal(expr_stat_name((enum expr_stat)ARRAY_SIZE(stat_names)), "?");
}

static void test_expr_parse_reads_every_statistic_name(void **state)
{
	(void)state;
	for (size_t s = 0; s < ARRAY_SIZE(stat_names); s++) {
		char text[64];
		snprintf(text, sizeof(text), "%s>+10%%", stat_names[s]);
		expect_expr(text, (enum expr_stat)s, EXPR_GT, EXPR_RELATIVE, 10.0);
		snprintf(text, sizeof(text), "%s<=%s", stat_names[s],
			 is_time_stat((enum expr_stat)s) ? "3us" : "3");
		expect_expr(text, (enum expr_stat)s, EXPR_LE, EXPR_ABSOLUTE, is_time_stat((enum expr_stat)s) ? 3000.0 : 3.0);
	}
}

static void test_expr_parse_tells_p99_from_p99_9_and_p99_99(void **state)
{
	(void)state;
	expect_expr("p99>1us", EXPR_P99, EXPR_GT, EXPR_ABSOLUTE, 1000.0);
	expect_expr("p99.9>1us", EXPR_P999, EXPR_GT, EXPR_ABSOLUTE, 1000.0);
	expect_expr("p99.99>1us", EXPR_P9999, EXPR_GT, EXPR_ABSOLUTE, 1000.0);
	expect_error("p99.999>1us", "unknown statistic 'p99.999'");
}

static void test_expr_parse_reads_every_operator(void **state)
{
	(void)state;
	expect_expr("max>200us", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 200000.0);
	expect_expr("max>=200us", EXPR_MAX, EXPR_GE, EXPR_ABSOLUTE, 200000.0);
	expect_expr("max<200us", EXPR_MAX, EXPR_LT, EXPR_ABSOLUTE, 200000.0);
	expect_expr("max<=200us", EXPR_MAX, EXPR_LE, EXPR_ABSOLUTE, 200000.0);
}

static void test_expr_parse_allows_spaces_around_the_parts(void **state)
{
	(void)state;
	expect_expr(" p99 > +10% ", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 10.0);
	expect_expr("p99 >= 5us", EXPR_P99, EXPR_GE, EXPR_ABSOLUTE, 5000.0);
	expect_expr("\tmean<\t-5%\t", EXPR_MEAN, EXPR_LT, EXPR_RELATIVE, -5.0);
	expect_expr("missed    >0", EXPR_MISSED, EXPR_GT, EXPR_ABSOLUTE, 0.0);
	expect_expr("above_pct<=   1.5", EXPR_ABOVE_PCT, EXPR_LE, EXPR_ABSOLUTE, 1.5);
}

static void test_expr_parse_reads_the_examples_of_the_header(void **state)
{
	(void)state;
	expect_expr("p99>+10%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 10.0);
	expect_expr("max>200us", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 200000.0);
	expect_expr("mean>=+5%", EXPR_MEAN, EXPR_GE, EXPR_RELATIVE, 5.0);
	expect_expr("missed>0", EXPR_MISSED, EXPR_GT, EXPR_ABSOLUTE, 0.0);
	expect_expr("above_pct>1.5", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 1.5);
	expect_expr("p99.9<-20%", EXPR_P999, EXPR_LT, EXPR_RELATIVE, -20.0);
}

static void test_expr_parse_reads_time_values_in_every_unit(void **state)
{
	(void)state;
	expect_expr("max>7ns", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 7.0);
	expect_expr("max>250us", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 250.0 * 1e3);
	expect_expr("max>1.5ms", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 1.5e6);
	expect_expr("max>2s", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 2e9);
	expect_expr("max>0ns", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 0.0);
	expect_expr("warm_max>0.001ms", EXPR_WARM_MAX, EXPR_GT, EXPR_ABSOLUTE, 1000.0);
}

/* One rule for bare numbers: a latency without a unit is microseconds, as --fail-above 50 is. */
static void test_expr_parse_reads_a_bare_time_as_microseconds(void **state)
{
	(void)state;
	expect_expr("max>200", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 200e3);
	expect_expr("p99>=1.5", EXPR_P99, EXPR_GE, EXPR_ABSOLUTE, 1500.0);
	expect_expr("mean<0.001", EXPR_MEAN, EXPR_LT, EXPR_ABSOLUTE, 1.0);
	/* what is not a time keeps its own unit */
	expect_expr("missed>200", EXPR_MISSED, EXPR_GT, EXPR_ABSOLUTE, 200.0);
	expect_expr("above_pct>2", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 2.0);
}

static void test_expr_parse_reads_a_raw_relative_change_and_writes_it_back(void **state)
{
	(void)state;
	struct expr e;
	struct lat_error err;
	char text[64];
	assert_int_equal(expr_parse("p99>+10%!", &e, &err), 0);
	assert_true(e.raw);
	assert_int_equal(e.kind, EXPR_RELATIVE);
	expr_format(&e, text, sizeof(text));
	assert_string_equal(text, "p99 > +10%!");
	assert_int_equal(expr_parse("p99>+10%", &e, &err), 0);
	assert_false(e.raw);
	assert_int_equal(expr_parse("max>200us!", &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'!' asks for a relative change compared raw"));
	assert_int_equal(expr_parse("p99>!", &e, &err), -EINVAL);
	assert_true(expr_stat_judged(EXPR_P99) && expr_stat_judged(EXPR_MEAN) && expr_stat_judged(EXPR_P9999));
	assert_false(expr_stat_judged(EXPR_MAX) || expr_stat_judged(EXPR_MISSED) || expr_stat_judged(EXPR_MIN));
}

static void test_expr_parse_reads_relative_changes_with_their_sign(void **state)
{
	(void)state;
	expect_expr("p99>+10%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 10.0);
	expect_expr("p99<-10%", EXPR_P99, EXPR_LT, EXPR_RELATIVE, -10.0);
	expect_expr("p99>+0.5%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 0.5);
	expect_expr("p99>+0%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 0.0);
	expect_expr("p99<-100%", EXPR_P99, EXPR_LT, EXPR_RELATIVE, -100.0);
	expect_expr("p99>+250%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 250.0);
	expect_expr("count<-1.25%", EXPR_COUNT, EXPR_LT, EXPR_RELATIVE, -1.25);
	expect_expr("missed>+100%", EXPR_MISSED, EXPR_GT, EXPR_RELATIVE, 100.0);
}

static void test_expr_parse_reads_above_pct_with_or_without_a_percent_sign(void **state)
{
	(void)state;
	expect_expr("above_pct>1.5", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 1.5);
	expect_expr("above_pct>1.5%", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 1.5);
	expect_expr("above_pct>0", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 0.0);
	expect_expr("above_pct<100", EXPR_ABOVE_PCT, EXPR_LT, EXPR_ABSOLUTE, 100.0);
	expect_expr("above_pct>+1.5%", EXPR_ABOVE_PCT, EXPR_GT, EXPR_RELATIVE, 1.5);
}

static void test_expr_parse_reads_numbers_exactly_like_a_decimal_literal(void **state)
{
	(void)state;
	/* What the compiler makes of the literal, whatever the locale. */
	expect_expr("above_pct>0.1", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 0.1);
	expect_expr("above_pct>1.1", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 1.1);
	expect_expr("above_pct>99.99", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 99.99);
	expect_expr("above_pct>0.000001", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 0.000001);
	expect_expr("above_pct>007.50", EXPR_ABOVE_PCT, EXPR_GT, EXPR_ABSOLUTE, 7.5);
	expect_expr("p99>+123456789012345%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 123456789012345.0);
	expect_expr("p99>+12345678.1234567%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 12345678.1234567);
	expect_expr("p99>+1.000000000000000000000000000%", EXPR_P99, EXPR_GT, EXPR_RELATIVE, 1.0);
}

static void test_expr_parse_reads_counts_up_to_two_to_the_53(void **state)
{
	(void)state;
	expect_expr("count>1000000", EXPR_COUNT, EXPR_GT, EXPR_ABSOLUTE, 1e6);
	expect_expr("missed>=9007199254740992", EXPR_MISSED, EXPR_GE, EXPR_ABSOLUTE, 9007199254740992.0);
	expect_error("missed>=9007199254740993", "'9007199254740993' is too large for missed");
	expect_error("count>99999999999999999999999999999999999999", "is too large for count");
	expect_expr("max>9007199254740992ns", EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 9007199254740992.0);
	expect_error("max>9007199254740993ns", "'9007199254740993ns' is too large for max");
	expect_error("max>99999999999999999999h", "is too large for max");
}

static void test_expr_parse_names_what_is_wrong(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "empty expression" },
		{ "   ", "empty expression" },
		{ "p99", "missing operator" },
		{ "p99 5us", "missing operator (>, >=, < or <=) after 'p99'" },
		{ "p99>", "missing value after 'p99 >'" },
		{ "p99 <=  ", "missing value after 'p99 <='" },
		{ ">5us", "missing statistic before '>'" },
		{ "#p99>5us", "'#p99>5us' is not a statistic" },
		{ "p98>5us", "unknown statistic 'p98'" },
		{ "P99>5us", "unknown statistic 'P99'" },
		{ "p99>>5us", "bad operator '>>'" },
		{ "p99=5us", "bad operator '='" },
		{ "p99==5us", "bad operator '=='" },
		{ "p99!=5us", "bad operator '!='" },
		{ "p99=>5us", "bad operator '=>'" },
		{ "p99> =5us", "bad operator '> ='" },
		{ "p99<>5us", "bad operator '<>'" },
		{ "p99>1.0005", "'1.0005' is not a duration for p99" },     /* a bare number is us: 0.5 ns */
		{ "p99>5xs", "'5xs' is not a duration for p99" },
		{ "p99>5 us", "'5 us' has a space inside" },
		{ "p99>0.5ns", "'0.5ns' is not a duration for p99" },
		{ "p99>1e3us", "'1e3us' is not a duration" },
		{ "p99>nan", "'nan' is not a duration" },
		{ "p99>inf", "'inf' is not a duration" },
		{ "p99>-5us", "'-5us' needs a '%'" },
		{ "p99>+10", "'+10' needs a '%'" },
		{ "p99>10%", "'10%' needs a sign for a relative change (+10% or -10%)" },
		{ "p99>+10%%", "'+10%%' is not a relative change" },
		{ "p99>+%", "'+%' is not a relative change" },
		{ "p99>+-10%", "'+-10%' is not a relative change" },
		{ "p99>++10%", "'++10%' is not a relative change" },
		{ "p99>+nan%", "'+nan%' is not a relative change" },
		{ "p99>+inf%", "'+inf%' is not a relative change" },
		{ "p99>+1e3%", "'+1e3%' is not a relative change" },
		{ "p99>+.5%", "'+.5%' is not a relative change" },
		{ "p99>+5.%", "'+5.%' is not a relative change" },
		{ "p99>+1,5%", "'+1,5%' is not a relative change" },
		{ "p99>+0x10%", "'+0x10%' is not a relative change" },
		{ "p99>-101%", "'-101%' cannot happen" },
		{ "p99>+1234567890123456%", "'+1234567890123456%' has too many digits" },
		{ "p99>+0.1234567890123456%", "has too many digits" },
		{ "p99>+99999999999999999999999999999999999999999999%", "has too many digits" },
		{ "count>1.5", "'1.5' is not a whole number for count" },
		{ "count>abc", "'abc' is not a whole number for count" },
		{ "missed>-1", "'-1' needs a '%'" },
		{ "missed>1us", "'1us' is not a whole number for missed" },
		{ "above_pct>101", "'101' is not a percentage from 0 to 100 for above_pct" },
		{ "above_pct>1.5us", "'1.5us' is not a percentage" },
		{ "above_pct>nan", "'nan' is not a percentage" },
		{ "above_pct>1.5%%", "'1.5%%' is not a percentage" },
		{ "above_pct>0.1234567890123456", "has too many digits (15 significant, 22 decimals at most)" },
		{ "above_pct>0.00000000000000000000001", "has too many digits" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_error(cases[i].text, cases[i].msg);
}

static void test_expr_parse_rejects_null_text(void **state)
{
	(void)state;
	expect_error(NULL, "no expression");
}

static void test_expr_parse_quotes_at_most_a_short_part_of_long_input(void **state)
{
	(void)state;
	struct lat_error err;
	char text[4096];
	struct expr e;
	memset(text, 'q', sizeof(text));
	memcpy(text, "p99>", 4);
	text[sizeof(text) - 1u] = '\0';
	assert_int_equal(expr_parse(text, &e, &err), -EINVAL);
	assert_true(strlen(err.msg) < 100);
	memset(text, 'q', sizeof(text));
	text[sizeof(text) - 1u] = '\0';
	assert_int_equal(expr_parse(text, &e, &err), -EINVAL);
	assert_true(strlen(err.msg) < 100);
}

static void test_expr_parse_overwrites_the_whole_reason_and_takes_no_error_struct(void **state)
{
	(void)state;
	struct lat_error err;
	struct expr e;
	memset(err.msg, 'X', sizeof(err.msg));
	assert_int_equal(expr_parse("p98>5us", &e, &err), -EINVAL);
	assert_string_equal(err.msg, "unknown statistic 'p98'");
	assert_int_equal(expr_parse("p98>5us", &e, NULL), -EINVAL);
}

/* ---- expr_fails ---- */

static void test_expr_fails_compares_an_absolute_value_with_each_operator(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool below, equal, above;
	} cases[] = {
		{ "max>200us", false, false, true },
		{ "max>=200us", false, true, true },
		{ "max<200us", true, false, false },
		{ "max<=200us", true, true, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* base plays no part in an absolute expression */
		expect_fails(cases[i].text, 199999.0, 1e12, cases[i].below);
		expect_fails(cases[i].text, 200000.0, 0.0, cases[i].equal);
		expect_fails(cases[i].text, 200001.0, 200001.0, cases[i].above);
	}
	expect_fails("missed>0", 0.0, 0.0, false);
	expect_fails("missed>0", 1.0, 0.0, true);
	expect_fails("above_pct>1.5", 1.5, 0.0, false);
	expect_fails("above_pct>1.5", 1.6, 0.0, true);
}

static void test_expr_fails_compares_the_percent_change_with_each_operator(void **state)
{
	(void)state;
	/* base 100: value v is a change of v - 100 percent */
	static const struct {
		const char *text;
		bool at_minus_20, at_minus_5, at_0, at_plus_10, at_plus_15;
	} cases[] = {
		{ "p99>+10%", false, false, false, false, true },
		{ "p99>=+10%", false, false, false, true, true },
		{ "p99<+10%", true, true, true, false, false },
		{ "p99<=+10%", true, true, true, true, false },
		{ "mean<-5%", true, false, false, false, false },
		{ "mean<=-5%", true, true, false, false, false },
		{ "mean>-5%", false, false, true, true, true },
		{ "mean>=-5%", false, true, true, true, true },
		{ "max>+0%", false, false, false, true, true },
		{ "max>=+0%", false, false, true, true, true },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		expect_fails(cases[i].text, 80.0, 100.0, cases[i].at_minus_20);
		expect_fails(cases[i].text, 95.0, 100.0, cases[i].at_minus_5);
		expect_fails(cases[i].text, 100.0, 100.0, cases[i].at_0);
		expect_fails(cases[i].text, 110.0, 100.0, cases[i].at_plus_10);
		expect_fails(cases[i].text, 115.0, 100.0, cases[i].at_plus_15);
	}
}

static void test_expr_fails_measures_the_change_against_the_baseline(void **state)
{
	(void)state;
	/* +10 % of 20us is 2us: the same step is a small change on a large base */
	expect_fails("p99>+10%", 22001.0, 20000.0, true);
	expect_fails("p99>+10%", 21999.0, 20000.0, false);
	expect_fails("p99>+10%", 2000001.0, 2000000.0, false);
	expect_fails("p99>+100%", 41000.0, 20000.0, true);
	expect_fails("p99<-100%", 0.0, 20000.0, false);
	expect_fails("p99<=-100%", 0.0, 20000.0, true);
	expect_fails("above_pct>+50%", 3.0, 1.5, true);
}

static void test_expr_fails_from_a_zero_baseline_on_a_move_in_the_operators_direction(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool stays_0, rises;
	} cases[] = {
		{ "missed>+10%", false, true },         /* any rise from 0 is above +10 % */
		{ "missed>=+10%", false, true },
		{ "missed>+0%", false, true },
		{ "missed>=+0%", true, true },          /* no change is a change >= 0 */
		{ "missed<+10%", true, false },
		{ "missed<=+10%", true, false },
		{ "missed<-5%", false, false },         /* nothing to fall from */
		{ "missed<=-5%", false, false },
		{ "missed>-5%", true, true },
		{ "missed>=-5%", true, true },
		{ "missed<=+0%", true, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		expect_fails(cases[i].text, 0.0, 0.0, cases[i].stays_0);
		expect_fails(cases[i].text, 3.0, 0.0, cases[i].rises);
		expect_fails(cases[i].text, 1e-300, 0.0, cases[i].rises);
	}
}

static void test_expr_fails_never_on_nan(void **state)
{
	(void)state;
	static const char *const texts[] = { "max>200us", "max<200us", "p99>+10%", "p99<-10%", "p99>=+0%", "p99<=+0%" };
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		expect_fails(texts[i], nan(""), 100.0, false);
		expect_fails(texts[i], nan(""), 0.0, false);
	}
	for (size_t i = 2; i < ARRAY_SIZE(texts); i++)
		expect_fails(texts[i], 100.0, nan(""), false);
}

/* ---- expr_format ---- */

static void test_expr_format_writes_readable_text(void **state)
{
	(void)state;
	expect_format("p99>+10%", "p99 > +10%");
	expect_format("p99.9<-20%", "p99.9 < -20%");
	expect_format("mean>=+0.5%", "mean >= +0.5%");
	expect_format("max>200us", "max > 200us");
	expect_format("max>200000ns", "max > 200us");
	expect_format("max<=1500us", "max <= 1.5ms");
	expect_format("max<=1234567ns", "max <= 1.234567ms");
	expect_format("max<=7ns", "max <= 7ns");
	expect_format("max<=0ns", "max <= 0ns");
	expect_format("max<=999ns", "max <= 999ns");
	expect_format("max<=1001ns", "max <= 1.001us");
	expect_format("warm_max>2.000000001s", "warm_max > 2.000000001s");
	expect_format("p50>1m", "p50 > 60s");
	expect_format("missed>0", "missed > 0");
	expect_format("count>=1000000", "count >= 1000000");
	expect_format("above_pct>1.5%", "above_pct > 1.5");
	expect_format("above_pct>0.000001", "above_pct > 0.000001");
	expect_format("above_pct>100", "above_pct > 100");
	expect_format("p99>+00010.100%", "p99 > +10.1%");
}

static void test_expr_format_truncates_to_the_buffer(void **state)
{
	(void)state;
	struct expr e = parse_ok("p99>+10%");
	char buf[6];
	memset(buf, 'X', sizeof(buf));
	expr_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "p99 >");
	expr_format(&e, buf, 0);        /* nothing written, nothing read */
	assert_string_equal(buf, "p99 >");
}

static void test_expr_format_is_read_back_unchanged_by_expr_parse(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"p99>+10%", "p99.9<-20%", "mean>=+0.5%", "max>200us", "min<=1ns", "stddev<1.000001ms",
		"p90>4h", "missed>0", "count>=9007199254740992", "above_pct>1.5", "above_pct<=0.0000000000000000000001",
		"warm_max>+123456789012345%", "p50<-0.000000000000000000001%", "p99.99>=-0%", "count<-99.9999999999999%",
		"above_pct>99.9999999999999", "max>9007199254740992ns", "p99>+0.1%", "p99>+0.3%", "p99>+2.675%",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct expr e = parse_ok(texts[i]);
		expect_round_trip(&e);
	}
}

/* A struct built by hand may hold what expr_parse never gives: written somehow, never overrun. */
static void test_expr_format_writes_values_expr_parse_never_gives_without_overrunning(void **state)
{
	(void)state;
	static const struct expr cases[] = {
		{ EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 1e300 },
		{ EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, -5.0 },
		{ EXPR_MAX, EXPR_GT, EXPR_ABSOLUTE, 0.5 },
		{ EXPR_COUNT, EXPR_LT, EXPR_ABSOLUTE, 1e300 },
		{ EXPR_ABOVE_PCT, EXPR_LT, EXPR_ABSOLUTE, 1.0 / 3.0 },
		{ EXPR_P99, EXPR_LT, EXPR_RELATIVE, -1e300 },
		{ (enum expr_stat)99, (enum expr_op)99, EXPR_ABSOLUTE, 1.0 },
	};
	char buf[64];
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		buf[sizeof(buf) - 1u] = 'X';
		expr_format(&cases[i], buf, sizeof(buf) - 1u);
		assert_true(strlen(buf) < sizeof(buf) - 1u);
		assert_int_equal(buf[sizeof(buf) - 1u], 'X');
	}
	struct expr e = cases[0];
	e.value = nan("");
	expr_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "max > nanns");
}

/* Random text of the forms expr_parse takes: what it reads, expr_format must give back. */
static void test_expr_format_round_trips_random_expressions(void **state)
{
	(void)state;
	static const char *const ops[] = { ">", ">=", "<", "<=" };
	static const char *const units[] = { "ns", "us", "ms", "s" };
	rng_seed(42);
	for (int i = 0; i < 20000; i++) {
		enum expr_stat s = (enum expr_stat)rng_below(ARRAY_SIZE(stat_names));
		char num[40], text[96];
		/* 1 to 15 significant digits, a point somewhere or none */
		unsigned ndig = (unsigned)rng_below(15) + 1u, point = (unsigned)rng_below(ndig + 6u);
		size_t k = 0;
		for (unsigned d = 0; d < ndig; d++) {
			if (d == point && d > 0)
				num[k++] = '.';
			num[k++] = (char)('0' + (d == 0 ? 1 + rng_below(9) : rng_below(10)));
		}
		num[k] = '\0';
		bool relative = rng_below(2) == 0;
		const char *op = ops[rng_below(4)];
		if (relative)
			snprintf(text, sizeof(text), "%s%s%s%s%%", stat_names[s], op, rng_below(2) ? "+" : "-", num);
		else if (is_time_stat(s))
			snprintf(text, sizeof(text), "%s%s%s%s", stat_names[s], op, num, units[rng_below(4)]);
		else
			snprintf(text, sizeof(text), "%s%s%s", stat_names[s], op, num);
		struct expr e = SENTINEL;
		struct lat_error err;
		if (expr_parse(text, &e, &err) == 0)    /* out of range ones are rejected: fine */
			expect_round_trip(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_stat_name_gives_every_statistic_its_documented_name),
		cmocka_unit_test(test_expr_parse_reads_every_statistic_name),
		cmocka_unit_test(test_a_spike_rate_is_any_number_of_zero_or_more_and_mtbf_a_duration),
		cmocka_unit_test(test_smis_is_a_whole_count),
		cmocka_unit_test(test_a_read_rate_is_a_number_and_a_cpu_time_per_read_a_duration),
		cmocka_unit_test(test_expr_parse_tells_p99_from_p99_9_and_p99_99),
		cmocka_unit_test(test_expr_parse_reads_every_operator),
		cmocka_unit_test(test_expr_parse_allows_spaces_around_the_parts),
		cmocka_unit_test(test_expr_parse_reads_the_examples_of_the_header),
		cmocka_unit_test(test_expr_parse_reads_time_values_in_every_unit),
		cmocka_unit_test(test_expr_parse_reads_a_bare_time_as_microseconds),
		cmocka_unit_test(test_expr_parse_reads_a_raw_relative_change_and_writes_it_back),
		cmocka_unit_test(test_expr_parse_reads_relative_changes_with_their_sign),
		cmocka_unit_test(test_expr_parse_reads_above_pct_with_or_without_a_percent_sign),
		cmocka_unit_test(test_expr_parse_reads_numbers_exactly_like_a_decimal_literal),
		cmocka_unit_test(test_expr_parse_reads_counts_up_to_two_to_the_53),
		cmocka_unit_test(test_expr_parse_names_what_is_wrong),
		cmocka_unit_test(test_expr_parse_rejects_null_text),
		cmocka_unit_test(test_expr_parse_quotes_at_most_a_short_part_of_long_input),
		cmocka_unit_test(test_expr_parse_overwrites_the_whole_reason_and_takes_no_error_struct),
		cmocka_unit_test(test_expr_fails_compares_an_absolute_value_with_each_operator),
		cmocka_unit_test(test_expr_fails_compares_the_percent_change_with_each_operator),
		cmocka_unit_test(test_expr_fails_measures_the_change_against_the_baseline),
		cmocka_unit_test(test_expr_fails_from_a_zero_baseline_on_a_move_in_the_operators_direction),
		cmocka_unit_test(test_expr_fails_never_on_nan),
		cmocka_unit_test(test_expr_format_writes_readable_text),
		cmocka_unit_test(test_expr_format_truncates_to_the_buffer),
		cmocka_unit_test(test_expr_format_is_read_back_unchanged_by_expr_parse),
		cmocka_unit_test(test_expr_format_writes_values_expr_parse_never_gives_without_overrunning),
		cmocka_unit_test(test_expr_format_round_trips_random_expressions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
