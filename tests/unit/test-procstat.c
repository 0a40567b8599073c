#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "rng.h"
#include "sys/cpus.h"
#include "sys/procstat.h"

/*
 * The fixtures live beside this file's directory.  Meson compiles it by a path
 * relative to the build root, which is where tests run from; the executable's
 * own place (build/tests/unit) finds the root when they do not.
 */
static const char *fixture(const char *name)
{
	static char path[2 * PATH_MAX];
	char dir[PATH_MAX];
	const char *src = __FILE__;
	const char *slash = strrchr(src, '/');
	int srclen = slash ? (int)(slash - src) : 1;
	int n;

	if (!slash)
		src = ".";
	n = snprintf(path, sizeof(path), "%.*s/../fixtures/proc/%s", srclen, src, name);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	if (access(path, R_OK) == 0 || src[0] == '/')
		return path;

	ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	assert_true(len > 0);
	dir[len] = '\0';
	*strrchr(dir, '/') = '\0';
	n = snprintf(path, sizeof(path), "%s/../../%.*s/../fixtures/proc/%s", dir, srclen, src, name);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	return path;
}

/* text in a fresh temporary file, for inputs too small to deserve a fixture. */
static void write_temp(char path[static 64], const char *text, size_t len)
{
	snprintf(path, 64, "/tmp/test-procstat-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void table_for(struct proc_table *t, const char *cpulist)
{
	struct cpuset set;
	assert_int_equal(cpuset_parse(cpulist, &set), 0);
	assert_int_equal(proc_table_init(t, &set), 0);
}

static int read_text_as(struct proc_table *t, const char *text, bool irq)
{
	char path[64];
	write_temp(path, text, strlen(text));
	int r = irq ? proc_read_interrupts(t, path) : proc_read_softirqs(t, path);
	unlink(path);
	return r;
}

static bool has_source(const struct proc_table *t, const char *name)
{
	for (size_t s = 0; s < t->nsrc; s++)
		if (strcmp(t->names[s], name) == 0)
			return true;
	return false;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static uint64_t ticks_ns(uint64_t ticks)
{
	return ticks * (UINT64_C(1000000000) / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* ---- fixtures ---------------------------------------------------------- */

static void test_x86_interrupts_fixture_names_numbered_irqs_by_number_and_device(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(proc_read_interrupts(&t, fixture("x86-2cpu-interrupts")), 0);
	assert_int_equal(t.nsrc, 33);        /* 35 lines less ERR and MIS */
	assert_string_equal(t.names[0], "24 ACPI:Ged");
	assert_true(has_source(&t, "36 virtio1-req.0"));
	assert_true(has_source(&t, "32 virtio0-reporting_vq"));
	assert_int_equal(proc_table_get(&t, "24 ACPI:Ged", 0), 1);
	assert_int_equal(proc_table_get(&t, "26 ttyS0", 1), 8);
	assert_int_equal(proc_table_get(&t, "31 virtio0-stats", 1), 1304);
	assert_int_equal(proc_table_get(&t, "36 virtio1-req.0", 1), 110741);
	assert_int_equal(proc_table_get(&t, "LOC", 0), 960207);
	assert_int_equal(proc_table_get(&t, "LOC", 1), 10195911);
	assert_int_equal(proc_table_get(&t, "RES", 0), 34636);
	proc_table_free(&t);
}

static void test_x86_interrupts_fixture_totals_are_the_sums_of_every_source(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(proc_read_interrupts(&t, fixture("x86-2cpu-interrupts")), 0);
	assert_int_equal(proc_table_total(&t, 0), 1172601);
	assert_int_equal(proc_table_total(&t, 1), 10424946);
	assert_int_equal(proc_table_total(&t, 2), 0);     /* past the list */
	proc_table_free(&t);
}

static void test_x86_softirqs_fixture_reads_every_vector(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(proc_read_softirqs(&t, fixture("x86-2cpu-softirqs")), 0);
	assert_int_equal(t.nsrc, 10);
	assert_string_equal(t.names[0], "HI");
	assert_string_equal(t.names[9], "RCU");
	assert_int_equal(proc_table_get(&t, "TIMER", 0), 110290);
	assert_int_equal(proc_table_get(&t, "BLOCK", 1), 110734);
	assert_int_equal(proc_table_get(&t, "NET_RX", 1), 1017);
	assert_int_equal(proc_table_total(&t, 0), 603580);
	assert_int_equal(proc_table_total(&t, 1), 931036);
	proc_table_free(&t);
}

static void test_x86_stat_fixture_gives_steal_of_each_cpu_in_ns(void **state)
{
	(void)state;
	struct proc_table t;
	uint64_t steal[2];
	table_for(&t, "0-1");

	assert_int_equal(proc_read_steal(&t, steal, fixture("x86-2cpu-stat")), 0);
	assert_int_equal(steal[0], ticks_ns(2064));
	assert_int_equal(steal[1], ticks_ns(2332));
	proc_table_free(&t);
}

static void test_sparse_interrupts_map_columns_by_the_header_not_by_position(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-2,5");      /* CPU1 has no column */

	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_int_equal(proc_table_get(&t, "LOC", 0), 1000000);
	assert_int_equal(proc_table_get(&t, "LOC", 1), 0);
	assert_int_equal(proc_table_get(&t, "LOC", 2), 2000000);
	assert_int_equal(proc_table_get(&t, "LOC", 3), 5000000);
	assert_int_equal(proc_table_get(&t, "130 nvme0q0", 3), 102400);
	assert_int_equal(proc_table_get(&t, "8 rtc0", 2), 1);
	assert_int_equal(proc_table_total(&t, 1), 0);
	proc_table_free(&t);
}

static void test_sparse_interrupts_read_for_a_subset_of_the_columns(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "5,7");        /* CPU7 is past the last column */

	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_int_equal(proc_table_get(&t, "RES", 0), 500);
	assert_int_equal(proc_table_get(&t, "RES", 1), 0);
	assert_int_equal(proc_table_total(&t, 0), 7 + 5 + 3 + 102400 + 3 + 6 + 5000000 + 500);
	assert_int_equal(proc_table_total(&t, 1), 0);
	proc_table_free(&t);
}

static void test_a_line_shorter_than_the_header_leaves_its_missing_columns_zero(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0,2,5");

	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_int_equal(proc_table_get(&t, "131 nvme0q1", 0), 10);
	assert_int_equal(proc_table_get(&t, "131 nvme0q1", 1), 20);
	assert_int_equal(proc_table_get(&t, "131 nvme0q1", 2), 0);
	proc_table_free(&t);
}

static void test_an_irq_with_several_actions_keeps_the_whole_list(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0,2,5");

	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_int_equal(proc_table_get(&t, "16 ehci_hcd:usb1, i801_smbus", 1), 30);
	/* "PCIe PME" is one action with a blank in its name */
	assert_int_equal(proc_table_get(&t, "122 PCIe PME, pciehp", 2), 3);
	proc_table_free(&t);
}

static void test_a_long_irq_name_is_cut_to_fit(void **state)
{
	(void)state;
	struct proc_table t;
	const char *full = "140 iwlwifi:default_queue_with_a_very_long_action_name";
	char cut[PROC_NAME_LEN];
	table_for(&t, "0,2,5");

	memcpy(cut, full, sizeof(cut) - 1);
	cut[sizeof(cut) - 1] = '\0';
	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_true(has_source(&t, cut));
	assert_int_equal(strlen(cut), PROC_NAME_LEN - 1);
	assert_int_equal(proc_table_get(&t, cut, 0), 5);
	proc_table_free(&t);
}

static void test_an_irq_without_actions_is_named_by_its_last_field(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0,2,5");

	assert_int_equal(proc_read_interrupts(&t, fixture("sparse-interrupts")), 0);
	assert_int_equal(proc_table_get(&t, "141 2097153-edge", 2), 3);
	proc_table_free(&t);
}

static void test_sparse_softirqs_and_steal_map_cpus_by_name(void **state)
{
	(void)state;
	struct proc_table t;
	uint64_t steal[4];
	table_for(&t, "0-2,5");

	assert_int_equal(proc_read_softirqs(&t, fixture("sparse-softirqs")), 0);
	assert_int_equal(proc_table_get(&t, "SCHED", 3), 50000);
	assert_int_equal(proc_table_get(&t, "SCHED", 1), 0);
	assert_int_equal(proc_table_get(&t, "BLOCK", 2), 300);
	assert_int_equal(proc_read_steal(&t, steal, fixture("sparse-stat")), 0);
	assert_int_equal(steal[0], ticks_ns(250));
	assert_int_equal(steal[1], 0);
	assert_int_equal(steal[2], ticks_ns(500));
	assert_int_equal(steal[3], ticks_ns(1000));
	proc_table_free(&t);
}

static void test_err_and_mis_lines_belong_to_no_cpu_and_are_skipped(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-3");

	assert_int_equal(proc_read_interrupts(&t, fixture("errmis-interrupts")), 0);
	assert_int_equal(t.nsrc, 4);
	assert_false(has_source(&t, "ERR"));
	assert_false(has_source(&t, "MIS"));
	assert_string_equal(t.names[3], "PIN");
	assert_int_equal(proc_table_total(&t, 0), 9 + 12345);
	assert_int_equal(proc_table_total(&t, 3), 45678);
	proc_table_free(&t);
}

static void test_arm64_interrupts_name_ipis_and_gic_lines(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-3");

	assert_int_equal(proc_read_interrupts(&t, fixture("arm64-interrupts")), 0);
	assert_int_equal(t.nsrc, 13);        /* Err skipped */
	assert_false(has_source(&t, "Err"));
	assert_int_equal(proc_table_get(&t, "11 arch_timer", 3), 1567890);
	assert_true(has_source(&t, "14 kvm guest ptimer"));
	assert_int_equal(proc_table_get(&t, "48 virtio1", 1), 64);
	assert_int_equal(proc_table_get(&t, "53 PCIe PME, aerdrv", 2), 2);
	assert_int_equal(proc_table_get(&t, "IPI0", 2), 4567);
	assert_int_equal(proc_table_get(&t, "IPI5", 3), 40);
	assert_true(has_source(&t, "IPI6"));
	assert_int_equal(proc_table_total(&t, 1), 1345678 + 64 + 3456 + 222 + 20);
	proc_table_free(&t);
}

static void test_truncated_and_garbage_files_are_rejected_with_einval(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(proc_read_interrupts(&t, fixture("truncated-interrupts")), -EINVAL);
	assert_int_equal(proc_read_interrupts(&t, fixture("garbage-interrupts")), -EINVAL);
	assert_int_equal(proc_read_softirqs(&t, fixture("garbage-interrupts")), -EINVAL);
	assert_int_equal(t.nsrc, 0);
	proc_table_free(&t);
}

/* ---- edge cases --------------------------------------------------------- */

static void test_malformed_texts_are_rejected_with_einval(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool irq;
	} cases[] = {
		{ "", true },
		{ "\n", true },
		{ "  CPU0  CPU1\n", false },                    /* fine, for contrast */
		{ "  CPU0  CPUx\n", true },
		{ "  CPU1  CPU0\n  LOC: 1 2 timer\n", true },   /* header out of order */
		{ "  CPU0  CPU0\n  LOC: 1 2 timer\n", true },
		{ "  CPU0 CPU1\nLOC 1 2 no colon\n", true },
		{ "  CPU0 CPU1\n: 1 2\n", true },
		{ "  CPU0 CPU1\nL$C: 1 2\n", true },
		{ "  CPU0 CPU1\nLOC: none\n", true },          /* no count */
		{ "  CPU0 CPU1\nLOC: 1 99999999999999999999999\n", true },
		{ "  CPU0 CPU1\nTIMER: 1 2 extra\n", false },  /* softirqs have no text */
		{ "  CPU0 CPU1\nTIMER: 1 2\nRCU: 3 4", false },/* cut short */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct proc_table t;
		table_for(&t, "0-1");
		int want = i == 2 ? 0 : -EINVAL;
		if (read_text_as(&t, cases[i].text, cases[i].irq) != want)
			fail_msg("case %zu: '%s'", i, cases[i].text);
		proc_table_free(&t);
	}
}

static void test_a_nul_byte_makes_the_file_invalid(void **state)
{
	(void)state;
	static const char text[] = "  CPU0\nLOC: 1\0 2 timer\n";
	struct proc_table t;
	char path[64];
	table_for(&t, "0");

	write_temp(path, text, sizeof(text) - 1);
	assert_int_equal(proc_read_interrupts(&t, path), -EINVAL);
	unlink(path);
	proc_table_free(&t);
}

static void test_a_missing_file_gives_its_errno(void **state)
{
	(void)state;
	struct proc_table t;
	uint64_t steal[2] = { 7, 7 };
	table_for(&t, "0-1");

	assert_int_equal(proc_read_interrupts(&t, "/nonexistent/interrupts"), -ENOENT);
	assert_int_equal(proc_read_steal(&t, steal, "/nonexistent/stat"), -ENOENT);
	assert_int_equal(steal[0], 7);
	proc_table_free(&t);
}

static void test_a_failed_read_leaves_the_table_as_it_was(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-3");

	assert_int_equal(proc_read_interrupts(&t, fixture("arm64-interrupts")), 0);
	size_t nsrc = t.nsrc;
	uint64_t *before = malloc(nsrc * t.ncpus * sizeof(*before));
	assert_non_null(before);
	memcpy(before, t.counts, nsrc * t.ncpus * sizeof(*before));

	/* a new source on the first line, then a bad line: nothing may stick */
	assert_int_equal(read_text_as(&t, "  CPU0 CPU1 CPU2 CPU3\n"
				      " 99: 5 5 5 5  GICv3 99 Level  new\n"
				      "IPI0: 1 2 3 4 Rescheduling\n"
				      "IPI1: x\n", true), -EINVAL);
	assert_int_equal(t.nsrc, nsrc);
	assert_memory_equal(t.counts, before, nsrc * t.ncpus * sizeof(*before));
	assert_false(has_source(&t, "99 new"));
	free(before);
	proc_table_free(&t);
}

static void test_sources_keep_their_rows_as_others_come_and_go(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(read_text_as(&t, "  CPU0 CPU1\n"
				      "  1: 10 11  chip 1-edge  a\n"
				      "  2: 20 21  chip 2-edge  b\n"
				      "LOC: 30 31  timer\n", true), 0);
	assert_int_equal(t.nsrc, 3);
	/* b left, c came, the order changed */
	assert_int_equal(read_text_as(&t, "  CPU0 CPU1\n"
				      "  3: 40 41  chip 3-edge  c\n"
				      "LOC: 50 51  timer\n"
				      "  1: 60 61  chip 1-edge  a\n", true), 0);
	assert_int_equal(t.nsrc, 4);
	assert_string_equal(t.names[0], "1 a");
	assert_string_equal(t.names[1], "2 b");
	assert_string_equal(t.names[2], "LOC");
	assert_string_equal(t.names[3], "3 c");
	assert_int_equal(t.counts[0 * 2 + 1], 61);
	assert_int_equal(t.counts[1 * 2 + 0], 0);
	assert_int_equal(t.counts[2 * 2 + 0], 50);
	assert_int_equal(t.counts[3 * 2 + 1], 41);
	assert_int_equal(proc_table_get(&t, "2 b", 1), 0);
	proc_table_free(&t);
}

static void test_reading_the_same_sources_again_does_not_reallocate(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(proc_read_interrupts(&t, fixture("x86-2cpu-interrupts")), 0);
	void *names = t.names, *counts = t.counts, *buf = t.buf;
	size_t cap = t.cap;
	for (int i = 0; i < 3; i++)
		assert_int_equal(proc_read_interrupts(&t, fixture("x86-2cpu-interrupts")), 0);
	assert_ptr_equal(t.names, names);
	assert_ptr_equal(t.counts, counts);
	assert_ptr_equal(t.buf, buf);
	assert_int_equal(t.cap, cap);
	assert_int_equal(proc_table_get(&t, "LOC", 0), 960207);
	proc_table_free(&t);
}

static void test_lines_with_the_same_name_add_up(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(read_text_as(&t, "  CPU0 CPU1\n"
				      "XYZ: 1 2  first\n"
				      "XYZ: 10 20  second\n", true), 0);
	assert_int_equal(t.nsrc, 1);
	assert_int_equal(proc_table_get(&t, "XYZ", 0), 11);
	assert_int_equal(proc_table_get(&t, "XYZ", 1), 22);
	proc_table_free(&t);
}

static void test_an_irq_with_only_counts_is_named_by_its_number(void **state)
{
	(void)state;
	struct proc_table t;
	table_for(&t, "0-1");

	assert_int_equal(read_text_as(&t, "  CPU0 CPU1\n  7: 1 2   \n", true), 0);
	assert_string_equal(t.names[0], "7");
	assert_int_equal(proc_table_get(&t, "7", 1), 2);
	proc_table_free(&t);
}

static void test_a_name_cut_inside_an_action_list_does_not_end_in_a_comma(void **state)
{
	(void)state;
	struct proc_table t;
	char text[256], want[PROC_NAME_LEN];
	const char *a41 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	table_for(&t, "0");

	/* "123 " and 41 letters fill 45 bytes; the cut at 47 falls after ", " */
	snprintf(text, sizeof(text), "  CPU0\n123: 1  chip 1-edge  %s, b\n", a41);
	snprintf(want, sizeof(want), "123 %s", a41);
	assert_int_equal(read_text_as(&t, text, true), 0);
	assert_string_equal(t.names[0], want);
	proc_table_free(&t);
}

static void test_a_table_for_no_cpus_still_reads(void **state)
{
	(void)state;
	struct proc_table t;
	struct cpuset none;
	uint64_t unused = 7;

	cpuset_clear(&none);
	assert_int_equal(proc_table_init(&t, &none), 0);
	assert_int_equal(proc_read_interrupts(&t, fixture("arm64-interrupts")), 0);
	assert_int_equal(t.nsrc, 13);
	assert_int_equal(proc_table_total(&t, 0), 0);
	assert_int_equal(proc_table_get(&t, "IPI0", 0), 0);
	assert_int_equal(proc_read_steal(&t, &unused, fixture("sparse-stat")), 0);
	assert_int_equal(unused, 7);
	proc_table_free(&t);
	proc_table_free(&t);         /* a freed table is zeroed: freeing it again is fine */
}

static void test_steal_rejects_stat_files_it_cannot_read_and_leaves_ret_alone(void **state)
{
	(void)state;
	static const char *texts[] = {
		"cpu  1 2 3 4 5 6 7 8 9 10\nintr 1\n",          /* no cpuN line */
		"cpu0 1 2 3 4 5 6 7\n",                         /* no steal */
		"cpu0 1 2 3 4 5 6 7 x\n",
		"cpu0x 1 2 3 4 5 6 7 8\n",
		"cpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3",             /* cut short */
	};
	struct proc_table t;
	uint64_t steal[2] = { 7, 7 };
	char path[64];
	table_for(&t, "0-1");

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		write_temp(path, texts[i], strlen(texts[i]));
		if (proc_read_steal(&t, steal, path) != -EINVAL)
			fail_msg("case %zu", i);
		unlink(path);
		assert_int_equal(steal[0], 7);
		assert_int_equal(steal[1], 7);
	}
	proc_table_free(&t);
}

/* A machine with hundreds of CPUs, a few offline, and hundreds of sources:
 * the file runs far past the first read buffer, and every count must land. */
static void test_a_large_random_file_reads_back_every_count(void **state)
{
	(void)state;
	enum { MAXCPU = 768, NSRC = 300 };
	static uint64_t want[NSRC][MAXCPU];
	bool in_file[MAXCPU], in_table[MAXCPU];
	size_t short_cols[NSRC];
	struct cpuset tset;
	struct proc_table t;
	char path[64];

	rng_seed(42);
	cpuset_clear(&tset);
	for (int c = 0; c < MAXCPU; c++) {
		in_file[c] = rng_below(10) != 0;
		in_table[c] = rng_below(3) != 0;
		if (in_table[c])
			cpuset_add(&tset, (unsigned)c);
	}
	write_temp(path, "", 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "     ");
	size_t ncols = 0;
	for (int c = 0; c < MAXCPU; c++)
		if (in_file[c]) {
			fprintf(f, "CPU%-7d ", c);
			ncols++;
		}
	fputc('\n', f);
	memset(want, 0, sizeof(want));
	for (int s = 0; s < NSRC; s++) {
		/* one line in ten stops early, like kernels that print fewer columns */
		short_cols[s] = rng_below(10) == 0 ? 1 + rng_below(ncols) : ncols;
		if (s < NSRC - 20)
			fprintf(f, "%4d:", s);
		else
			fprintf(f, "X%02d:", s);
		size_t col = 0;
		for (int c = 0; c < MAXCPU && col < short_cols[s]; c++) {
			if (!in_file[c])
				continue;
			want[s][c] = rng_below(UINT64_C(1) << 32);
			fprintf(f, " %10llu", (unsigned long long)want[s][c]);
			col++;
		}
		if (s < NSRC - 20)
			fprintf(f, "  PCI-MSI %d-edge      dev%d\n", s, s);
		else
			fprintf(f, "   Named interrupts %d\n", s);
	}
	assert_int_equal(fclose(f), 0);

	assert_int_equal(proc_table_init(&t, &tset), 0);
	assert_int_equal(proc_read_interrupts(&t, path), 0);
	unlink(path);
	assert_int_equal(t.nsrc, NSRC);
	for (int s = 0; s < NSRC; s++) {
		char name[PROC_NAME_LEN];
		if (s < NSRC - 20)
			snprintf(name, sizeof(name), "%d dev%d", s, s);
		else
			snprintf(name, sizeof(name), "X%02d", s);
		assert_string_equal(t.names[s], name);
		for (size_t k = 0; k < t.ncpus; k++)
			if (t.counts[(size_t)s * t.ncpus + k] != want[s][t.cpus[k]])
				fail_msg("source %d, CPU %d", s, t.cpus[k]);
	}
	proc_table_free(&t);
}

/* ---- this machine ------------------------------------------------------ */

static void check_live_counts_grow(int (*readfn)(struct proc_table *, const char *))
{
	struct cpuset online;
	struct proc_table t;

	assert_int_equal(cpus_online(&online), 0);
	assert_int_equal(proc_table_init(&t, &online), 0);
	assert_int_equal(readfn(&t, NULL), 0);
	assert_true(t.nsrc > 0);

	size_t nsrc = t.nsrc;
	uint64_t *before = malloc(nsrc * t.ncpus * sizeof(*before));
	uint64_t *totals = malloc(t.ncpus * sizeof(*totals));
	assert_non_null(before);
	assert_non_null(totals);
	memcpy(before, t.counts, nsrc * t.ncpus * sizeof(*before));
	for (size_t k = 0; k < t.ncpus; k++)
		totals[k] = proc_table_total(&t, k);

	sleep_ms(20);
	assert_int_equal(readfn(&t, NULL), 0);
	assert_true(t.nsrc >= nsrc);
	for (size_t k = 0; k < t.ncpus; k++) {
		assert_true(proc_table_total(&t, k) >= totals[k]);
		for (size_t s = 0; s < nsrc; s++)
			assert_true(t.counts[s * t.ncpus + k] >= before[s * t.ncpus + k]);
	}
	free(before);
	free(totals);
	proc_table_free(&t);
}

static void test_live_interrupt_counts_never_go_down(void **state)
{
	(void)state;
	check_live_counts_grow(proc_read_interrupts);
}

static void test_live_softirq_counts_never_go_down(void **state)
{
	(void)state;
	check_live_counts_grow(proc_read_softirqs);
}

static void test_live_steal_never_goes_down(void **state)
{
	(void)state;
	struct cpuset online;
	struct proc_table t;

	assert_int_equal(cpus_online(&online), 0);
	assert_int_equal(proc_table_init(&t, &online), 0);
	uint64_t *a = malloc(t.ncpus * sizeof(*a)), *b = malloc(t.ncpus * sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(proc_read_steal(&t, a, NULL), 0);
	sleep_ms(20);
	assert_int_equal(proc_read_steal(&t, b, NULL), 0);
	for (size_t k = 0; k < t.ncpus; k++)
		assert_true(b[k] >= a[k]);
	free(a);
	free(b);
	proc_table_free(&t);
}

static void test_the_calling_thread_counts_a_voluntary_switch_when_it_sleeps(void **state)
{
	(void)state;
	uint64_t v0, n0, v1, n1;
	pid_t tid = gettid();

	assert_int_equal(proc_thread_switches(tid, &v0, &n0), 0);
	sleep_ms(2);
	assert_int_equal(proc_thread_switches(tid, &v1, &n1), 0);
	assert_true(v1 > v0);
	assert_true(n1 >= n0);
}

struct sleeper {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	bool done;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	sleep_ms(2);                 /* a voluntary switch before anyone looks */
	pthread_mutex_lock(&s->lock);
	s->tid = gettid();
	pthread_cond_broadcast(&s->cond);
	while (!s->done)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void test_another_thread_of_the_process_has_readable_switch_counts(void **state)
{
	(void)state;
	struct sleeper s = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false };
	pthread_t th;
	uint64_t v, n;

	assert_int_equal(pthread_create(&th, NULL, sleeper_main, &s), 0);
	pthread_mutex_lock(&s.lock);
	while (s.tid == 0)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);

	assert_int_equal(proc_thread_switches(s.tid, &v, &n), 0);
	assert_true(v >= 1);

	pthread_mutex_lock(&s.lock);
	s.done = true;
	pthread_cond_broadcast(&s.cond);
	pthread_mutex_unlock(&s.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
}

static void test_thread_switches_reject_a_bad_or_missing_tid_and_read_another_processes(void **state)
{
	(void)state;
	uint64_t v = 7, n = 7;

	assert_int_equal(proc_thread_switches(0, &v, &n), -EINVAL);
	assert_int_equal(proc_thread_switches(-5, &v, &n), -EINVAL);
	/* above the largest pid_max the kernel allows: no such thread */
	assert_int_equal(proc_thread_switches(4194305, &v, &n), -ENOENT);
	assert_int_equal(v, 7);
	assert_int_equal(n, 7);
	/* init's thread is another process's: attach reads its program's threads */
	assert_int_equal(proc_thread_switches(1, &v, &n), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_interrupts_fixture_names_numbered_irqs_by_number_and_device),
		cmocka_unit_test(test_x86_interrupts_fixture_totals_are_the_sums_of_every_source),
		cmocka_unit_test(test_x86_softirqs_fixture_reads_every_vector),
		cmocka_unit_test(test_x86_stat_fixture_gives_steal_of_each_cpu_in_ns),
		cmocka_unit_test(test_sparse_interrupts_map_columns_by_the_header_not_by_position),
		cmocka_unit_test(test_sparse_interrupts_read_for_a_subset_of_the_columns),
		cmocka_unit_test(test_a_line_shorter_than_the_header_leaves_its_missing_columns_zero),
		cmocka_unit_test(test_an_irq_with_several_actions_keeps_the_whole_list),
		cmocka_unit_test(test_a_long_irq_name_is_cut_to_fit),
		cmocka_unit_test(test_an_irq_without_actions_is_named_by_its_last_field),
		cmocka_unit_test(test_sparse_softirqs_and_steal_map_cpus_by_name),
		cmocka_unit_test(test_err_and_mis_lines_belong_to_no_cpu_and_are_skipped),
		cmocka_unit_test(test_arm64_interrupts_name_ipis_and_gic_lines),
		cmocka_unit_test(test_truncated_and_garbage_files_are_rejected_with_einval),
		cmocka_unit_test(test_malformed_texts_are_rejected_with_einval),
		cmocka_unit_test(test_a_nul_byte_makes_the_file_invalid),
		cmocka_unit_test(test_a_missing_file_gives_its_errno),
		cmocka_unit_test(test_a_failed_read_leaves_the_table_as_it_was),
		cmocka_unit_test(test_sources_keep_their_rows_as_others_come_and_go),
		cmocka_unit_test(test_reading_the_same_sources_again_does_not_reallocate),
		cmocka_unit_test(test_lines_with_the_same_name_add_up),
		cmocka_unit_test(test_an_irq_with_only_counts_is_named_by_its_number),
		cmocka_unit_test(test_a_name_cut_inside_an_action_list_does_not_end_in_a_comma),
		cmocka_unit_test(test_a_table_for_no_cpus_still_reads),
		cmocka_unit_test(test_steal_rejects_stat_files_it_cannot_read_and_leaves_ret_alone),
		cmocka_unit_test(test_a_large_random_file_reads_back_every_count),
		cmocka_unit_test(test_live_interrupt_counts_never_go_down),
		cmocka_unit_test(test_live_softirq_counts_never_go_down),
		cmocka_unit_test(test_live_steal_never_goes_down),
		cmocka_unit_test(test_the_calling_thread_counts_a_voluntary_switch_when_it_sleeps),
		cmocka_unit_test(test_another_thread_of_the_process_has_readable_switch_counts),
		cmocka_unit_test(test_thread_switches_reject_a_bad_or_missing_tid_and_read_another_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
