/*
 * What shell completion knows of a command, read from the tables its parser
 * reads: a measuring command's options (measure/measure.h), a front end's
 * (front/driver.h) or a spec's (measure/storecmd.h).  A shell's script is
 * written from this (cli/compbash.c); nothing here names an option, so a new
 * option or command is completed as soon as its parser takes it.
 */
#ifndef LATSCOPE_CLI_COMPMODEL_H
#define LATSCOPE_CLI_COMPMODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/commands.h"
#include "core/error.h"
#include "measure/opt.h"

#define COMP_WORDS_SIZE 1024
#define COMP_OPTS_MAX	96 /* the front ends' tables are longer than OPT_MAX */
#define COMP_ARGS_MAX	4  /* arguments told apart by their place */

/* What a shell offers for one value. */
struct comp_values {
	enum opt_values kind;	     /* OPT_VALUES_TYPED: nothing */
	char words[COMP_WORDS_SIZE]; /* _WORDS, _WORD_LIST, _WORD_KEY_LIST: one space between two */
};

struct comp_opt {
	const char *name; /* without "--"; NULL: a letter only */
	char letter;	  /* 0: a long name only */
	bool takes;	  /* a value, after '=' or as the next word */
	bool optional;	  /* the value may be left out: a next word that is an option is not it */
	struct comp_values v;
};

struct comp_cmd {
	const char *name;
	struct comp_opt opts[COMP_OPTS_MAX];
	size_t nopts;
	struct comp_values args[COMP_ARGS_MAX]; /* the first nargs arguments, each its own */
	size_t nargs;
	struct comp_values rest; /* every argument after those */
};

/*
 * Command c as completion sees it: 0, or -E2BIG or -EINVAL with err filled
 * (a table longer than ret holds; a word a shell would split or expand; a row
 * that offers words but has none).
 */
int comp_describe(const struct command *c, struct comp_cmd *ret, struct lat_error *err);

/* Whether a shell takes word as it is, unquoted: what every offered word must be. */
bool comp_word_is_plain(const char *word, size_t len);

#endif
