/* The fixes of latscope tune that act per CPU or move work off the measured
 * CPUs (sys/tunefix.h's table names them; each is a tune_fix.plan). */
#ifndef LATSCOPE_SYS_TUNEFIX_CPUS_H
#define LATSCOPE_SYS_TUNEFIX_CPUS_H

#include "sys/tuneplan.h"

int tune_plan_cpufreq(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		      struct tune_plan *ret, struct lat_error *why);
int tune_plan_irq_affinity(const struct tune_where *w, const struct cpuset *measured,
			   bool busy_poll, struct tune_plan *ret, struct lat_error *why);
int tune_plan_workqueue(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why);
int tune_plan_soft_watchdog(const struct tune_where *w, const struct cpuset *measured,
			    bool busy_poll, struct tune_plan *ret, struct lat_error *why);

#endif
