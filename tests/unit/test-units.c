/* Durations and sizes as people read and type them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/array.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "core/units.h"

static void test_an_exact_duration_reads_back_to_the_same_nanoseconds(void **state)
{
	(void)state;
	const uint64_t v[] = { 0, 1, 999, 1000, 2083000000, 2083333330, 25 * NS_PER_SEC, 125 * NS_PER_SEC,
			       300 * NS_PER_SEC, 7200 * NS_PER_SEC, 1500 * NS_PER_US };
	const char *const want[] = { "0s", "1ns", "999ns", "1us", "2083ms", "2083333330ns", "25s", "125s", "5m", "2h",
				     "1500us" };
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		char buf[32];
		uint64_t back;
		fmt_duration_exact(v[i], buf, sizeof(buf));
		assert_string_equal(buf, want[i]);
		assert_int_equal(parse_duration(buf, 1, &back), 0);
		assert_int_equal(back, v[i]);
	}
}

static void test_a_shown_duration_keeps_three_decimals_rounded_down(void **state)
{
	(void)state;
	char buf[32];
	fmt_duration(2083000000, buf, sizeof(buf));
	assert_string_equal(buf, "2.083s");
	fmt_duration(2083999999, buf, sizeof(buf));
	assert_string_equal(buf, "2.083s");
	fmt_duration(100 * NS_PER_US, buf, sizeof(buf));
	assert_string_equal(buf, "100us");
	fmt_duration(125 * NS_PER_SEC, buf, sizeof(buf));
	assert_string_equal(buf, "2.083m");
	fmt_duration(0, buf, sizeof(buf));
	assert_string_equal(buf, "0ns");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_exact_duration_reads_back_to_the_same_nanoseconds),
		cmocka_unit_test(test_a_shown_duration_keeps_three_decimals_rounded_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
