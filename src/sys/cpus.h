/* Which CPUs exist and may be used. */
#ifndef LATSCOPE_SYS_CPUS_H
#define LATSCOPE_SYS_CPUS_H

#include <sched.h>
#include <stddef.h>

#include "core/cpuset.h"

/* Online CPUs from /sys/devices/system/cpu/online; -errno on failure. */
int cpus_online(struct cpuset *ret);
/* The calling thread's affinity mask; -errno on failure. */
int cpus_allowed(struct cpuset *ret);
/* The members of want the calling thread can be pinned to (isolated CPUs
 * included, cgroup cpuset limits respected); its affinity is left as it was. */
int cpus_usable(const struct cpuset *want, struct cpuset *ret);
/* Bind the calling thread to set; -errno on failure. */
int cpus_pin(const struct cpuset *set);
/* A CPU_ALLOC'ed mask holding set (empty when set is NULL); free with CPU_FREE.  NULL: no memory. */
cpu_set_t *cpus_mask_alloc(const struct cpuset *set, size_t *ret_size);

#endif
