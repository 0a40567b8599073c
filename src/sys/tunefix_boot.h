/* The fixes of latscope tune that only a reboot can make: each plan says
 * whether the kernel command line would change anything here. */
#ifndef LATSCOPE_SYS_TUNEFIX_BOOT_H
#define LATSCOPE_SYS_TUNEFIX_BOOT_H

#include "sys/tuneplan.h"

int tune_plan_isolcpus(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		       struct tune_plan *ret, struct lat_error *why);
int tune_plan_nohz_full(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why);
int tune_plan_rcu_nocbs(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why);
int tune_plan_serial_console(const struct tune_where *w, const struct cpuset *measured,
			     bool busy_poll, struct tune_plan *ret, struct lat_error *why);

#endif
