#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/cpuset.h"
#include "sys/cpus.h"
#include "sys/sysdesc.h"

static struct sysdesc collect(void)
{
	struct sysdesc d;
	assert_int_equal(sysdesc_collect(&d), 0);
	return d;
}

/* Whether /proc/cpuinfo's first "flags" line lists flag: the kernel's own verdict
 * on CPUID, to check ours against without hard-coding this machine. */
static bool cpuinfo_has_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "flags", 5) != 0 || !colon)
			continue;
		for (char *tok = strtok(colon + 1, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			if (strcmp(tok, flag) == 0)
				found = true;
		break;
	}
	free(line);
	fclose(f);
	return found;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void test_sysdesc_collect_fills_kernel_release(void **state)
{
	(void)state;
	struct utsname u;
	struct sysdesc d = collect();

	assert_int_equal(uname(&u), 0);
	assert_true(d.kernel_release[0] != '\0');
	assert_string_equal(d.kernel_release, u.release);
	assert_string_equal(d.kernel_version, u.version);
}

static void test_sysdesc_collect_fills_machine(void **state)
{
	(void)state;
	struct utsname u;
	struct sysdesc d = collect();

	assert_int_equal(uname(&u), 0);
	assert_true(d.machine[0] != '\0');
	assert_string_equal(d.machine, u.machine);
}

static void test_sysdesc_collect_terminates_every_string(void **state)
{
	(void)state;
	struct sysdesc d;

	/* Poison first, so a field the collector forgot would show up here. */
	memset(&d, 'x', sizeof(d));
	assert_int_equal(sysdesc_collect(&d), 0);
	assert_true(terminated(d.hostname, sizeof(d.hostname)));
	assert_true(terminated(d.kernel_release, sizeof(d.kernel_release)));
	assert_true(terminated(d.kernel_version, sizeof(d.kernel_version)));
	assert_true(terminated(d.machine, sizeof(d.machine)));
	assert_true(terminated(d.preempt, sizeof(d.preempt)));
	assert_true(terminated(d.preempt_mode, sizeof(d.preempt_mode)));
	assert_true(terminated(d.clocksource, sizeof(d.clocksource)));
	assert_true(terminated(d.clocksources, sizeof(d.clocksources)));
	assert_true(terminated(d.cpu_model, sizeof(d.cpu_model)));
	assert_true(terminated(d.hypervisor, sizeof(d.hypervisor)));
	assert_true(terminated(d.online_cpus, sizeof(d.online_cpus)));
}

static void test_sysdesc_collect_counts_the_same_cpus_as_cpus_online(void **state)
{
	(void)state;
	struct cpuset online;
	struct sysdesc d = collect();

	assert_int_equal(cpus_online(&online), 0);
	assert_true(d.ncpus_online >= 1);
	assert_int_equal(d.ncpus_online, cpuset_count(&online));
}

static void test_sysdesc_collect_lists_online_cpus_as_a_parsable_cpu_list(void **state)
{
	(void)state;
	struct cpuset set;
	struct sysdesc d = collect();

	assert_int_equal(cpuset_parse(d.online_cpus, &set), 0);
	assert_int_equal(cpuset_count(&set), d.ncpus_online);
}

static void test_sysdesc_collect_names_a_known_preemption_model(void **state)
{
	(void)state;
	static const char *const models[] = { "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "none", "unknown" };
	static const char *const modes[] = { "", "none", "voluntary", "full", "lazy" };
	struct sysdesc d = collect();
	bool model_known = false, mode_known = false;

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		model_known |= strcmp(d.preempt, models[i]) == 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		mode_known |= strcmp(d.preempt_mode, modes[i]) == 0;
	assert_true(model_known);
	assert_true(mode_known);
}

static void test_sysdesc_collect_reports_a_current_clocksource_among_the_available(void **state)
{
	(void)state;
	struct sysdesc d = collect();

	if (d.clocksource[0] == '\0' || d.clocksources[0] == '\0')
		skip();
	/* Whole words only: "tsc" must not match inside some "xtsc". */
	bool found = false;
	for (char *tok = strtok(d.clocksources, " "); tok; tok = strtok(NULL, " "))
		found |= strcmp(tok, d.clocksource) == 0;
	assert_true(found);
}

static void test_sysdesc_collect_reports_a_hypervisor_exactly_when_cpuinfo_flags_one(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	struct sysdesc d = collect();
	bool flagged = cpuinfo_has_flag("hypervisor");

	if (flagged)
		assert_true(d.hypervisor[0] != '\0');
	else
		assert_string_equal(d.hypervisor, "");
#else
	skip();        /* the hypervisor flag is an x86 CPUID bit */
#endif
}

static void test_cpus_allowed_is_not_empty(void **state)
{
	(void)state;
	struct cpuset allowed;

	assert_int_equal(cpus_allowed(&allowed), 0);
	assert_true(cpuset_count(&allowed) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysdesc_collect_fills_kernel_release),
		cmocka_unit_test(test_sysdesc_collect_fills_machine),
		cmocka_unit_test(test_sysdesc_collect_terminates_every_string),
		cmocka_unit_test(test_sysdesc_collect_counts_the_same_cpus_as_cpus_online),
		cmocka_unit_test(test_sysdesc_collect_lists_online_cpus_as_a_parsable_cpu_list),
		cmocka_unit_test(test_sysdesc_collect_names_a_known_preemption_model),
		cmocka_unit_test(test_sysdesc_collect_reports_a_current_clocksource_among_the_available),
		cmocka_unit_test(test_sysdesc_collect_reports_a_hypervisor_exactly_when_cpuinfo_flags_one),
		cmocka_unit_test(test_cpus_allowed_is_not_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
