/* --secret FILE (src/host/secret.c): a private regular file's bytes, or a refusal naming it and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/secret.h"

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_a_private_file_gives_its_bytes_without_the_trailing_newline(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-secret-XXXXXX", path[64];
	uint8_t buf[HOST_SECRET_MAX];
	size_t len;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	write_file(path, "s3cret\n", 0600);
	assert_int_equal(host_secret_read(path, buf, &len, NULL), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(buf, "s3cret", 6);
	write_file(path, "two\nlines", 0400);
	assert_int_equal(host_secret_read(path, buf, &len, NULL), 0);
	assert_int_equal(len, 9);
	unlink(path);
	rmdir(dir);
}

static void test_a_file_others_may_read_an_empty_one_and_a_directory_are_refused_by_name(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-secret-XXXXXX", path[64], want[256];
	uint8_t buf[HOST_SECRET_MAX];
	struct lat_error err;
	size_t len;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	write_file(path, "s3cret\n", 0644);
	assert_int_equal(host_secret_read(path, buf, &len, &err), -EPERM);
	snprintf(want, sizeof(want), "'%s' has mode 0644: others may read it; a secret must be 0600 or "
		 "stricter (chmod 600 '%s')", path, path);
	assert_string_equal(err.msg, want);
	write_file(path, "\n", 0600);
	assert_int_equal(host_secret_read(path, buf, &len, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is empty"));
	assert_int_equal(host_secret_read(dir, buf, &len, &err), -EPERM);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	unlink(path);
	assert_int_equal(host_secret_read(path, buf, &len, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "cannot open"));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_private_file_gives_its_bytes_without_the_trailing_newline),
		cmocka_unit_test(test_a_file_others_may_read_an_empty_one_and_a_directory_are_refused_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
