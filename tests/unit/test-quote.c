/* A value quoted in an error message (whole when short, by its ends and length when long), and a word quoted for a shell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/quote.h"

static void test_a_short_value_is_quoted_whole(void **state)
{
	(void)state;
	char buf[QUOTE_MAX];
	char edge[2 * QUOTE_KEEP + 9];

	assert_string_equal(quote_short("k=v", buf), "'k=v'");
	assert_string_equal(quote_short("", buf), "''");
	memset(edge, 'a', sizeof(edge) - 1u);
	edge[sizeof(edge) - 1u] = '\0';
	quote_short(edge, buf);
	assert_int_equal(strlen(buf), strlen(edge) + 2u);
}

static void test_a_long_value_keeps_its_ends_and_says_its_length(void **state)
{
	(void)state;
	char value[603], buf[QUOTE_MAX], want[QUOTE_MAX];

	memset(value, 'y', sizeof(value) - 1u);
	memcpy(value, "k=", 2);
	value[sizeof(value) - 1u] = '\0';
	snprintf(want, sizeof(want), "'k=%.*s\u2026%.*s' (602 bytes)", QUOTE_KEEP - 2, value + 2,
		 QUOTE_KEEP, value + 2);
	assert_string_equal(quote_short(value, buf), want);
}

static void test_a_long_value_is_never_cut_inside_a_character(void **state)
{
	(void)state;
	char value[3 * 100 + 2], buf[QUOTE_MAX];

	/* "é" is two bytes; an odd start puts every cut QUOTE_KEEP bytes in on its second byte. */
	value[0] = 'x';
	for (size_t i = 0; i < 150; i++)
		memcpy(value + 1 + 2 * i, "\xc3\xa9", 2);
	value[301] = '\0';
	quote_short(value, buf);
	const char *dots = strstr(buf, "\u2026");
	assert_non_null(dots);
	/* whole characters on both sides of the ellipsis */
	assert_int_equal((size_t)(dots - (buf + 2)) % 2u, 0);
	assert_memory_equal(dots + 3, "\xc3\xa9", 2);
	assert_non_null(strstr(buf, "' (301 bytes)"));
}

static void test_a_shell_word_of_plain_bytes_is_left_as_it_is(void **state)
{
	(void)state;
	char buf[64];

	assert_int_equal(quote_shell("--action-interval", buf, sizeof(buf)), 17);
	assert_string_equal(buf, "--action-interval");
	quote_shell("/usr/local/bin/x.sh,a=b:c@d%e+f_", buf, sizeof(buf));
	assert_string_equal(buf, "/usr/local/bin/x.sh,a=b:c@d%e+f_");
}

static void test_a_shell_word_with_spaces_quotes_or_nothing_is_single_quoted(void **state)
{
	(void)state;
	char buf[64];

	quote_shell("exec /usr/local/bin/grab-state", buf, sizeof(buf));
	assert_string_equal(buf, "'exec /usr/local/bin/grab-state'");
	quote_shell("it's", buf, sizeof(buf));
	assert_string_equal(buf, "'it'\\''s'");
	quote_shell("", buf, sizeof(buf));
	assert_string_equal(buf, "''");
	quote_shell("$HOME", buf, sizeof(buf));
	assert_string_equal(buf, "'$HOME'");
	quote_shell("~", buf, sizeof(buf));
	assert_string_equal(buf, "'~'");
}

static void test_a_shell_word_says_its_length_when_the_buffer_is_short(void **state)
{
	(void)state;
	char buf[4];

	assert_int_equal(quote_shell("a b c", NULL, 0), 7);
	assert_int_equal(quote_shell("a b c", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "'a ");
	char *w = quote_shell_dup("x'y");
	assert_non_null(w);
	assert_string_equal(w, "'x'\\''y'");
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_short_value_is_quoted_whole),
		cmocka_unit_test(test_a_long_value_keeps_its_ends_and_says_its_length),
		cmocka_unit_test(test_a_long_value_is_never_cut_inside_a_character),
		cmocka_unit_test(test_a_shell_word_of_plain_bytes_is_left_as_it_is),
		cmocka_unit_test(test_a_shell_word_with_spaces_quotes_or_nothing_is_single_quoted),
		cmocka_unit_test(test_a_shell_word_says_its_length_when_the_buffer_is_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
