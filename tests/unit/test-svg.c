/*
 * Unit tests for the report's SVG plots (src/report/svg.c) and HTML text
 * (src/report/html.c): scales, ticks that never cut the largest value, units,
 * the palette, and escaping.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/html.h"
#include "report/svg.h"

/* Not inlined: GCC then mistakes the memstream's buffer for the local that points to it. */
__attribute__((noinline)) static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void linear_ticks_are_nice_and_cover_the_range(void **state)
{
	struct svg_axis a;
	(void)state;
	svg_axis_linear(&a, 0, 5468.8e3, 6, 1e3, "latency (us)");
	assert_true(a.lo <= 0 && a.hi >= 5468.8e3);
	assert_true(a.nticks >= 3 && a.nticks <= 12);
	assert_true(fabs(a.tick[a.nticks - 1] - a.hi) < 1e-6);
	double step = a.tick[1] - a.tick[0];
	double mant = step / pow(10, floor(log10(step)));
	assert_true(fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9);
	assert_string_equal(a.label[0], "0");
	assert_string_equal(a.label[1], "1000");      /* 1 ms steps read in us */
	assert_string_equal(a.title, "latency (us)");
}

static void a_linear_axis_of_one_value_gets_room_around_it(void **state)
{
	struct svg_axis a;
	(void)state;
	svg_axis_linear(&a, 0, 0, 5, 1, "events");
	assert_true(a.hi > a.lo);
	svg_axis_linear(&a, 7, 7, 5, 1, "x");
	assert_true(a.lo <= 7 && a.hi > 7);
	svg_axis_linear(&a, (double)NAN, HUGE_VAL, 5, 1, "x");
	assert_true(a.hi > a.lo && a.nticks >= 2);
}

static void log_axes_reach_whole_decades_around_the_data(void **state)
{
	struct svg_axis a;
	(void)state;
	svg_axis_log(&a, 1, 203014473, 1, "count");
	assert_true(a.log);
	assert_true(a.lo == 1 && a.hi == 1e9);
	assert_int_equal(a.nticks, 10);
	assert_string_equal(a.label[0], "1");
	assert_string_equal(a.label[9], "1e+09");
	/* Few decades: ticks at 1, 2 and 5 so the axis still reads. */
	svg_axis_log(&a, 30, 90, 1, "x");
	assert_true(a.lo == 10 && a.hi == 100);
	assert_int_equal(a.nticks, 4);
	assert_string_equal(a.label[1], "20");
	/* Any uint64 range fits the ticks. */
	svg_axis_log(&a, 1, 1.8e19, 1, "x");
	assert_true(a.nticks <= SVG_TICKS_MAX && a.hi >= 1.8e19);
	/* The largest value is never outside. */
	svg_axis_log(&a, 12, 4028173, 1e3, "gap (us)");
	assert_true(svg_axis_frac(&a, 4028173) <= 1.0 && svg_axis_frac(&a, 12) >= 0.0);
	assert_true(svg_axis_frac(&a, 0) < 0);
}

static void units_follow_the_largest_value(void **state)
{
	(void)state;
	assert_string_equal(svg_unit_for(40).name, "ns");
	assert_string_equal(svg_unit_for(9999).name, "ns");
	assert_string_equal(svg_unit_for(5468800).name, "us");
	assert_string_equal(svg_unit_for(28e6).name, "ms");
	assert_string_equal(svg_unit_for(30e9).name, "s");
}

static void the_palette_has_twelve_distinct_colours_then_dashes(void **state)
{
	(void)state;
	for (size_t i = 0; i < SVG_PALETTE; i++) {
		assert_string_equal(svg_dash(i), "");
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(svg_colour(i), svg_colour(k));
	}
	assert_string_equal(svg_colour(SVG_PALETTE), svg_colour(0));
	assert_string_not_equal(svg_dash(SVG_PALETTE), "");
}

static void escape_fn(FILE *f, const void *arg)
{
	svg_escape(f, arg);
}

static void text_is_escaped_for_html_and_svg(void **state)
{
	(void)state;
	char *s = capture(escape_fn, "<script>a & 'b' \"c\"</script>");
	assert_string_equal(s, "&lt;script&gt;a &amp; &#39;b&#39; &quot;c&quot;&lt;/script&gt;");
	free(s);
}

static void long_text_fn(FILE *f, const void *arg)
{
	html_text(f, "%s<", (const char *)arg);
}

static void formatted_text_of_any_length_is_escaped_whole(void **state)
{
	char *big = malloc(3001);
	(void)state;
	memset(big, '&', 3000);
	big[3000] = '\0';
	char *s = capture(long_text_fn, big);
	assert_int_equal(strlen(s), 3000 * 5 + 4);
	assert_string_equal(s + 3000 * 5, "&lt;");
	free(s);
	free(big);
}

static void plot_fn(FILE *f, const void *arg)
{
	struct svg_axis x, y;
	struct svg_plot p;
	double xs[] = { 1, 10, 100, 1000 }, ys[] = { 5, 0, 7, 3 };
	(void)arg;
	svg_axis_log(&x, 1, 1000, 1, "x (ns)");
	svg_axis_log(&y, 1, 10, 1, "count <log>");
	svg_plot_begin(&p, f, "fig\"1", "a & b", 600, 300, &x, &y);
	svg_line(&p, xs, ys, 4, svg_colour(0), svg_dash(0), 1.5);
	svg_marker(&p, 1000, 3, svg_colour(1), "max <3>", "max");
	svg_plot_end(&p);
}

static void a_plot_is_one_svg_and_a_zero_breaks_a_log_line(void **state)
{
	(void)state;
	char *s = capture(plot_fn, NULL);
	assert_non_null(strstr(s, "<svg id=\"fig&quot;1\" class=\"plot\""));
	assert_non_null(strstr(s, "<title>a &amp; b</title>"));
	assert_non_null(strstr(s, "count &lt;log&gt;"));
	assert_non_null(strstr(s, "max &lt;3&gt;"));
	/* ys[1] = 0 cannot be on a log axis: two polylines, not one through the floor. */
	assert_int_equal(count(s, "<polyline"), 2);
	assert_null(strstr(s, "http"));
	assert_non_null(strstr(s, "</svg>\n"));
	free(s);
}

#define SEC UINT64_C(1000000000)
#define DEC1 (UINT64_C(1796083200) * SEC)     /* 2026-12-01T00:00:00Z */

static void a_clock_axis_of_hours_ticks_every_half_hour_in_utc(void **state)
{
	struct svg_axis a;
	(void)state;
	/* 18:40:05 to 22:10:00: three and a half hours in about 8 ticks. */
	svg_axis_utc(&a, DEC1 + (18 * 3600 + 40 * 60 + 5) * SEC, DEC1 + (22 * 3600 + 10 * 60) * SEC, 8, "UTC");
	assert_int_equal(a.nticks, 9);
	assert_string_equal(a.label[0], "18:30");
	assert_string_equal(a.label[1], "19:00");
	assert_string_equal(a.label[8], "22:30");
	assert_true(a.tick[0] == a.lo && a.tick[8] == a.hi);
	assert_true(a.lo == (double)(DEC1 + (18 * 3600 + 30 * 60) * SEC));
	assert_string_equal(a.title, "UTC");
}

static void a_clock_axis_over_days_names_midnight_by_its_date(void **state)
{
	struct svg_axis a;
	(void)state;
	/* 12-01 18:40 to 12-04 02:00: 55 hours, a tick every 12 of them. */
	svg_axis_utc(&a, DEC1 + (18 * 3600 + 40 * 60) * SEC, DEC1 + (3 * 86400 + 2 * 3600) * SEC, 8, "UTC");
	assert_int_equal(a.nticks, 7);
	assert_string_equal(a.label[0], "12:00");
	assert_string_equal(a.label[1], "12-02");
	assert_string_equal(a.label[2], "12:00");
	assert_string_equal(a.label[5], "12-04");
	/* 30 days: steps of days, every tick a date, the end inside. */
	svg_axis_utc(&a, DEC1, DEC1 + 30 * 86400 * SEC, 8, "UTC");
	assert_true(a.nticks >= 3 && a.nticks <= 9);
	for (size_t i = 0; i < a.nticks; i++)
		assert_int_equal(strlen(a.label[i]), 5), assert_int_equal(a.label[i][2], '-');
	assert_true(svg_axis_frac(&a, (double)(DEC1 + 30 * 86400 * SEC)) <= 1.0);
	assert_true(svg_axis_frac(&a, (double)DEC1) >= 0.0);
}

static void a_clock_axis_of_seconds_shows_them_and_one_time_gets_room(void **state)
{
	struct svg_axis a;
	(void)state;
	svg_axis_utc(&a, DEC1 + 3 * SEC, DEC1 + 23 * SEC, 8, "UTC");
	assert_string_equal(a.label[0], "12-01");      /* midnight, by its date */
	assert_string_equal(a.label[1], "00:00:05");
	assert_true(a.hi == (double)(DEC1 + 25 * SEC));
	svg_axis_utc(&a, DEC1 + 7 * SEC, DEC1 + 7 * SEC, 8, "UTC");
	assert_true(a.lo < (double)(DEC1 + 7 * SEC) && a.hi > (double)(DEC1 + 7 * SEC) && a.nticks >= 2);
	svg_axis_utc(&a, DEC1 + 9 * SEC, DEC1, 8, "UTC");    /* reversed: still an axis */
	assert_true(a.hi > a.lo && a.nticks >= 2 && a.nticks <= SVG_TICKS_MAX);
}

static void steps_fn(FILE *f, const void *arg)
{
	struct svg_axis x, y;
	struct svg_plot p;
	/* Two steps end to end, one after a gap, one without a value. */
	double x0[] = { 0, 10, 30, 40 }, x1[] = { 10, 20, 40, 50 }, ys[] = { 1, 2, 3, (double)NAN };
	(void)arg;
	svg_axis_linear(&x, 0, 50, 5, 1, "x");
	svg_axis_linear(&y, 0, 4, 4, 1, "y");
	svg_plot_begin(&p, f, "steps", "steps", 600, 300, &x, &y);
	svg_steps(&p, x0, x1, ys, 4, 0.0, svg_colour(0), NULL, 1.5);
	svg_plot_end(&p);
}

static void steps_join_end_to_end_and_break_at_a_gap_or_no_value(void **state)
{
	(void)state;
	char *s = capture(steps_fn, NULL);
	assert_int_equal(count(s, "<polyline"), 2);
	const char *first = strstr(s, "points=\""), *end = strchr(first + 8, '"');
	size_t points = 1;
	for (const char *c = first + 8; c < end; c++)
		points += *c == ' ';
	assert_int_equal(points, 4);   /* (0,1) (10,1) (10,2) (20,2) */
	const char *second = strstr(end, "points=\""), *end2 = strchr(second + 8, '"');
	points = 1;
	for (const char *c = second + 8; c < end2; c++)
		points += *c == ' ';
	assert_int_equal(points, 2);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linear_ticks_are_nice_and_cover_the_range),
		cmocka_unit_test(a_linear_axis_of_one_value_gets_room_around_it),
		cmocka_unit_test(log_axes_reach_whole_decades_around_the_data),
		cmocka_unit_test(units_follow_the_largest_value),
		cmocka_unit_test(the_palette_has_twelve_distinct_colours_then_dashes),
		cmocka_unit_test(text_is_escaped_for_html_and_svg),
		cmocka_unit_test(formatted_text_of_any_length_is_escaped_whole),
		cmocka_unit_test(a_plot_is_one_svg_and_a_zero_breaks_a_log_line),
		cmocka_unit_test(a_clock_axis_of_hours_ticks_every_half_hour_in_utc),
		cmocka_unit_test(a_clock_axis_over_days_names_midnight_by_its_date),
		cmocka_unit_test(a_clock_axis_of_seconds_shows_them_and_one_time_gets_room),
		cmocka_unit_test(steps_join_end_to_end_and_break_at_a_gap_or_no_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
