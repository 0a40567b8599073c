/* The text form of a load: KIND[:KEY=VALUE,...]. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/parse.h"
#include "core/error.h"
#include "load/load.h"

#define KINDS "cpu, mem, syscall, sched, io, console"

static const char *const kind_names[] = {
	[LOAD_CPU] = "cpu",
	[LOAD_MEM] = "mem",
	[LOAD_SYSCALL] = "syscall",
	[LOAD_SCHED] = "sched",
	[LOAD_IO] = "io",
	[LOAD_CONSOLE] = "console",
};

const char *load_kind_name(enum load_kind kind)
{
	return (unsigned)kind < ARRAY_SIZE(kind_names) ? kind_names[kind] : NULL;
}

/* The one key that holds a path, by kind; NULL when the kind has none. */
static const char *path_key(enum load_kind kind)
{
	return kind == LOAD_IO ? "dir" : kind == LOAD_CONSOLE ? "dev" : NULL;
}

static int parse_cpus(const char *value, const struct cpuset *online, struct cpuset *ret, struct lat_error *err)
{
	struct cpuset set, offline;
	char list[64];

	if (strcmp(value, "all") == 0) {
		*ret = *online;
		return 0;
	}
	if (cpuset_parse(value, &set) < 0)
		return err_set(err, -EINVAL, "cpus '%s' is not a CPU list", value);
	cpuset_diff(&offline, &set, online);
	if (cpuset_count(&offline)) {
		/* Name only the offending CPUs; "..." marks a list too long to quote whole. */
		size_t len = cpuset_format(&offline, list, sizeof(list));
		return err_set(err, -EINVAL, "cpus '%s%s' are not online", list,
				len >= sizeof(list) ? "..." : "");
	}
	*ret = set;
	return 0;
}

static int parse_intensity(const char *value, unsigned *ret, struct lat_error *err)
{
	char digits[16];
	size_t len = strlen(value);
	uint64_t pct;

	if (len && value[len - 1] == '%')
		len--;
	if (len >= sizeof(digits))
		return err_set(err, -EINVAL, "intensity '%s' is not 1-100%%", value);
	memcpy(digits, value, len);
	digits[len] = '\0';
	if (parse_u64(digits, &pct) < 0 || pct < 1 || pct > 100)
		return err_set(err, -EINVAL, "intensity '%s' is not 1-100%%", value);
	*ret = (unsigned)pct;
	return 0;
}

enum { KEY_CPUS, KEY_INTENSITY, KEY_PATH, KEYS };

static int key_slot(enum load_kind kind, const char *key, struct lat_error *err)
{
	const char *pkey = path_key(kind);

	if (strcmp(key, "cpus") == 0)
		return KEY_CPUS;
	if (strcmp(key, "intensity") == 0)
		return KEY_INTENSITY;
	if (pkey && strcmp(key, pkey) == 0)
		return KEY_PATH;
	return err_set(err, -EINVAL, "unknown key '%.31s' for %s (cpus, intensity%s%s)", key,
			load_kind_name(kind), pkey ? ", " : "", pkey ? pkey : "");
}

/* One KEY=VALUE option into s; seen catches a key given twice. */
static int parse_option(const char *key, const char *value, const struct cpuset *online, bool seen[KEYS],
			struct load_spec *s, struct lat_error *err)
{
	int slot = key_slot(s->kind, key, err);

	if (slot < 0)
		return slot;
	if (seen[slot])
		return err_set(err, -EINVAL, "'%s' is given twice", key);
	seen[slot] = true;
	if (!*value)
		return err_set(err, -EINVAL, "empty value for '%s'", key);
	switch (slot) {
	case KEY_CPUS:
		return parse_cpus(value, online, &s->cpus, err);
	case KEY_INTENSITY:
		return parse_intensity(value, &s->intensity_pct, err);
	default:
		if (strlen(value) >= sizeof(s->path))
			return err_set(err, -EINVAL, "%s '%.32s...' is too long", key, value);
		strcpy(s->path, value);
		return 0;
	}
}

static int parse_kind(const char *name, size_t len, enum load_kind *ret, struct lat_error *err)
{
	for (unsigned k = 0; k < ARRAY_SIZE(kind_names); k++)
		if (strlen(kind_names[k]) == len && memcmp(kind_names[k], name, len) == 0) {
			*ret = (enum load_kind)k;
			return 0;
		}
	return err_set(err, -EINVAL, "unknown load '%.*s' (" KINDS ")", (int)len, name);
}

/*
 * Options split at commas, but a CPU list has commas of its own: a piece
 * without '=' right after cpus=... continues that list ("cpus=0,2-3").
 */
int load_parse(const char *text, const struct cpuset *online, struct load_spec *ret, struct lat_error *err)
{
	struct load_spec s = { .intensity_pct = 100 };
	char opts[1024], key[32] = "", value[sizeof(opts)] = "";
	bool pending = false;       /* key and value hold an option not yet applied */
	bool seen[KEYS] = { false, false, false };
	int r;

	if (!text || !*text)
		return err_set(err, -EINVAL, "empty load (" KINDS ")");
	size_t kind_len = strcspn(text, ":");
	r = parse_kind(text, kind_len, &s.kind, err);
	if (r < 0)
		return r;
	s.cpus = *online;
	if (s.kind == LOAD_IO)
		strcpy(s.path, LOAD_DEFAULT_IO_DIR);
	if (!text[kind_len]) {
		*ret = s;
		return 0;
	}
	if (strlen(text + kind_len + 1) >= sizeof(opts))
		return err_set(err, -EINVAL, "load '%.32s...' is too long", text);
	strcpy(opts, text + kind_len + 1);

	char *save = NULL;
	for (char *piece = strtok_r(opts, ",", &save), *first = piece; ; piece = strtok_r(NULL, ",", &save)) {
		char *eq = piece ? strchr(piece, '=') : NULL;
		if (piece && !eq && pending && strcmp(key, "cpus") == 0) {
			if (strlen(value) + 1 + strlen(piece) >= sizeof(value))
				return err_set(err, -EINVAL, "cpus '%.32s...' is too long", value);
			strcat(strcat(value, ","), piece);
			continue;
		}
		/* A complete option is waiting: apply it before looking at this piece. */
		if (pending) {
			r = parse_option(key, value, online, seen, &s, err);
			if (r < 0)
				return r;
		}
		if (!piece) {
			if (!first)
				return err_set(err, -EINVAL, "no options after '%s:'", load_kind_name(s.kind));
			break;
		}
		if (!eq)
			return err_set(err, -EINVAL, "'%s' is not key=value", piece);
		*eq = '\0';
		if (strlen(piece) >= sizeof(key))
			return key_slot(s.kind, piece, err);
		strcpy(key, piece);
		strcpy(value, eq + 1);
		pending = true;
	}
	*ret = s;
	return 0;
}

/* Where the next piece goes in a buffer that may already be full. */
static char *tail(char *buf, size_t size, size_t len, size_t *ret_left)
{
	*ret_left = len < size ? size - len : 0;
	return len < size ? buf + len : NULL;
}

size_t load_format(const struct load_spec *s, char *buf, size_t size)
{
	const char *pkey = path_key(s->kind), *name = load_kind_name(s->kind);
	/* A console without dev writes to a new pty: the default needs no key. */
	bool with_path = pkey && *s->path;
	size_t len, left;
	char *at;
	int n;

	n = snprintf(buf, size, "%s:cpus=", name ? name : "?");
	len = n < 0 ? 0 : (size_t)n;
	at = tail(buf, size, len, &left);
	len += cpuset_format(&s->cpus, at, left);
	at = tail(buf, size, len, &left);
	n = snprintf(at, left, ",intensity=%u%%%s%s%s%s", s->intensity_pct, with_path ? "," : "",
		     with_path ? pkey : "", with_path ? "=" : "", with_path ? s->path : "");
	return len + (n < 0 ? 0 : (size_t)n);
}
