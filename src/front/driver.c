#include "front/driver.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exitcode.h"
#include "measure/outputs.h"
#include "measure/storecmd.h"
#include "report/rtjson.h"

/* Long options' codes past any letter: getopt hands back the row through its long index. */
#define FRONT_LONG_VAL 256

int front_refuse(const struct front_end *fe, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	storecmd_usage(fe->name, msg);
	return -EINVAL;
}

void front_mark(struct front_run *fr, int row)
{
	opt_mark_at(fr->fe->mc->nopts, &fr->given, (size_t)row);
}

/* The code of a long-only row: an earlier row's that means the same, so that
 * getopt takes a prefix of both ("--spike" for "--sp", not ambiguous) as the first. */
static int long_val(const struct front_end *fe, size_t row)
{
	const struct front_opt *o = &fe->opts[row];

	for (size_t i = 0; i < row; i++) {
		const struct front_opt *p = &fe->opts[i];
		if (!p->letter && p->arg == o->arg && p->kind == o->kind && p->key == o->key && p->to == o->to &&
		    p->why == o->why)
			return FRONT_LONG_VAL + (int)i;
	}
	return FRONT_LONG_VAL + (int)row;
}

/* getopt_long's tables from the rows; row_of[i]: the row of long option i.  0 or -ENOMEM. */
static int getopt_tables(const struct front_end *fe, struct option **ret_longs, size_t **ret_row_of, char *shorts,
			 size_t size)
{
	struct option *longs = calloc(fe->nopts + 1u, sizeof(*longs));
	size_t *row_of = calloc(fe->nopts + 1u, sizeof(*row_of));
	size_t n = 0, len = 0;
	static const char *const colons[] = { "", ":", "::", "::" };

	if (!longs || !row_of) {
		free(longs);
		free(row_of);
		return -ENOMEM;
	}
	len += (size_t)snprintf(shorts, size, ":");      /* a missing value is ':', not '?' */
	for (size_t i = 0; i < fe->nopts; i++) {
		const struct front_opt *o = &fe->opts[i];
		const int has = o->arg == FRONT_NO_ARG ? no_argument : o->arg == FRONT_ARG ? required_argument
											: optional_argument;
		if (o->letter && len < size)
			len += (size_t)snprintf(shorts + len, size - len, "%c%s", o->letter, colons[o->arg]);
		if (!o->name)
			continue;
		longs[n] = (struct option){ o->name, has, NULL, o->letter ? o->letter : long_val(fe, i) };
		row_of[n++] = i;
	}
	*ret_longs = longs;
	*ret_row_of = row_of;
	return 0;
}

/* The option getopt just read, as the user typed it, for messages. */
static const char *typed(int c, const struct option *lo, char **argv, char *buf, size_t size)
{
	const char *word = argv[optind - 1];

	if (lo)
		snprintf(buf, size, "--%s", lo->name);
	else if (c != ':' && c != '?')
		snprintf(buf, size, "-%c", c);
	else if (strncmp(word, "--", 2) != 0 && optopt > 0 && optopt < FRONT_LONG_VAL)
		snprintf(buf, size, "-%c", optopt);
	else
		return word;    /* an unknown long option, or one lacking its value */
	return buf;
}

/* rtla's optional values: attached (a leading '=' dropped), else the next word when it is no option. */
static const char *next_word(int argc, char **argv)
{
	if (optarg)
		return optarg[0] == '=' ? optarg + 1 : optarg;
	if (optind < argc && argv[optind][0] != '-' && argv[optind][0] != '\0')
		return argv[optind++];
	return NULL;
}

/* One option's value: LAT_GO_ON, LAT_DONE or -EINVAL (said). */
static int apply(struct front_run *fr, const struct front_opt *o, const char *as, const char *arg)
{
	const struct front_end *fe = fr->fe;
	const struct measure_cmd *mc = fe->mc;
	struct measure_extras *x = measure_extras_of(mc, fr->params);
	struct lat_error err;
	int r = LAT_GO_ON;

	switch (o->kind) {
	case FRONT_SET:
		r = fe->set(fr, o, as, arg);
		break;
	case FRONT_MAP:
		if (opt_set_at(mc->opts, mc->nopts, (size_t)(o->to - 1), as, arg, fr->params, &fr->given, &err) < 0)
			return front_refuse(fe, "%s", err.msg);
		break;
	case FRONT_IGNORE:
		break;
	case FRONT_FLAG:
		*(bool *)(void *)((char *)fr->st + o->key) = true;
		break;
	case FRONT_TEXT:
		*(const char **)(void *)((char *)fr->st + o->key) = arg;
		break;
	case FRONT_REFUSE:
		return front_refuse(fe, "option '%s'%s%s", as, fe->refused, o->why);
	case FRONT_DB: x->db_path = arg; break;
	case FRONT_DB_TRUST: x->db_trust = true; break;
	case FRONT_NO_STORE: x->no_store = true; break;
	case FRONT_JSON: fr->json = arg; break;
	case FRONT_VERBOSE: fr->verbose = true; break;
	case FRONT_LABEL:
		if (x->labels.n == LABELS_MAX)
			return front_refuse(fe, "option '%s': more than %d labels", as, LABELS_MAX);
		if (parse_label(arg, &x->labels.items[x->labels.n]) < 0)
			return front_refuse(fe, "option '%s': '%s' is not KEY=VALUE", as, arg);
		x->labels.n++;
		break;
	case FRONT_HELP:
		fe->help();
		return LAT_DONE;
	}
	if (r == LAT_GO_ON && o->to)
		front_mark(fr, o->to - 1);
	return r;
}

/* getopt_long over the table: LAT_GO_ON, LAT_DONE, or -EINVAL (said). */
static int parse_table(struct front_run *fr, int argc, char **argv, const struct option *longs, const size_t *row_of,
		       const char *shorts)
{
	const struct front_end *fe = fr->fe;
	int c, li, r;
	char name[64];

	optind = 0;     /* a full reset: a process may parse more than once (tests) */
	opterr = 0;
	while ((li = -1, c = getopt_long(argc, argv, shorts, longs, &li)) != -1) {
		const struct front_opt *o = NULL;
		for (size_t i = 0; !o && li < 0 && c != ':' && c != '?' && i < fe->nopts; i++)
			if (fe->opts[i].letter == c)
				o = &fe->opts[i];
		if (li >= 0)
			o = &fe->opts[row_of[li]];
		const char *as = typed(c, li >= 0 ? &longs[li] : NULL, argv, name, sizeof(name));
		if (!o)
			return front_refuse(fe, c == ':' ? "option '%s' needs a value" : "unknown option '%s'", as);
		if (o->modes && !(o->modes & FRONT_MODE(fr->mode)))
			return front_refuse(fe, "option '%s' is not an option of %s", as, fe->mode_names[fr->mode]);
		const char *arg = o->arg == FRONT_OPT_NEXT ? next_word(argc, argv) : optarg;
		if ((r = apply(fr, o, as, arg)) != LAT_GO_ON)
			return r;
	}
	for (int i = optind; i < argc; i++)
		if (!fe->empty_args_ok || argv[i][0])
			return front_refuse(fe, "unexpected argument '%s'", argv[i]);
	return fe->check ? fe->check(fr) : LAT_GO_ON;
}

static int parse(struct front_run *fr, int argc, char **argv)
{
	struct option *longs;
	size_t *row_of;
	char shorts[256];
	char **args = argv;
	int nargs = argc;
	int r = fr->fe->args ? fr->fe->args(fr, argc, argv, &nargs, &args) : LAT_GO_ON;

	if (r != LAT_GO_ON)
		return r;
	if (getopt_tables(fr->fe, &longs, &row_of, shorts, sizeof(shorts)) < 0) {
		r = -ENOMEM;
	} else {
		r = parse_table(fr, nargs, args, longs, row_of, shorts);
		free(longs);
		free(row_of);
	}
	if (args != argv)
		free(args);
	return r;
}

struct front_file *front_add_file(struct front_run *fr, const char *what, const char *opt, const char *path)
{
	if (fr->nfiles == FRONT_FILES_MAX)
		return NULL;
	fr->files[fr->nfiles] = (struct front_file){ .what = what, .opt = opt, .path = path, .sink = { .fd = -1 } };
	return &fr->files[fr->nfiles++];
}

/* The files checked against each other and the store, then opened: 0 or the exit status. */
static int open_files(struct front_run *fr)
{
	const struct measure_extras *x = measure_extras_of(fr->fe->mc, fr->params);
	struct output outs[FRONT_FILES_MAX];
	int r;

	for (size_t i = 0; i < fr->nfiles; i++)
		outs[i] = (struct output){ fr->files[i].what, fr->files[i].path };
	if ((r = outputs_check(fr->fe->name, outs, fr->nfiles, x->db_path, !x->no_store)) != 0)
		return r;
	for (size_t i = 0; i < fr->nfiles; i++)
		if (fr->files[i].path && !fr->files[i].check_only && (r = atomic_file_open(fr->files[i].path, &fr->files[i].sink)) < 0)
			return storecmd_refuse(fr->fe->name, "option '%s': cannot write '%s': %s", fr->files[i].opt,
					       fr->files[i].path, strerror(-r));
	return 0;
}

int front_measure(struct front_run *fr, void *params, const struct opt_result *given, int argc, char **argv,
		  struct result *res, int64_t *ret_id)
{
	const struct front_end *fe = fr->fe;
	struct measure_outcome out = { .res = res };
	struct measure_hooks mh = { .silent = true, .prepared = fe->prepared, .tick = fe->tick, .shape = fe->shape,
				    .ctx = fr };
	struct measure_cmd front = *fe->mc;

	front.name = fe->name;
	int code = measure_with(&front, params, given, argc, argv, &mh, &out);
	*ret_id = out.stored_id;
	return code;
}

/* Translate, open the files, measure and write: the exit status. */
static int measure(struct front_run *fr)
{
	const struct front_end *fe = fr->fe;
	int code;

	for (size_t i = 0; i < fe->nsets; i++)
		front_mark(fr, fe->sets[i]);
	if ((code = fe->translate(fr)) != 0 || (code = open_files(fr)) != 0)
		return code;
	if (fe->before && (code = fe->before(fr)) != 0)
		return code;
	code = front_measure(fr, fr->params, &fr->given, fr->argc, fr->argv, &fr->res, &fr->stored_id);
	if (!fr->res.cpus)
		return code;    /* measure_with said why */
	code = fe->write(fr, code);
	fflush(stdout);
	if (fr->stored_id > 0 && fr->verbose)
		fprintf(stderr, "latscope %s: stored as run %lld (latscope show %lld)\n", fe->name,
			(long long)fr->stored_id, (long long)fr->stored_id);
	return code;
}

int front_run(const struct front_end *fe, int argc, char **argv)
{
	struct front_run *fr = calloc(1, sizeof(*fr));
	int code = EXIT_ERROR;

	if (fr && (fr->st = calloc(1, fe->state_size)) && (fr->params = calloc(1, fe->mc->params_size))) {
		fr->fe = fe;
		fr->argc = argc;
		fr->argv = argv;
		fe->defaults(fr->st);
		fe->mc->defaults(fr->params);
		int r = parse(fr, argc, argv);
		if (r == -ENOMEM)
			fprintf(stderr, "latscope %s: out of memory\n", fe->name);
		code = r == LAT_GO_ON ? measure(fr) : r == -ENOMEM ? EXIT_ERROR : storecmd_exit(r);
		for (size_t i = 0; i < fr->nfiles; i++)
			atomic_file_close(&fr->files[i].sink);
		if (fe->done)
			fe->done(fr);
		result_free(&fr->res);
	} else {
		fprintf(stderr, "latscope %s: out of memory\n", fe->name);
	}
	if (fr) {
		free(fr->params);
		free(fr->st);
	}
	free(fr);
	return code;
}

int front_put(struct front_run *fr, struct front_file *f, int (*print)(FILE *out, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int r = m ? print(m, arg) : -ENOMEM;

	if (m && fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0 && (r = atomic_file_write(&f->sink, buf, len)) == 0)
		r = atomic_file_commit(&f->sink);
	if (r < 0)
		fprintf(stderr, "latscope %s: cannot write '%s': %s\n", fr->fe->name, f->path, strerror(-r));
	free(buf);
	return r;
}

static int print_line(FILE *out, const void *text)
{
	return fprintf(out, "%s\n", (const char *)text) < 0 ? -EIO : 0;
}

int front_put_json(struct front_run *fr, struct front_file *f, const char *path, json_t *doc)
{
	char *text = doc ? rtjson_dump(doc) : NULL;
	int r;

	json_decref(doc);
	if (text && f) {
		r = front_put(fr, f, print_line, text);         /* says why not */
	} else if (text) {
		/* a failure is main's to judge (a closed pipe: quietly) */
		(void)print_line(stdout, text);
		r = 0;
	} else {
		r = -ENOMEM;
		fprintf(stderr, "latscope %s: cannot write '%s': %s\n", fr->fe->name, path, strerror(-r));
	}
	free(text);
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

char *front_cmdline(const struct front_run *fr)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	fputs(fr->fe->name, m);
	for (int i = 1; i < fr->argc; i++)
		fprintf(m, " %s", fr->argv[i]);
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
