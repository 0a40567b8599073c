#include "measure/opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "core/parse.h"
#include "core/quote.h"
#include "core/suggest.h"
#include "core/units.h"
#include "probe/params.h"

static void *field(void *params, const struct opt *o)
{
	return (char *)params + o->offset;
}

static const void *cfield(const void *params, const struct opt *o)
{
	return (const char *)params + o->offset;
}

static void choices_text(const char *const *choices, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; choices[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", choices[i]);
}

static int set_duration(const struct opt *o, const char *as, const char *val, const char *q, void *params,
		            struct lat_error *err)
{
	uint64_t ns = 0;
	char lim[32];
	const bool none = o->flags & OPT_ZERO_OFF && strcmp(val, "none") == 0;
	int r = none ? 0 : parse_duration(val, o->unit, &ns);

	if (o->flags & OPT_ZERO_OFF && (none || (r == 0 && ns == 0))) {
		*(uint64_t *)field(params, o) = 0;
		return 0;
	}
	if (r == -EINVAL && val[0] == '-' && val[1] >= '0' && val[1] <= '9')
		return err_set(err, -EINVAL, "option '%s': %s: a duration cannot be negative", as, q);
	if (r == -EINVAL)
		return err_set(err, -EINVAL, "option '%s': %s is not a duration (a number with an optional unit: ns, us, ms, s, m, h, d)",
			    as, q);
	if (r == -ERANGE || ns > o->max) {
		fmt_duration(o->max, lim, sizeof(lim));
		return err_set(err, -EINVAL, "option '%s': %s is above the maximum of %s", as, q, lim);
	}
	if (ns < o->min) {
		fmt_duration(o->min, lim, sizeof(lim));
		return err_set(err, -EINVAL, "option '%s': %s is below the minimum of %s", as, q, lim);
	}
	*(uint64_t *)field(params, o) = ns;
	return 0;
}

static int set_size(const struct opt *o, const char *as, const char *val, const char *q, void *params,
		        struct lat_error *err)
{
	uint64_t v;
	char lim[32];
	int r = parse_size(val, &v);

	if (r == -EINVAL)
		return err_set(err, -EINVAL, "option '%s': %s is not a size (a number with an optional unit: k, M, G, T)", as, q);
	if (r == -ERANGE || v > o->max) {
		fmt_size(o->max, lim, sizeof(lim));
		return err_set(err, -EINVAL, "option '%s': %s is above the maximum of %s", as, q, lim);
	}
	if (v < o->min) {
		fmt_size(o->min, lim, sizeof(lim));
		return err_set(err, -EINVAL, "option '%s': %s is below the minimum of %s", as, q, lim);
	}
	*(uint64_t *)field(params, o) = v;
	return 0;
}

static int set_uint(const struct opt *o, const char *as, const char *val, const char *q, void *params,
		        struct lat_error *err)
{
	uint64_t v;
	int r = parse_u64(val, &v);

	if (r == -EINVAL)
		return err_set(err, -EINVAL, "option '%s': %s is not a whole number", as, q);
	if (r == -ERANGE || v < o->min || v > o->max)
		return err_set(err, -EINVAL, "option '%s': %s is out of range (%llu to %llu)", as, q,
			    (unsigned long long)o->min, (unsigned long long)o->max);
	*(uint64_t *)field(params, o) = v;
	return 0;
}

static int set_label(const struct opt *o, const char *as, const char *val, const char *q, void *params,
		         struct lat_error *err)
{
	struct labels *ls = field(params, o);
	struct label l;
	int r = parse_label(val, &l);

	if (r == -E2BIG)
		return err_set(err, -EINVAL, "option '%s': %s is too long (key up to %d, value up to %d characters)", as, q,
			    LABEL_KEY_MAX - 1, LABEL_VALUE_MAX - 1);
	if (r < 0)
		return err_set(err, -EINVAL, "option '%s': %s is not KEY=VALUE (KEY: a letter, then letters, digits, '_', '-', '.'; "
			    "VALUE: non-empty UTF-8 text)", as, q);
	for (unsigned i = 0; i < ls->n; i++)
		if (strcmp(ls->items[i].key, l.key) == 0)
			return err_set(err, -EINVAL, "option '%s': label '%s' is given twice", as, l.key);
	if (ls->n >= LABELS_MAX)
		return err_set(err, -EINVAL, "option '%s': more than %d labels", as, LABELS_MAX);
	ls->items[ls->n++] = l;
	return 0;
}

static int set_value(const struct opt *o, const char *as, const char *val, const char *q, void *params,
		         struct lat_error *err)
{
	switch (o->kind) {
	case OPT_DURATION:
		return set_duration(o, as, val, q, params, err);
	case OPT_SIZE:
		return set_size(o, as, val, q, params, err);
	case OPT_UINT:
		return set_uint(o, as, val, q, params, err);
	case OPT_CPUS: {
		struct cpuset set;
		int r = cpuset_parse(val, &set);
		if (r == -ERANGE)
			return err_set(err, -EINVAL, "option '%s': %s names a CPU above %u", as, q, CPUSET_MAX - 1u);
		if (r < 0)
			return err_set(err, -EINVAL, "option '%s': %s is not a CPU list (such as 0-3,6)", as, q);
		*(struct cpuset *)field(params, o) = set;
		return 0;
	}
	case OPT_ENUM:
		for (int i = 0; o->choices[i]; i++)
			if (strcmp(o->choices[i], val) == 0) {
				*(int *)field(params, o) = i;
				return 0;
			}
		char list[128];
		choices_text(o->choices, list, sizeof(list));
		return err_set(err, -EINVAL, "option '%s': %s is not one of %s", as, q, list);
	case OPT_LABEL:
		return set_label(o, as, val, q, params, err);
	case OPT_STRING:
		if (!*val)
			return err_set(err, -EINVAL, "option '%s': the value is empty", as);
		*(const char **)field(params, o) = val;
		return 0;
	case OPT_STRLIST: {
		struct strlist *l = field(params, o);
		if (!*val)
			return err_set(err, -EINVAL, "option '%s': the value is empty", as);
		if (l->n >= STRLIST_MAX)
			return err_set(err, -EINVAL, "option '%s': given more than %d times", as, STRLIST_MAX);
		l->items[l->n++] = val;
		return 0;
	}
	case OPT_FLAG:
	case OPT_HELP:
		break;
	}
	return err_set(err, -EINVAL, "option '%s': takes no value", as);
}

static bool takes_value(const struct opt *o)
{
	return o->kind != OPT_FLAG && o->kind != OPT_HELP;
}

const struct opt *opt_find(const struct opt *opts, size_t nopts, const char *name)
{
	for (size_t i = 0; i < nopts; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

bool opt_given(const struct opt *opts, size_t nopts, const struct opt_result *res, const char *name)
{
	const struct opt *o = opt_find(opts, nopts, name);
	return o && (res->seen >> (size_t)(o - opts)) & 1u;
}

int opt_run_row(const struct opt *opts, size_t nopts, enum run_row row)
{
	for (size_t i = 0; i < nopts && row != RUN_ROW_NONE; i++)
		if (opts[i].run_row == row)
			return (int)i;
	return -ENOENT;
}

bool opt_run_given(const struct opt *opts, size_t nopts, const struct opt_result *res,
		   enum run_row row)
{
	int i = opt_run_row(opts, nopts, row);
	return i >= 0 && opt_given_at(nopts, res, (size_t)i);
}

int opt_run_mark(const struct opt *opts, size_t nopts, struct opt_result *res, enum run_row row)
{
	int i = opt_run_row(opts, nopts, row);
	return i < 0 ? i : opt_mark_at(nopts, res, (size_t)i);
}

int opt_mark_at(size_t nopts, struct opt_result *res, size_t row)
{
	if (row >= nopts || row >= OPT_MAX)
		return -ENOENT;
	res->seen |= UINT64_C(1) << row;
	return 0;
}

bool opt_given_at(size_t nopts, const struct opt_result *res, size_t row)
{
	return row < nopts && row < OPT_MAX && (res->seen >> row) & 1u;
}

int opt_mark_typed(size_t nopts, struct opt_result *res, size_t row, bool short_form)
{
	int r = opt_mark_at(nopts, res, row);

	if (r == 0 && short_form)
		res->short_form |= UINT64_C(1) << row;
	else if (r == 0)
		res->short_form &= ~(UINT64_C(1) << row);
	return r;
}

bool opt_short_at(size_t nopts, const struct opt_result *res, size_t row)
{
	return row < nopts && row < OPT_MAX && (res->short_form >> row) & 1u;
}

static const struct opt *find_long(const struct opt *opts, size_t nopts, const char *name, size_t len)
{
	for (size_t i = 0; i < nopts; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, size_t nopts, char c)
{
	for (size_t i = 0; i < nopts; i++)
		if (opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

void opt_msg_as_typed(const struct opt *opts, size_t nopts, const struct opt_result *res, char *msg,
		      size_t size)
{
	char out[sizeof(((struct lat_error *)0)->msg)];
	size_t len = 0;
	const char *p = msg;

	if (!size)
		return;
	while (*p && len + 1u < sizeof(out)) {
		const struct opt *o = NULL;
		size_t n = 0;
		if (p[0] == '\'' && p[1] == '-' && p[2] == '-') {
			n = strcspn(p + 3, "'");
			o = p[3 + n] == '\'' ? find_long(opts, nopts, p + 3, n) : NULL;
		}
		if (o && o->short_name && opt_short_at(nopts, res, (size_t)(o - opts))) {
			len += (size_t)snprintf(out + len, sizeof(out) - len, "'-%c'",
						o->short_name);
			p += n + 4u;
			continue;
		}
		out[len++] = *p++;
	}
	out[len < sizeof(out) ? len : sizeof(out) - 1u] = '\0';
	snprintf(msg, size, "%s", out);
}

/* Apply one option; 1 when it was --help (parsing stops), 0, or -EINVAL. */
static int apply(const struct opt *opts, const struct opt *o, const char *as, const char *val,
		 void *params, struct opt_result *res, struct lat_error *err)
{
	const uint64_t bit = UINT64_C(1) << (size_t)(o - opts);
	res->seen |= bit;
	/* as the row's own short name: a front end's letter for it (rtla's -p for --interval) is not */
	const bool short_form = as[0] == '-' && o->short_name && as[1] == o->short_name && !as[2];
	res->short_form = short_form ? res->short_form | bit : res->short_form & ~bit;
	if (o->kind == OPT_FLAG || o->kind == OPT_HELP) {
		*(bool *)field(params, o) = true;
		return o->kind == OPT_HELP;
	}
	char q[QUOTE_MAX];
	return set_value(o, as, val, quote_short(val, q), params, err);
}

int opt_set_at(const struct opt *opts, size_t nopts, size_t row, const char *as, const char *val, void *params,
	       struct opt_result *res, struct lat_error *err)
{
	if (row >= nopts || row >= OPT_MAX)
		return err_set(err, -EINVAL, "internal: no option row %zu", row);
	if (!takes_value(&opts[row]))
		return err_set(err, -EINVAL, "internal: option '%s' takes no value", as);
	return apply(opts, &opts[row], as, val, params, res, err);
}

static int parse_long(const struct opt *opts, size_t nopts, int argc, char **argv, int *i,
		      void *params, struct opt_result *res, struct lat_error *err)
{
	const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt *o = find_long(opts, nopts, name, len);
	char as[80];

	snprintf(as, sizeof(as), "--%.*s", (int)(len < 64 ? len : 64), name);
	if (!o) {
		const char *names[OPT_MAX];
		size_t n = nopts < OPT_MAX ? nopts : OPT_MAX;
		for (size_t k = 0; k < n; k++)
			names[k] = opts[k].name;
		long near = suggest_word(name, len, names, n);
		if (near >= 0)
			return err_set(err, -EINVAL, "unknown option '%s'; did you mean '--%s'?", as, names[near]);
		return err_set(err, -EINVAL, "unknown option '%s'", as);
	}
	if (!takes_value(o)) {
		if (eq)
			return err_set(err, -EINVAL, "option '%s' takes no value", as);
		return apply(opts, o, as, NULL, params, res, err);
	}
	const char *val = eq ? eq + 1 : NULL;
	if (!val) {
		if (*i + 1 >= argc)
			return err_set(err, -EINVAL, "option '%s' needs a value", as);
		val = argv[++*i];
	}
	return apply(opts, o, as, val, params, res, err);
}

static int parse_short(const struct opt *opts, size_t nopts, int argc, char **argv, int *i,
		       void *params, struct opt_result *res, struct lat_error *err)
{
	const char *arg = argv[*i];

	for (size_t j = 1; arg[j]; j++) {
		const struct opt *o = find_short(opts, nopts, arg[j]);
		char as[3] = { '-', arg[j], '\0' };
		int r;
		if (!o)
			return err_set(err, -EINVAL, "unknown option '%s'", as);
		if (!takes_value(o)) {
			if ((r = apply(opts, o, as, NULL, params, res, err)) != 0)
				return r;
			continue;
		}
		const char *val = arg[j + 1] ? &arg[j + 1] : NULL;
		if (!val) {
			if (*i + 1 >= argc)
				return err_set(err, -EINVAL, "option '%s' needs a value", as);
			val = argv[++*i];
		}
		return apply(opts, o, as, val, params, res, err);
	}
	return 0;
}

int opt_parse(const struct opt *opts, size_t nopts, int argc, char **argv, void *params,
	      struct opt_result *ret, struct lat_error *err)
{
	struct opt_result res = { 0 };
	bool only_pos = false;

	err->msg[0] = '\0';
	if (nopts > OPT_MAX)
		return err_set(err, -EINVAL, "internal: more than %d options", OPT_MAX);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int r;
		if (only_pos || arg[0] != '-' || arg[1] == '\0') {
			char q[QUOTE_MAX];
			if (res.npos >= ARRAY_SIZE(res.pos))
				return err_set(err, -EINVAL, "too many arguments at %s", quote_short(arg, q));
			res.pos[res.npos++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_pos = true;
			continue;
		}
		r = arg[1] == '-' ? parse_long(opts, nopts, argc, argv, &i, params, &res, err)
				  : parse_short(opts, nopts, argc, argv, &i, params, &res, err);
		if (r < 0)
			return r;
		if (r > 0)
			break;          /* --help: the rest does not matter */
	}
	*ret = res;
	return 0;
}

static void metavar(const struct opt *o, char *buf, size_t size)
{
	if (o->metavar) {
		snprintf(buf, size, "%s", o->metavar);
		return;
	}
	switch (o->kind) {
	case OPT_DURATION: snprintf(buf, size, "DUR"); return;
	case OPT_SIZE: snprintf(buf, size, "SIZE"); return;
	case OPT_UINT: snprintf(buf, size, "N"); return;
	case OPT_CPUS: snprintf(buf, size, "CPUS"); return;
	case OPT_LABEL: snprintf(buf, size, "KEY=VALUE"); return;
	case OPT_STRING: snprintf(buf, size, "FILE"); return;
	case OPT_STRLIST: snprintf(buf, size, "TEXT"); return;
	case OPT_ENUM: {
		size_t len = 0;
		buf[0] = '\0';
		for (size_t i = 0; o->choices[i] && len < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "|" : "", o->choices[i]);
		return;
	}
	case OPT_FLAG:
	case OPT_HELP:
		break;
	}
	buf[0] = '\0';
}

static void default_text(const struct opt *o, const void *defaults, char *buf, size_t size)
{
	buf[0] = '\0';
	switch (o->kind) {
	case OPT_DURATION: {
		uint64_t v = *(const uint64_t *)cfield(defaults, o);
		char d[32];
		if (!v)
			return;
		fmt_duration(v, d, sizeof(d));
		snprintf(buf, size, "default %s", d);
		return;
	}
	case OPT_SIZE: {
		uint64_t v = *(const uint64_t *)cfield(defaults, o);
		char d[32];
		if (!v)
			return;
		fmt_size(v, d, sizeof(d));
		snprintf(buf, size, "default %s", d);
		return;
	}
	case OPT_UINT: {
		uint64_t v = *(const uint64_t *)cfield(defaults, o);
		if (v && !(o->flags & OPT_UNSET_NULL && v == OPT_UNSET))     /* 0 means "no limit" for every counting option */
			snprintf(buf, size, "default %llu", (unsigned long long)v);
		return;
	}
	case OPT_ENUM:
		snprintf(buf, size, "default %s", o->choices[*(const int *)cfield(defaults, o)]);
		return;
	case OPT_CPUS: {
		char list[48];
		if (cpuset_format(cfield(defaults, o), list, sizeof(list)) > 0)
			snprintf(buf, size, "default %s", list);
		return;
	}
	case OPT_FLAG:
	case OPT_HELP:
	case OPT_LABEL:
	case OPT_STRING:
	case OPT_STRLIST:
		return;
	}
}

/* Append "; 10ms to 1h" to the default (or alone): what the option accepts, said before it is refused. */
static void range_text(const struct opt *o, char *buf, size_t size)
{
	char lo[32], hi[32];
	size_t len = strlen(buf);

	switch (o->kind) {
	case OPT_DURATION:
		fmt_duration(o->min, lo, sizeof(lo));
		fmt_duration(o->max, hi, sizeof(hi));
		break;
	case OPT_SIZE:
		fmt_size(o->min, lo, sizeof(lo));
		fmt_size(o->max, hi, sizeof(hi));
		break;
	case OPT_UINT:
		snprintf(lo, sizeof(lo), "%llu", (unsigned long long)o->min);
		snprintf(hi, sizeof(hi), "%llu", (unsigned long long)o->max);
		break;
	case OPT_FLAG:
	case OPT_CPUS:
	case OPT_ENUM:
	case OPT_LABEL:
	case OPT_STRING:
	case OPT_STRLIST:
	case OPT_HELP:
		return;
	}
	snprintf(buf + len, size - len, "%s%s to %s", len ? "; " : "", lo, hi);
}

void opt_print_help(FILE *out, const struct opt *opts, size_t nopts, const void *defaults)
{
	for (size_t i = 0; i < nopts; i++) {
		const struct opt *o = &opts[i];
		char mv[64], head[160], def[160];
		metavar(o, mv, sizeof(mv));
		if (o->short_name)
			snprintf(head, sizeof(head), "-%c, --%s%s%s", o->short_name, o->name, *mv ? " " : "", mv);
		else
			snprintf(head, sizeof(head), "    --%s%s%s", o->name, *mv ? " " : "", mv);
		default_text(o, defaults, def, sizeof(def));
		range_text(o, def, sizeof(def));
		if (strlen(head) > 28)
			fprintf(out, "  %s\n  %-28s  %s", head, "", o->help);
		else
			fprintf(out, "  %-28s  %s", head, o->help);
		fprintf(out, *def ? " (%s)\n" : "\n", def);
	}
}

json_t *opt_params_json(const struct opt *opts, size_t nopts, const void *params)
{
	json_t *obj = json_object();

	if (!obj)
		return NULL;
	for (size_t i = 0; i < nopts; i++) {
		const struct opt *o = &opts[i];
		char key[80];
		json_t *v = NULL;

		if (o->flags & OPT_NOT_PARAM || o->kind == OPT_HELP)
			continue;
		if (o->flags & OPT_PARAM_IF_SET && (o->kind == OPT_UINT || o->kind == OPT_DURATION) &&
		    *(const uint64_t *)cfield(params, o) == 0)
			continue;
		snprintf(key, sizeof(key), "%s%s", o->name, o->kind == OPT_DURATION ? "_ns" : o->kind == OPT_SIZE ? "_bytes" : "");
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		switch (o->kind) {
		case OPT_FLAG: v = json_boolean(*(const bool *)cfield(params, o)); break;
		case OPT_UINT: {
			const uint64_t u = *(const uint64_t *)cfield(params, o);
			v = o->flags & OPT_UNSET_NULL && u == OPT_UNSET ? json_null() : json_integer((json_int_t)u);
			break;
		}
		case OPT_SIZE:
		case OPT_DURATION: v = json_integer((json_int_t) * (const uint64_t *)cfield(params, o)); break;
		case OPT_ENUM: v = json_string(o->choices[*(const int *)cfield(params, o)]); break;
		case OPT_CPUS: {
			/* Sized to the list: a sparse set on a big machine runs to kilobytes,
			 * and a cut list would still read as a valid, smaller set. */
			size_t need = cpuset_format(cfield(params, o), NULL, 0) + 1u;
			char *list = malloc(need);
			if (list) {
				cpuset_format(cfield(params, o), list, need);
				v = json_string(list);
				free(list);
			}
			break;
		}
		case OPT_STRING: {
			const char *s = *(const char *const *)cfield(params, o);
			v = s ? json_string(s) : json_null();
			break;
		}
		case OPT_STRLIST: {
			const struct strlist *l = cfield(params, o);
			v = json_array();
			for (unsigned k = 0; v && k < l->n; k++)
				if (json_array_append_new(v, json_string(l->items[k])) < 0) {
					json_decref(v);
					v = NULL;
				}
			break;
		}
		case OPT_LABEL:
		case OPT_HELP:
			continue;
		}
		if (!v || json_object_set_new(obj, key, v) < 0) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}
