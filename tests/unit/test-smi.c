#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/cpuset.h"
#include "sys/smi.h"
#include "systree.h"

#define END                \
	{                  \
		NULL, NULL \
	}
#define PMU "sys/bus/event_source/devices/msr/"

/* The fake perf_event_open: what it was asked, and a pipe's read end holding a count for each CPU. */
static struct {
	unsigned calls;
	uint32_t type;
	uint64_t config;
	int cpus[8];
	int fail;	/* -errno to return instead */
	uint64_t count; /* what a read of the counter gives */
} fake;

static int fake_perf_open(uint32_t type, uint64_t config, int cpu)
{
	int p[2];
	fake.type = type;
	fake.config = config;
	fake.cpus[fake.calls++ % 8u] = cpu;
	if (fake.fail)
		return fake.fail;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], &fake.count, sizeof(fake.count)), (ssize_t)sizeof(fake.count));
	close(p[1]);
	return p[0];
}

/* The msr PMU as sysfs describes it where it counts SMIs (Intel) */
static const struct systree_file pmu_tree[] = {
	{ PMU "type", "9\n" },
	{ PMU "events/smi", "event=0x04\n" },
	END,
};

/* smi_open on cpus under dir, the fake PMU failing with fail (0: opening). */
static int open_in(const char *dir, const char *cpus, int fail, struct smi_counter **c,
		   struct lat_error *err)
{
	struct cpuset set;
	assert_int_equal(cpuset_parse(cpus, &set), 0);
	memset(&fake, 0, sizeof(fake));
	fake.fail = fail;
	fake.count = 2;
	return smi_open(c, &set, &(struct smi_env){ .sysroot = dir, .perf_open = fake_perf_open },
			err);
}

static void test_an_empty_tree_has_no_smi_source_and_says_why_of_both(void **state)
{
	(void)state;
	const struct systree_file tree[] = { END };
	char dir[64];
	struct smi_counter *c = NULL;
	struct lat_error err = { "" };

	systree_make(dir, tree);
	assert_int_equal(open_in(dir, "0", 0, &c, &err), -ENODEV);
	assert_null(c);
	assert_int_equal(fake.calls, 0);
	assert_non_null(strstr(err.msg, "msr PMU: cannot read"));
	assert_non_null(strstr(err.msg, "MSR: cannot open"));
	assert_non_null(strstr(err.msg, "dev/cpu/0/msr"));
	systree_remove(dir);
}

static void
test_a_tree_with_the_pmus_smi_event_opens_it_on_every_cpu_and_reads_its_counts(void **state)
{
	(void)state;
	char dir[64];
	struct smi_counter *c = NULL;
	uint64_t counts[2] = { 7, 7 };

	systree_make(dir, pmu_tree);
	assert_int_equal(open_in(dir, "1,3", 0, &c, NULL), 0);
	assert_int_equal(smi_counter_source(c), SMI_SOURCE_PMU);
	assert_string_equal(smi_source_name(smi_counter_source(c)), "msr_pmu");
	assert_int_equal(fake.calls, 2);
	assert_int_equal(fake.type, 9);
	assert_int_equal(fake.config, 4);
	assert_int_equal(fake.cpus[0], 1);
	assert_int_equal(fake.cpus[1], 3);
	assert_int_equal(smi_read(c, counts), 0);
	assert_int_equal(counts[0], 2);
	assert_int_equal(counts[1], 2);
	smi_close(c);
	systree_remove(dir);
}

static void
test_a_pmu_that_will_not_open_falls_to_the_msr_and_then_reports_both_failures(void **state)
{
	(void)state;
	char dir[64];
	struct smi_counter *c = NULL;
	struct lat_error err = { "" };

	systree_make(dir, pmu_tree);
	assert_int_equal(open_in(dir, "0", -EACCES, &c, &err), -ENODEV);
	assert_non_null(strstr(err.msg,
			       "msr PMU: its smi event does not open on CPU 0: Permission denied"));
	assert_non_null(strstr(err.msg, "MSR: cannot open"));
	systree_remove(dir);
}

/* A regular file stands for /dev/cpu/N/msr: pread at the MSR's number gives its value. */
static void put_msr(const char *dir, int cpu, uint64_t value)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/dev/cpu/%d/msr", dir, cpu);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &value, sizeof(value), SMI_MSR), (ssize_t)sizeof(value));
	close(fd);
}

static void test_without_the_pmu_the_msr_counts_from_when_it_opened_in_its_low_32_bits(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "dev/cpu/0/msr", "" }, END };
	char dir[64];
	struct smi_counter *c = NULL;
	uint64_t n = 99;

	systree_make(dir, tree);
	put_msr(dir, 0, UINT64_C(0xabcd0000fffffffe)); /* the high half is not the count's */
	assert_int_equal(open_in(dir, "0", 0, &c, NULL), 0);
	assert_int_equal(fake.calls, 0);
	assert_int_equal(smi_counter_source(c), SMI_SOURCE_MSR);
	assert_int_equal(smi_read(c, &n), 0);
	assert_int_equal(n, 0);
	put_msr(dir, 0, UINT64_C(0xabcd000000000001)); /* wrapped: 3 more */
	assert_int_equal(smi_read(c, &n), 0);
	assert_int_equal(n, 3);
	smi_close(c);
	systree_remove(dir);
}

static void test_event_files_give_their_config_and_other_forms_are_refused(void **state)
{
	(void)state;
	uint64_t v = 77;
	assert_int_equal(smi_parse_event("event=0x04\n", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(smi_parse_event("event=4", &v), 0);
	assert_int_equal(v, 4);
	v = 77;
	assert_int_equal(smi_parse_event("config=4", &v), -EINVAL);
	assert_int_equal(smi_parse_event("event=0x04,umask=0x1", &v), -EINVAL);
	assert_int_equal(smi_parse_event("event=", &v), -EINVAL);
	assert_int_equal(smi_parse_event("event=0x", &v), -EINVAL);
	assert_int_equal(smi_parse_event("event=4abc", &v), -EINVAL);
	assert_int_equal(v, 77);
}

static void test_source_names_go_both_ways_and_none_has_no_name(void **state)
{
	(void)state;
	int s = -1;
	assert_null(smi_source_name(SMI_SOURCE_NONE));
	assert_null(smi_source_name(SMI_SOURCES));
	assert_int_equal(smi_source_parse("msr_pmu", &s), 0);
	assert_int_equal(s, SMI_SOURCE_PMU);
	assert_int_equal(smi_source_parse("msr", &s), 0);
	assert_int_equal(s, SMI_SOURCE_MSR);
	assert_int_equal(smi_source_parse("tsc", &s), -EINVAL);
	assert_int_equal(smi_source_parse(NULL, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_empty_tree_has_no_smi_source_and_says_why_of_both),
		cmocka_unit_test(
			test_a_tree_with_the_pmus_smi_event_opens_it_on_every_cpu_and_reads_its_counts),
		cmocka_unit_test(
			test_a_pmu_that_will_not_open_falls_to_the_msr_and_then_reports_both_failures),
		cmocka_unit_test(
			test_without_the_pmu_the_msr_counts_from_when_it_opened_in_its_low_32_bits),
		cmocka_unit_test(test_event_files_give_their_config_and_other_forms_are_refused),
		cmocka_unit_test(test_source_names_go_both_ways_and_none_has_no_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
