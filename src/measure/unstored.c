#include "measure/unstored.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure/exitcode.h"
#include "measure/storepath.h"
#include "core/nstime.h"
#include "sys/atomicfile.h"
#include "sys/mkdirs.h"
#include "sys/samefile.h"
#include "report/tprint.h"

#define PLACES 3                        /* the state directory, --json's, the current one */

/* START-PROBE[-merge]: when the run began (UTC, to the nanosecond) and what it measured. */
static void stem(const struct result *res, bool merged, char *buf, size_t size)
{
	time_t t = (time_t)(res->start_realtime_ns / NS_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, size, "%Y%m%dT%H%M%S", &tm);
	n += (size_t)snprintf(buf + n, size - n, ".%09lluZ-", (unsigned long long)(res->start_realtime_ns % NS_PER_SEC));
	/* an imported run's probe name is anybody's text: only safe letters in a file name */
	for (const char *p = res->probe; *p && n + 1u < size; p++)
		buf[n++] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p) ? *p : '_';
	buf[n] = '\0';
	if (merged)
		snprintf(buf + n, size - n, "-merge");
}

/* Write text as a new file dir/prefixSTEM[-K].json; its path in ret. */
static int keep_in(const char *dir, const char *prefix, const char *name, const char *text, char *ret, size_t size)
{
	int r = -EEXIST;

	for (int k = 1; r == -EEXIST && k < 100; k++) {
		struct atomic_file f = { .fd = -1 };
		char suffix[8] = "";
		if (k > 1)
			snprintf(suffix, sizeof(suffix), "-%d", k);
		if (snprintf(ret, size, "%s/%s%s%s.json", dir, prefix, name, suffix) >= (int)size)
			return -ENAMETOOLONG;
		if ((r = atomic_file_open(ret, &f)) == 0 && (r = atomic_file_write(&f, text, strlen(text))) == 0 &&
		    (r = atomic_file_write(&f, "\n", 1)) == 0)
			r = atomic_file_commit_new(&f);
		atomic_file_close(&f);
	}
	return r;
}

/* The path as a shell word. */
static void quoted(FILE *out, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+:=,@%-") == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

struct place {
	char dir[4096];
	const char *prefix;             /* of the file's name */
	bool ours;                      /* latscope's own directory: made if missing */
	char why[128];                  /* why it could not be kept there; "" when not tried */
};

int unstored_keep(const char *cmd, const char *text, const struct result *res, bool merged, const char *json_path,
		  const char *db_opt)
{
	struct place places[PLACES] = { { .prefix = "", .ours = true } };
	char name[128], kept[4300];
	size_t n = 1;
	int r;

	stem(res, merged, name, sizeof(name));
	if (unstored_dir_resolve(places[0].dir, sizeof(places[0].dir)) < 0) {
		snprintf(places[0].dir, sizeof(places[0].dir), "$XDG_STATE_HOME/latscope/unstored");
		snprintf(places[0].why, sizeof(places[0].why), "no home directory");
		places[0].ours = false;
	}
	if (json_path) {
		char *copy = strdup(json_path);
		if (copy && snprintf(places[n].dir, sizeof(places[n].dir), "%s", dirname(copy)) < (int)sizeof(places[n].dir))
			places[n++].prefix = "latscope-unstored-";
		free(copy);
	}
	if (getcwd(places[n].dir, sizeof(places[n].dir)))
		places[n++].prefix = "latscope-unstored-";
	for (size_t i = 0; i < n; i++) {
		struct place *p = &places[i];
		bool skip = p->why[0] != '\0';          /* said why already, or the same as one before */
		for (size_t j = 0; j < i && !skip; j++)
			skip = same_file(p->dir, places[j].dir);
		if (skip)
			continue;
		if ((p->ours && (r = make_dirs(p->dir, 0700)) < 0) ||
		    (r = keep_in(p->dir, p->prefix, name, text, kept, sizeof(kept))) < 0) {
			snprintf(p->why, sizeof(p->why), "%s", strerror(-r));
			continue;
		}
		tprintf(stderr, "latscope %s: the run is kept in '%s'; store it later with: latscope import ", cmd, kept);
		if (db_opt) {
			fputs("--db ", stderr);
			quoted(stderr, db_opt);
			fputc(' ', stderr);
		}
		quoted(stderr, kept);
		fputc('\n', stderr);
		return EXIT_ERROR;
	}
	tprintf(stderr, "latscope %s: the run is lost: it could not be kept", cmd);
	for (size_t i = 0, said = 0; i < n; i++)
		if (places[i].why[0])
			tprintf(stderr, "%s '%s' (%s)", said++ ? "," : " in", places[i].dir, places[i].why);
	fputc('\n', stderr);
	return EXIT_ERROR;
}
