/* What the commands that work with stored runs share. */
#ifndef LATSCOPE_MEASURE_STORECMD_H
#define LATSCOPE_MEASURE_STORECMD_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "measure/opt.h"
#include "core/error.h"
#include "result/result.h"
#include "measure/storepath.h"
#include "store/store.h"

/* The --db and --db-trust options of a command whose params struct T has members db and db_trust. */
#define DB_OPT(T) \
	{ "db", 0, OPT_STRING, offsetof(T, db), .metavar = "PATH", .values = OPT_VALUES_FILE, \
	  .help = "the store (default: $LATSCOPE_DB, else $XDG_DATA_HOME/latscope/runs.db)" }, \
	{ "db-trust", 0, OPT_FLAG, offsetof(T, db_trust), .help = DB_TRUST_HELP }

/*
 * Open the store for command name, saying why not on stderr.  Returns an exit
 * status: EXIT_OK with *ret set, or EXIT_USAGE / EXIT_ERROR (a store that is
 * not there to read: no run is).  With STORE_CREATE the default store's
 * directory is made (storepath.h); a path the user named is not given one.
 */
int storecmd_open(const char *name, const char *db_opt, unsigned flags, struct store **ret);
/* The same, but a store that is not there yet to read is no error: EXIT_OK with *ret NULL. */
int storecmd_open_if_any(const char *name, const char *db_opt, unsigned flags, struct store **ret);

/*
 * Run ids as given on the command line: "12", "3-7", "3,5,9" and any mix of
 * arguments.  -EINVAL with err filled; *ret is malloc'ed.
 */
int storecmd_parse_ids(const char *const *args, size_t nargs, int64_t **ret, size_t *ret_n, struct lat_error *err);

/* Load and check the stored result of id into *ret (empty on failure).
 * Prints what is wrong; returns an exit status. */
int storecmd_read(const char *name, struct store *st, int64_t id, struct result *ret);
/* Load and check the stored results of ids (an array of n results, malloc'ed).
 * Prints what is wrong; returns an exit status. */
int storecmd_load(const char *name, struct store *st, const int64_t *ids, size_t n, struct result **ret);
void storecmd_free_results(struct result *res, size_t n);

/*
 * The runs a command works on: the ids given as arguments, or the stored runs
 * matching --probe and --label filters (not both).  Prints what is wrong;
 * returns an exit status, with *ret (malloc'ed) and *ret_n set on EXIT_OK.
 */
int storecmd_select(const char *name, const struct opt_result *given, const char *probe, const struct labels *labels,
		    struct store *st, int64_t **ret, size_t *ret_n);

/* The probes --probe filters on, for a shell to offer: the i-th of the registry, NULL past the last. */
const char *storecmd_probe_word(size_t i);

/* A run, a store or a file that is not there: the message, no hint (nothing
 * was misused); EXIT_ERROR. */
int storecmd_absent(const char *name, const char *msg);

/* Usage error: the message, then the hint to --help; EXIT_USAGE.  Every exit
 * with status 2 says why through these, so every one carries the hint. */
int storecmd_usage(const char *name, const char *msg);
int storecmd_refuse(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cmd_spec {
	const char *name;
	const char *synopsis;
	const char *about;              /* printed under the synopsis by --help */
	const struct opt *opts;
	size_t nopts;
	size_t help_offset;             /* the bool --help sets */
	void (*help_more)(FILE *out);   /* optional: printed after the options by --help */
	size_t min_pos, max_pos;        /* positional arguments allowed */
	const char *pos_name;           /* what they are, for messages ("run id") */
	const char *exits;              /* optional: the exit status line's codes after "2 bad usage" */
	enum opt_values pos_values;     /* what a shell offers as an argument (as struct opt's .values) */
	const char *(*pos_words)(size_t i);
};

/*
 * Parse argv for a command without measurements (core/error.h's parser
 * convention): LAT_GO_ON, LAT_DONE after --help, or -EINVAL after the usage
 * error was printed.
 */
int storecmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *params, struct opt_result *ret);
/* The exit status for what a parser returned other than LAT_GO_ON. */
int storecmd_exit(int r);

#endif
