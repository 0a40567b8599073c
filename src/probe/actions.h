/*
 * What a run does when a sample exceeds its trigger (--on-threshold) and
 * after its result is written (--on-end).  The measuring threads only note
 * such a sample in their recorders; the runner's main thread takes the note
 * and acts (runner.c), so nothing here ever runs on a measured CPU's thread.
 */
#ifndef LATSCOPE_PROBE_ACTIONS_H
#define LATSCOPE_PROBE_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

enum action_kind { ACTION_STOP, ACTION_TRACE, ACTION_EXEC, ACTION_SIGNAL };

struct action {
	int kind;                       /* enum action_kind */
	const char *text;               /* as given, for the result: text_len bytes (one of a list) */
	size_t text_len;
	const char *cmd;                /* ACTION_EXEC: run with /bin/sh -c; points into the text parsed */
	pid_t pid;                      /* ACTION_SIGNAL */
	int sig;
};

#define ACTIONS_MAX 8

struct action_list {
	unsigned n;
	struct action a[ACTIONS_MAX];
};

/* "stop", "trace", "exec CMD" or "signal PID:SIG" (SIG a name such as USR1 or
 * SIGUSR1, or a number); on_end: only exec and signal make sense after the
 * run.  text must outlive ret.  -EINVAL with the reason (without the option's name). */
int action_parse(const char *text, bool on_end, struct action *ret, struct lat_error *err);

/*
 * One value of --on-threshold or --on-end: one action, or several separated
 * by commas ("stop,trace").  exec takes the rest of the value as its command,
 * commas and all, so it comes last ("trace,exec notify.sh a,b").  Each is
 * appended to l; -EINVAL with the reason (without the option's name), or
 * -E2BIG when l is full.  text must outlive l.
 */
int action_parse_list(const char *text, bool on_end, struct action_list *l, struct lat_error *err);

/* Append a (the way a front end adds its own, such as cyclictest -b): -E2BIG when full. */
int action_list_add(struct action_list *l, const struct action *a);
bool action_list_has(const struct action_list *l, int kind);

/* "stop", "exec", ... */
const char *action_kind_name(int kind);

/* The sample an action is about; what it does not know is 0/empty. */
struct action_env {
	const char *run_id;             /* "" while measuring: the store numbers the run when it keeps it */
	int cpu;                        /* -1: none */
	uint64_t latency_ns;
};

/*
 * Start a->cmd under /bin/sh with LATSCOPE_RUN_ID, LATSCOPE_CPU and
 * LATSCOPE_LATENCY_NS added to the environment, at SCHED_OTHER with no signal
 * blocked, on the calling thread's CPUs (the runner's main thread keeps off
 * the measured ones).  Does not wait: *ret_pid is the child.  -errno.
 */
int action_spawn(const struct action *a, const struct action_env *env, pid_t *ret_pid, struct lat_error *err);

/* a's signal to a's process.  -errno with the reason. */
int action_signal(const struct action *a, struct lat_error *err);

/* The wait status of pid as a shell reports it: the exit code, or 128 + the signal. */
int action_exit_code(int wait_status);

#endif
