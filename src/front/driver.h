/*
 * Front ends: a foreign tool (cyclictest, rtla timerlat, oslat) is a
 * description, run by one driver as rtla's run_tool runs every tool_ops.  The
 * description is the tool's names, a table of its options (each row says which
 * of latscope's option rows it sets, by the command's enum so that a rename
 * breaks the build, or why it is refused, or that it changes nothing) and its
 * hooks: the translation into latscope's parameters and the output writer,
 * whose formats live in src/report/.  front_run parses argv by the table,
 * measures through measure_with and has the tool write what it prints.
 */
#ifndef LATSCOPE_FRONT_DRIVER_H
#define LATSCOPE_FRONT_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/measure.h"
#include "sys/atomicfile.h"

enum front_arg {
	FRONT_NO_ARG,
	FRONT_ARG,
	FRONT_OPT_ARG,          /* only attached: -tFILE, --trace=FILE */
	FRONT_OPT_NEXT,         /* attached, or the next word when it is not an option (rtla's -t FILE) */
};

enum front_kind {
	FRONT_SET,              /* the tool's set hook takes the value */
	FRONT_FLAG,             /* sets the bool at offset .key of the tool's state */
	FRONT_TEXT,             /* keeps the value at offset .key of the tool's state (a const char *) */
	FRONT_MAP,              /* latscope's row .to parses it: the same range and message */
	FRONT_IGNORE,           /* accepted; changes nothing (the help says why) */
	FRONT_REFUSE,           /* refused: "option 'X'", the description's .refused, then .why */
	/* the rows every front end shares (FRONT_*_ROW below) */
	FRONT_DB, FRONT_DB_TRUST, FRONT_NO_STORE, FRONT_LABEL, FRONT_JSON, FRONT_VERBOSE, FRONT_HELP,
};

struct front_opt {
	const char *name;       /* long name, without "--" */
	char letter;            /* 0: a long option only */
	enum front_arg arg;
	enum front_kind kind;
	size_t key;             /* FRONT_SET: the tool's code for the row; FRONT_FLAG, FRONT_TEXT: the offset */
	int to;                 /* FRONT_TO(row): latscope's row it sets, marked given with it; 0: none */
	const char *why;        /* FRONT_REFUSE */
	unsigned modes;         /* FRONT_MODE(m) of the modes that take it; 0: all */
	/* What a shell offers as the value (latscope completion); a FRONT_MAP
	 * row's is its latscope row's. */
	enum opt_values values;
};

/* A mode of a tool with subcommands (rtla timerlat hist and top), fr->mode. */
#define FRONT_MODE(m) (1u << (m))

/* A row of the latscope command's table (enum timer_opt, enum noise_opt); 0 stays "none". */
#define FRONT_TO(row) ((row) + 1)

#define FRONT_DB_ROW { .name = "db", .arg = FRONT_ARG, .kind = FRONT_DB, .values = OPT_VALUES_FILE }
#define FRONT_DB_TRUST_ROW { .name = "db-trust", .arg = FRONT_NO_ARG, .kind = FRONT_DB_TRUST }
#define FRONT_NO_STORE_ROW { .name = "no-store", .arg = FRONT_NO_ARG, .kind = FRONT_NO_STORE }
#define FRONT_LABEL_ROW { .name = "label", .arg = FRONT_ARG, .kind = FRONT_LABEL }
#define FRONT_JSON_ROW { .name = "json", .arg = FRONT_ARG, .kind = FRONT_JSON, .values = OPT_VALUES_FILE }
/* latscope's notes and the stored run's id on stderr */
#define FRONT_VERBOSE_ROW(n, l) { .name = (n), .letter = (l), .arg = FRONT_NO_ARG, .kind = FRONT_VERBOSE }
#define FRONT_HELP_ROW(l) { .name = "help", .letter = (l), .arg = FRONT_NO_ARG, .kind = FRONT_HELP }

#define FRONT_FILES_MAX 3

/* A file the tool writes: checked against the others and the store, opened before the run. */
struct front_file {
	const char *what;       /* as outputs_check names it: "'--json'" */
	const char *opt;        /* as the open error names it: "--json" */
	const char *path;
	bool check_only;        /* checked but not opened: not written this time */
	struct atomic_file sink;
};

struct front_run;

struct front_end {
	const char *name;               /* the argv[0] it answers to, and its name in messages */
	const struct measure_cmd *mc;   /* the latscope command it runs */
	const struct front_opt *opts;
	size_t nopts;
	const int *sets;                /* latscope's rows the translation always sets (given) */
	size_t nsets;
	const char *refused;            /* between a refused option and its row's why */
	/* by fr->mode, for "option 'X' is not an option of NAME", NULL-terminated;
	 * their words are the arguments a shell offers */
	const char *const *mode_names;
	bool empty_args_ok;             /* words left over that are empty are ignored, not refused */
	size_t state_size;              /* the tool's own options and run state */
	void (*defaults)(void *st);
	void (*help)(void);
	/* Optional: argv as the table reads it (*ret_argv: argv or malloc'ed):
	 * LAT_GO_ON, LAT_DONE, or -EINVAL after the refusal was printed. */
	int (*args)(struct front_run *fr, int argc, char **argv, int *ret_argc, char ***ret_argv);
	/* A FRONT_SET row's value (as: the option as typed); the same returns. */
	int (*set)(struct front_run *fr, const struct front_opt *o, const char *as, const char *arg);
	/* Optional: checks across options once all are read; the same returns. */
	int (*check)(struct front_run *fr);
	/* latscope's parameters from the tool's (fr->params holds the defaults
	 * and what the table set); files to write added.  0 or the exit status said. */
	int (*translate)(struct front_run *fr);
	/* Optional: once the files are open, before the run (oslat's pre-heat). */
	int (*before)(struct front_run *fr);
	/* measure_with's hooks (struct measure_hooks), ctx the front_run. */
	void (*prepared)(void *ctx, const struct result *res);
	void (*tick)(void *ctx, const struct result *res);
	int (*shape)(void *ctx, struct result *res);
	/* What the tool prints and writes after the run; code is the run's; returns the exit status. */
	int (*write)(struct front_run *fr, int code);
	/* Optional: frees what the tool's run state holds. */
	void (*done)(struct front_run *fr);
};

struct front_run {
	const struct front_end *fe;
	void *st;                       /* fe->state_size bytes */
	void *params;                   /* latscope's: fe->mc->params_size bytes */
	struct opt_result given;        /* of fe->mc->opts */
	unsigned mode;                  /* set by fe->args; 0 without modes */
	bool verbose;
	const char *json;               /* --json's FILE */
	int argc;                       /* the command line as typed: what the result records */
	char **argv;
	struct front_file files[FRONT_FILES_MAX];
	size_t nfiles;
	struct result res;
	int64_t stored_id;
};

/* Parse, translate, measure and write: the exit status.  Parsers and hooks
 * return LAT_GO_ON, LAT_DONE, -EINVAL after the refusal was said, or
 * -ENOMEM (said by the driver). */
int front_run(const struct front_end *fe, int argc, char **argv);

/* Mark latscope's row (the command's enum) as given. */
void front_mark(struct front_run *fr, int row);
/* A usage error of the tool, printed; -EINVAL for a parser to return. */
int front_refuse(const struct front_end *fe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A file to write (path NULL: none this time); the file, or NULL past FRONT_FILES_MAX. */
struct front_file *front_add_file(struct front_run *fr, const char *what, const char *opt, const char *path);
/* One measure_with run of params (as fr->params), with the tool's hooks: the exit status. */
int front_measure(struct front_run *fr, void *params, const struct opt_result *given, int argc, char **argv,
		  struct result *res, int64_t *ret_id);
/* What print writes (0 or a negative errno), into the file, committed; says
 * why not.  0 or a negative errno. */
int front_put(struct front_run *fr, struct front_file *f, int (*print)(FILE *out, const void *arg), const void *arg);
/* A JSON document (taken) into the file, or stdout when f is NULL; says why not.  The exit status. */
int front_put_json(struct front_run *fr, struct front_file *f, const char *path, json_t *doc);
/* "NAME arg1 arg2 ...", as rt-tests' JSON states the command line; NULL: out of memory. */
char *front_cmdline(const struct front_run *fr);

/* The descriptions (front/NAME.c), and every front end by the argv[0] it answers to (main.c). */
extern const struct front_end cyclictest_front, rtla_front, oslat_front;
extern const struct front_end *const front_ends[];
extern const size_t nfront_ends;

/* The entry points of cli/commands.c's table. */
int cmd_cyclictest(int argc, char **argv);
int cmd_rtla(int argc, char **argv);
int cmd_oslat(int argc, char **argv);

#endif
