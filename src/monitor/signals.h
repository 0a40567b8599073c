/*
 * The monitor's signals between two phases (while one measures, the runner
 * waits for them): a stop signal ends the monitor, a SIGUSR1 is spent (the
 * new period has just begun).  They stay blocked in every thread.
 */
#ifndef LATSCOPE_MONITOR_SIGNALS_H
#define LATSCOPE_MONITOR_SIGNALS_H

#include <stdbool.h>

/* Block the stop signals and SIGUSR1 in this thread (and the threads it starts). */
void mon_signals_block(void);

/* A stop signal is waiting. */
bool mon_stop_pending(void);

/* Spend the SIGUSR1s waiting. */
void mon_drop_usr1(void);

#endif
