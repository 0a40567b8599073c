/* Settings of the calling thread: policy, timer slack, stack. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "sys/prep.h"

int sched_save(struct sched_saved *ret)
{
	struct sched_param sp;
	int policy, r = pthread_getschedparam(pthread_self(), &policy, &sp);

	if (r)
		return -r;
	ret->policy = policy;
	ret->priority = sp.sched_priority;
	return 0;
}

int sched_apply(int policy, int priority)
{
	struct sched_param sp = { .sched_priority = priority };
	int r = pthread_setschedparam(pthread_self(), policy, &sp);
	return -r;
}

int sched_restore(const struct sched_saved *saved)
{
	return sched_apply(saved->policy, saved->priority);
}

int slack_get(unsigned long *ret)
{
	int r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (r < 0)
		return -errno;
	*ret = (unsigned long)r;
	return 0;
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
