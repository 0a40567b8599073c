#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "load/child.h"
#include "sys/cpus.h"

#define DEFAULT_TIMER_SLACK_NS 50000ul

void child_reset_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;

	/* SIGKILL, SIGSTOP and the C library's own signals refuse: nothing to undo there. */
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int child_die_with(pid_t parent, int sig)
{
	if (prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) < 0)
		return -errno;
	/* The parent may have died before the request took hold. */
	return getppid() == parent ? 0 : -ESRCH;
}

pid_t child_fork(int deathsig)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		child_reset_signals();
		if (child_die_with(parent, deathsig) < 0)
			_exit(127);
	}
	return pid;
}

/* Online CPUs without the isolated ones, where load that is not pinned belongs. */
static int housekeeping_cpus(struct cpuset *ret)
{
	struct cpuset online, isolated, rest;
	char line[4096];
	int r = cpus_online(&online);

	if (r < 0)
		return r;
	FILE *f = fopen("/sys/devices/system/cpu/isolated", "re");
	if (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line && cpuset_parse(line, &isolated) == 0) {
			cpuset_diff(&rest, &online, &isolated);
			if (cpuset_count(&rest))
				online = rest;
		}
	}
	if (f)
		fclose(f);
	*ret = online;
	return 0;
}

void child_unmeasure(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct cpuset cpus;

	sched_setscheduler(0, SCHED_OTHER, &sp);
	munlockall();
	prctl(PR_SET_TIMERSLACK, DEFAULT_TIMER_SLACK_NS, 0, 0, 0);
	if (housekeeping_cpus(&cpus) == 0)
		cpus_pin(&cpus);
}

static void close_from_to(unsigned lo, unsigned hi)
{
	if (lo > hi || close_range(lo, hi, 0) == 0)
		return;
	/* Kernels before 5.9: one by one, up to the descriptor limit. */
	long max = sysconf(_SC_OPEN_MAX);
	for (unsigned fd = lo; fd <= hi && (max < 0 || fd < (unsigned long)max) && fd < 65536u; fd++)
		close((int)fd);
}

void child_close_fds(const int *keep, size_t n)
{
	unsigned lo = 3;

	/* Walk the kept descriptors in order, closing the gaps between them. */
	for (;;) {
		int next = -1;
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)lo && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0)
			break;
		if ((unsigned)next > lo)
			close_from_to(lo, (unsigned)next - 1u);
		lo = (unsigned)next + 1u;
	}
	close_from_to(lo, ~0u);
}
