/*
 * Unit tests for the run store (src/store): what makes two runs the same
 * (identity.c and its SHA-256), and how the store file is opened and created
 * (no symbolic link followed, private modes).  The commands on top are tested
 * end to end in tests/integration/test_store.py and test_files.py.
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

#include "store/identity.h"
#include "store/sha256.h"
#include "store/store.h"

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
	char err[160];
	assert_int_equal(identity_compute(host, probe, start, NULL, out, err, sizeof(err)), 0);
	assert_true(identity_valid(out));
	assert_int_equal(strncmp(out, "run:", 4), 0);
}

static int merge_id(const char *const *members, size_t n, char out[STORE_IDENTITY_SIZE])
{
	char err[160];
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_string(members[i]));
	int r = identity_compute("merged: 2 runs of vm", "timer", 5, list, out, err, sizeof(err));
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
	char out[STORE_IDENTITY_SIZE], err[160], a[STORE_IDENTITY_SIZE];

	run_id("vm", "timer", 5, a);
	assert_int_equal(merge_id((const char *[]){ a, "run:123" }, 2, out), -EINVAL);
	assert_int_equal(merge_id((const char *[]){ a, "" }, 2, out), -EINVAL);
	char upper[STORE_IDENTITY_SIZE];
	snprintf(upper, sizeof(upper), "RUN:%s", a + 4);
	assert_int_equal(merge_id((const char *[]){ upper }, 1, out), -EINVAL);
	assert_int_equal(merge_id(NULL, 0, out), -EINVAL);      /* a merge of nothing */
	json_t *notlist = json_string(a);
	assert_int_equal(identity_compute("h", "timer", 5, notlist, out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "merged_members"));
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
	struct store_error err;
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
	char want[STORE_IDENTITY_SIZE], why[160];
	assert_int_equal(identity_of_result(doc, want, why, sizeof(why)), 0);
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
	struct store_error err;
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
	struct store_error err;
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
	struct store_error err;
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
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
