/*
 * System settings that lower latency, each with its restore.  Every function
 * returns 0 or -errno and changes nothing on failure.
 */
#ifndef LATSCOPE_SYS_PREP_H
#define LATSCOPE_SYS_PREP_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hold /dev/cpu_dma_latency at 0 us while *ret_fd stays open; the kernel drops
 * the request when the fd closes, so a crash restores it too. */
int pmqos_hold(int *ret_fd);
void pmqos_release(int *fd);

/* The calling thread's scheduling policy and priority, and its timer slack
 * (ns; 1 is the smallest the kernel accepts).  Only the measuring threads set
 * them, and they end with the run: what they changed ends with them. */
int sched_apply(int policy, int priority);
int slack_set(unsigned long ns);
/* The calling thread under SCHED_DEADLINE with this reservation, its affinity
 * first widened to span (the CPUs of its root domain).  -EPERM without
 * CAP_SYS_NICE or when span is narrower than the root domain, -EBUSY when
 * admission control has not the bandwidth, -EINVAL or -ENOSYS when the kernel
 * has no such policy or refuses the values. */
int sched_apply_deadline(uint64_t runtime_ns, uint64_t deadline_ns, uint64_t period_ns, const cpu_set_t *span,
			 size_t span_size);

/* Lock all current mappings (not future ones: with a small RLIMIT_MEMLOCK,
 * MCL_FUTURE would make later allocations fail instead of this call). */
int memlock_all(void);
/* Before any thread starts: keep what memlock_all will lock small. */
void memlock_prepare(void);
void memlock_release(void);

/* Touch size bytes of the calling thread's stack so the hot loop takes no page fault. */
void stack_prefault(unsigned size);

#endif
