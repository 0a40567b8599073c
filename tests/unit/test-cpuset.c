/*
 * Unit tests for CPU sets (src/core/cpuset.c): parsing "0-3,6" lists, formatting
 * them back, and the set operations.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/cpuset.h"


/* Big enough for any set: "0,2,4,...,4094" is under 20 KiB. */
#define FMT_MAX 24576u

#include "rng.h"

/* ---- helpers ---- */

/* A set from a plain list of members, for references that do not use cpuset_parse. */
static struct cpuset set_of(const unsigned *cpus, size_t n)
{
	struct cpuset s;
	cpuset_clear(&s);
	for (size_t i = 0; i < n; i++)
		cpuset_add(&s, cpus[i]);
	return s;
}

static void assert_set_equal(const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned c = 0; c < CPUSET_MAX; c++)
		if (cpuset_has(a, c) != cpuset_has(b, c)) {
			print_error("sets differ at cpu %u: %d vs %d\n", c, cpuset_has(a, c), cpuset_has(b, c));
			fail();
		}
	assert_memory_equal(a, b, sizeof(*a));
}

static void expect_parse(const char *text, const unsigned *cpus, size_t n)
{
	struct cpuset got, want = set_of(cpus, n);
	memset(&got, 0x5a, sizeof(got));
	int r = cpuset_parse(text, &got);
	if (r != 0) {
		print_error("cpuset_parse(\"%s\"): r=%d, want 0\n", text, r);
		fail();
	}
	assert_set_equal(&got, &want);
	assert_int_equal(cpuset_count(&got), cpuset_count(&want));
}

static void expect_parse_error(const char *text, int want_r)
{
	struct cpuset got, before;
	memset(&got, 0x5a, sizeof(got));
	memcpy(&before, &got, sizeof(got));
	int r = cpuset_parse(text, &got);
	if (r != want_r) {
		print_error("cpuset_parse(\"%s\"): r=%d, want %d\n", text ? text : "(null)", r, want_r);
		fail();
	}
	assert_memory_equal(&got, &before, sizeof(got));
}

static void expect_format(const struct cpuset *s, const char *want)
{
	char buf[FMT_MAX];
	memset(buf, 'X', sizeof(buf));
	size_t n = cpuset_format(s, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

/* A random set of one of several shapes. */
static struct cpuset random_set(void)
{
	struct cpuset s;
	cpuset_clear(&s);
	switch (rng_below(6)) {
	case 0:                                          /* empty */
		break;
	case 1:                                          /* a few anywhere */
		for (unsigned k = rng_below(8) + 1u; k > 0; k--)
			cpuset_add(&s, rng_below(CPUSET_MAX));
		break;
	case 2:                                          /* dense low CPUs */
		for (unsigned c = 0; c < 128; c++)
			if (rng_below(4))
				cpuset_add(&s, c);
		break;
	case 3:                                          /* runs of random length */
		for (unsigned k = rng_below(20); k > 0; k--) {
			unsigned lo = rng_below(CPUSET_MAX), len = rng_below(200);
			for (unsigned c = lo; c < CPUSET_MAX && c <= lo + len; c++)
				cpuset_add(&s, c);
		}
		break;
	case 4:                                          /* every bit a coin flip */
		for (unsigned w = 0; w < CPUSET_WORDS; w++)
			s.bits[w] = rng_next();
		break;
	default:                                         /* around word boundaries and the ends */
		for (unsigned w = 0; w < CPUSET_WORDS; w++) {
			if (rng_below(2))
				cpuset_add(&s, w * 64u + 63u);
			if (rng_below(2))
				cpuset_add(&s, w * 64u);
		}
		if (rng_below(2))
			cpuset_add(&s, CPUSET_MAX - 1u);
		break;
	}
	return s;
}

/* ---- parse ---- */

static void test_cpuset_parse_reads_a_single_cpu(void **state)
{
	(void)state;
	expect_parse("0", (const unsigned[]){ 0 }, 1);
	expect_parse("7", (const unsigned[]){ 7 }, 1);
	expect_parse("63", (const unsigned[]){ 63 }, 1);
	expect_parse("64", (const unsigned[]){ 64 }, 1);
	expect_parse("007", (const unsigned[]){ 7 }, 1);
}

static void test_cpuset_parse_reads_ranges_and_lists(void **state)
{
	(void)state;
	expect_parse("0-3,6", (const unsigned[]){ 0, 1, 2, 3, 6 }, 5);
	expect_parse("6,0-3", (const unsigned[]){ 0, 1, 2, 3, 6 }, 5);
	expect_parse("1,3,5", (const unsigned[]){ 1, 3, 5 }, 3);
	expect_parse("2-2", (const unsigned[]){ 2 }, 1);
	expect_parse("62-65", (const unsigned[]){ 62, 63, 64, 65 }, 4);
	expect_parse("0-1,1-2", (const unsigned[]){ 0, 1, 2 }, 3);
}

static void test_cpuset_parse_merges_duplicates(void **state)
{
	(void)state;
	expect_parse("1,1,1", (const unsigned[]){ 1 }, 1);
	expect_parse("0-3,2,0-1", (const unsigned[]){ 0, 1, 2, 3 }, 4);
}

static void test_cpuset_parse_accepts_big_cpu_numbers_up_to_cpuset_max_minus_one(void **state)
{
	(void)state;
	expect_parse("4095", (const unsigned[]){ 4095 }, 1);
	expect_parse("4094-4095", (const unsigned[]){ 4094, 4095 }, 2);
	expect_parse("1000,2047-2049,4095", (const unsigned[]){ 1000, 2047, 2048, 2049, 4095 }, 5);

	struct cpuset s;
	assert_int_equal(cpuset_parse("0-4095", &s), 0);
	assert_int_equal(cpuset_count(&s), CPUSET_MAX);
	for (unsigned w = 0; w < CPUSET_WORDS; w++)
		assert_int_equal(s.bits[w], UINT64_MAX);
}

static void test_cpuset_parse_rejects_malformed_lists(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "-1", "3-1", "1,,2", "1-", "a", "1 ,2", "1, 2", ",1", "1,", " 1", "1 ", "1-2-3",
		"1--2", "+1", "0x1", "1;2", "all", "-", ",", "1-a", "1\n", "4095-0", "1 2",
		"0 - 3", "1-\n", "1\t,2",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_parse_error(bad[i], -EINVAL);
	expect_parse_error(NULL, -EINVAL);
}

static void test_cpuset_parse_returns_erange_for_cpu_numbers_of_cpuset_max_or_more(void **state)
{
	(void)state;
	static const char *const big[] = {
		"4096", "0-4096", "1,4096", "4096-4097", "99999999999999999999999", "0,1,2,10000",
		"18446744073709551616",
	};
	for (size_t i = 0; i < ARRAY_SIZE(big); i++)
		expect_parse_error(big[i], -ERANGE);
}

static void test_cpuset_parse_reports_malformed_text_before_range(void **state)
{
	(void)state;
	expect_parse_error("4096x", -EINVAL);
	expect_parse_error("99999999999999999999,", -EINVAL);
	expect_parse_error("5000-,1", -EINVAL);
	expect_parse_error("1-5000,x", -EINVAL);
	expect_parse_error("4096 ", -EINVAL);
	/* Well-formed but too big stays -ERANGE, whatever the order of the ends. */
	expect_parse_error("5000-1", -ERANGE);
	expect_parse_error("3-1,5000", -EINVAL);        /* a reversed range is malformed */
}

/* ---- format ---- */

static void test_cpuset_format_writes_compact_lists(void **state)
{
	(void)state;
	struct cpuset s;

	cpuset_clear(&s);
	expect_format(&s, "");
	s = set_of((const unsigned[]){ 0 }, 1);
	expect_format(&s, "0");
	s = set_of((const unsigned[]){ 0, 1, 2, 3, 6 }, 5);
	expect_format(&s, "0-3,6");
	s = set_of((const unsigned[]){ 0, 1 }, 2);
	expect_format(&s, "0-1");
	s = set_of((const unsigned[]){ 1, 3, 5 }, 3);
	expect_format(&s, "1,3,5");
	s = set_of((const unsigned[]){ 63, 64 }, 2);
	expect_format(&s, "63-64");
	s = set_of((const unsigned[]){ 4095 }, 1);
	expect_format(&s, "4095");
	s = set_of((const unsigned[]){ 0, 4094, 4095 }, 3);
	expect_format(&s, "0,4094-4095");
	for (unsigned w = 0; w < CPUSET_WORDS; w++)
		s.bits[w] = UINT64_MAX;
	expect_format(&s, "0-4095");
}

static void test_cpuset_format_round_trips_parse_for_random_sets(void **state)
{
	(void)state;
	static char buf[FMT_MAX], again[FMT_MAX];
	rng_seed(31);
	for (int k = 0; k < 2000; k++) {
		struct cpuset s = random_set(), back;
		size_t n = cpuset_format(&s, buf, sizeof(buf));
		assert_true(n < sizeof(buf));
		assert_int_equal(strlen(buf), n);

		if (cpuset_count(&s) == 0) {
			assert_string_equal(buf, "");
			continue;       /* "" is not a valid list to parse */
		}
		memset(&back, 0, sizeof(back));
		int r = cpuset_parse(buf, &back);
		if (r != 0) {
			print_error("cpuset_parse(format(s)) = %d on \"%.200s\"\n", r, buf);
			fail();
		}
		assert_set_equal(&back, &s);

		/* The text is canonical: formatting the parsed set gives the same text. */
		size_t m = cpuset_format(&back, again, sizeof(again));
		assert_int_equal(m, n);
		assert_string_equal(again, buf);
		/* And compact: pieces ascend with gaps, and "a-b" always has a < b. */
		long prev_hi = -2;
		for (const char *p = buf; *p;) {
			char *end;
			long lo = strtol(p, &end, 10), hi = lo;
			assert_true(end > p);
			if (*end == '-') {
				hi = strtol(end + 1, &end, 10);
				assert_true(hi > lo);
			}
			assert_true(lo > prev_hi + 1);
			prev_hi = hi;
			p = *end == ',' ? end + 1 : end;
		}
	}
}

/*
 * With a short buffer, format returns the length it needed, never writes past
 * size, NUL-terminates, and holds a prefix of the full text that ends on a piece
 * boundary: the longest such prefix that fits.
 */
static void check_short_buffers(const struct cpuset *s)
{
	enum { GUARD = 32 };
	static char full[FMT_MAX], buf[FMT_MAX + GUARD];
	size_t len = cpuset_format(s, full, sizeof(full));
	assert_int_equal(strlen(full), len);

	for (size_t size = 0; size <= len + 2u; size++) {
		memset(buf, 0xAA, size + GUARD);
		size_t r = cpuset_format(s, buf, size);
		assert_int_equal(r, len);
		for (size_t i = size; i < size + GUARD; i++)
			if ((unsigned char)buf[i] != 0xAA) {
				print_error("format wrote byte %zu of a %zu-byte buffer (set \"%.80s\")\n", i, size, full);
				fail();
			}
		if (size == 0)
			continue;
		size_t k = strnlen(buf, size);
		assert_true(k < size);                               /* NUL-terminated */
		assert_memory_equal(buf, full, k);                   /* a prefix: no gaps */
		assert_true(k == 0 || full[k] == '\0' || full[k] == ',');   /* on a piece boundary */
		if (k < len) {
			/* The next piece did not fit. */
			const char *next = strchr(full + k + (k > 0), ',');
			size_t end = next ? (size_t)(next - full) : len;
			assert_true(end + 1u > size);
		} else {
			assert_string_equal(buf, full);
		}
	}
}

static void test_cpuset_format_into_a_short_buffer_returns_needed_length_without_overrun_or_gap(void **state)
{
	(void)state;
	struct cpuset s;

	s = set_of((const unsigned[]){ 0, 1, 2, 3, 6 }, 5);
	check_short_buffers(&s);
	s = set_of((const unsigned[]){ 1, 3, 5, 7, 100, 101, 102, 1000, 4095 }, 9);
	check_short_buffers(&s);
	cpuset_clear(&s);
	check_short_buffers(&s);
	rng_seed(32);
	for (int k = 0; k < 200; k++) {
		s = random_set();
		/* Keep the quadratic loop affordable on the densest sets. */
		if (cpuset_count(&s) > 600)
			continue;
		check_short_buffers(&s);
	}
}

static void test_cpuset_format_with_a_null_zero_sized_buffer_only_measures(void **state)
{
	(void)state;
	struct cpuset s = set_of((const unsigned[]){ 0, 1, 2, 3, 6 }, 5);
	assert_int_equal(cpuset_format(&s, NULL, 0), strlen("0-3,6"));
	cpuset_clear(&s);
	assert_int_equal(cpuset_format(&s, NULL, 0), 0);
}

/* ---- set operations ---- */

static void test_cpuset_count_counts_members(void **state)
{
	(void)state;
	struct cpuset s;
	cpuset_clear(&s);
	assert_int_equal(cpuset_count(&s), 0);
	assert_int_equal(cpuset_parse("0-3,6", &s), 0);
	assert_int_equal(cpuset_count(&s), 5);
	assert_int_equal(cpuset_parse("63-64,4095", &s), 0);
	assert_int_equal(cpuset_count(&s), 3);

	rng_seed(33);
	for (int k = 0; k < 200; k++) {
		s = random_set();
		unsigned n = 0;
		for (unsigned c = 0; c < CPUSET_MAX; c++)
			n += cpuset_has(&s, c);
		assert_int_equal(cpuset_count(&s), n);
	}
}

static void test_cpuset_add_and_has_ignore_cpus_beyond_cpuset_max(void **state)
{
	(void)state;
	struct cpuset s, e;
	cpuset_clear(&s);
	cpuset_clear(&e);
	cpuset_add(&s, CPUSET_MAX);
	cpuset_add(&s, CPUSET_MAX + 64u);
	cpuset_add(&s, 0xffffffffu);
	assert_memory_equal(&s, &e, sizeof(s));
	cpuset_add(&s, CPUSET_MAX - 1u);
	assert_true(cpuset_has(&s, CPUSET_MAX - 1u));
	assert_false(cpuset_has(&s, CPUSET_MAX));
	assert_false(cpuset_has(&s, 0xffffffffu));
}

static void test_cpuset_next_finds_the_next_member_across_words(void **state)
{
	(void)state;
	struct cpuset s;
	assert_int_equal(cpuset_parse("3,63-64,200,4095", &s), 0);
	assert_int_equal(cpuset_next(&s, 0), 3);
	assert_int_equal(cpuset_next(&s, 3), 3);
	assert_int_equal(cpuset_next(&s, 4), 63);
	assert_int_equal(cpuset_next(&s, 63), 63);
	assert_int_equal(cpuset_next(&s, 64), 64);
	assert_int_equal(cpuset_next(&s, 65), 200);
	assert_int_equal(cpuset_next(&s, 201), 4095);
	assert_int_equal(cpuset_next(&s, 4095), 4095);
	assert_int_equal(cpuset_next(&s, 4096), -1);
	assert_int_equal(cpuset_next(&s, 100000), -1);

	cpuset_clear(&s);
	assert_int_equal(cpuset_next(&s, 0), -1);
	cpuset_add(&s, 0);
	assert_int_equal(cpuset_next(&s, 0), 0);
	assert_int_equal(cpuset_next(&s, 1), -1);
}

static void test_cpuset_foreach_visits_every_member_once_in_order(void **state)
{
	(void)state;
	rng_seed(34);
	for (int k = 0; k < 200; k++) {
		struct cpuset s = random_set(), seen;
		cpuset_clear(&seen);
		int prev = -1;
		unsigned n = 0;
		cpuset_foreach(cpu, &s) {
			assert_true(cpu > prev);
			assert_true(cpuset_has(&s, (unsigned)cpu));
			/* Nothing was skipped. */
			for (int c = prev + 1; c < cpu; c++)
				assert_false(cpuset_has(&s, (unsigned)c));
			cpuset_add(&seen, (unsigned)cpu);
			prev = cpu;
			n++;
		}
		assert_int_equal(n, cpuset_count(&s));
		assert_set_equal(&seen, &s);
	}
}

static void test_cpuset_subset_holds_exactly_when_every_member_of_a_is_in_b(void **state)
{
	(void)state;
	struct cpuset a, b, e;
	cpuset_clear(&e);
	assert_int_equal(cpuset_parse("0-3", &a), 0);
	assert_int_equal(cpuset_parse("0-3,6", &b), 0);
	assert_true(cpuset_subset(&a, &b));
	assert_false(cpuset_subset(&b, &a));
	assert_true(cpuset_subset(&a, &a));
	assert_true(cpuset_subset(&e, &a));
	assert_true(cpuset_subset(&e, &e));
	assert_false(cpuset_subset(&a, &e));
	/* A difference only in the last word. */
	assert_int_equal(cpuset_parse("0-3,4095", &a), 0);
	assert_false(cpuset_subset(&a, &b));

	rng_seed(35);
	for (int k = 0; k < 300; k++) {
		a = random_set();
		b = random_set();
		if (rng_below(3) == 0)                  /* make some real subsets */
			for (unsigned w = 0; w < CPUSET_WORDS; w++)
				b.bits[w] |= a.bits[w];
		bool want = true;
		for (unsigned c = 0; c < CPUSET_MAX; c++)
			if (cpuset_has(&a, c) && !cpuset_has(&b, c))
				want = false;
		assert_int_equal(cpuset_subset(&a, &b), want);
	}
}

static void test_cpuset_diff_keeps_members_of_a_not_in_b(void **state)
{
	(void)state;
	struct cpuset a, b, d, want, e;
	cpuset_clear(&e);
	assert_int_equal(cpuset_parse("0-7", &a), 0);
	assert_int_equal(cpuset_parse("2-3,6,100", &b), 0);
	cpuset_diff(&d, &a, &b);
	assert_int_equal(cpuset_parse("0-1,4-5,7", &want), 0);
	assert_set_equal(&d, &want);

	cpuset_diff(&d, &a, &a);
	assert_set_equal(&d, &e);
	cpuset_diff(&d, &a, &e);
	assert_set_equal(&d, &a);
	cpuset_diff(&d, &e, &a);
	assert_set_equal(&d, &e);

	rng_seed(36);
	for (int k = 0; k < 300; k++) {
		a = random_set();
		b = random_set();
		memset(&d, 0x77, sizeof(d));
		cpuset_diff(&d, &a, &b);
		for (unsigned c = 0; c < CPUSET_MAX; c++)
			assert_int_equal(cpuset_has(&d, c), cpuset_has(&a, c) && !cpuset_has(&b, c));
		assert_true(cpuset_subset(&d, &a));
		unsigned both = 0;
		for (unsigned c = 0; c < CPUSET_MAX; c++)
			both += cpuset_has(&a, c) && cpuset_has(&b, c);
		assert_int_equal(cpuset_count(&d) + both, cpuset_count(&a));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpuset_parse_reads_a_single_cpu),
		cmocka_unit_test(test_cpuset_parse_reads_ranges_and_lists),
		cmocka_unit_test(test_cpuset_parse_merges_duplicates),
		cmocka_unit_test(test_cpuset_parse_accepts_big_cpu_numbers_up_to_cpuset_max_minus_one),
		cmocka_unit_test(test_cpuset_parse_rejects_malformed_lists),
		cmocka_unit_test(test_cpuset_parse_returns_erange_for_cpu_numbers_of_cpuset_max_or_more),
		cmocka_unit_test(test_cpuset_parse_reports_malformed_text_before_range),
		cmocka_unit_test(test_cpuset_format_writes_compact_lists),
		cmocka_unit_test(test_cpuset_format_round_trips_parse_for_random_sets),
		cmocka_unit_test(test_cpuset_format_into_a_short_buffer_returns_needed_length_without_overrun_or_gap),
		cmocka_unit_test(test_cpuset_format_with_a_null_zero_sized_buffer_only_measures),
		cmocka_unit_test(test_cpuset_count_counts_members),
		cmocka_unit_test(test_cpuset_add_and_has_ignore_cpus_beyond_cpuset_max),
		cmocka_unit_test(test_cpuset_next_finds_the_next_member_across_words),
		cmocka_unit_test(test_cpuset_foreach_visits_every_member_once_in_order),
		cmocka_unit_test(test_cpuset_subset_holds_exactly_when_every_member_of_a_is_in_b),
		cmocka_unit_test(test_cpuset_diff_keeps_members_of_a_not_in_b),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
