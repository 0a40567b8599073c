/*
 * The rows RUN_OPTS (measure/measure.h) adds to a command's option table, in its
 * order, as enumerators PREFIX_CPUS, PREFIX_PRIORITY, ...  A command's enum
 * of its rows ends with RUN_OPT_ROWS(ITS_PREFIX), so a front end can name any
 * of them (measure/timer.h); the command's table checks the count at build time.
 *
 * Code that handles any measuring command (measure_with, run, tune) names a
 * shared row by enum run_row: each row the macros make carries its enumerator
 * (struct opt's run_row), found in whichever table has it (opt_run_row).
 */
#ifndef LATSCOPE_MEASURE_RUNOPT_H
#define LATSCOPE_MEASURE_RUNOPT_H

#define RUN_OPT_ROWS(P) \
	P##_CPUS, P##_PRIORITY, P##_POLICY, P##_DURATION, P##_LOOPS, P##_THRESHOLD, P##_WINDOW, P##_WARMUP, \
	P##_FAIL_ABOVE, P##_FAIL_STAT, P##_TRIGGER, P##_ON_THRESHOLD, P##_ACTION_INTERVAL, P##_ON_END, P##_JSON, \
	P##_DB, P##_DB_TRUST, P##_NO_STORE, P##_CHECKPOINT, P##_LABEL, P##_QUIET, P##_LIVE, P##_NO_PM_QOS, P##_DEEPEST_IDLE_STATE, \
	P##_NO_CONTEXT, P##_STRICT, P##_LOAD, P##_LOAD_CMD, P##_HOST, P##_HOST_SECRET, P##_HELP

/* RUN_ROW_NONE: a command's own row; then the shared ones, and --until's (UNTIL_OPT). */
enum run_row { RUN_ROW_NONE, RUN_OPT_ROWS(RUN_ROW), RUN_ROW_UNTIL };

#endif
