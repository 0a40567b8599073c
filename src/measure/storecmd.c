#include "measure/storecmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exitcode.h"
#include "measure/storepath.h"
#include "core/parse.h"
#include "probe/probe.h"
#include "result/json.h"
#include "report/tprint.h"

int storecmd_usage(const char *name, const char *msg)
{
	tprintf(stderr, "latscope %s: %s\nTry 'latscope %s --help'.\n", name, msg, name);
	return EXIT_USAGE;
}

int storecmd_absent(const char *name, const char *msg)
{
	tprintf(stderr, "latscope %s: %s\n", name, msg);
	return EXIT_ERROR;
}

int storecmd_refuse(const char *name, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return storecmd_usage(name, msg);
}

int storecmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *params, struct opt_result *ret)
{
	struct lat_error err;

	if (opt_parse(spec->opts, spec->nopts, argc, argv, params, ret, &err) < 0) {
		storecmd_usage(spec->name, err.msg);
		return -EINVAL;
	}
	if (*(bool *)(void *)((char *)params + spec->help_offset)) {
		printf("Usage: latscope %s %s\n\n%s\n\nOptions:\n", spec->name, spec->synopsis, spec->about);
		opt_print_help(stdout, spec->opts, spec->nopts, params);
		if (spec->help_more)
			spec->help_more(stdout);
		tprintf(stdout, "\nExit status: 0 done, 1 error, 2 bad usage%s.\n",
			spec->exits ? spec->exits : "");
		return LAT_DONE;
	}
	if (ret->npos < spec->min_pos) {
		storecmd_refuse(spec->name, "missing %s", spec->pos_name);
		return -EINVAL;
	}
	if (ret->npos > spec->max_pos) {
		storecmd_refuse(spec->name, "unexpected argument '%s'", ret->pos[spec->max_pos]);
		return -EINVAL;
	}
	return LAT_GO_ON;
}

int storecmd_exit(int r)
{
	return r == LAT_DONE ? EXIT_OK : r < 0 ? EXIT_USAGE : EXIT_ERROR;
}

const char *storecmd_probe_word(size_t i)
{
	const struct probe_ops *ops = probe_at(i);
	return ops ? ops->name : NULL;
}

static int open_store(const char *name, const char *db_opt, unsigned flags, bool absent_ok,
		      struct store **ret)
{
	char path[4096];
	bool chosen;
	struct lat_error err;
	int r = store_path_resolve(db_opt, path, sizeof(path), &chosen);

	*ret = NULL;
	if (r == -ENOENT)
		return storecmd_refuse(name, "no store: HOME is not set; use --db PATH or LATSCOPE_DB");
	if (r < 0)
		return storecmd_refuse(name, "the store's path is too long");
	if (!chosen && (flags & STORE_CREATE) && (r = store_default_dir_make()) < 0) {
		char msg[4200];
		snprintf(msg, sizeof(msg),
			 "the default store: cannot create the directory of '%s': %s (use --db "
			 "PATH)",
			 path, strerror(-r));
		return storecmd_usage(name, msg);
	}
	r = store_open(path, flags, ret, &err);
	if (r == 0)
		return EXIT_OK;
	/* Not there (no file, or one that holds no runs yet) when it is only
	 * read: no run is there, which is no misuse. */
	if (r == -ENOENT && !(flags & STORE_CREATE))
		return absent_ok ? EXIT_OK : storecmd_absent(name, err.msg);
	/* A path the user named that cannot serve is their input (a directory
	 * missing on the way to a store to create, too), and so is a symbolic link
	 * put where the store goes or a store not the user's alone (--db-trust);
	 * the rest is ours. */
	if (r == -ENOENT || r == -ELOOP || r == -EPERM || (chosen && (r == -EINVAL || r == -EACCES)))
		return storecmd_usage(name, err.msg);
	tprintf(stderr, "latscope %s: %s\n", name, err.msg);
	return EXIT_ERROR;
}

int storecmd_open(const char *name, const char *db_opt, unsigned flags, struct store **ret)
{
	return open_store(name, db_opt, flags, false, ret);
}

int storecmd_open_if_any(const char *name, const char *db_opt, unsigned flags, struct store **ret)
{
	return open_store(name, db_opt, flags, true, ret);
}

static int parse_id(const char *s, size_t len, int64_t *ret)
{
	char buf[32];
	uint64_t v;
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_u64(buf, &v) < 0 || v == 0 || v > INT64_MAX)
		return -EINVAL;
	*ret = (int64_t)v;
	return 0;
}

#define MAX_RANGE 100000

/* The most run ids one command takes, ranges expanded (before repeats are dropped). */
#define MAX_IDS 100000

struct given_id {
	int64_t id;
	size_t at;                      /* where it was named */
};

static int by_id_then_place(const void *a, const void *b)
{
	const struct given_id *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/*
 * ids[0..n-1] keeping the first of each id, in the order given: sorted by id
 * (then place) the repeats sit together, so this is O(n log n) where a scan of
 * the ids kept so far for each one would be quadratic (1-99999 took seconds).
 */
static size_t drop_repeats(struct given_id *ids, size_t n, int64_t *out)
{
	bool *keep = calloc(n ? n : 1u, sizeof(*keep));
	size_t k = 0;

	if (!keep)
		return SIZE_MAX;
	if (n)
		qsort(ids, n, sizeof(*ids), by_id_then_place);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || ids[i].id != ids[i - 1u].id) {
			keep[ids[i].at] = true;
			out[ids[i].at] = ids[i].id;
		}
	for (size_t i = 0; i < n; i++)
		if (keep[i])
			out[k++] = out[i];
	free(keep);
	return k;
}

int storecmd_parse_ids(const char *const *args, size_t nargs, int64_t **ret, size_t *ret_n, struct lat_error *err)
{
	struct given_id *given = NULL;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;

	for (size_t a = 0; a < nargs; a++) {
		const char *p = args[a];
		for (;;) {
			size_t len = strcspn(p, ",");
			const char *dash = memchr(p, '-', len);
			int64_t lo, hi;
			if (dash ? parse_id(p, (size_t)(dash - p), &lo) < 0 || parse_id(dash + 1, len - (size_t)(dash - p) - 1u, &hi) < 0
				 : parse_id(p, len, &lo) < 0) {
				err_set(err, 0, "'%s' is not a run id or a range of them (such as 12, 3-7, 3,5)", args[a]);
				goto fail;
			}
			if (!dash)
				hi = lo;
			if (hi < lo || hi - lo >= MAX_RANGE) {
				err_set(err, 0, "'%s': the range is reversed or longer than %d runs", args[a], MAX_RANGE);
				goto fail;
			}
			/* Counted before anything is made of them: `show 1-99999` is refused at once. */
			if ((uint64_t)(hi - lo) + 1u > MAX_IDS - n) {
				err_set(err, 0, "'%s': more than %d run ids in all", args[a], MAX_IDS);
				goto fail;
			}
			if (n + (size_t)(hi - lo) + 1u > cap) {
				size_t c = cap ? cap : 16u;
				while (c < n + (size_t)(hi - lo) + 1u)
					c *= 2u;
				struct given_id *grown = realloc(given, c * sizeof(*grown));
				if (!grown)
					goto oom;
				given = grown;
				cap = c;
			}
			for (int64_t id = lo; id <= hi; id++, n++)
				given[n] = (struct given_id){ .id = id, .at = n };
			if (p[len] == '\0')
				break;
			p += len + 1u;
		}
	}
	if (!(ids = malloc((n ? n : 1u) * sizeof(*ids))) || (n = drop_repeats(given, n, ids)) == SIZE_MAX)
		goto oom;
	free(given);
	*ret = ids;
	*ret_n = n;
	return 0;
oom:
	err_set(err, 0, "out of memory");
fail:
	free(given);
	free(ids);
	return -EINVAL;
}

int storecmd_read(const char *name, struct store *st, int64_t id, struct result *ret)
{
	struct lat_error serr;
	char *text = NULL;
	/* What the reader derives again is not read. */
	int r = store_read(st, id, STORE_LEAVE_ALL_WINDOWS, &text, &serr);

	if (r == 0) {
		r = result_from_text(text, strlen(text), ret, &serr);
		free(text);
		if (r < 0)
			err_prefix(&serr, r, "run %lld cannot be read back: ", (long long)id);
	}
	if (r == 0)
		return EXIT_OK;
	if (r == -ENOENT)
		return storecmd_absent(name, serr.msg);
	tprintf(stderr, "latscope %s: %s\n", name, serr.msg);
	return EXIT_ERROR;
}

int storecmd_load(const char *name, struct store *st, const int64_t *ids, size_t n, struct result **ret)
{
	struct result *res = calloc(n ? n : 1, sizeof(*res));

	if (!res) {
		tprintf(stderr, "latscope %s: out of memory\n", name);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		int code = storecmd_read(name, st, ids[i], &res[i]);
		if (code != EXIT_OK) {
			storecmd_free_results(res, i);
			return code;
		}
	}
	*ret = res;
	return EXIT_OK;
}

void storecmd_free_results(struct result *res, size_t n)
{
	if (!res)
		return;
	for (size_t i = 0; i < n; i++)
		result_free(&res[i]);
	free(res);
}

int storecmd_select(const char *name, const struct opt_result *given, const char *probe, const struct labels *labels,
		    struct store *st, int64_t **ret, size_t *ret_n)
{
	struct lat_error err;
	struct lat_error serr;
	bool filtered = labels->n || probe;
	int64_t *ids;
	size_t n;

	if (given->npos && filtered)
		return storecmd_usage(name, "give run ids or --label/--probe filters, not both");
	if (given->npos) {
		if (storecmd_parse_ids(given->pos, given->npos, ret, ret_n, &err) < 0)
			return storecmd_usage(name, err.msg);
		return EXIT_OK;
	}
	if (!filtered)
		return storecmd_usage(name, "give run ids, or at least one --label or --probe filter");
	struct run_filter f = { .probe = probe, .labels = *labels };
	if (store_ids(st, &f, &ids, &n, &serr) < 0) {
		tprintf(stderr, "latscope %s: %s\n", name, serr.msg);
		return EXIT_ERROR;
	}
	if (n == 0) {
		free(ids);
		return storecmd_absent(name, "no stored run matches the filter");
	}
	*ret = ids;
	*ret_n = n;
	return EXIT_OK;
}
