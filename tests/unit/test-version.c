/* What `latscope --version` prints (src/cli/version.c) for each describe a build can have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/version.h"

static const char *line(const char *version, const char *describe)
{
	static char buf[128];
	int n = version_line(buf, sizeof(buf), version, describe);
	assert_int_equal(n, (int)strlen(buf));
	return buf;
}

static void test_the_tagged_commit_or_a_tarball_prints_the_version_alone(void **state)
{
	(void)state;
	/* git describe on the commit tagged v0.2.0, v left out; a tarball's fallback is the version */
	assert_string_equal(line("0.2.0", "0.2.0"), "latscope 0.2.0");
	assert_string_equal(line("0.2.0", ""), "latscope 0.2.0");
}

static void test_commits_after_a_tag_print_git_describe_beside_the_version(void **state)
{
	(void)state;
	assert_string_equal(line("0.2.0", "0.2.0-14-g666b0e5"), "latscope 0.2.0 (0.2.0-14-g666b0e5)");
	assert_string_equal(line("0.2.0", "0.2.0-dirty"), "latscope 0.2.0 (0.2.0-dirty)");
}

static void test_without_a_tag_the_commit_is_printed_beside_the_version(void **state)
{
	(void)state;
	assert_string_equal(line("0.2.0", "8598520"), "latscope 0.2.0 (8598520)");
	assert_string_equal(line("0.2.0", "8598520-dirty"), "latscope 0.2.0 (8598520-dirty)");
}

static void test_a_line_longer_than_the_buffer_is_cut_and_its_length_told(void **state)
{
	(void)state;
	char buf[12];
	assert_int_equal(version_line(buf, sizeof(buf), "0.2.0", "0.2.0-14-g666b0e5"),
			 (int)strlen("latscope 0.2.0 (0.2.0-14-g666b0e5)"));
	assert_string_equal(buf, "latscope 0.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_tagged_commit_or_a_tarball_prints_the_version_alone),
		cmocka_unit_test(test_commits_after_a_tag_print_git_describe_beside_the_version),
		cmocka_unit_test(test_without_a_tag_the_commit_is_printed_beside_the_version),
		cmocka_unit_test(test_a_line_longer_than_the_buffer_is_cut_and_its_length_told),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
