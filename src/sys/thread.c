/* Settings of the calling thread: policy, timer slack, stack. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "sys/prep.h"

int sched_apply(int policy, int priority)
{
	struct sched_param sp = { .sched_priority = priority };
	int r = pthread_setschedparam(pthread_self(), policy, &sp);
	return -r;
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
