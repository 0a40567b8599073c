#include "probe/cycles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "sys/sysfacts.h"

int cycles_calibrate(struct cycles_scale *ret, uint64_t span_ns)
{
	uint64_t t0 = mono_ns(), c0 = cycles_read(), t1, c1;

	do {
		t1 = mono_ns();
		c1 = cycles_read();
	} while (t1 - t0 < span_ns);
	if (c1 <= c0)
		return -EIO;
	ret->mult = (uint64_t)(((cycles_u128)(t1 - t0) << 32) / (c1 - c0));
	ret->ns_per_cycle_x1000 = (t1 - t0) * 1000u / (c1 - c0);
	return ret->mult ? 0 : -EIO;
}

bool cycles_reliable(struct lat_error *why)
{
#if defined(__x86_64__) || defined(__i386__)
	static const char *const flags[] = { "constant_tsc", "nonstop_tsc" };
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (sys_cpu_flag(NULL, flags[i]) != 1) {
			err_set(why, 0, "the CPU does not report %s", flags[i]);
			return false;
		}
	if (sys_clocksource_offered(NULL, "tsc") != 1) {
		err_set(why, 0, "the kernel no longer offers the tsc clocksource (it found the TSC unstable)");
		return false;
	}
	return true;
#elif defined(__aarch64__)
	(void)why;
	return true;                    /* the architected timer is constant by definition */
#else
	err_set(why, 0, "no cycle counter is known on this architecture");
	return false;
#endif
}
