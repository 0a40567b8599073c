/* Settings of the calling thread: policy, timer slack, stack. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys/prep.h"

int sched_apply(int policy, int priority)
{
	struct sched_param sp = { .sched_priority = priority };
	int r = pthread_setschedparam(pthread_self(), policy, &sp);
	return -r;
}

/* sched_setattr(2)'s argument: glibc 2.36 declares neither it nor the call. */
struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

int sched_apply_deadline(uint64_t runtime_ns, uint64_t deadline_ns, uint64_t period_ns, const cpu_set_t *span,
			 size_t span_size)
{
	struct sched_attr a = {
		.size = sizeof(a), .sched_policy = SCHED_DEADLINE,
		.sched_runtime = runtime_ns, .sched_deadline = deadline_ns, .sched_period = period_ns,
	};

	/* The kernel admits a deadline task only with an affinity covering its
	 * root domain (EPERM otherwise), and fixes the affinity once admitted. */
	if (sched_setaffinity(0, span_size, span) < 0)
		return -errno;
#ifdef SYS_sched_setattr
	return syscall(SYS_sched_setattr, 0, &a, 0u) < 0 ? -errno : 0;
#else
	(void)a;
	return -ENOSYS;
#endif
}

int slack_set(unsigned long ns)
{
	return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) < 0 ? -errno : 0;
}

void stack_prefault(unsigned size)
{
	/* volatile: the compiler may not drop stores to memory nobody reads. */
	volatile unsigned char *buf = __builtin_alloca(size);
	for (unsigned i = 0; i < size; i += 256u)
		buf[i] = 0;
}
