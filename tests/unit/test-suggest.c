/* "Did you mean": edit distances and the nearest known word. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/suggest.h"

static unsigned d(const char *a, const char *b)
{
	return edit_distance(a, strlen(a), b, strlen(b));
}

static void test_edit_distance_counts_insertions_deletions_substitutions_and_swaps(void **state)
{
	(void)state;
	assert_int_equal(d("threshold", "threshold"), 0);
	assert_int_equal(d("treshold", "threshold"), 1);        /* a letter left out */
	assert_int_equal(d("thresholdd", "threshold"), 1);      /* one too many */
	assert_int_equal(d("thresbold", "threshold"), 1);       /* one wrong */
	assert_int_equal(d("htreshold", "threshold"), 1);       /* two swapped */
	assert_int_equal(d("", "abc"), 3);
	assert_int_equal(d("kitten", "sitting"), 3);
	char lng[SUGGEST_MAX_LEN + 2];
	memset(lng, 'a', sizeof(lng) - 1u);
	lng[sizeof(lng) - 1u] = '\0';
	assert_int_equal(d(lng, "a"), (unsigned)-1);
}

static void test_the_nearest_word_is_suggested_only_when_near_and_alone(void **state)
{
	(void)state;
	const char *const words[] = { "threshold", "interval", NULL, "quiet", "db" };
	assert_int_equal(suggest_word("treshold", 8, words, 5), 0);
	assert_int_equal(suggest_word("intervl", 7, words, 5), 1);
	assert_int_equal(suggest_word("quit", 4, words, 5), 3);
	assert_int_equal(suggest_word("bogus", 5, words, 5), -1);       /* too far from all */
	assert_int_equal(suggest_word("quiet", 5, words, 5), -1);       /* not a typo */
	const char *const tie[] = { "ab", "ac" };
	assert_int_equal(suggest_word("aa", 2, tie, 2), -1);
	assert_int_equal(suggest_word("x", 1, (const char *const[]){ "d" }, 1), 0);      /* one letter may be off */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_distance_counts_insertions_deletions_substitutions_and_swaps),
		cmocka_unit_test(test_the_nearest_word_is_suggested_only_when_near_and_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
