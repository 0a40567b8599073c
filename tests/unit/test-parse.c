/*
 * Unit tests for the strict command-line value parsers (src/core/parse.c).
 *
 * Every failing case also checks that the output parameter is untouched.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"

#define SENTINEL_U64 UINT64_C(0xdeadbeefcafef00d)
#define SENTINEL_I64 INT64_C(-0x21524110353010ff)


#define NS_PER_MIN (60u * NS_PER_SEC)
#define NS_PER_HOUR (3600u * NS_PER_SEC)

/* ---- helpers that name the input on failure ---- */

static void expect_duration(const char *text, uint64_t unit, uint64_t want)
{
	uint64_t got = SENTINEL_U64;
	int r = parse_duration(text, unit, &got);
	if (r != 0 || got != want) {
		print_error("parse_duration(\"%s\", %" PRIu64 "): r=%d got %" PRIu64 ", want 0 and %" PRIu64 "\n",
			    text, unit, r, got, want);
		fail();
	}
}

static void expect_duration_error(const char *text, uint64_t unit, int want_r)
{
	uint64_t got = SENTINEL_U64;
	int r = parse_duration(text, unit, &got);
	if (r != want_r || got != SENTINEL_U64) {
		print_error("parse_duration(\"%s\", %" PRIu64 "): r=%d (want %d), ret %s\n",
			    text ? text : "(null)", unit, r, want_r,
			    got == SENTINEL_U64 ? "untouched" : "CHANGED");
		fail();
	}
}

static void expect_u64(const char *text, uint64_t want)
{
	uint64_t got = SENTINEL_U64;
	int r = parse_u64(text, &got);
	if (r != 0 || got != want) {
		print_error("parse_u64(\"%s\"): r=%d got %" PRIu64 ", want %" PRIu64 "\n", text, r, got, want);
		fail();
	}
}

static void expect_u64_error(const char *text, int want_r)
{
	uint64_t got = SENTINEL_U64;
	int r = parse_u64(text, &got);
	if (r != want_r || got != SENTINEL_U64) {
		print_error("parse_u64(\"%s\"): r=%d (want %d), ret %s\n", text ? text : "(null)", r, want_r,
			    got == SENTINEL_U64 ? "untouched" : "CHANGED");
		fail();
	}
}

static void expect_i64(const char *text, int64_t want)
{
	int64_t got = SENTINEL_I64;
	int r = parse_i64(text, &got);
	if (r != 0 || got != want) {
		print_error("parse_i64(\"%s\"): r=%d got %" PRId64 ", want %" PRId64 "\n", text, r, got, want);
		fail();
	}
}

static void expect_i64_error(const char *text, int want_r)
{
	int64_t got = SENTINEL_I64;
	int r = parse_i64(text, &got);
	if (r != want_r || got != SENTINEL_I64) {
		print_error("parse_i64(\"%s\"): r=%d (want %d), ret %s\n", text ? text : "(null)", r, want_r,
			    got == SENTINEL_I64 ? "untouched" : "CHANGED");
		fail();
	}
}

static void expect_label(const char *text, const char *key, const char *value)
{
	struct label l;
	memset(&l, 'Z', sizeof(l));
	int r = parse_label(text, &l);
	if (r != 0) {
		print_error("parse_label(\"%s\"): r=%d, want 0\n", text, r);
		fail();
	}
	assert_string_equal(l.key, key);
	assert_string_equal(l.value, value);
}

static void expect_label_error(const char *text, int want_r)
{
	struct label l, untouched;
	memset(&l, 'Z', sizeof(l));
	memcpy(&untouched, &l, sizeof(l));
	int r = parse_label(text, &l);
	if (r != want_r) {
		print_error("parse_label(\"%s\"): r=%d, want %d\n", text ? text : "(null)", r, want_r);
		fail();
	}
	assert_memory_equal(&l, &untouched, sizeof(l));
}

/* ---- parse_duration ---- */

static void test_parse_duration_accepts_every_unit(void **state)
{
	(void)state;
	expect_duration("7ns", 1, 7);
	expect_duration("7us", 1, 7 * NS_PER_US);
	expect_duration("7ms", 1, 7 * NS_PER_MS);
	expect_duration("7s", 1, 7 * NS_PER_SEC);
	expect_duration("7m", 1, 7 * NS_PER_MIN);
	expect_duration("7h", 1, 7 * NS_PER_HOUR);
	expect_duration("250us", 1, 250000);
	expect_duration("10s", 1, 10000000000u);
	expect_duration("1h", 1, 3600000000000u);
	expect_duration("0ns", 1, 0);
	expect_duration("0h", 1, 0);
	expect_duration("007ms", 1, 7000000);
}

static void test_parse_duration_explicit_unit_overrides_the_default_unit(void **state)
{
	(void)state;
	expect_duration("5ns", NS_PER_SEC, 5);
	expect_duration("5us", NS_PER_MS, 5000);
	expect_duration("5s", NS_PER_US, 5 * NS_PER_SEC);
	expect_duration("5h", 1, 5 * NS_PER_HOUR);
}

static void test_parse_duration_reads_a_bare_number_in_the_default_unit(void **state)
{
	(void)state;
	expect_duration("10", 1, 10);
	expect_duration("10", NS_PER_US, 10000);
	expect_duration("10", NS_PER_MS, 10000000);
	expect_duration("10", NS_PER_SEC, 10000000000u);
	expect_duration("10", NS_PER_MIN, 600000000000u);
	expect_duration("0", NS_PER_SEC, 0);
	expect_duration("1", 1, 1);
}

static void test_parse_duration_accepts_fractions_that_are_whole_nanoseconds(void **state)
{
	(void)state;
	expect_duration("1.5ms", 1, 1500000);
	expect_duration("0.001s", 1, 1000000);
	expect_duration("1.25us", 1, 1250);
	expect_duration("2.50ms", 1, 2500000);
	expect_duration("1.0ns", 1, 1);
	expect_duration("3.000ns", 1, 3);
	expect_duration("1.5h", 1, 5400 * NS_PER_SEC);
	expect_duration("0.1m", 1, 6 * NS_PER_SEC);
	expect_duration("0.000000001s", 1, 1);
	expect_duration("0.123456789s", 1, 123456789);
	expect_duration("0.0000001s", 1, 100);
	expect_duration("1.000000000000000000000000s", 1, NS_PER_SEC);   /* zeros past 18 digits */
	expect_duration("0.000000000000000000000000000h", 1, 0);
	expect_duration("0.000000001000000000000000s", 1, 1);
	/* A fraction with the default unit. */
	expect_duration("1.5", NS_PER_US, 1500);
	expect_duration("0.25", NS_PER_SEC, 250000000);
	expect_duration("2.000", 1, 2);
}

static void test_parse_duration_rejects_fractions_of_a_nanosecond(void **state)
{
	(void)state;
	expect_duration_error("2.5ns", 1, -EINVAL);
	expect_duration_error("0.5ns", 1, -EINVAL);
	expect_duration_error("0.5", 1, -EINVAL);
	expect_duration_error("1.0001us", 1, -EINVAL);
	expect_duration_error("0.0000000001s", 1, -EINVAL);
	expect_duration_error("0.1234567891s", 1, -EINVAL);
	expect_duration_error("1.0000000000000000001h", 1, -EINVAL);    /* 19th digit */
	expect_duration_error("0.0000000000000000000000001s", 1, -EINVAL);
	expect_duration_error("1.00000000000001m", 1, -EINVAL);
}

static void test_parse_duration_accepts_the_largest_values_that_fit(void **state)
{
	(void)state;
	expect_duration("18446744073709551615", 1, UINT64_MAX);
	expect_duration("18446744073709551615ns", 1, UINT64_MAX);
	expect_duration("18446744073.709551615s", 1, UINT64_MAX);
	expect_duration("18446744073709551.615", NS_PER_US, UINT64_MAX);
	expect_duration("5124095h", 1, UINT64_C(5124095) * NS_PER_HOUR);
	expect_duration("307445734m", 1, UINT64_C(307445734) * NS_PER_MIN);
	expect_duration("18446744073s", 1, UINT64_C(18446744073) * NS_PER_SEC);
}

static void test_parse_duration_returns_erange_on_overflow(void **state)
{
	(void)state;
	expect_duration_error("18446744073709551616", 1, -ERANGE);
	expect_duration_error("18446744073709551616ns", 1, -ERANGE);
	expect_duration_error("99999999999999999999999999", 1, -ERANGE);
	expect_duration_error("99999999999h", 1, -ERANGE);
	expect_duration_error("5124096h", 1, -ERANGE);
	expect_duration_error("307445735m", 1, -ERANGE);
	expect_duration_error("18446744074s", 1, -ERANGE);
	expect_duration_error("18446744073.709551616s", 1, -ERANGE);   /* overflow in the fraction */
	expect_duration_error("18446744073709552", NS_PER_MS, -ERANGE);
	expect_duration_error("18446744073709551616", NS_PER_SEC, -ERANGE);
}

static void test_parse_duration_rejects_junk_suffix(void **state)
{
	(void)state;
	static const char *const junk[] = {
		"10x", "123abc", "10us5", "1e3", "10 ", "10\n", "10usec", "10sec", "10mss",
		"10msx", "10n", "10u", "10hs", "10ns ", "1.5.5ms", "1..5", "1_000", "0x10",
		"10s5ms", "10 s", "10\tms",
	};
	for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
		expect_duration_error(junk[i], 1, -EINVAL);
		expect_duration_error(junk[i], NS_PER_US, -EINVAL);
	}
}

static void test_parse_duration_rejects_malformed_numbers(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "abc", "1.", ".5", " 10", "+5", "-5", "ms", "s", ".", "-", "-0", "1.ms", ".5ms",
		"--5", "\t10", "1.s",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		expect_duration_error(bad[i], 1, -EINVAL);
		expect_duration_error(bad[i], NS_PER_SEC, -EINVAL);
	}
	expect_duration_error(NULL, 1, -EINVAL);
}

static void test_parse_duration_reports_junk_before_overflow(void **state)
{
	(void)state;
	/* Not of the form at all: the size of the digits does not matter. */
	expect_duration_error("99999999999999999999999x", 1, -EINVAL);
	expect_duration_error("99999999999999999999999 ", 1, -EINVAL);
	expect_duration_error("99999999999999999999999.", 1, -EINVAL);
	expect_duration_error("99999999999999999999999furlongs", 1, -EINVAL);
}

/* ---- parse_u64 ---- */

static void test_parse_u64_accepts_digits_up_to_uint64_max(void **state)
{
	(void)state;
	expect_u64("0", 0);
	expect_u64("1", 1);
	expect_u64("42", 42);
	expect_u64("007", 7);
	expect_u64("4294967296", UINT64_C(4294967296));
	expect_u64("9223372036854775808", UINT64_C(9223372036854775808));
	expect_u64("18446744073709551614", UINT64_MAX - 1u);
	expect_u64("18446744073709551615", UINT64_MAX);
	expect_u64("000000000000000000000018446744073709551615", UINT64_MAX);
}

static void test_parse_u64_returns_erange_one_past_uint64_max(void **state)
{
	(void)state;
	expect_u64_error("18446744073709551616", -ERANGE);
	expect_u64_error("18446744073709551620", -ERANGE);
	expect_u64_error("18446744073709551625", -ERANGE);
	expect_u64_error("99999999999999999999", -ERANGE);
	expect_u64_error("184467440737095516150", -ERANGE);
}

static void test_parse_u64_rejects_signs_spaces_and_junk(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "1a", "a1", "0x10", "1.0", "1e3", "-0", "1,000", "10us", "\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_u64_error(bad[i], -EINVAL);
	expect_u64_error(NULL, -EINVAL);
}

static void test_parse_u64_reports_junk_before_overflow(void **state)
{
	(void)state;
	expect_u64_error("99999999999999999999x", -EINVAL);
	expect_u64_error("18446744073709551616 ", -EINVAL);
}

/* ---- parse_i64 ---- */

static void test_parse_i64_accepts_the_whole_int64_range(void **state)
{
	(void)state;
	expect_i64("0", 0);
	expect_i64("-0", 0);
	expect_i64("1", 1);
	expect_i64("-1", -1);
	expect_i64("-42", -42);
	expect_i64("9223372036854775807", INT64_MAX);
	expect_i64("-9223372036854775807", -INT64_MAX);
	expect_i64("-9223372036854775808", INT64_MIN);
	expect_i64("9223372036854775806", INT64_MAX - 1);
	expect_i64("-9223372036854775806", INT64_MIN + 2);
}

static void test_parse_i64_returns_erange_one_past_either_end(void **state)
{
	(void)state;
	expect_i64_error("9223372036854775808", -ERANGE);
	expect_i64_error("-9223372036854775809", -ERANGE);
	expect_i64_error("18446744073709551615", -ERANGE);
	expect_i64_error("-18446744073709551615", -ERANGE);
	expect_i64_error("18446744073709551616", -ERANGE);
	expect_i64_error("-18446744073709551616", -ERANGE);
}

static void test_parse_i64_rejects_malformed_input(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "-", "--1", "+1", "- 1", " -1", "-1 ", "1-", "-a", "1.5", "0x1", "--", "-+1", "abc",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_i64_error(bad[i], -EINVAL);
	expect_i64_error(NULL, -EINVAL);
}

/* ---- parse_label ---- */

static void test_parse_label_accepts_key_value_pairs(void **state)
{
	(void)state;
	expect_label("config=guest", "config", "guest");
	expect_label("a.b-c_d=x=y", "a.b-c_d", "x=y");
	expect_label("K=v", "K", "v");
	expect_label("kernel=6.1.0-rt", "kernel", "6.1.0-rt");
	expect_label("note=two words", "note", "two words");
	expect_label("x9=1", "x9", "1");
	expect_label("a==", "a", "=");
	expect_label("host=h\xc3\xa9te", "host", "h\xc3\xa9te");     /* UTF-8 is not a control char */
	expect_label("t=~!@#$%^&*()", "t", "~!@#$%^&*()");
}

static void test_parse_size_reads_binary_units_with_or_without_ib(void **state)
{
	uint64_t v = 0;
	(void)state;
	static const struct {
		const char *text;
		uint64_t want;
	} good[] = {
		{ "512", 512 }, { "4k", 4096 }, { "4K", 4096 }, { "64KiB", 65536 }, { "64kB", 65536 },
		{ "1m", 1u << 20 }, { "1G", UINT64_C(1) << 30 }, { "2T", UINT64_C(2) << 40 }, { "0", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(parse_size(good[i].text, &v), 0);
		assert_int_equal(v, good[i].want);
	}
	static const char *const bad[] = { "", "k", "4x", "4kx", "4 k", "-4k", "4.5k", "4KB5", "1e3" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 77;
		assert_int_equal(parse_size(bad[i], &v), -EINVAL);
		assert_int_equal(v, 77);
	}
	assert_int_equal(parse_size("16777216T", &v), -ERANGE);
	assert_int_equal(parse_size("99999999999999999999", &v), -ERANGE);
}

static void test_parse_label_rejects_values_that_are_not_utf8(void **state)
{
	(void)state;
	expect_label("emoji=\xf0\x9f\x98\x80", "emoji", "\xf0\x9f\x98\x80");
	expect_label_error("a=\xff", -EINVAL);                 /* never valid */
	expect_label_error("a=h\xc3", -EINVAL);                /* cut short */
	expect_label_error("a=\xc0\xaf", -EINVAL);            /* overlong '/' */
	expect_label_error("a=\xed\xa0\x80", -EINVAL);        /* a surrogate */
	expect_label_error("a=\xf4\x90\x80\x80", -EINVAL);    /* above U+10FFFF */
	expect_label_error("a=\x80x", -EINVAL);                /* a stray continuation byte */
}

static void test_parse_label_rejects_missing_or_empty_parts(void **state)
{
	(void)state;
	expect_label_error("novalue", -EINVAL);
	expect_label_error("=x", -EINVAL);
	expect_label_error("=", -EINVAL);
	expect_label_error("a=", -EINVAL);
	expect_label_error("", -EINVAL);
	expect_label_error(NULL, -EINVAL);
}

static void test_parse_label_rejects_bad_keys(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"1a=x", "9=x", "_a=x", "-a=x", ".a=x", "a b=x", "a/b=x", "a:b=x", " a=x", "a =x",
		"a\t=x", "\xc3\xa9=x", "a+b=x",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_label_error(bad[i], -EINVAL);
}

static void test_parse_label_rejects_control_characters_in_value(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"a=x\ty", "a=x\ny", "a=\x7f", "a=x\x1b[31m", "a=\r", "a=x\x01",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_label_error(bad[i], -EINVAL);
}

static void test_parse_label_returns_e2big_for_too_long_parts(void **state)
{
	(void)state;
	char text[LABEL_KEY_MAX + LABEL_VALUE_MAX + 8];
	char key[LABEL_KEY_MAX + 2], value[LABEL_VALUE_MAX + 2];

	/* The longest key that fits: LABEL_KEY_MAX - 1 characters. */
	memset(key, 'k', LABEL_KEY_MAX - 1);
	key[LABEL_KEY_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "%s=v", key);
	expect_label(text, key, "v");

	/* One more is too long. */
	memset(key, 'k', LABEL_KEY_MAX);
	key[LABEL_KEY_MAX] = '\0';
	snprintf(text, sizeof(text), "%s=v", key);
	expect_label_error(text, -E2BIG);

	/* The longest value that fits: LABEL_VALUE_MAX - 1 characters. */
	memset(value, 'v', LABEL_VALUE_MAX - 1);
	value[LABEL_VALUE_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "k=%s", value);
	expect_label(text, "k", value);

	memset(value, 'v', LABEL_VALUE_MAX);
	value[LABEL_VALUE_MAX] = '\0';
	snprintf(text, sizeof(text), "k=%s", value);
	expect_label_error(text, -E2BIG);

	/* Both at their limits together. */
	memset(key, 'k', LABEL_KEY_MAX - 1);
	key[LABEL_KEY_MAX - 1] = '\0';
	memset(value, 'v', LABEL_VALUE_MAX - 1);
	value[LABEL_VALUE_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "%s=%s", key, value);
	expect_label(text, key, value);
}

static void test_labels_format_joins_pairs_and_cuts_to_fit(void **state)
{
	(void)state;
	struct labels ls = { .n = 2 };
	char buf[64], small[8];
	snprintf(ls.items[0].key, sizeof(ls.items[0].key), "config");
	snprintf(ls.items[0].value, sizeof(ls.items[0].value), "guest");
	snprintf(ls.items[1].key, sizeof(ls.items[1].key), "sched");
	snprintf(ls.items[1].value, sizeof(ls.items[1].value), "credit2");
	assert_int_equal(labels_format(&ls, buf, sizeof(buf)), strlen("config=guest sched=credit2"));
	assert_string_equal(buf, "config=guest sched=credit2");
	assert_int_equal(labels_format(&ls, small, sizeof(small)), 7);
	assert_string_equal(small, "config=");
	ls.n = 0;
	assert_int_equal(labels_format(&ls, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_duration_accepts_every_unit),
		cmocka_unit_test(test_parse_duration_explicit_unit_overrides_the_default_unit),
		cmocka_unit_test(test_parse_duration_reads_a_bare_number_in_the_default_unit),
		cmocka_unit_test(test_parse_duration_accepts_fractions_that_are_whole_nanoseconds),
		cmocka_unit_test(test_parse_duration_rejects_fractions_of_a_nanosecond),
		cmocka_unit_test(test_parse_duration_accepts_the_largest_values_that_fit),
		cmocka_unit_test(test_parse_duration_returns_erange_on_overflow),
		cmocka_unit_test(test_parse_duration_rejects_junk_suffix),
		cmocka_unit_test(test_parse_duration_rejects_malformed_numbers),
		cmocka_unit_test(test_parse_duration_reports_junk_before_overflow),
		cmocka_unit_test(test_parse_u64_accepts_digits_up_to_uint64_max),
		cmocka_unit_test(test_parse_u64_returns_erange_one_past_uint64_max),
		cmocka_unit_test(test_parse_u64_rejects_signs_spaces_and_junk),
		cmocka_unit_test(test_parse_u64_reports_junk_before_overflow),
		cmocka_unit_test(test_parse_i64_accepts_the_whole_int64_range),
		cmocka_unit_test(test_parse_i64_returns_erange_one_past_either_end),
		cmocka_unit_test(test_parse_i64_rejects_malformed_input),
		cmocka_unit_test(test_parse_label_accepts_key_value_pairs),
		cmocka_unit_test(test_parse_size_reads_binary_units_with_or_without_ib),
		cmocka_unit_test(test_parse_label_rejects_values_that_are_not_utf8),
		cmocka_unit_test(test_parse_label_rejects_missing_or_empty_parts),
		cmocka_unit_test(test_parse_label_rejects_bad_keys),
		cmocka_unit_test(test_parse_label_rejects_control_characters_in_value),
		cmocka_unit_test(test_parse_label_returns_e2big_for_too_long_parts),
		cmocka_unit_test(test_labels_format_joins_pairs_and_cuts_to_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
