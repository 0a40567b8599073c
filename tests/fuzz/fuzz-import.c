/*
 * Fuzz target for `latscope import`'s whole path: the file's text read and
 * checked (result_from_text), written as the store keeps it
 * (result_store_text), stored in a real store (store_put on a temporary
 * SQLite file), got back (store_get), read again and printed as `show` and
 * `runs` print it (to /dev/null).
 *
 * Besides crashes, hangs, leaks and out-of-bounds accesses, a bug is: a
 * refusal without a message; an accepted file the store refuses, or gives
 * back as another JSON value than it was given; a stored text that cannot be
 * read back, holds a negative integer (a sum past INT64_MAX), or is not what
 * latscope writes again when it reads it (the store must hold what latscope
 * computed, so reading and writing it again changes nothing).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/array.h"
#include "report/text.h"
#include "result/json.h"
#include "result/result.h"
#include "store/store.h"

#include "negative.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char path[96];
static struct store *st;
static FILE *devnull;

static void remove_store(void)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char name[128];
	store_close(st);
	st = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
		unlink(name);
	}
	rmdir(dir);
	if (devnull)
		fclose(devnull);
}

/* One store for the whole run, in a directory of its own; each input's run is removed after. */
static void open_store(void)
{
	struct lat_error err;
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fuzz-import-XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/runs.db", dir);
	if (store_open(path, STORE_CREATE, &st, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	if (!(devnull = fopen("/dev/null", "w")))
		abort();
	atexit(remove_store);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result res, back;
	struct lat_error serr;
	struct lat_error err;
	int64_t id;

	if (!st)
		open_store();
	memset(err.msg, 0, sizeof(err.msg));
	if (result_from_text((const char *)data, size, &res, &err) < 0) {
		if (err.msg[0] == '\0' || !memchr(err.msg, '\0', sizeof(err.msg)))
			abort();                /* refused without a reason */
		return 0;
	}
	char *text = result_store_text(&res);
	result_free(&res);
	if (!text)
		abort();

	if (store_put(st, text, &id, &serr) < 0) {
		fprintf(stderr, "the store refused an accepted result: %s\n", serr.msg);
		abort();
	}
	char *got = NULL;
	if (store_get(st, id, &got, &serr) < 0)
		abort();

	/* Given back as the same JSON value (the store keeps windows apart, written compact). */
	json_error_t jerr;
	json_t *doc = json_loads(got, 0, &jerr), *given = json_loads(text, 0, &jerr);
	if (!doc || !given || !json_equal(doc, given) || result_has_negative(doc))
		abort();
	json_decref(doc);
	json_decref(given);
	if (result_from_text(got, strlen(got), &back, &err) < 0) {
		fprintf(stderr, "the stored result cannot be read back: %s\n", err.msg);
		abort();
	}
	text_result(devnull, &back, id);
	struct run_info info;
	if (store_info(st, id, &info, &serr) == 0)
		text_runs(devnull, &info, 1);
	char *again = result_store_text(&back);
	if (!again || strcmp(again, text) != 0) {
		fprintf(stderr, "read back and written again, the stored result changes\n");
		abort();
	}
	free(again);
	result_free(&back);
	if (store_rm(st, &id, 1, &serr) < 0)
		abort();
	free(got);
	free(text);
	return 0;
}
