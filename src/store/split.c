#include "store/split.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"

/*
 * Where a block's windows were: a string that starts with a NUL.  No parsed
 * document holds one (jansson refuses "\u0000" in a string unless told to
 * allow it), and a string's quotes and backslashes are escaped when written,
 * so the text '"\u0000windows:' occurs in the rest only where split put it.
 */
#define MARK "\"\\u0000windows:"
#define MARK_TEXT "windows:"

/* Whether every real in v reads back from digits significant digits as itself. */
static bool reals_exact(const json_t *v, int digits)
{
	const char *key;
	json_t *item;
	size_t i;
	char text[64];

	switch (json_typeof(v)) {
	case JSON_REAL:
		snprintf(text, sizeof(text), "%.*g", digits, json_real_value(v));
		return strtod(text, NULL) == json_real_value(v);
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, item)
			if (!reals_exact(item, digits))
				return false;
		return true;
	case JSON_ARRAY:
		json_array_foreach(v, i, item)
			if (!reals_exact(item, digits))
				return false;
		return true;
	case JSON_STRING:
	case JSON_INTEGER:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return true;
	}
	return true;
}

static int take(struct split *sp, json_t *block, const char *name, size_t flags)
{
	json_t *w = json_object_get(block, "windows");
	char mark[SPLIT_NAME_SIZE + sizeof(MARK_TEXT) + 1];
	struct split_block *b = &sp->blocks[sp->n];

	if (!w)
		return 0;
	for (size_t i = 0; i < sp->n; i++)
		if (strcmp(sp->blocks[i].name, name) == 0)
			return 0;               /* not its own name: stays where it is */
	snprintf(b->name, sizeof(b->name), "%s", name);
	if (!(b->body = json_dumps(w, flags | JSON_ENCODE_ANY)))
		return -ENOMEM;
	mark[0] = '\0';
	int len = snprintf(mark + 1, sizeof(mark) - 1u, MARK_TEXT "%s", name);
	if (json_object_set_new(block, "windows", json_stringn(mark, (size_t)len + 1u)) < 0) {
		free(b->body);
		b->body = NULL;
		return -ENOMEM;
	}
	sp->n++;
	return 0;
}

int split_windows(json_t *doc, struct split *ret)
{
	json_t *cpus = json_object_get(doc, "cpus"), *c;
	/* As latscope writes them when that gives every number back, else all of a double's digits. */
	int digits = reals_exact(doc, RESULT_REAL_DIGITS) ? RESULT_REAL_DIGITS : 17;
	size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(digits), i;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!(ret->blocks = calloc(json_array_size(cpus) + 2u, sizeof(*ret->blocks))))
		return -ENOMEM;
	json_array_foreach(cpus, i, c) {
		json_t *cpu = json_object_get(c, "cpu");
		char name[SPLIT_NAME_SIZE];
		if (!json_is_object(c) || !json_is_integer(cpu))
			continue;
		snprintf(name, sizeof(name), "%lld", (long long)json_integer_value(cpu));
		if ((r = take(ret, c, name, flags)) < 0)
			goto fail;
	}
	if ((json_is_object(json_object_get(doc, "all")) && (r = take(ret, json_object_get(doc, "all"), "all", flags)) < 0) ||
	    (json_is_object(json_object_get(doc, "machine")) &&
	     (r = take(ret, json_object_get(doc, "machine"), "machine", flags)) < 0))
		goto fail;
	if ((ret->rest = json_dumps(doc, flags)) != NULL)
		return 0;
	r = -ENOMEM;
fail:
	split_free(ret);
	return r;
}

void split_free(struct split *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		free(sp->blocks[i].body);
	free(sp->blocks);
	free(sp->rest);
	memset(sp, 0, sizeof(*sp));
}

struct text {
	char *buf;
	size_t len, cap;
};

static int put(struct text *t, const char *s, size_t len)
{
	if (len > t->cap - t->len) {
		size_t cap = t->cap ? t->cap : 4096u;
		while (len > cap - t->len)
			cap *= 2u;
		char *grown = realloc(t->buf, cap);
		if (!grown)
			return -ENOMEM;
		t->buf = grown;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	return 0;
}

int split_join(const char *rest, const char *const *names, const char *const *bodies, size_t n, char **ret,
	       char ret_missing[SPLIT_NAME_SIZE])
{
	size_t want = strlen(rest) + 1u;
	struct text t = { 0 };
	const char *p = rest, *at;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		want += bodies[i] ? strlen(bodies[i]) : 2u;
	/* Sized for the whole at once: the bodies are most of it. */
	if (!(t.buf = malloc(want)))
		return -ENOMEM;
	t.cap = want;
	while (r == 0 && (at = strstr(p, MARK)) != NULL) {
		const char *name = at + sizeof(MARK) - 1u, *end = strchr(name, '"');
		size_t i, len = end ? (size_t)(end - name) : strlen(name);
		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
				break;
		if (i == n || !end) {
			snprintf(ret_missing, SPLIT_NAME_SIZE, "%.*s", (int)(len < SPLIT_NAME_SIZE ? len : SPLIT_NAME_SIZE - 1u),
				 name);
			r = -ENOENT;
			break;
		}
		if ((r = put(&t, p, (size_t)(at - p))) == 0)
			r = bodies[i] ? put(&t, bodies[i], strlen(bodies[i])) : put(&t, "[]", 2u);
		p = end + 1;
	}
	if (r == 0)
		r = put(&t, p, strlen(p) + 1u);
	if (r < 0) {
		free(t.buf);
		return r;
	}
	*ret = t.buf;
	return 0;
}
