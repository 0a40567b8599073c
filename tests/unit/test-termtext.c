/* Foreign text on a terminal: escaped so that it cannot act, never cut inside a character. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/termtext.h"
#include "report/tprint.h"

static void expect_escaped(const char *in, const char *want)
{
	char buf[256];
	assert_int_equal(term_escape(in, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
}

static void test_control_characters_become_hex_escapes(void **state)
{
	(void)state;
	expect_escaped("a\x1b[2Jb", "a\\x1b[2Jb");
	expect_escaped("line\nforged row", "line\\x0aforged row");
	expect_escaped("\r\t\x7f", "\\x0d\\x09\\x7f");
	expect_escaped("plain text, 1-2 | ok", "plain text, 1-2 | ok");
}

static void test_utf8_is_kept_and_bytes_that_are_not_utf8_are_escaped(void **state)
{
	(void)state;
	expect_escaped("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	expect_escaped("\xff\xc3(", "\\xff\\xc3(");
	expect_escaped("\xe2\x82", "\\xe2\\x82");          /* cut short */
}

static void test_c1_controls_and_bidi_overrides_become_unicode_escapes(void **state)
{
	(void)state;
	expect_escaped("\xc2\x9b" "31m", "\\u009b31m");    /* CSI as one C1 character */
	expect_escaped("a\xe2\x80\xae" "b", "a\\u202eb");   /* right-to-left override */
	expect_escaped("\xe2\x81\xa6", "\\u2066");
}

static void test_a_small_buffer_is_cut_between_pieces_and_the_full_length_returned(void **state)
{
	(void)state;
	char buf[6];
	assert_int_equal(term_escape("ab\x1b" "cd", buf, sizeof(buf)), 8);
	assert_string_equal(buf, "ab");                   /* "\x1b" would not fit whole */
	assert_int_equal(term_escape("\xc3\xa9\xc3\xa9\xc3\xa9", buf, 6), 6);
	assert_string_equal(buf, "\xc3\xa9\xc3\xa9");
	assert_int_equal(term_escape("x", NULL, 0), 1);
	char *dup = term_escape_dup("a\nb");
	assert_string_equal(dup, "a\\x0ab");
	free(dup);
}

static void test_tprintf_escapes_string_arguments_and_keeps_the_format(void **state)
{
	(void)state;
	char buf[256];
	assert_int_equal(tsnprintf(buf, sizeof(buf), "host %s\n", "evil\n\x1b]0;x\x07"), 26);
	assert_string_equal(buf, "host evil\\x0a\\x1b]0;x\\x07\n");
	/* width and precision apply to the text as shown */
	tsnprintf(buf, sizeof(buf), "[%-6s|%4.2s|%*s|%-*.*s]", "a\tb", "xyz", 3, "q", 4, 2, "\x01z");
	assert_string_equal(buf, "[a\\x09b|  xy|  q|\\x  ]");
}

static void test_tprintf_passes_every_other_conversion_through(void **state)
{
	(void)state;
	char buf[256];
	tsnprintf(buf, sizeof(buf), "%d %i %u %lld %llu %zu %ld %lu %5.1f %.3g %c %x %%", -3, 4, 5u, -6LL,
		  18446744073709551615ULL, (size_t)7, -8L, 9UL, 2.25, 1234.5, 'k', 255u);
	assert_string_equal(buf, "-3 4 5 -6 18446744073709551615 7 -8 9   2.2 1.23e+03 k ff %");
	tsnprintf(buf, sizeof(buf), "%-*d|%.*f", 4, 1, 2, 3.14159);
	assert_string_equal(buf, "1   |3.14");
}

static void test_a_document_keeps_its_layout_and_escapes_the_rest(void **state)
{
	(void)state;
	size_t len;
	char *doc = term_escape_doc("a{host=\"x\x1b[2J\"}\t1\n\xe2\x80\xae" "b\x7f\n", false, &len);

	assert_non_null(doc);
	assert_string_equal(doc, "a{host=\"x\\x1b[2J\"}\t1\n\\u202eb\\x7f\n");
	assert_int_equal(len, strlen(doc));
	free(doc);
}

static void test_a_json_document_is_escaped_as_json_and_reads_back_the_same(void **state)
{
	(void)state;
	const char *text = "note \xc2\x9b" "31m \xe2\x80\xae evil \x7f";
	json_t *in = json_pack("{s:s}", "note", text), *back;
	char *dumped = json_dumps(in, JSON_INDENT(1)), *doc;
	size_t len;

	assert_non_null(dumped);
	doc = term_escape_doc(dumped, true, &len);
	assert_non_null(doc);
	assert_non_null(strstr(doc, "\\u009b31m \\u202e evil \\u007f"));
	back = json_loads(doc, 0, NULL);
	assert_non_null(back);
	assert_string_equal(json_string_value(json_object_get(back, "note")), text);
	json_decref(back);
	json_decref(in);
	free(dumped);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_characters_become_hex_escapes),
		cmocka_unit_test(test_utf8_is_kept_and_bytes_that_are_not_utf8_are_escaped),
		cmocka_unit_test(test_c1_controls_and_bidi_overrides_become_unicode_escapes),
		cmocka_unit_test(test_a_small_buffer_is_cut_between_pieces_and_the_full_length_returned),
		cmocka_unit_test(test_tprintf_escapes_string_arguments_and_keeps_the_format),
		cmocka_unit_test(test_tprintf_passes_every_other_conversion_through),
		cmocka_unit_test(test_a_document_keeps_its_layout_and_escapes_the_rest),
		cmocka_unit_test(test_a_json_document_is_escaped_as_json_and_reads_back_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
