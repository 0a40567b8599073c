#include "monitor/signals.h"

#include <signal.h>
#include <time.h>

#include "probe/runner.h"

void mon_signals_block(void)
{
	sigset_t sigs;

	runner_stop_signals(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
}

bool mon_stop_pending(void)
{
	sigset_t pending, stops;

	runner_stop_signals(&stops);
	if (sigpending(&pending) < 0)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&stops, s) == 1 && sigismember(&pending, s) == 1)
			return true;
	return false;
}

void mon_drop_usr1(void)
{
	sigset_t usr1;
	struct timespec zero = { 0, 0 };

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	while (sigtimedwait(&usr1, NULL, &zero) == SIGUSR1)
		;
}
