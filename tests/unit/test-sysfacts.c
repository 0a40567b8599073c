#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "sys/sysfacts.h"
#include "sys/textfile.h"
#include "systree.h"

#define END { NULL, NULL }
#define KERNEL "proc/sys/kernel/"
#define CPU "sys/devices/system/cpu/"

static void test_rt_runtime_reads_the_budget_and_the_period(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ KERNEL "sched_rt_runtime_us", "950000\n" },
		{ KERNEL "sched_rt_period_us", "1000000\n" },
		END,
	};
	char dir[64];
	int64_t runtime = 0, period = 0;

	systree_make(dir, tree);
	assert_int_equal(sys_rt_runtime(dir, &runtime, &period), 0);
	assert_int_equal(runtime, 950000);
	assert_int_equal(period, 1000000);
	systree_remove(dir);
}

static void test_rt_runtime_of_minus_one_says_real_time_tasks_are_not_throttled(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ KERNEL "sched_rt_runtime_us", "-1\n" },
		{ KERNEL "sched_rt_period_us", "500000\n" },
		END,
	};
	char dir[64], slashed[80];
	int64_t runtime = 0, period = 0;

	systree_make(dir, tree);
	snprintf(slashed, sizeof(slashed), "%s/", dir);      /* a root with a trailing slash reads the same */
	assert_int_equal(sys_rt_runtime(slashed, &runtime, &period), 0);
	assert_int_equal(runtime, -1);
	assert_int_equal(period, 500000);
	systree_remove(dir);
}

static void test_rt_runtime_refuses_text_that_is_not_a_number_and_leaves_its_outputs_alone(void **state)
{
	(void)state;
	const struct systree_file junk[] = {
		{ KERNEL "sched_rt_runtime_us", "950000abc\n" },
		{ KERNEL "sched_rt_period_us", "1000000\n" },
		END,
	};
	const struct systree_file no_period[] = { { KERNEL "sched_rt_runtime_us", "950000\n" }, END };
	char dir[64];
	int64_t runtime = 7, period = 7;

	systree_make(dir, junk);
	assert_int_equal(sys_rt_runtime(dir, &runtime, &period), -EINVAL);
	assert_true(runtime == 7 && period == 7);
	systree_remove(dir);

	systree_make(dir, no_period);
	assert_int_equal(sys_rt_runtime(dir, &runtime, &period), -ENOENT);
	assert_true(runtime == 7 && period == 7);
	systree_remove(dir);
}

static void test_rt_runtime_of_this_machine_is_a_budget_within_its_period(void **state)
{
	(void)state;
	int64_t runtime, period;

	if (access("/proc/sys/kernel/sched_rt_runtime_us", R_OK) != 0)
		skip_because("this machine's kernel has no /proc/sys/kernel/sched_rt_runtime_us");
	assert_int_equal(sys_rt_runtime(NULL, &runtime, &period), 0);
	assert_true(period > 0);
	assert_true(runtime == -1 || (runtime >= 0 && runtime <= period));
}

static void test_cpu_flags_and_offered_clocksources_are_read_as_words(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ "proc/cpuinfo", "processor\t: 0\nmodel name\t: nonstop_tsc in a name\nflags\t\t: fpu tsc constant_tsc\n\n"
				  "processor\t: 1\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n" },
		{ "sys/devices/system/clocksource/clocksource0/available_clocksource", "kvm-clock tsc acpi_pm \n" },
		END,
	};
	const struct systree_file bare[] = { { "proc/cpuinfo", "processor\t: 0\n" }, END };
	char dir[64];

	systree_make(dir, tree);
	assert_int_equal(sys_cpu_flag(dir, "constant_tsc"), 1);
	assert_int_equal(sys_cpu_flag(dir, "nonstop_tsc"), 0);     /* the first CPU's line, not a name or the next */
	assert_int_equal(sys_cpu_flag(dir, "tsc"), 1);
	assert_int_equal(sys_clocksource_offered(dir, "tsc"), 1);
	assert_int_equal(sys_clocksource_offered(dir, "hpet"), 0);
	assert_int_equal(sys_clocksource_offered(dir, "kvm"), 0);
	systree_remove(dir);
	systree_make(dir, bare);
	assert_int_equal(sys_cpu_flag(dir, "tsc"), -ENOENT);
	assert_true(sys_clocksource_offered(dir, "tsc") < 0);
	systree_remove(dir);
}

static void test_thp_mode_is_the_bracketed_choice(void **state)
{
	(void)state;
	const struct systree_file madvise[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n" }, END,
	};
	const struct systree_file always[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n" }, END,
	};
	char dir[64], mode[16];

	systree_make(dir, madvise);
	assert_int_equal(sys_thp_mode(dir, mode, sizeof(mode)), 0);
	assert_string_equal(mode, "madvise");
	systree_remove(dir);

	systree_make(dir, always);
	assert_int_equal(sys_thp_mode(dir, mode, sizeof(mode)), 0);
	assert_string_equal(mode, "always");
	systree_remove(dir);
}

static void test_thp_mode_is_unknown_without_a_mark_or_a_file_and_never_cut_short(void **state)
{
	(void)state;
	const struct systree_file unmarked[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n" }, END,
	};
	const struct systree_file none[] = { END };
	char dir[64], mode[16], tiny[4];

	systree_make(dir, unmarked);
	assert_int_equal(sys_thp_mode(dir, mode, sizeof(mode)), -EINVAL);
	systree_remove(dir);

	systree_make(dir, none);
	assert_int_equal(sys_thp_mode(dir, mode, sizeof(mode)), -ENOENT);
	systree_remove(dir);

	const struct systree_file long_choice[] = {
		{ "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n" }, END,
	};
	systree_make(dir, long_choice);
	assert_int_equal(sys_thp_mode(dir, tiny, sizeof(tiny)), -ERANGE);
	systree_remove(dir);
}

/* Two mappings around the range asked, one of them in huge pages past it. */
#define SMAPS \
	"7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n" \
	"Size:               4096 kB\n" \
	"AnonHugePages:      4096 kB\n" \
	"7f0000400000-7f0000600000 rw-p 00000000 00:00 0 \n" \
	"Size:               2048 kB\n" \
	"AnonHugePages:         0 kB\n" \
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n" \
	"AnonHugePages:         0 kB\n"

static void test_huge_bytes_counts_each_mapping_at_most_its_overlap_with_the_range(void **state)
{
	(void)state;
	const struct systree_file smaps[] = { { "proc/self/smaps", SMAPS }, END };
	char dir[64];
	uint64_t huge = 1;

	systree_make(dir, smaps);
	/* 2 MiB of the huge mapping's 4 MiB, and 1 MiB of the ordinary one */
	assert_int_equal(sys_huge_bytes(dir, 0x7f0000200000u, 3u << 20, &huge), 0);
	assert_int_equal(huge, 2u << 20);
	assert_int_equal(sys_huge_bytes(dir, 0x7f0000400000u, 2u << 20, &huge), 0);
	assert_int_equal(huge, 0);
	huge = 7;
	assert_int_equal(sys_huge_bytes(dir, 0x10000u, 4096u, &huge), -ENOENT);
	assert_int_equal(huge, 7);
	systree_remove(dir);
}

static void test_huge_bytes_of_this_process_finds_its_own_memory(void **state)
{
	(void)state;
	static char page[4096];
	uint64_t huge = UINT64_MAX;

	assert_int_equal(sys_huge_bytes(NULL, (uintptr_t)page, sizeof(page), &huge), 0);
	assert_true(huge <= sizeof(page));
}

static void test_loadavg_is_the_kernels_line_without_its_newline(void **state)
{
	(void)state;
	const struct systree_file tree[] = { { "proc/loadavg", "0.52 0.58 0.59 2/345 6789\n" }, END };
	const struct systree_file none[] = { END };
	char dir[64], la[128];

	systree_make(dir, tree);
	assert_int_equal(sys_loadavg(dir, la, sizeof(la)), 0);
	assert_string_equal(la, "0.52 0.58 0.59 2/345 6789");
	systree_remove(dir);

	systree_make(dir, none);
	assert_int_equal(sys_loadavg(dir, la, sizeof(la)), -ENOENT);
	systree_remove(dir);
}

static void test_cpu_node_is_the_node_link_in_the_cpus_directory(void **state)
{
	(void)state;
	const struct systree_file tree[] = {
		{ CPU "cpu0/node0", "" },
		{ CPU "cpu0/online", "1\n" },
		{ CPU "cpu1/topology/core_id", "0\n" },
		{ CPU "cpu1/node1", "" },
		{ CPU "cpu1/online", "1\n" },
		{ CPU "cpu2/online", "1\n" },
		{ CPU "cpu3/nodes", "" },
		END,
	};
	char dir[64];
	unsigned node = 99;

	systree_make(dir, tree);
	assert_int_equal(sys_cpu_node(dir, 1, &node), 0);
	assert_int_equal(node, 1);
	assert_int_equal(sys_cpu_node(dir, 0, &node), 0);
	assert_int_equal(node, 0);
	node = 99;
	assert_int_equal(sys_cpu_node(dir, 2, &node), -ENOENT);    /* no NUMA in this kernel */
	assert_int_equal(sys_cpu_node(dir, 3, &node), -ENOENT);    /* "nodes" is not a node */
	assert_int_equal(sys_cpu_node(dir, 4, &node), -ENOENT);    /* no such CPU */
	assert_int_equal(node, 99);
	systree_remove(dir);
}

static void test_cpu_node_of_this_machine_lists_the_cpu_among_the_nodes_cpus(void **state)
{
	(void)state;
	char path[96], list[4096];
	struct cpuset cpus;
	unsigned node;

	if (sys_cpu_node(NULL, 0, &node) == -ENOENT)
		skip_because("this machine's kernel has no NUMA");
	assert_int_equal(sys_cpu_node(NULL, 0, &node), 0);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", node);
	assert_int_equal(textfile_read(path, list, sizeof(list)), 0);
	assert_int_equal(cpuset_parse(list, &cpus), 0);
	assert_true(cpuset_has(&cpus, 0));
}

/* In a child, with io_uring_setup answering EXDEV: an errno no kernel gives for it. */
static void test_io_uring_usable_passes_on_the_kernels_refusal(void **state)
{
	(void)state;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter filter[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EXDEV),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = ARRAY_SIZE(filter), .filter = filter };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			_exit(2);
		_exit(sys_io_uring_usable() == -EXDEV ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_io_uring_usable_says_yes_where_the_kernel_allows_root(void **state)
{
	(void)state;
	char text[16];

	/* kernel.io_uring_disabled: 0 all may, 1 root and a group, 2 nobody (absent before 6.6: all may). */
	if (geteuid() != 0)
		skip_because("this machine: the tests do not run as root");
	if (textfile_read("/proc/sys/kernel/io_uring_disabled", text, sizeof(text)) == 0 && strcmp(text, "2") == 0)
		skip_because("this machine disables io_uring for everyone (kernel.io_uring_disabled = 2)");
	assert_int_equal(sys_io_uring_usable(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rt_runtime_reads_the_budget_and_the_period),
		cmocka_unit_test(test_rt_runtime_of_minus_one_says_real_time_tasks_are_not_throttled),
		cmocka_unit_test(test_rt_runtime_refuses_text_that_is_not_a_number_and_leaves_its_outputs_alone),
		cmocka_unit_test(test_rt_runtime_of_this_machine_is_a_budget_within_its_period),
		cmocka_unit_test(test_cpu_flags_and_offered_clocksources_are_read_as_words),
		cmocka_unit_test(test_thp_mode_is_the_bracketed_choice),
		cmocka_unit_test(test_thp_mode_is_unknown_without_a_mark_or_a_file_and_never_cut_short),
		cmocka_unit_test(test_loadavg_is_the_kernels_line_without_its_newline),
		cmocka_unit_test(test_cpu_node_is_the_node_link_in_the_cpus_directory),
		cmocka_unit_test(test_cpu_node_of_this_machine_lists_the_cpu_among_the_nodes_cpus),
		cmocka_unit_test(test_huge_bytes_counts_each_mapping_at_most_its_overlap_with_the_range),
		cmocka_unit_test(test_huge_bytes_of_this_process_finds_its_own_memory),
		cmocka_unit_test(test_io_uring_usable_passes_on_the_kernels_refusal),
		cmocka_unit_test(test_io_uring_usable_says_yes_where_the_kernel_allows_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
