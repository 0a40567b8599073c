#include "sys/cpus.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cpus_online(struct cpuset *ret)
{
	char *line = NULL;
	size_t cap = 0;
	int r;

	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -errno;
	/* getline, not a fixed buffer: a sparse list on a big machine runs to kilobytes,
	 * and a truncated list would still parse, just wrongly. */
	errno = 0;
	ssize_t n = getline(&line, &cap, f);
	if (n < 0)
		r = errno ? -errno : -ENODATA;
	else {
		line[strcspn(line, "\n")] = '\0';
		r = cpuset_parse(line, ret);     /* leaves ret alone on failure */
	}
	free(line);
	fclose(f);
	return r;
}

cpu_set_t *cpus_mask_alloc(const struct cpuset *set, size_t *ret_size)
{
	/* Sized for CPUSET_MAX rather than glibc's 1024-CPU cpu_set_t, which the kernel
	 * rejects with EINVAL on machines configured for more. */
	size_t size = CPU_ALLOC_SIZE(CPUSET_MAX);
	cpu_set_t *mask = CPU_ALLOC(CPUSET_MAX);

	if (!mask)
		return NULL;
	CPU_ZERO_S(size, mask);
	if (set)
		cpuset_foreach(cpu, set)
			CPU_SET_S((unsigned)cpu, size, mask);
	*ret_size = size;
	return mask;
}

int cpus_allowed(struct cpuset *ret)
{
	struct cpuset set;
	size_t size;
	cpu_set_t *mask = cpus_mask_alloc(NULL, &size);

	if (!mask)
		return -ENOMEM;
	if (sched_getaffinity(0, size, mask) < 0) {
		int r = -errno;
		CPU_FREE(mask);
		return r;
	}
	cpuset_clear(&set);
	for (unsigned cpu = 0; cpu < CPUSET_MAX; cpu++)
		if (CPU_ISSET_S(cpu, size, mask))
			cpuset_add(&set, cpu);
	CPU_FREE(mask);
	*ret = set;
	return 0;
}

int cpus_pin(const struct cpuset *set)
{
	size_t size;
	cpu_set_t *mask = cpus_mask_alloc(set, &size);
	int r;

	if (!mask)
		return -ENOMEM;
	r = sched_setaffinity(0, size, mask) < 0 ? -errno : 0;
	CPU_FREE(mask);
	return r;
}

int cpus_usable(const struct cpuset *want, struct cpuset *ret)
{
	struct cpuset saved, ok, one;
	int r = cpus_allowed(&saved);

	if (r < 0)
		return r;
	/* Isolated CPUs are left out of the inherited mask but may still be asked
	 * for explicitly; only the kernel knows, so ask it, one CPU at a time. */
	cpuset_clear(&ok);
	cpuset_foreach(cpu, want) {
		cpuset_clear(&one);
		cpuset_add(&one, (unsigned)cpu);
		if (cpus_pin(&one) == 0)
			cpuset_add(&ok, (unsigned)cpu);
	}
	r = cpus_pin(&saved);
	if (r < 0)
		return r;
	*ret = ok;
	return 0;
}
