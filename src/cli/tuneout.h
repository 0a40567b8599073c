/*
 * latscope tune's state between its parts: the fixes planned, their trials,
 * the verdicts (tunejudge.c), and what is kept or written down (tuneout.c).
 */
#ifndef LATSCOPE_CLI_TUNEOUT_H
#define LATSCOPE_CLI_TUNEOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/bootstrap.h"
#include "core/cpuset.h"
#include "result/compare.h"
#include "result/result.h"
#include "sys/tunefix.h"

enum trial_state { TRIAL_TRY, TRIAL_NOT_HERE, TRIAL_BOOT };

enum tune_verdict { TUNE_UNJUDGED, TUNE_BETTER, TUNE_WORSE, TUNE_SAME };

struct tune_trial {
	const struct tune_fix *fix;
	enum trial_state state;
	struct tune_plan plan;
	char why[256];		/* not here: why; or why it could not be tried */
	char skipped_note[320]; /* optional writes the kernel refused */
	bool failed;		/* applying it failed: not judged */
	struct result *a, *b;	/* rounds each; na, nb measured */
	unsigned na, nb;
	/* judged (tune_judge) */
	enum tune_verdict verdict;
	double p50[2], p99[2], max[2]; /* A, B over their trials, ns */
	struct verdict v99;	       /* B against A at p99 */
	struct cmp_tail_verdict hour;  /* the once-an-hour levels */
	bool kept;		       /* --apply kept it */
	char *undo; /* kept: the shell lines that put the old values back (malloc'd), or NULL */
};

struct tune_run {
	char start[32]; /* the tune=START label */
	unsigned rounds;
	struct cpuset measured;
	struct tune_trial *t;
	size_t n;
	bool stopped; /* a stop signal ended it */
};

/* Judge t's trials (both states measured at least once); else it stays unjudged. */
void tune_judge(struct tune_trial *t);
/* The table, what was not tried and why, and the boot-only fixes with their command line. */
void tune_print(FILE *out, const struct tune_run *tr, bool apply);
void tune_run_free(struct tune_run *tr);

/* A boot-only fix's kernel command line, its "%s" the measured CPUs. */
void tune_cmdline(const struct tune_fix *f, const char *cpus, char *buf, size_t size);

/* --write-config DIR: a directory that exists and is writable (EXIT_OK), else the usage error. */
int tuneout_check_dir(const char *dir);
/* --apply: apply again and keep the fixes judged better, on this machine (w
 * NULL) or a test's tree; each kept one's undo lines in t->undo.  The exit
 * code. */
int tuneout_apply(const struct tune_where *w, struct tune_run *tr);
/* --write-config: the files that make the fixes judged better persistent, in dir only; the exit code. */
int tuneout_write_config(const struct tune_run *tr, const char *dir);

#endif
