/*
 * Background load while a measurement runs: generators (cpu, mem, syscall, sched,
 * io, console) and an optional shell command, all under one supervisor process
 * that leaves nothing behind, even when latscope itself is killed.
 */
#ifndef LATSCOPE_LOAD_LOAD_H
#define LATSCOPE_LOAD_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/cpuset.h"
#include "core/error.h"

enum load_kind { LOAD_CPU, LOAD_MEM, LOAD_SYSCALL, LOAD_SCHED, LOAD_IO, LOAD_CONSOLE };

#define LOAD_PATH_MAX 256
#define LOAD_DEFAULT_IO_DIR "/var/tmp"

struct load_spec {
	enum load_kind kind;
	struct cpuset cpus;        /* where its workers run; parse default: every online CPU */
	unsigned intensity_pct;    /* 1..100, default 100: busy share of every 10 ms period */
	/* io: directory for the scratch file (default /var/tmp); console: terminal
	 * to write to ("" = a new pty; /dev/kmsg reaches the kernel console). */
	char path[LOAD_PATH_MAX];
};

/* "cpu", "mem", "syscall", "sched", "io", "console"; NULL for a value out of range. */
const char *load_kind_name(enum load_kind kind);

/*
 * KIND[:KEY=VALUE,...] with keys cpus (a CPU list or "all"), intensity ("50%" or
 * "50"), dir (io) and dev (console): "cpu", "cpu:cpus=0,2-3,intensity=50%",
 * "io:cpus=1,dir=/tmp", "console:dev=/dev/ttyS0".  Returns 0, or -EINVAL with a
 * one-line reason in err (ret untouched).  online: the set of online CPUs.
 */
int load_parse(const char *text, const struct cpuset *online, struct load_spec *ret, struct lat_error *err);

/* Canonical text that load_parse reads back, e.g. "cpu:cpus=0-1,intensity=100%".
 * Returns the length it needed, like snprintf. */
size_t load_format(const struct load_spec *s, char *buf, size_t size);

/*
 * What a parsed spec names must be fit for it, checked on this machine without
 * opening anything for writing: a console dev must be a terminal or /dev/kmsg
 * (-ENOTTY: "console: dev '/x' is a regular file, not a terminal or /dev/kmsg").
 * load_start checks again, and a console worker opens nothing else.
 * Returns 0 or -errno with err set.
 */
int load_check(const struct load_spec *s, struct lat_error *err);

struct load_set;

/*
 * Start the generators (n specs, may be 0) and a shell command (cmd may be NULL)
 * under a forked supervisor in its own process group; the command gets a process
 * group of its own.  Returns 0 once every worker runs, or -errno with err set
 * ("io: cannot create a scratch file in '/x': No such file or directory").
 * Call it from a thread that lives until load_stop (PR_SET_PDEATHSIG follows the
 * forking thread) and before starting measurement threads (it forks).
 */
int load_start(const struct load_spec *specs, size_t n, const char *cmd, struct load_set **ret,
	       struct lat_error *err);

/* The supervisor's pid, which is also the process group of every worker. */
pid_t load_pgid(const struct load_set *ls);
/* The command's process group, or 0 without a command. */
pid_t load_cmd_pgid(const struct load_set *ls);

struct load_outcome {
	bool cmd_ran;
	int cmd_status;            /* wait status of the command, as waitpid gives it */
	bool cmd_ended_early;      /* the command ended before load_stop */
	uint64_t cmd_ended_ns;     /* CLOCK_MONOTONIC when it ended, if early */
	unsigned workers_lost;     /* generator workers that died while the load ran */
};

/* Stop everything, wait for it and fill out (may be NULL).  Always frees ls;
 * NULL is a no-op.  Returns 0 or -errno with err set. */
int load_stop(struct load_set *ls, struct load_outcome *out, struct lat_error *err);

#endif
