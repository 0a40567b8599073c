#include "cli/compmodel.h"

#include <errno.h>
#include <string.h>

#include "front/driver.h"
#include "measure/measure.h"
#include "measure/storecmd.h"

bool comp_word_is_plain(const char *word, size_t len)
{
	/* Nothing a shell splits at, expands, quotes or globs. */
	static const char plain[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-:%@/";

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!word[i] || !strchr(plain, word[i]))
			return false;
	return true;
}

/* word (len bytes) after the others, unless it is there already. */
static int add_word(struct comp_values *v, const char *word, size_t len, struct lat_error *err)
{
	size_t at = strlen(v->words);

	if (!comp_word_is_plain(word, len))
		return err_set(err, -EINVAL, "'%.*s' is not a word a shell takes unquoted",
			       (int)len, word);
	for (const char *p = v->words; *p;) {
		size_t n = strcspn(p, " ");
		if (n == len && strncmp(p, word, len) == 0)
			return 0;
		p += n + (p[n] == ' ');
	}
	if (at + (at > 0) + len >= sizeof(v->words))
		return err_set(err, -E2BIG, "more words than %zu bytes hold", sizeof(v->words));
	if (at > 0)
		v->words[at++] = ' ';
	memcpy(v->words + at, word, len);
	v->words[at + len] = '\0';
	return 0;
}

/* Whether a value of kind v offers a table's words. */
static bool offers_words(enum opt_values v)
{
	return v == OPT_VALUES_WORDS || v == OPT_VALUES_WORD_LIST || v == OPT_VALUES_WORD_KEY_LIST;
}

/* The words of a table the parser reads: a NULL-terminated array, or its i-th word by index. */
static int add_words(struct comp_values *v, const char *const *array, const char *(*word)(size_t i),
		     struct lat_error *err)
{
	const char *w;
	int r;

	if (!array && !word)
		return err_set(err, -EINVAL, "it offers words but names none");
	for (size_t i = 0; (w = array ? array[i] : word(i)); i++)
		if ((r = add_word(v, w, strlen(w), err)) < 0)
			return r;
	return 0;
}

/* What a row of an option table offers: what its kind says, else its .values. */
static int opt_values(const struct opt *o, struct comp_values *ret, struct lat_error *err)
{
	memset(ret, 0, sizeof(*ret));
	switch (o->kind) {
	case OPT_ENUM: ret->kind = OPT_VALUES_WORDS; return add_words(ret, o->choices, NULL, err);
	case OPT_CPUS: ret->kind = OPT_VALUES_CPUS; return 0;
	case OPT_FLAG:
	case OPT_HELP:
	case OPT_UINT:
	case OPT_DURATION:
	case OPT_SIZE:
	case OPT_LABEL:
	case OPT_STRING:
	case OPT_STRLIST: break;
	}
	ret->kind = o->values;
	if (offers_words(o->values))
		return add_words(ret, NULL, o->words, err);
	return 0;
}

/* Room for the next option, named name (NULL: a letter only) and letter; NULL
 * with err filled when there is none or a name is no plain word. */
static struct comp_opt *next_opt(struct comp_cmd *ret, const char *name, char letter,
				 struct lat_error *err)
{
	if (ret->nopts == COMP_OPTS_MAX) {
		err_set(err, -E2BIG, "%s: more than %d options", ret->name, COMP_OPTS_MAX);
		return NULL;
	}
	if ((name && !comp_word_is_plain(name, strlen(name))) ||
	    (letter && !comp_word_is_plain(&letter, 1))) {
		err_set(err, -EINVAL,
			"%s: option '--%s' or '-%c' is not a word a shell takes unquoted",
			ret->name, name ? name : "", letter ? letter : ' ');
		return NULL;
	}
	return &ret->opts[ret->nopts++];
}

static int from_opts(const struct opt *opts, size_t nopts, struct comp_cmd *ret,
		     struct lat_error *err)
{
	for (size_t i = 0; i < nopts; i++) {
		const struct opt *o = &opts[i];
		struct comp_opt *co = next_opt(ret, o->name, o->short_name, err);
		if (!co)
			return -EINVAL;
		*co = (struct comp_opt){ .name = o->name,
					 .letter = o->short_name,
					 .takes = o->kind != OPT_FLAG && o->kind != OPT_HELP };
		int r = opt_values(o, &co->v, err);
		if (r < 0)
			return err_prefix(err, r, "%s --%s: ", ret->name, o->name);
	}
	return 0;
}

/* A front end's rows: the tool's own syntax, so only what a row says it offers;
 * a FRONT_MAP row is parsed by latscope's row, and offers what that offers. */
static int from_front(const struct front_end *fe, struct comp_cmd *ret, struct lat_error *err)
{
	for (size_t i = 0; i < fe->nopts; i++) {
		const struct front_opt *o = &fe->opts[i];
		struct comp_opt *co = next_opt(ret, o->name, o->letter, err);
		if (!co)
			return -EINVAL;
		*co = (struct comp_opt){ .name = o->name,
					 .letter = o->letter,
					 .takes = o->arg != FRONT_NO_ARG,
					 .optional = o->arg == FRONT_OPT_ARG ||
						     o->arg == FRONT_OPT_NEXT };
		if (o->kind == FRONT_MAP && o->to > 0 && (size_t)o->to <= fe->mc->nopts) {
			int r = opt_values(&fe->mc->opts[o->to - 1], &co->v, err);
			if (r < 0)
				return err_prefix(err, r, "%s --%s: ", ret->name,
						  o->name ? o->name : "");
		} else if (offers_words(o->values)) {
			return err_set(err, -EINVAL, "%s --%s: a front end's row offers no words",
				       ret->name, o->name ? o->name : "");
		} else {
			co->v.kind = o->values;
		}
	}
	return 0;
}

/* The k-th word of phrase (words one space apart), *ret_len long; NULL past the last. */
static const char *nth_word(const char *phrase, size_t k, size_t *ret_len)
{
	const char *w = phrase;

	for (; k > 0 && *w; k--) {
		w += strcspn(w, " ");
		w += *w == ' ';
	}
	*ret_len = strcspn(w, " ");
	return *ret_len ? w : NULL;
}

/* A front end's arguments are its modes' words, each at its place ("timerlat hist"). */
static int front_args(const struct front_end *fe, struct comp_cmd *ret, struct lat_error *err)
{
	for (size_t k = 0; fe->mode_names && k < COMP_ARGS_MAX; k++) {
		struct comp_values *v = &ret->args[k];
		v->kind = OPT_VALUES_WORDS;
		for (size_t m = 0; fe->mode_names[m]; m++) {
			size_t len;
			const char *w = nth_word(fe->mode_names[m], k, &len);
			int r = w ? add_word(v, w, len, err) : 0;
			if (r < 0)
				return err_prefix(err, r, "%s: ", ret->name);
		}
		if (!v->words[0]) {
			v->kind = OPT_VALUES_TYPED;
			break;
		}
		ret->nargs = k + 1;
	}
	return 0;
}

/* A spec's arguments: each at its place when they are few, else all alike. */
static int spec_args(const struct cmd_spec *spec, struct comp_cmd *ret, struct lat_error *err)
{
	struct comp_values v = { .kind = spec->pos_values };

	if (spec->max_pos == 0)
		return 0;
	if (offers_words(v.kind)) {
		int r = add_words(&v, NULL, spec->pos_words, err);
		if (r < 0)
			return err_prefix(err, r, "%s: argument: ", ret->name);
	}
	if (spec->max_pos > COMP_ARGS_MAX) {
		ret->rest = v;
		return 0;
	}
	for (ret->nargs = 0; ret->nargs < spec->max_pos; ret->nargs++)
		ret->args[ret->nargs] = v;
	return 0;
}

int comp_describe(const struct command *c, struct comp_cmd *ret, struct lat_error *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->name = c->name;
	if (!comp_word_is_plain(c->name, strlen(c->name)))
		return err_set(err, -EINVAL, "command '%s' is not a word a shell takes unquoted",
			       c->name);
	if (c->fe) {
		int r = from_front(c->fe, ret, err);
		return r < 0 ? r : front_args(c->fe, ret, err);
	}
	if (c->mc) {
		/* a measuring command's one argument is the PATH it measures (io) */
		if (c->mc->path) {
			ret->args[0].kind = OPT_VALUES_FILE;
			ret->nargs = 1;
		}
		return from_opts(c->mc->opts, c->mc->nopts, ret, err);
	}
	if (!c->spec)
		return err_set(err, -EINVAL, "%s: no option table to read", c->name);
	const struct cmd_spec *spec = c->spec();
	int r = from_opts(spec->opts, spec->nopts, ret, err);
	return r < 0 ? r : spec_args(spec, ret, err);
}
