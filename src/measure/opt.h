/*
 * Option tables: one row per option says its names, its kind, where its value
 * goes and what range it accepts.  The parser never prints or exits: it fills
 * an error message that names the option as the user wrote it.
 */
#ifndef LATSCOPE_MEASURE_OPT_H
#define LATSCOPE_MEASURE_OPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/parse.h"
#include "measure/runopt.h"

enum opt_kind {
	OPT_FLAG,               /* bool */
	OPT_UINT,               /* uint64_t in [min, max] */
	OPT_DURATION,           /* uint64_t ns in [min, max]; bare numbers in .unit */
	OPT_SIZE,               /* uint64_t bytes in [min, max], with k M G T (1024s) */
	OPT_CPUS,               /* struct cpuset */
	OPT_ENUM,               /* int: index into .choices */
	OPT_LABEL,              /* struct labels, repeatable */
	OPT_STRING,             /* const char * into argv */
	OPT_STRLIST,            /* struct strlist, repeatable */
	OPT_HELP,               /* sets the bool at .offset and stops parsing */
};

/* Not one of the run's parameters (where output goes, how it is shown). */
#define OPT_NOT_PARAM 0x1u
/* OPT_DURATION: 0 or "none" turns it off (0), whatever .min says. */
#define OPT_ZERO_OFF 0x2u
/* OPT_UINT, OPT_DURATION: a parameter of the result only when not 0 (a
 * setting of one mode, such as --policy deadline's --runtime). */
#define OPT_PARAM_IF_SET 0x4u
/* OPT_UINT: OPT_UNSET (the default it starts with) stands for "not given":
 * the run's parameters say null, the help no default. */
#define OPT_UNSET_NULL 0x8u
#define OPT_UNSET UINT64_MAX

/*
 * What a shell offers as an option's value (latscope completion), for a value
 * whose kind does not say it (OPT_ENUM offers its .choices, OPT_CPUS the
 * online CPUs).
 */
enum opt_values {
	OPT_VALUES_TYPED,               /* nothing to offer: the user types it */
	OPT_VALUES_FILE,
	OPT_VALUES_DIR,
	OPT_VALUES_CPUS,                /* a list of the online CPUs */
	OPT_VALUES_RUN_ID,              /* a stored run's id */
	OPT_VALUES_WORDS,               /* one of .words' */
	OPT_VALUES_WORD_LIST,           /* a comma-separated list of .words' */
	OPT_VALUES_LABEL_KEYS,          /* a comma-separated list of the stored runs' label keys */
	OPT_VALUES_WORD_KEY_LIST,       /* a comma-separated list of .words' and those label keys */
};

struct opt {
	const char *name;               /* long name, without "--" */
	char short_name;                /* 0: none */
	enum opt_kind kind;
	size_t offset;                  /* into the command's parameter struct */
	uint64_t min, max;              /* OPT_UINT, OPT_DURATION */
	uint64_t unit;                  /* OPT_DURATION: what a bare number means, in ns */
	const char *const *choices;     /* OPT_ENUM: NULL-terminated */
	const char *metavar;
	const char *help;
	unsigned flags;
	enum opt_values values;         /* what a shell offers; OPT_VALUES_TYPED: what .kind says */
	/* OPT_VALUES_WORDS, _WORD_LIST, _WORD_KEY_LIST: the i-th word the parser takes, NULL past
	 * the last, read from the table the parser reads (never a copy of it). */
	const char *(*words)(size_t i);
	enum run_row run_row; /* a row every measuring command may have (measure/runopt.h) */
};

#define OPT_MAX 64                  /* options per table: the "seen" bitmap is 64 bits */

struct opt_result {
	uint64_t seen;                  /* bit i: table row i was given */
	uint64_t short_form;            /* bit i: row i was last given by its short name (-a, not --cpus) */
	size_t npos;                    /* positional arguments, in order */
	const char *pos[1024];
};

/*
 * Parse argv[1..argc-1] (argv[0] is the command name) into params.
 * 0, or -EINVAL with err filled.  params must already hold the defaults.
 */
int opt_parse(const struct opt *opts, size_t nopts, int argc, char **argv, void *params,
	      struct opt_result *ret, struct lat_error *err);

/* The row for a long name as a user would type it, or NULL; latscope's own
 * code names a row by its enum instead (opt_given_at, opt_run_given), so that
 * a renamed row breaks the build rather than a run. */
const struct opt *opt_find(const struct opt *opts, size_t nopts, const char *name);
bool opt_given(const struct opt *opts, size_t nopts, const struct opt_result *res,
	       const char *name);

/*
 * The same by row index: a command's enum of its rows (TIMER_OPT_INTERVAL,
 * measure/timer.h) names the row, so a renamed row breaks its users' build, not
 * their run.  -ENOENT when row is not below nopts.
 */
int opt_mark_at(size_t nopts, struct opt_result *res, size_t row);
bool opt_given_at(size_t nopts, const struct opt_result *res, size_t row);

/*
 * The same for a row shared by the measuring commands, in a table that may or
 * may not have it (wake has no --cpus): its index or -ENOENT; given or not;
 * recorded as given (for a command that sets its parameters itself rather
 * than parsing them, measure_with), or -ENOENT.
 */
int opt_run_row(const struct opt *opts, size_t nopts, enum run_row row);
bool opt_run_given(const struct opt *opts, size_t nopts, const struct opt_result *res,
		   enum run_row row);
int opt_run_mark(const struct opt *opts, size_t nopts, struct opt_result *res, enum run_row row);
/* Parse val into params by row (as: the option as the user wrote it, for the
 * message) and record it as given: 0, or -EINVAL with err filled. */
int opt_set_at(const struct opt *opts, size_t nopts, size_t row, const char *as, const char *val, void *params,
	       struct opt_result *res, struct lat_error *err);

/* Record row as given by its short name (short_form) or its long one, as a
 * caller that sets parameters itself passes on how its user wrote them. */
int opt_mark_typed(size_t nopts, struct opt_result *res, size_t row, bool short_form);
bool opt_short_at(size_t nopts, const struct opt_result *res, size_t row);

/*
 * A message about options, with each option it quotes by its long name
 * ('--cpus') rewritten as the user gave it ('-a'): the checks after parsing
 * name options one way, the user may have typed the other.
 */
void opt_msg_as_typed(const struct opt *opts, size_t nopts, const struct opt_result *res, char *msg,
		      size_t size);

/* Options help, one line per option (and its default when not a flag). */
void opt_print_help(FILE *out, const struct opt *opts, size_t nopts, const void *defaults);

/* The run's parameters as a JSON object: every row without OPT_NOT_PARAM
 * (and without OPT_PARAM_IF_SET while 0).
 * Durations are written as "<name>_ns" integers.  NULL on allocation failure. */
json_t *opt_params_json(const struct opt *opts, size_t nopts, const void *params);

#endif
