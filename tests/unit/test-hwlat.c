#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sys/textfile.h"
#include "trace/hwlat.h"
#include "systree.h"

#define END                \
	{                  \
		NULL, NULL \
	}

/* Lines as Documentation/trace/hwlat_detector.rst shows them: the header, then samples, with
 * "count:" since 5.7 and NMIs after it when some came in; and an older kernel's line without count. */
static const char recorded[] = "# tracer: hwlat\n"
			       "#\n"
			       "# entries-in-buffer/entries-written: 13/13   #P:8\n"
			       "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
			       "#              | |       |   ||||       |         |\n"
			       "           <...>-1729  [001] d...   678.473449: #1     "
			       "inner/outer(us):   11/12    ts:1581527483.343962693 count:6\n"
			       "           <...>-1729  [004] d...   689.556542: #2     "
			       "inner/outer(us):   16/9     ts:1581527494.889008092 count:1\n"
			       "           <...>-1729  [001] d...   863.938932: #10    "
			       "inner/outer(us):    9/11    ts:1581527668.970010500 count:1 "
			       "nmi-total:7 nmi-count:1\n"
			       "             <...>-3638  [003] d... 19501.283419: #6     "
			       "inner/outer(us):    0/12    ts:1499801138.297435289 "
			       "nmi-total:4 nmi-count:1\n";

static void test_a_documented_sample_line_gives_its_cpu_gaps_time_and_count(void **state)
{
	(void)state;
	struct hwlat_sample s;
	assert_int_equal(
		hwlat_parse_line(
			"           <...>-1729  [001] d...   678.473449: #1     inner/outer(us):   "
			"11/12    ts:1581527483.343962693 count:6",
			&s),
		0);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.seqnum, 1);
	assert_int_equal(s.inner_ns, 11000);
	assert_int_equal(s.outer_ns, 12000);
	assert_int_equal(s.ts_ns, UINT64_C(1581527483343962693));
	assert_int_equal(s.count, 6);
	assert_int_equal(s.nmi_count, 0);
	assert_false(s.has_nmi_total);
}

static void test_nmis_are_read_and_an_older_line_has_no_count_but_its_nmi_count(void **state)
{
	(void)state;
	struct hwlat_sample s;
	assert_int_equal(
		hwlat_parse_line(
			"  <...>-1729  [001] d...   863.938932: #10    inner/outer(us):    9/11    "
			"ts:1581527668.970010500 count:1 nmi-total:7 nmi-count:1",
			&s),
		0);
	assert_int_equal(s.count, 1);
	assert_true(s.has_nmi_total);
	assert_int_equal(s.nmi_total_ns, 7000);
	assert_int_equal(s.nmi_count, 1);
	assert_int_equal(
		hwlat_parse_line(
			"<...>-3638  [003] d... 19501.283419: #6     inner/outer(us):    0/12    "
			"ts:1499801138.297435289 nmi-total:4 nmi-count:1",
			&s),
		0);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.count, 0); /* not nmi-count's 1 */
	assert_int_equal(s.nmi_count, 1);
	assert_int_equal(s.inner_ns, 0);
}

static void test_comments_and_other_lines_are_no_sample_and_broken_ones_are_refused(void **state)
{
	(void)state;
	struct hwlat_sample s = { .cpu = 42 };
	assert_int_equal(hwlat_parse_line("# tracer: hwlat", &s), -ENOENT);
	assert_int_equal(hwlat_parse_line("", &s), -ENOENT);
	assert_int_equal(hwlat_parse_line("  bash-12 [000] .... 1.0: tracing_mark_write: hi", &s),
			 -ENOENT);
	assert_int_equal(
		hwlat_parse_line("<...>-1 [001] d... 1.0: #1 inner/outer(us): x/12 ts:1.000000001",
				 &s),
		-EINVAL);
	assert_int_equal(
		hwlat_parse_line("<...>-1 [001] d... 1.0: #1 inner/outer(us): 11/12 ts:1", &s),
		-EINVAL);
	assert_int_equal(
		hwlat_parse_line("<...>-1 d... 1.0: #1 inner/outer(us): 11/12 ts:1.000000001", &s),
		-EINVAL);
	assert_int_equal(s.cpu, 42);
}

static void test_a_recorded_trace_gives_every_sample_and_the_largest_gaps(void **state)
{
	(void)state;
	json_t *doc = hwlat_samples_json(recorded);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "samples")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "max_inner_ns")), 16000);
	assert_int_equal(json_integer_value(json_object_get(doc, "max_outer_ns")), 12000);
	assert_int_equal(json_integer_value(json_object_get(doc, "nmi_count")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "lines_unread")), 0);
	const json_t *first = json_array_get(json_object_get(doc, "samples"), 0);
	assert_true(json_is_null(json_object_get(first, "nmi_total_ns")));
	json_decref(doc);
}

#define TR "sys/kernel/tracing/"

/* The three settings the tracer changes, as the files hold them. */
static void expect_settings(const char *dir, const char *tracer, const char *cpumask,
			    const char *on)
{
	const char *const names[] = { "current_tracer", "tracing_cpumask", "tracing_on" };
	const char *const want[] = { tracer, cpumask, on };
	for (size_t i = 0; i < 3; i++) {
		char path[256], text[64];
		snprintf(path, sizeof(path), "%s/" TR "%s", dir, names[i]);
		assert_int_equal(textfile_read(path, text, sizeof(text)) < 0 ? -1 : 0, 0);
		assert_string_equal(text, want[i]);
	}
}

static void test_the_tracer_runs_on_the_cpus_asked_and_its_settings_come_back(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ TR "available_tracers", "hwlat blk function nop\n" },
		{ TR "current_tracer", "function\n" },
		{ TR "tracing_cpumask", "3\n" },
		{ TR "tracing_on", "0\n" },
		{ TR "trace", "an old trace\n" },
		END,
	};
	char root[64], dir[128];
	struct hwlat_run *h = NULL;
	struct cpuset cpus;
	json_t *doc;

	systree_make(root, tree);
	assert_int_equal(hwlat_tracing_dir(root, dir, sizeof(dir)), 0);
	assert_int_equal(hwlat_available(dir, NULL), 0);
	assert_int_equal(cpuset_parse("1,33", &cpus), 0);
	assert_int_equal(hwlat_start(&h, dir, &cpus, NULL), 0);
	expect_settings(root, "hwlat", "2,00000002", "1");
	char path[256], text[64];
	snprintf(path, sizeof(path), "%s/" TR "trace", root);
	assert_int_equal(textfile_read(path, text, sizeof(text)), 0);
	assert_string_equal(text, ""); /* cleared */

	/* what the kernel would have written while it ran */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(recorded, f);
	fclose(f);

	hwlat_stop(h, &doc, NULL);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "samples")), 4);
	json_decref(doc);
	expect_settings(root, "function", "3", "0");
	hwlat_stop(h, &doc, NULL); /* once only */
	assert_null(doc);
	hwlat_free(h);
	systree_remove(root);
}

static void test_a_kernel_without_the_tracer_is_told_with_what_it_offers(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { TR "available_tracers", "blk function nop\n" },
					     END };
	char root[64], dir[128];
	struct lat_error err = { "" };

	systree_make(root, tree);
	assert_int_equal(hwlat_tracing_dir(root, dir, sizeof(dir)), 0);
	assert_int_equal(hwlat_available(dir, &err), -ENOENT);
	assert_string_equal(
		err.msg, "the kernel offers no hwlat tracer (available_tracers: blk function nop)");
	systree_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_documented_sample_line_gives_its_cpu_gaps_time_and_count),
		cmocka_unit_test(
			test_nmis_are_read_and_an_older_line_has_no_count_but_its_nmi_count),
		cmocka_unit_test(
			test_comments_and_other_lines_are_no_sample_and_broken_ones_are_refused),
		cmocka_unit_test(test_a_recorded_trace_gives_every_sample_and_the_largest_gaps),
		cmocka_unit_test(test_the_tracer_runs_on_the_cpus_asked_and_its_settings_come_back),
		cmocka_unit_test(test_a_kernel_without_the_tracer_is_told_with_what_it_offers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
