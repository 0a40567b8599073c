/*
 * Unit tests for the run store (src/store): what makes two runs the same
 * (identity.c and its SHA-256), how the store file is opened and created
 * (no symbolic link followed, private modes), what store_list, store_ids, store_info
 * and store_rm give back, whose store is written without --db-trust (trust.c),
 * a store that lost its version number, the migration of a schema 1 and a schema 3 store,
 * windows kept apart (schema 4) and partial runs replaced by what follows.  The
 * commands on top are tested end to end in tests/integration/test_store.py
 * and test_files.py.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "store/identity.h"
#include "store/schema.h"
#include "store/sha256.h"
#include "store/store.h"
#include "store/trust.h"

#include "tmpdir.h"

/* ---- SHA-256 ---- */

static void expect_sha256(const void *data, size_t len, size_t pieces, const char *want)
{
	struct sha256 c;
	uint8_t d[SHA256_BYTES];
	char hex[2 * SHA256_BYTES + 1];

	sha256_init(&c);
	/* Fed in pieces that cross block boundaries: the result must not depend on them. */
	for (size_t i = 0, at = 0; i < pieces; i++) {
		size_t n = i + 1 == pieces ? len - at : len / pieces;
		sha256_add(&c, (const char *)data + at, n);
		at += n;
	}
	sha256_end(&c, d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	assert_string_equal(hex, want);
}

static void test_sha256_gives_the_fips_180_example_digests(void **state)
{
	(void)state;
	static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char *million = malloc(1000000);

	assert_non_null(million);
	memset(million, 'a', 1000000);
	expect_sha256("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect_sha256("abc", 3, 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	for (size_t pieces = 1; pieces <= 7; pieces++)
		expect_sha256(two_blocks, strlen(two_blocks), pieces,
			      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	expect_sha256(million, 1000000, 13, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

/* ---- identities ---- */

static void run_id(const char *host, const char *probe, uint64_t start, char out[STORE_IDENTITY_SIZE])
{
	struct lat_error err;
	assert_int_equal(identity_compute(host, probe, start, NULL, out, &err), 0);
	assert_true(identity_valid(out));
	assert_int_equal(strncmp(out, "run:", 4), 0);
}

static int merge_id(const char *const *members, size_t n, char out[STORE_IDENTITY_SIZE])
{
	struct lat_error err;
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_string(members[i]));
	int r = identity_compute("merged: 2 runs of vm", "timer", 5, list, out, &err);
	json_decref(list);
	return r;
}

static void test_a_runs_identity_is_its_host_probe_and_start_and_nothing_runs_together(void **state)
{
	(void)state;
	char a[STORE_IDENTITY_SIZE], b[STORE_IDENTITY_SIZE];

	run_id("vm", "timer", 5, a);
	run_id("vm", "timer", 5, b);
	assert_string_equal(a, b);
	run_id("vm", "timer", 6, b);
	assert_string_not_equal(a, b);
	run_id("vm", "noise", 5, b);
	assert_string_not_equal(a, b);
	run_id("vm2", "timer", 5, b);
	assert_string_not_equal(a, b);
	/* The fields are kept apart: moving text from one to the next is another run. */
	run_id("vmt", "imer", 5, b);
	assert_string_not_equal(a, b);
	run_id("vm", "timer5", 0, b);
	assert_string_not_equal(a, b);
}

static void test_a_merges_identity_is_its_members_in_any_order(void **state)
{
	(void)state;
	char a[STORE_IDENTITY_SIZE], b[STORE_IDENTITY_SIZE], c[STORE_IDENTITY_SIZE];
	char ab[STORE_IDENTITY_SIZE], ba[STORE_IDENTITY_SIZE], ac[STORE_IDENTITY_SIZE], abc[STORE_IDENTITY_SIZE];

	run_id("vm", "timer", 5, a);
	run_id("vm", "timer", 6, b);
	run_id("vm", "timer", 7, c);
	assert_int_equal(merge_id((const char *[]){ a, b }, 2, ab), 0);
	assert_int_equal(merge_id((const char *[]){ b, a }, 2, ba), 0);
	assert_int_equal(merge_id((const char *[]){ a, c }, 2, ac), 0);
	assert_true(identity_valid(ab));
	assert_int_equal(strncmp(ab, "merge:", 6), 0);
	assert_string_equal(ab, ba);
	assert_string_not_equal(ab, ac);        /* the same earliest run, another merge */
	/* A merge of merges is its own members: (a+b)+c is not (a+c)+b, nor a+b+c. */
	char abc1[STORE_IDENTITY_SIZE], acb[STORE_IDENTITY_SIZE];
	assert_int_equal(merge_id((const char *[]){ ab, c }, 2, abc1), 0);
	assert_int_equal(merge_id((const char *[]){ ac, b }, 2, acb), 0);
	assert_int_equal(merge_id((const char *[]){ a, b, c }, 3, abc), 0);
	assert_string_not_equal(abc1, acb);
	assert_string_not_equal(abc1, abc);
	/* one member: not the run itself */
	assert_int_equal(merge_id((const char *[]){ a }, 1, ab), 0);
	assert_string_not_equal(ab, a);
}

static void test_a_member_list_that_is_not_identities_is_refused(void **state)
{
	(void)state;
	struct lat_error err;
	char out[STORE_IDENTITY_SIZE], a[STORE_IDENTITY_SIZE];

	run_id("vm", "timer", 5, a);
	assert_int_equal(merge_id((const char *[]){ a, "run:123" }, 2, out), -EINVAL);
	assert_int_equal(merge_id((const char *[]){ a, "" }, 2, out), -EINVAL);
	char upper[STORE_IDENTITY_SIZE];
	snprintf(upper, sizeof(upper), "RUN:%s", a + 4);
	assert_int_equal(merge_id((const char *[]){ upper }, 1, out), -EINVAL);
	assert_int_equal(merge_id(NULL, 0, out), -EINVAL);      /* a merge of nothing */
	json_t *notlist = json_string(a);
	assert_int_equal(identity_compute("h", "timer", 5, notlist, out, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "merged_members"));
	json_decref(notlist);
}

/* ---- the store ---- */

/* The least a result needs for the store: what it lists and files it by. */
static char *result_text(const char *host, uint64_t start, json_t *members)
{
	json_t *params = json_object();
	if (members)
		json_object_set_new(params, "merged_members", members);
	json_t *doc = json_pack("{s:s, s:s, s:I, s:{s:s}, s:[s], s:{s:{}}, s:[], s:{}, s:o}", "probe", "timer",
				"start_time", "t", "start_realtime_ns", (json_int_t)start, "system", "hostname", host,
				"metrics", "latency", "all", "metrics", "cpus", "labels", "params", params);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_non_null(text);
	return text;
}

static json_t *members_of(const char *a, const char *b)
{
	return json_pack("[s,s]", a, b);
}

static void test_two_merges_sharing_their_earliest_run_are_both_stored_and_a_repeat_is_not(void **state)
{
	(void)state;
	struct store *st;
	struct lat_error err;
	char a[STORE_IDENTITY_SIZE], b[STORE_IDENTITY_SIZE], c[STORE_IDENTITY_SIZE], got[STORE_IDENTITY_SIZE];
	int64_t id1, id2, id3;

	assert_int_equal(store_open(in_tmpdir("merges.db"), STORE_CREATE, &st, &err), 0);
	run_id("vm", "timer", 5, a);
	run_id("vm", "timer", 6, b);
	run_id("vm", "timer", 7, c);
	char *ab = result_text("merged: 2 runs of vm", 5, members_of(a, b));
	char *ac = result_text("merged: 2 runs of vm", 5, members_of(a, c));
	char *ba = result_text("merged: 2 runs of vm", 5, members_of(b, a));
	assert_int_equal(store_put(st, ab, &id1, &err), 0);
	assert_int_equal(store_put(st, ac, &id2, &err), 0);
	assert_true(id1 != id2);
	assert_int_equal(store_put(st, ba, &id3, &err), -EEXIST);
	assert_int_equal(id3, id1);
	/* What a merge of the stored merge would list. */
	json_t *doc = json_loads(ab, 0, NULL);
	struct lat_error why;
	char want[STORE_IDENTITY_SIZE];
	assert_int_equal(identity_of_result(doc, want, &why), 0);
	json_decref(doc);
	assert_int_equal(store_identity(st, id1, got, &err), 0);
	assert_string_equal(got, want);
	assert_int_equal(store_identity(st, 99, got, &err), -ENOENT);
	free(ab);
	free(ac);
	free(ba);
	store_close(st);
}

static void test_a_measured_run_stored_twice_is_already_stored(void **state)
{
	(void)state;
	struct store *st;
	struct lat_error err;
	int64_t id1, id2;
	char *one = result_text("vm", 5, NULL), *other = result_text("vm", 6, NULL);

	assert_int_equal(store_open(in_tmpdir("runs.db"), STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, one, &id1, &err), 0);
	assert_int_equal(store_put(st, other, &id2, &err), 0);
	assert_int_equal(store_put(st, one, &id2, &err), -EEXIST);
	assert_int_equal(id2, id1);
	free(one);
	free(other);
	store_close(st);
}

static void test_a_store_path_that_is_a_symbolic_link_is_refused_and_nothing_created(void **state)
{
	(void)state;
	struct store *st = NULL;
	struct lat_error err;
	char target[512];

	snprintf(target, sizeof(target), "%s", in_tmpdir("target.db"));
	assert_int_equal(symlink(target, in_tmpdir("link.db")), 0);
	assert_int_equal(store_open(in_tmpdir("link.db"), STORE_CREATE | STORE_MKDIR, &st, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "symbolic link"));
	assert_null(st);
	assert_int_equal(access(target, F_OK), -1);
	/* Nor a link to an existing store, to read or to write. */
	assert_int_equal(store_open(target, STORE_CREATE, &st, &err), 0);
	store_close(st);
	assert_int_equal(store_open(in_tmpdir("link.db"), STORE_READONLY, &st, &err), -ELOOP);
	assert_int_equal(store_open(in_tmpdir("link.db"), 0, &st, &err), -ELOOP);
	unlink(in_tmpdir("link.db"));
}

static void test_a_new_store_and_its_new_directories_are_private(void **state)
{
	(void)state;
	struct store *st;
	struct lat_error err;
	struct stat s;
	mode_t old = umask(022);

	assert_int_equal(store_open(in_tmpdir("a/b/runs.db"), STORE_CREATE | STORE_MKDIR, &st, &err), 0);
	store_close(st);
	umask(old);
	assert_int_equal(stat(in_tmpdir("a/b/runs.db"), &s), 0);
	assert_int_equal(s.st_mode & 07777, 0600);
	assert_int_equal(stat(in_tmpdir("a/b"), &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);
	assert_int_equal(stat(in_tmpdir("a"), &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);
	assert_int_equal(stat(tmpdir, &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);      /* mkdtemp's, not changed */
}

/* ---- listing, reading and removing ---- */

/* A run of probe on host "vm" started at start, with labels "k=v,k=v" (may be ""). */
static char *labelled_run(const char *probe, uint64_t start, const char *labels, uint64_t count, bool interrupted)
{
	json_t *ls = json_object();
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", labels);
	for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = '\0';
		json_object_set_new(ls, kv, json_string(eq + 1));
	}
	json_t *doc = json_pack("{s:s, s:s, s:I, s:b, s:{s:s}, s:[s], s:{s:{s:{s:I, s:I, s:f, s:I, s:I, s:I, s:I}}, s:I},"
				" s:[], s:o, s:{}}",
				"probe", probe, "start_time", "t", "start_realtime_ns", (json_int_t)start,
				"interrupted", interrupted, "system", "hostname", "vm", "metrics", "latency",
				"all", "metrics", "latency", "count", (json_int_t)count, "min_ns", (json_int_t)10,
				"mean_ns", 20.5, "p50_ns", (json_int_t)20, "p99_ns", (json_int_t)30,
				"max_ns", (json_int_t)40, "warm_max_ns", (json_int_t)35, "missed", (json_int_t)2,
				"cpus", "labels", ls, "params");
	assert_non_null(doc);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_non_null(text);
	return text;
}

static int64_t put(struct store *st, const char *probe, uint64_t start, const char *labels)
{
	struct lat_error err;
	int64_t id;
	char *text = labelled_run(probe, start, labels, start, false);
	assert_int_equal(store_put(st, text, &id, &err), 0);
	free(text);
	return id;
}

static void add_label(struct run_filter *f, const char *key, const char *value)
{
	struct label *l = &f->labels.items[f->labels.n++];
	snprintf(l->key, sizeof(l->key), "%s", key);
	snprintf(l->value, sizeof(l->value), "%s", value);
}

/* The ids store_list gives for f, as "1,2,3", after checking that store_ids gives the same. */
static const char *listed(struct store *st, const struct run_filter *f)
{
	static char out[256];
	struct lat_error err;
	struct run_info *ri;
	int64_t *ids;
	size_t n, nids, len = 0;

	assert_int_equal(store_list(st, f, &ri, &n, &err), 0);
	assert_int_equal(store_ids(st, f, &ids, &nids, &err), 0);
	assert_int_equal(nids, n);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ids[i], ri[i].id);
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld", i ? "," : "", (long long)ri[i].id);
	}
	free(ids);
	free(ri);
	return out;
}

/* Five runs stored out of their start order: ids 1..5 start at 500, 100, 400, 200, 300. */
static struct store *five_runs(const char *name)
{
	struct store *st;
	struct lat_error err;
	assert_int_equal(store_open(in_tmpdir(name), STORE_CREATE, &st, &err), 0);
	assert_int_equal(put(st, "timer", 500, "config=a,host=x"), 1);
	assert_int_equal(put(st, "noise", 100, "config=a"), 2);
	assert_int_equal(put(st, "timer", 400, "config=b,host=x"), 3);
	assert_int_equal(put(st, "timer", 200, ""), 4);
	assert_int_equal(put(st, "wake", 300, "config=a,host=y"), 5);
	return st;
}

static void test_store_list_and_ids_give_the_runs_in_stored_order_and_filter_by_probe_labels_and_start(void **state)
{
	(void)state;
	struct store *st = five_runs("list.db");
	struct run_filter f = { 0 };

	assert_string_equal(listed(st, &f), "1,2,3,4,5");       /* stored order, not start order */
	f.probe = "timer";
	assert_string_equal(listed(st, &f), "1,3,4");
	f.probe = "nothing";
	assert_string_equal(listed(st, &f), "");
	f.probe = NULL;
	add_label(&f, "config", "a");
	assert_string_equal(listed(st, &f), "1,2,5");
	add_label(&f, "host", "x");                             /* every label must match */
	assert_string_equal(listed(st, &f), "1");
	f.probe = "noise";
	assert_string_equal(listed(st, &f), "");
	memset(&f, 0, sizeof(f));
	f.since_ns = 300;                                       /* at or after */
	assert_string_equal(listed(st, &f), "1,3,5");
	f.since_ns = 501;
	assert_string_equal(listed(st, &f), "");
	store_close(st);
}

static void test_store_list_limit_keeps_the_last_stored_oldest_first(void **state)
{
	(void)state;
	struct store *st = five_runs("limit.db");
	struct run_filter f = { .limit = 2 };

	assert_string_equal(listed(st, &f), "4,5");
	f.limit = 5;
	assert_string_equal(listed(st, &f), "1,2,3,4,5");
	f.limit = UINT64_MAX;                                   /* past SQLite's int64 */
	assert_string_equal(listed(st, &f), "1,2,3,4,5");
	f.limit = 2;
	f.probe = "timer";                                      /* the last two of the matching ones */
	assert_string_equal(listed(st, &f), "3,4");
	store_close(st);
}

/* The label keys store_label_keys gives for f, as "a,b". */
static const char *keys_of(struct store *st, const struct run_filter *f)
{
	static char out[256];
	struct lat_error err;
	char(*keys)[LABEL_KEY_MAX] = NULL;
	size_t n = 99, len = 0;

	assert_int_equal(store_label_keys(st, f, &keys, &n, &err), 0);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? "," : "",
					keys[i]);
	free(keys);
	return out;
}

static void test_store_label_keys_are_those_of_the_selected_runs_each_once_in_order(void **state)
{
	(void)state;
	struct store *st = five_runs("keys.db");
	struct run_filter f = { 0 };

	assert_string_equal(keys_of(st, &f), "config,host");
	f.probe = "noise";
	assert_string_equal(keys_of(st, &f), "config");
	f.probe = "timer";
	f.limit = 1; /* run 4: no label */
	assert_string_equal(keys_of(st, &f), "");
	f.limit = 0;
	f.probe = NULL;
	add_label(&f, "host", "y");
	assert_string_equal(keys_of(st, &f), "config,host");
	store_close(st);
}

static void test_store_info_gives_a_runs_listed_figures_and_labels_and_an_unknown_id_is_enoent(void **state)
{
	(void)state;
	struct store *st;
	struct lat_error err;
	struct run_info ri;
	int64_t id;
	char *text = labelled_run("wake", 1234, "b=2,a=1", 99, true);

	assert_int_equal(store_open(in_tmpdir("info.db"), STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, text, &id, &err), 0);
	assert_int_equal(store_info(st, id, &ri, &err), 0);
	assert_int_equal(ri.id, id);
	assert_string_equal(ri.probe, "wake");
	assert_string_equal(ri.host, "vm");
	assert_int_equal(ri.start_realtime_ns, 1234);
	assert_true(ri.interrupted);
	assert_int_equal(ri.count, 99);
	assert_int_equal(ri.min_ns, 10);
	assert_int_equal(ri.p50_ns, 20);
	assert_int_equal(ri.p99_ns, 30);
	assert_int_equal(ri.max_ns, 40);
	assert_true(ri.mean_ns > 20.49 && ri.mean_ns < 20.51);
	assert_true(ri.has_warm_max);
	assert_int_equal(ri.warm_max_ns, 35);
	assert_int_equal(ri.missed, 2);
	assert_int_equal(ri.labels.n, 2);                       /* as the result gave them */
	assert_string_equal(ri.labels.items[0].key, "b");
	assert_string_equal(ri.labels.items[0].value, "2");
	assert_string_equal(ri.labels.items[1].key, "a");
	assert_string_equal(ri.labels.items[1].value, "1");
	assert_int_equal(store_info(st, id + 1, &ri, &err), -ENOENT);
	char *back;
	assert_int_equal(store_get(st, id, &back, &err), 0);
	assert_string_equal(back, text);                        /* given back exactly */
	free(back);
	assert_int_equal(store_get(st, id + 1, &back, &err), -ENOENT);
	free(text);
	store_close(st);
}

static void test_store_rm_removes_all_or_none_and_their_labels_go_too(void **state)
{
	(void)state;
	struct store *st = five_runs("rm.db");
	struct lat_error err;
	struct run_filter f = { 0 };

	assert_int_equal(store_rm(st, (const int64_t[]){ 2, 9, 3 }, 3, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no run 9"));
	assert_non_null(strstr(err.msg, "nothing was removed"));
	assert_string_equal(listed(st, &f), "1,2,3,4,5");
	assert_int_equal(store_rm(st, (const int64_t[]){ 3, 1 }, 2, &err), 0);
	assert_string_equal(listed(st, &f), "2,4,5");
	add_label(&f, "host", "x");
	assert_string_equal(listed(st, &f), "");
	assert_int_equal(store_rm(st, (const int64_t[]){ 1 }, 1, &err), -ENOENT);    /* already gone */
	/* No label row is left without its run. */
	sqlite3 *db;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open_v2(in_tmpdir("rm.db"), &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM labels WHERE run_id NOT IN (SELECT id FROM runs)",
					    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	store_close(st);
}

/* ---- migration ---- */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	char *text = malloc((size_t)size + 1u);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	fclose(f);
	return text;
}

/* The one value sql gives on the store at path. */
static int64_t sql_value(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return v;
}

static int64_t user_version(const char *path)
{
	return sql_value(path, "PRAGMA user_version");
}

/* ---- whose store latscope writes ---- */

static void test_only_a_regular_file_of_the_users_own_that_no_one_else_may_write_is_written_untold(void **state)
{
	(void)state;
	struct lat_error err;
	struct stat st = { .st_mode = S_IFREG | 0600, .st_uid = 1000 };

	assert_int_equal(store_trust_file(&st, 1000, &err), 0);
	st.st_mode = S_IFREG | 0644;                    /* others may read it: reading is not writing */
	assert_int_equal(store_trust_file(&st, 1000, &err), 0);
	st.st_uid = 65534;                              /* nobody's, written by root */
	assert_int_equal(store_trust_file(&st, 0, &err), -EPERM);
	assert_non_null(strstr(err.msg, "another user (uid 65534; this is uid 0)"));
	assert_non_null(strstr(err.msg, "--db-trust"));
	st.st_uid = 1000;
	st.st_mode = S_IFREG | 0660;
	assert_int_equal(store_trust_file(&st, 1000, &err), -EPERM);
	assert_non_null(strstr(err.msg, "mode 0660"));
	st.st_mode = S_IFREG | 0606;
	assert_int_equal(store_trust_file(&st, 1000, &err), -EPERM);
	st.st_mode = S_IFIFO | 0600;
	assert_int_equal(store_trust_file(&st, 1000, &err), -EPERM);
	assert_null(strchr(err.msg, '\n'));
}

/* ---- a store that lost its version number ---- */

/* The parts of a store a test says it has, as "runs cpu_stats runs.identity". */
static bool fake_has(const char *table, const char *column, void *ctx)
{
	char name[64];
	snprintf(name, sizeof(name), " %s%s%s ", table, column ? "." : "", column ? column : "");
	char have[256];
	snprintf(have, sizeof(have), " %s ", (const char *)ctx);
	return strstr(have, name) != NULL;
}

static int version_of(const char *parts)
{
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", parts);
	return schema_version_of(fake_has, copy);
}

static void test_a_stores_version_is_told_from_its_tables_and_a_mix_of_versions_is_none(void **state)
{
	(void)state;
	assert_int_equal(version_of("runs labels"), 1);
	assert_int_equal(version_of("runs labels cpu_stats"), 2);
	assert_int_equal(version_of("runs cpu_stats runs.identity"), 3);
	assert_int_equal(version_of("runs cpu_stats runs.identity windows"), 4);
	assert_int_equal(version_of("runs cpu_stats runs.identity windows runs.ops_per_sec"), 5);
	assert_int_equal(version_of("runs cpu_stats runs.identity windows runs.ops_per_sec runs.smi_source"),
			 (int)schema_versions());
	assert_int_equal(version_of("other"), -1);            /* tables of no version */
	assert_int_equal(version_of("runs windows"), -1);     /* 4's without 2's and 3's */
	assert_int_equal(version_of("cpu_stats"), -1);
}

static void set_user_version(const char *path, int v)
{
	sqlite3 *db;
	char sql[64];
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void test_a_store_whose_version_was_reset_to_0_is_read_and_written_with_its_runs(void **state)
{
	(void)state;
	struct store *st = five_runs("unversioned.db");
	struct run_filter all = { 0 };
	struct lat_error err;
	const char *path = in_tmpdir("unversioned.db");

	store_close(st);
	set_user_version(path, 0);
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), 0);
	assert_string_equal(listed(st, &all), "1,2,3,4,5");
	store_close(st);
	assert_int_equal(user_version(path), 0);        /* reading changes nothing */
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	assert_int_equal(put(st, "timer", 600, ""), 6);
	assert_string_equal(listed(st, &all), "1,2,3,4,5,6");
	store_close(st);
	assert_int_equal(user_version(path), (int)schema_versions());
}

static void test_a_latscope_marked_file_with_tables_of_no_version_is_refused_in_one_line(void **state)
{
	(void)state;
	struct store *st = NULL;
	struct lat_error err;
	sqlite3 *db;
	const char *path = in_tmpdir("strange.db");
	char sql[128];

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; CREATE TABLE t (x)", STORE_APPLICATION_ID);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "no version's"));
	assert_int_equal(store_open(path, 0, &st, &err), -EINVAL);
	assert_null(st);
}

static void test_a_schema_1_store_is_migrated_and_keeps_its_run_labels_and_figures(void **state)
{
	(void)state;
	const char *path = in_tmpdir("v1.db");
	char *sql = read_file(LATSCOPE_FIXTURES "/store-v1.sql");
	sqlite3 *db;
	struct store *st;
	struct lat_error err;
	struct run_info ri;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	free(sql);
	assert_int_equal(user_version(path), 1);

	assert_int_equal(store_open(path, 0, &st, &err), 0);
	assert_int_equal(user_version(path), schema_versions());
	assert_int_equal(store_info(st, 1, &ri, &err), 0);
	assert_string_equal(ri.probe, "timer");
	assert_string_equal(ri.host, "vm");
	assert_string_equal(ri.start_time, "2026-11-30T09:23:20.113Z");
	assert_int_equal(ri.start_realtime_ns, UINT64_C(1796030600113602262));
	assert_int_equal(ri.count, 3999);
	assert_int_equal(ri.min_ns, 8845);
	assert_int_equal(ri.max_ns, 1849942);
	assert_int_equal(ri.labels.n, 2);
	assert_string_equal(ri.labels.items[0].key, "config");
	assert_string_equal(ri.labels.items[0].value, "old");
	assert_string_equal(ri.labels.items[1].key, "era");
	assert_string_equal(ri.labels.items[1].value, "v1");
	/* The identity the migration filled in is the one of the stored result. */
	struct lat_error why;
	char *text, got[STORE_IDENTITY_SIZE], want[STORE_IDENTITY_SIZE];
	assert_int_equal(store_get(st, 1, &text, &err), 0);
	json_t *doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(identity_of_result(doc, want, &why), 0);
	json_decref(doc);
	assert_int_equal(store_identity(st, 1, got, &err), 0);
	assert_string_equal(got, want);
	/* The same run once more is already there; a new one comes after it. */
	int64_t id;
	assert_int_equal(store_put(st, text, &id, &err), -EEXIST);
	assert_int_equal(id, 1);
	free(text);
	assert_int_equal(put(st, "timer", 7, "era=v3"), 2);
	struct run_filter f = { 0 };
	add_label(&f, "era", "v1");
	assert_string_equal(listed(st, &f), "1");
	store_close(st);
	/* Opened again, nothing is migrated twice. */
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), 0);
	memset(&f, 0, sizeof(f));
	assert_string_equal(listed(st, &f), "1,2");
	store_close(st);
}


/* ---- windows apart (schema 4) ---- */


static void test_a_schema_3_store_of_latscope_0_1_0_reads_back_identical_with_its_windows_apart(void **state)
{
	(void)state;
	const char *path = in_tmpdir("v3.db");
	char *sql = read_file(LATSCOPE_FIXTURES "/store-v3.sql");
	json_t *before[3];
	sqlite3 *db;
	sqlite3_stmt *q;
	struct store *st;
	struct lat_error err;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT result FROM runs ORDER BY id", -1, &q, NULL), SQLITE_OK);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_non_null(before[i] = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL));
	}
	assert_int_equal(sqlite3_step(q), SQLITE_DONE);
	sqlite3_finalize(q);
	sqlite3_close(db);
	assert_int_equal(user_version(path), 3);

	assert_int_equal(store_open(path, 0, &st, &err), 0);
	assert_int_equal(user_version(path), schema_versions());
	for (int i = 0; i < 3; i++) {
		char *text;
		assert_int_equal(store_get(st, i + 1, &text, &err), 0);
		json_t *after = json_loads(text, 0, NULL);
		assert_non_null(after);
		assert_true(json_equal(after, before[i]));
		json_decref(after);
		free(text);
		/* Read for a result: all as before but the "all" block's windows. */
		assert_int_equal(store_read(st, i + 1, STORE_LEAVE_ALL_WINDOWS, &text, &err), 0);
		after = json_loads(text, 0, NULL);
		assert_non_null(after);
		assert_int_equal(json_array_size(json_object_get(json_object_get(after, "all"), "windows")), 0);
		assert_true(json_array_size(json_object_get(json_object_get(before[i], "all"), "windows")) > 0);
		json_object_set(json_object_get(after, "all"), "windows",
				json_object_get(json_object_get(before[i], "all"), "windows"));
		assert_true(json_equal(after, before[i]));
		json_decref(after);
		free(text);
		json_decref(before[i]);
	}
	store_close(st);
	/* Moved, not copied: every block of every run has a row, and no run's text holds its windows. */
	assert_int_equal(sql_value(path, "SELECT count(*) FROM windows"), 2 + 2 + 1 + 1 + 1 + 2);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM runs WHERE json_type(result, '$.cpus[0].windows') = 'array'"
				  " OR json_type(result, '$.all.windows') = 'array'"), 0);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM runs WHERE partial"), 0);
}

/* A run with windows on CPUs 0 and 1, in all and the machine; reals with more digits than latscope writes. */
static char *windowed_run(uint64_t start, bool partial, const char *label)
{
	json_t *doc = json_pack("{s:s, s:s, s:I, s:{s:s}, s:[s], s:{s:s}, s:{}, s:[{s:i, s:{}, s:[{s:i, s:f}, {s:i}]},"
				" {s:i, s:{}, s:[]}], s:{s:{}, s:[{s:i, s:f}]}, s:{s:i, s:[{s:i, s:s}]}}",
				"probe", "timer", "start_time", "t", "start_realtime_ns", (json_int_t)start, "system",
				"hostname", "vm", "metrics", "latency", "labels", "config", label, "params",
				"cpus", "cpu", 0, "metrics", "windows", "index", 0, "mean_ns", 0.1 + 0.2, "index", 1,
				"cpu", 1, "metrics", "windows",
				"all", "metrics", "windows", "index", 0, "mean_ns", 1.0 / 3.0,
				"machine", "irqs", 5, "windows", "index", 0, "note", "windows:0 \"\\u0000windows:0\"");
	assert_non_null(doc);
	if (partial)
		json_object_set_new(doc, "partial", json_true());
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_non_null(text);
	return text;
}

static void assert_reads_back(struct store *st, int64_t id, const char *want)
{
	struct lat_error err;
	char *text;
	assert_int_equal(store_get(st, id, &text, &err), 0);
	json_t *got = json_loads(text, 0, NULL), *doc = json_loads(want, 0, NULL);
	assert_non_null(got);
	assert_true(json_equal(got, doc));
	json_decref(got);
	json_decref(doc);
	free(text);
}

static void test_a_runs_windows_read_back_exactly_and_go_when_it_is_removed(void **state)
{
	(void)state;
	const char *path = in_tmpdir("windows.db");
	struct store *st;
	struct lat_error err;
	int64_t a, b;
	char *one = windowed_run(5, false, "a"), *two = windowed_run(6, false, "b");

	assert_int_equal(store_open(path, STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, one, &a, &err), 0);
	assert_int_equal(store_put(st, two, &b, &err), 0);
	assert_reads_back(st, a, one);
	assert_reads_back(st, b, two);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM windows"), 8);
	assert_int_equal(store_rm(st, &a, 1, &err), 0);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM windows WHERE run_id NOT IN (SELECT id FROM runs)"), 0);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM windows"), 4);
	assert_reads_back(st, b, two);
	free(one);
	free(two);
	store_close(st);
}

static void test_a_partial_run_is_replaced_by_its_next_checkpoint_and_its_final_result_under_its_id(void **state)
{
	(void)state;
	const char *path = in_tmpdir("partial.db");
	struct store *st;
	struct lat_error err;
	struct run_info ri;
	struct run_filter only = { .partial_only = true }, any = { 0 };
	int64_t other, id, again;
	char *first = windowed_run(7, true, "first"), *second = windowed_run(7, true, "second");
	char *final = windowed_run(7, false, "final"), *before = windowed_run(3, false, "other");

	assert_int_equal(store_open(path, STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, before, &other, &err), 0);
	assert_int_equal(store_put(st, first, &id, &err), 0);
	assert_int_equal(store_info(st, id, &ri, &err), 0);
	assert_true(ri.partial);
	assert_string_equal(listed(st, &only), "2");
	assert_int_equal(store_put(st, second, &again, &err), 0);
	assert_int_equal(again, id);
	assert_reads_back(st, id, second);
	assert_int_equal(store_info(st, id, &ri, &err), 0);
	assert_true(ri.partial);
	assert_int_equal(ri.labels.n, 1);
	assert_string_equal(ri.labels.items[0].value, "second");
	assert_int_equal(store_put(st, final, &again, &err), 0);
	assert_int_equal(again, id);
	assert_reads_back(st, id, final);
	assert_int_equal(store_info(st, id, &ri, &err), 0);
	assert_false(ri.partial);
	assert_string_equal(ri.labels.items[0].value, "final");
	assert_string_equal(listed(st, &only), "");
	assert_string_equal(listed(st, &any), "1,2");
	/* One copy of everything: no row of the replaced documents is left. */
	assert_int_equal(sql_value(path, "SELECT count(*) FROM windows"), 8);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM labels"), 2);
	assert_int_equal(sql_value(path, "SELECT count(*) FROM cpu_stats WHERE run_id = 2"),
			 sql_value(path, "SELECT count(*) FROM cpu_stats WHERE run_id = 1"));
	free(first);
	free(second);
	free(final);
	free(before);
	store_close(st);
}

static void test_a_final_run_is_never_replaced_by_a_partial_or_final_one(void **state)
{
	(void)state;
	struct store *st;
	struct lat_error err;
	int64_t id, again = 0;
	char *final = windowed_run(9, false, "final"), *partial = windowed_run(9, true, "late");
	char *texts[] = { partial, final };
	bool dup[2];
	int64_t ids[2];

	assert_int_equal(store_open(in_tmpdir("final.db"), STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, final, &id, &err), 0);
	assert_int_equal(store_put(st, partial, &again, &err), -EEXIST);
	assert_int_equal(again, id);
	assert_int_equal(store_put(st, final, &again, &err), -EEXIST);
	assert_int_equal(store_put_all(st, (const char *const *)texts, 2, ids, dup, &err), 0);
	assert_true(dup[0] && dup[1]);
	assert_reads_back(st, id, final);
	free(final);
	free(partial);
	store_close(st);
}

/* ---- a run of operations (schema 5) ---- */

/* The run's figure as the store keeps it, as text ("NULL" for none). */
static const char *column_text(const char *path, const char *col, int64_t id)
{
	static char out[64];
	char sql[128];
	sqlite3 *db;
	sqlite3_stmt *q;
	snprintf(sql, sizeof(sql), "SELECT quote(%s) FROM runs WHERE id = %lld", col, (long long)id);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	sqlite3_close(db);
	return out;
}

static void test_a_run_of_reads_keeps_its_throughput_and_cpu_per_read_beside_its_figures(void **state)
{
	(void)state;
	const char *path = in_tmpdir("ops.db");
	struct store *st;
	struct lat_error err;
	int64_t id;
	char *text = labelled_run("io", 900, "config=a", 1000, false);
	json_t *doc = json_loads(text, 0, NULL);

	free(text);
	assert_non_null(doc);
	json_object_set_new(doc, "throughput", json_pack("{s:f, s:f, s:I}", "ops_per_sec", 2500.5, "bytes_per_sec",
							 2500.5 * 4096, "bytes_per_op", (json_int_t)4096));
	json_object_set_new(doc, "cpu_per_op_ns", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "user",
							    1.5, "nice", 0.0, "system", 7250.25, "idle", 390000.0,
							    "iowait", 120.0, "irq", 3.0, "softirq", 812.5, "steal", 4.0,
							    "latscope_user", 2.0, "latscope_system", 6000.0));
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_int_equal(store_open(path, STORE_CREATE, &st, &err), 0);
	assert_int_equal(store_put(st, text, &id, &err), 0);
	free(text);
	int64_t timer = put(st, "timer", 901, "config=a");
	store_close(st);

	assert_string_equal(column_text(path, "ops_per_sec", id), "2500.5");
	assert_string_equal(column_text(path, "bytes_per_sec", id), "10242048.0");
	assert_string_equal(column_text(path, "cpu_user_ns_per_op", id), "1.5");
	assert_string_equal(column_text(path, "cpu_system_ns_per_op", id), "7250.25");
	assert_string_equal(column_text(path, "cpu_iowait_ns_per_op", id), "120.0");
	assert_string_equal(column_text(path, "cpu_softirq_ns_per_op", id), "812.5");
	assert_string_equal(column_text(path, "cpu_steal_ns_per_op", id), "4.0");
	/* a run that is not of operations has none */
	assert_string_equal(column_text(path, "ops_per_sec", timer), "NULL");
	assert_string_equal(column_text(path, "cpu_system_ns_per_op", timer), "NULL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_gives_the_fips_180_example_digests),
		cmocka_unit_test(test_a_runs_identity_is_its_host_probe_and_start_and_nothing_runs_together),
		cmocka_unit_test(test_a_merges_identity_is_its_members_in_any_order),
		cmocka_unit_test(test_a_member_list_that_is_not_identities_is_refused),
		cmocka_unit_test(test_two_merges_sharing_their_earliest_run_are_both_stored_and_a_repeat_is_not),
		cmocka_unit_test(test_a_measured_run_stored_twice_is_already_stored),
		cmocka_unit_test(test_a_store_path_that_is_a_symbolic_link_is_refused_and_nothing_created),
		cmocka_unit_test(test_a_new_store_and_its_new_directories_are_private),
		cmocka_unit_test(test_store_list_and_ids_give_the_runs_in_stored_order_and_filter_by_probe_labels_and_start),
		cmocka_unit_test(test_store_list_limit_keeps_the_last_stored_oldest_first),
		cmocka_unit_test(test_store_label_keys_are_those_of_the_selected_runs_each_once_in_order),
		cmocka_unit_test(test_store_info_gives_a_runs_listed_figures_and_labels_and_an_unknown_id_is_enoent),
		cmocka_unit_test(test_store_rm_removes_all_or_none_and_their_labels_go_too),
		cmocka_unit_test(test_only_a_regular_file_of_the_users_own_that_no_one_else_may_write_is_written_untold),
		cmocka_unit_test(test_a_stores_version_is_told_from_its_tables_and_a_mix_of_versions_is_none),
		cmocka_unit_test(test_a_store_whose_version_was_reset_to_0_is_read_and_written_with_its_runs),
		cmocka_unit_test(test_a_latscope_marked_file_with_tables_of_no_version_is_refused_in_one_line),
		cmocka_unit_test(test_a_schema_1_store_is_migrated_and_keeps_its_run_labels_and_figures),
		cmocka_unit_test(test_a_schema_3_store_of_latscope_0_1_0_reads_back_identical_with_its_windows_apart),
		cmocka_unit_test(test_a_runs_windows_read_back_exactly_and_go_when_it_is_removed),
		cmocka_unit_test(test_a_partial_run_is_replaced_by_its_next_checkpoint_and_its_final_result_under_its_id),
		cmocka_unit_test(test_a_final_run_is_never_replaced_by_a_partial_or_final_one),
		cmocka_unit_test(test_a_run_of_reads_keeps_its_throughput_and_cpu_per_read_beside_its_figures),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
