/*
 * Unit tests for the file written whole or not at all (src/sys/atomicfile.c):
 * its modes, its temporary files (none left by a killed writer, stale ones of
 * dead writers removed, a live writer's never), and what it does at a name
 * that is taken.  Both kinds of temporary file are tested: the unnamed one
 * (O_TMPFILE) and the named one a file system without it gets.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/atomicfile.h"
#include "sys/mkdirs.h"

#include "tmpdir.h"

typedef int (*open_fn)(const char *path, struct atomic_file *ret);

/* The names in the directory, "." and ".." left out, joined by spaces in order of readdir. */
static size_t entries(char *out, size_t size)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0, len = 0;

	assert_non_null(d);
	out[0] = '\0';
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			len += (size_t)snprintf(out + len, size - len, "%s%s", n ? " " : "", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1u, f);
	buf[n] = '\0';
	fclose(f);
}

static void put(open_fn open_it, const char *path, const char *text)
{
	struct atomic_file f = { .fd = -1 };
	assert_int_equal(open_it(path, &f), 0);
	assert_int_equal(atomic_file_write(&f, text, strlen(text)), 0);
	assert_int_equal(atomic_file_commit(&f), 0);
	atomic_file_close(&f);
}

static void age(const char *path, time_t seconds)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= seconds;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static const open_fn openers[] = { atomic_file_open, atomic_file_open_named };

static void test_a_new_file_is_readable_and_writable_by_its_owner_alone(void **state)
{
	(void)state;
	mode_t old = umask(022);
	struct stat st;

	for (size_t i = 0; i < 2; i++) {
		put(openers[i], in_tmpdir("new.json"), "{}\n");
		assert_int_equal(stat(in_tmpdir("new.json"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		unlink(in_tmpdir("new.json"));
	}
	umask(077);
	put(atomic_file_open, in_tmpdir("new.json"), "{}\n");
	assert_int_equal(stat(in_tmpdir("new.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	umask(0277);                    /* a umask that asks for less is obeyed */
	unlink(in_tmpdir("new.json"));
	put(atomic_file_open, in_tmpdir("new.json"), "{}\n");
	assert_int_equal(stat(in_tmpdir("new.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0400);
	umask(old);
	unlink(in_tmpdir("new.json"));
}

static void test_a_replaced_file_keeps_its_permission_bits_but_no_set_id_bit(void **state)
{
	(void)state;
	struct stat st;
	char buf[64];

	for (size_t i = 0; i < 2; i++) {
		write_text(in_tmpdir("kept.json"), "old\n", 0640);
		put(openers[i], in_tmpdir("kept.json"), "new\n");
		assert_int_equal(stat(in_tmpdir("kept.json"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
		read_text(in_tmpdir("kept.json"), buf, sizeof(buf));
		assert_string_equal(buf, "new\n");
		write_text(in_tmpdir("kept.json"), "old\n", 04755);
		put(openers[i], in_tmpdir("kept.json"), "new\n");
		assert_int_equal(stat(in_tmpdir("kept.json"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0755);
		unlink(in_tmpdir("kept.json"));
	}
}

static void test_a_symbolic_link_at_the_name_is_replaced_and_its_target_left_alone(void **state)
{
	(void)state;
	struct stat st;
	char buf[64];

	for (size_t i = 0; i < 2; i++) {
		write_text(in_tmpdir("victim"), "keep\n", 0666);
		assert_int_equal(symlink(in_tmpdir("victim"), in_tmpdir("link.json")), 0);
		put(openers[i], in_tmpdir("link.json"), "new\n");
		read_text(in_tmpdir("victim"), buf, sizeof(buf));
		assert_string_equal(buf, "keep\n");
		assert_int_equal(lstat(in_tmpdir("link.json"), &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0600);     /* the link lends no mode */
		unlink(in_tmpdir("link.json"));
		unlink(in_tmpdir("victim"));
	}
}

static void test_two_writers_of_one_name_do_not_collide(void **state)
{
	(void)state;
	char buf[64], names[256];

	for (size_t i = 0; i < 2; i++) {
		struct atomic_file a = { .fd = -1 }, b = { .fd = -1 };
		assert_int_equal(openers[i](in_tmpdir("both"), &a), 0);
		assert_int_equal(openers[i](in_tmpdir("both"), &b), 0);
		assert_int_equal(atomic_file_write(&a, "a\n", 2), 0);
		assert_int_equal(atomic_file_write(&b, "b\n", 2), 0);
		assert_int_equal(atomic_file_commit(&a), 0);
		assert_int_equal(atomic_file_commit(&b), 0);
		atomic_file_close(&a);
		atomic_file_close(&b);
		read_text(in_tmpdir("both"), buf, sizeof(buf));
		assert_string_equal(buf, "b\n");
		assert_int_equal(entries(names, sizeof(names)), 1);
		unlink(in_tmpdir("both"));
	}
}

static void test_a_writer_killed_before_it_commits_leaves_nothing_beside_the_target(void **state)
{
	(void)state;
	char names[256];
	int status;

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct atomic_file f = { .fd = -1 };
		if (atomic_file_open(in_tmpdir("killed.json"), &f) < 0 || atomic_file_write(&f, "part", 4) < 0)
			_exit(1);
		_exit(0);               /* no commit, no close: as SIGKILL leaves it */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(entries(names, sizeof(names)), 0);
}

/* A child that opens a named temporary file for name and dies without a word. */
static void die_writing(const char *name)
{
	int status;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct atomic_file f = { .fd = -1 };
		_exit(atomic_file_open_named(in_tmpdir(name), &f) < 0 || atomic_file_write(&f, "part", 4) < 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_the_next_write_removes_what_a_dead_writer_left_and_nothing_else(void **state)
{
	(void)state;
	char names[512], left[256];

	die_writing("r.json");
	assert_int_equal(entries(left, sizeof(left)), 1);
	assert_int_equal(strncmp(left, ".r.json.latscope-", 17), 0);
	assert_int_equal(strlen(left), 17u + 12u);
	/* Just made, it could be a writer that has not locked it yet: kept. */
	put(atomic_file_open, in_tmpdir("r.json"), "{}\n");
	assert_int_equal(entries(names, sizeof(names)), 2);
	age(in_tmpdir(left), 3600);
	write_text(in_tmpdir(".r.json.tmp-4194303"), "0.1.0's\n", 0644);        /* no such pid */
	age(in_tmpdir(".r.json.tmp-4194303"), 3600);
	write_text(in_tmpdir(".other.json.latscope-abcdefghijkl"), "x", 0600);  /* another target's */
	age(in_tmpdir(".other.json.latscope-abcdefghijkl"), 3600);
	write_text(in_tmpdir(".r.json.latscope-short"), "x", 0600);            /* not our pattern */
	age(in_tmpdir(".r.json.latscope-short"), 3600);
	put(atomic_file_open, in_tmpdir("r.json"), "{}\n");
	assert_int_equal(access(in_tmpdir(left), F_OK), -1);
	assert_int_equal(access(in_tmpdir(".r.json.tmp-4194303"), F_OK), -1);
	assert_int_equal(access(in_tmpdir(".other.json.latscope-abcdefghijkl"), F_OK), 0);
	assert_int_equal(access(in_tmpdir(".r.json.latscope-short"), F_OK), 0);
	unlink(in_tmpdir(".other.json.latscope-abcdefghijkl"));
	unlink(in_tmpdir(".r.json.latscope-short"));
	unlink(in_tmpdir("r.json"));
	assert_int_equal(entries(names, sizeof(names)), 0);
}

static void test_a_live_writers_temporary_file_is_kept_however_old(void **state)
{
	(void)state;
	struct atomic_file live = { .fd = -1 };
	char names[256], tmp[512], buf[64];

	assert_int_equal(atomic_file_open_named(in_tmpdir("slow.json"), &live), 0);
	assert_non_null(live.tmp);
	snprintf(tmp, sizeof(tmp), "%s", in_tmpdir(live.tmp));
	age(tmp, 3600);                 /* an hour-long run */
	put(atomic_file_open_named, in_tmpdir("slow.json"), "quick\n");
	assert_int_equal(access(tmp, F_OK), 0);
	assert_int_equal(atomic_file_write(&live, "slow\n", 5), 0);
	assert_int_equal(atomic_file_commit(&live), 0);
	atomic_file_close(&live);
	read_text(in_tmpdir("slow.json"), buf, sizeof(buf));
	assert_string_equal(buf, "slow\n");
	assert_int_equal(entries(names, sizeof(names)), 1);
	unlink(in_tmpdir("slow.json"));
}

static void test_commit_new_leaves_an_existing_file_alone(void **state)
{
	(void)state;
	char names[256], buf[64];

	for (size_t i = 0; i < 2; i++) {
		struct atomic_file f = { .fd = -1 };
		write_text(in_tmpdir("taken"), "first\n", 0600);
		assert_int_equal(openers[i](in_tmpdir("taken"), &f), 0);
		assert_int_equal(atomic_file_write(&f, "second\n", 7), 0);
		assert_int_equal(atomic_file_commit_new(&f), -EEXIST);
		atomic_file_close(&f);
		read_text(in_tmpdir("taken"), buf, sizeof(buf));
		assert_string_equal(buf, "first\n");
		assert_int_equal(entries(names, sizeof(names)), 1);
		unlink(in_tmpdir("taken"));

		assert_int_equal(openers[i](in_tmpdir("free"), &f), 0);
		assert_int_equal(atomic_file_write(&f, "new\n", 4), 0);
		assert_int_equal(atomic_file_commit_new(&f), 0);
		atomic_file_close(&f);
		read_text(in_tmpdir("free"), buf, sizeof(buf));
		assert_string_equal(buf, "new\n");
		assert_int_equal(entries(names, sizeof(names)), 1);
		unlink(in_tmpdir("free"));
	}
}

static void test_closing_without_commit_leaves_nothing_and_an_unopened_file_closes_harmlessly(void **state)
{
	(void)state;
	char names[256];
	struct atomic_file zeroed, unset = { .fd = -1 };

	for (size_t i = 0; i < 2; i++) {
		struct atomic_file f = { .fd = -1 };
		assert_int_equal(openers[i](in_tmpdir("never"), &f), 0);
		atomic_file_close(&f);
		atomic_file_close(&f);
		assert_int_equal(entries(names, sizeof(names)), 0);
	}
	memset(&zeroed, 0, sizeof(zeroed));
	atomic_file_close(&zeroed);
	atomic_file_close(&unset);
}

static void test_a_directory_or_a_name_ending_in_a_slash_is_refused(void **state)
{
	(void)state;
	struct atomic_file f = { .fd = -1 };

	assert_int_equal(atomic_file_open(tmpdir, &f), -EISDIR);
	assert_int_equal(atomic_file_open(in_tmpdir("x/"), &f), -EISDIR);
	assert_int_equal(atomic_file_open(in_tmpdir("no/such/dir"), &f), -ENOENT);
	assert_int_equal(atomic_file_open("", &f), -ENOENT);
	assert_int_equal(f.fd, -1);
}

/* A reader of path that is there before the writer: the writer's open does not wait. */
static int fifo_reader(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static void test_a_fifo_or_a_link_to_one_is_written_in_place_and_stays_a_fifo(void **state)
{
	(void)state;
	struct stat st;
	char buf[64];

	assert_int_equal(mkfifo(in_tmpdir("fifo"), 0600), 0);
	assert_int_equal(symlink(in_tmpdir("fifo"), in_tmpdir("fifo-link")), 0);
	for (size_t i = 0; i < 2; i++) {
		const char *name = i ? "fifo-link" : "fifo";
		int rd = fifo_reader(in_tmpdir("fifo"));
		put(openers[i], in_tmpdir(name), "through\n");
		ssize_t n = read(rd, buf, sizeof(buf) - 1u);
		assert_int_equal(n, 8);
		buf[n] = '\0';
		assert_string_equal(buf, "through\n");
		close(rd);
		assert_int_equal(lstat(in_tmpdir("fifo"), &st), 0);
		assert_true(S_ISFIFO(st.st_mode));
		assert_int_equal(lstat(in_tmpdir("fifo-link"), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	/* Nothing is ever new there: commit_new says so. */
	struct atomic_file f = { .fd = -1 };
	int rd = fifo_reader(in_tmpdir("fifo"));
	assert_int_equal(atomic_file_open(in_tmpdir("fifo"), &f), 0);
	assert_int_equal(atomic_file_commit_new(&f), -EEXIST);
	atomic_file_close(&f);
	close(rd);
	unlink(in_tmpdir("fifo-link"));
	unlink(in_tmpdir("fifo"));
}

static void test_a_device_is_written_in_place_and_its_write_error_returned(void **state)
{
	(void)state;
	struct atomic_file f = { .fd = -1 };
	struct stat st;

	/* Copies of /dev/null and /dev/full here: the real ones are never a test's to risk. */
	if (mknod(in_tmpdir("null"), S_IFCHR | 0666, makedev(1, 3)) < 0 ||
	    mknod(in_tmpdir("full"), S_IFCHR | 0666, makedev(1, 7)) < 0) {
		skip();         /* not root */
	}
	put(atomic_file_open, in_tmpdir("null"), "gone\n");
	assert_int_equal(atomic_file_open(in_tmpdir("full"), &f), 0);
	assert_false(atomic_file_is_terminal(&f));
	assert_int_equal(atomic_file_write(&f, "x", 1), -ENOSPC);
	atomic_file_close(&f);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(lstat(in_tmpdir(i ? "full" : "null"), &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	unlink(in_tmpdir("null"));
	unlink(in_tmpdir("full"));
}

static void test_a_dash_is_standard_output(void **state)
{
	(void)state;
	struct atomic_file f = { .fd = -1 };
	int pipefd[2], saved = dup(STDOUT_FILENO);
	char buf[16] = "";

	assert_true(saved >= 0);
	fflush(stdout);         /* what cmocka printed goes where it belongs, not into the pipe */
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(dup2(pipefd[1], STDOUT_FILENO), STDOUT_FILENO);
	close(pipefd[1]);
	int r = atomic_file_open("-", &f);
	if (r == 0 && (r = atomic_file_write(&f, "out\n", 4)) == 0)
		r = atomic_file_commit(&f);
	atomic_file_close(&f);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_int_equal(r, 0);
	assert_int_equal(read(pipefd[0], buf, sizeof(buf) - 1u), 4);
	assert_string_equal(buf, "out\n");
	close(pipefd[0]);
	assert_int_equal(access("-", F_OK), -1);
}

/* The directories on the way to a file: made below top only, never top or above it. */
static void test_make_dirs_under_makes_only_what_lies_below_a_top_that_exists(void **state)
{
	(void)state;
	char top[128], dir[256], file[192], beyond[192];
	struct stat st;

	snprintf(top, sizeof(top), "%s/home", tmpdir);
	snprintf(dir, sizeof(dir), "%s/.local/share/latscope", top);
	assert_int_equal(make_dirs_under(top, dir, 0700), -ENOENT);
	assert_int_equal(stat(top, &st), -1);
	assert_int_equal(mkdir(top, 0755), 0);
	assert_int_equal(make_dirs_under(top, dir, 0700), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* there already; a slash at the end is the same top; only a name under top */
	assert_int_equal(make_dirs_under(top, dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/", top);
	assert_int_equal(make_dirs_under(dir, top, 0700), 0);
	snprintf(beyond, sizeof(beyond), "%s-other/x", top);
	assert_int_equal(make_dirs_under(top, beyond, 0700), -EINVAL);
	snprintf(file, sizeof(file), "%s/file", top);
	write_text(file, "x", 0600);
	assert_int_equal(make_dirs_under(file, file, 0700), -ENOTDIR);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	assert_int_equal(make_dirs_under(top, dir, 0700), -ENOTDIR);
	remove_tree(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_file_is_readable_and_writable_by_its_owner_alone),
		cmocka_unit_test(test_a_replaced_file_keeps_its_permission_bits_but_no_set_id_bit),
		cmocka_unit_test(test_a_symbolic_link_at_the_name_is_replaced_and_its_target_left_alone),
		cmocka_unit_test(test_two_writers_of_one_name_do_not_collide),
		cmocka_unit_test(test_a_writer_killed_before_it_commits_leaves_nothing_beside_the_target),
		cmocka_unit_test(test_the_next_write_removes_what_a_dead_writer_left_and_nothing_else),
		cmocka_unit_test(test_a_live_writers_temporary_file_is_kept_however_old),
		cmocka_unit_test(test_commit_new_leaves_an_existing_file_alone),
		cmocka_unit_test(test_closing_without_commit_leaves_nothing_and_an_unopened_file_closes_harmlessly),
		cmocka_unit_test(test_a_directory_or_a_name_ending_in_a_slash_is_refused),
		cmocka_unit_test(test_a_fifo_or_a_link_to_one_is_written_in_place_and_stays_a_fifo),
		cmocka_unit_test(test_a_device_is_written_in_place_and_its_write_error_returned),
		cmocka_unit_test(test_a_dash_is_standard_output),
		cmocka_unit_test(test_make_dirs_under_makes_only_what_lies_below_a_top_that_exists),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
