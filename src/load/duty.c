#include <errno.h>
#include <time.h>

#include "core/nstime.h"
#include "load/duty.h"

void duty_init(struct duty *d, unsigned pct)
{
	d->busy_ns = DUTY_PERIOD_NS * (pct > 100 ? 100 : pct) / 100u;
	d->period_start = mono_ns();
}

void duty_pace(struct duty *d)
{
	if (d->busy_ns >= DUTY_PERIOD_NS)
		return;
	uint64_t now = mono_ns();
	if (now - d->period_start < d->busy_ns)
		return;
	/* Rest for the idle share counted from now, not from the period's start:
	 * work that overran (a slow fsync, a preemption) still gets its rest. */
	struct timespec ts = ns_to_ts(now + DUTY_PERIOD_NS - d->busy_ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	d->period_start = ts_to_ns(&ts);
}
