#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "result/quiet.h"

static struct win_context window(uint64_t smis, uint64_t steal_ns)
{
	struct win_context c;
	memset(&c, 0, sizeof(c));
	c.valid = true;
	c.smis = smis;
	c.cpu_ns[CPU_STEAL] = steal_ns;
	return c;
}

static void test_an_smi_in_the_window_is_the_cause_before_steal(void **state)
{
	(void)state;
	struct result res = { .smi_asked = true, .smi_source = SMI_SOURCE_PMU };
	struct win_context c = window(1, 5000);
	assert_int_equal(quiet_cause_of(&res, &c), QUIET_SMI);
	assert_string_equal(quiet_cause_name(QUIET_SMI), "smi");
}

static void test_steal_without_an_smi_points_at_the_hypervisor(void **state)
{
	(void)state;
	struct result res = { .smi_asked = true, .smi_source = SMI_SOURCE_MSR };
	struct win_context c = window(0, 5000);
	assert_int_equal(quiet_cause_of(&res, &c), QUIET_STEAL);
}

static void test_neither_counted_is_told_only_where_smis_were_counted(void **state)
{
	(void)state;
	struct result counted = { .smi_asked = true, .smi_source = SMI_SOURCE_PMU };
	struct result here = { .smi_asked = true, .smi_source = SMI_SOURCE_NONE };
	struct result older = { .smi_asked = false };
	struct win_context c = window(0, 0);
	assert_int_equal(quiet_cause_of(&counted, &c), QUIET_NEITHER);
	assert_int_equal(quiet_cause_of(&here, &c), QUIET_UNCOUNTED);
	assert_int_equal(quiet_cause_of(&older, &c), QUIET_UNCOUNTED);
}

static void test_a_count_without_a_source_is_no_smi_and_no_context_tells_nothing(void **state)
{
	(void)state;
	struct result here = { .smi_asked = true, .smi_source = SMI_SOURCE_NONE };
	struct win_context c = window(3, 0), none;
	memset(&none, 0, sizeof(none));
	assert_int_equal(quiet_cause_of(&here, &c), QUIET_UNCOUNTED);
	assert_int_equal(quiet_cause_of(&here, &none), QUIET_UNCOUNTED);
	assert_null(quiet_cause_name(QUIET_CAUSES));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_smi_in_the_window_is_the_cause_before_steal),
		cmocka_unit_test(test_steal_without_an_smi_points_at_the_hypervisor),
		cmocka_unit_test(test_neither_counted_is_told_only_where_smis_were_counted),
		cmocka_unit_test(
			test_a_count_without_a_source_is_no_smi_and_no_context_tells_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
