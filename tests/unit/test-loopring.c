/*
 * Unit tests for the two ends of a loop: include/latscope/loop.h, which the
 * program writes with, and src/probe/loopring.c, which latscope reads with.
 *
 * The objects are real ones in /dev/shm, under names of this test process's
 * own (its pid in them), removed by each test's teardown.  A writer in a
 * forked process or in threads runs against a reader that copies while the
 * ring is overwritten: every wake written is either read, in order, or
 * counted lost.  The threaded test is also run under ThreadSanitizer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <latscope/loop.h>

#include "probe/loopring.h"

#include "skipwhy.h"

#define RING  ((uint64_t)LS_LOOP_RING_SIZE)
#define DEPTH (RING - 1u) /* the wakes a reader can hold back */

/* This test's names: "lt<pid>.<tag>", each removed by the teardown. */
static char names[8][64];
static unsigned nnames;

static const char *loop_name(const char *tag)
{
	assert_true(nnames < 8);
	snprintf(names[nnames], sizeof(names[0]), "lt%ld.%s", (long)getpid(), tag);
	return names[nnames++];
}

static int remove_names(void **state)
{
	(void)state;
	for (unsigned i = 0; i < nnames; i++) {
		char shm[LS_LOOP_SHM_NAME_SIZE];
		if (ls_loop_shm_name(shm, names[i]) == 0)
			shm_unlink(shm);
	}
	nnames = 0;
	return 0;
}

static bool exists(const char *name)
{
	char shm[LS_LOOP_SHM_NAME_SIZE];
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDONLY, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* An object at the loop's name holding exactly these bytes. */
static void make_object(const char *name, const void *bytes, size_t n, size_t size)
{
	char shm[LS_LOOP_SHM_NAME_SIZE];
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(pwrite(fd, bytes, n, 0), (ssize_t)n);
	close(fd);
}

static struct loopring *reader(const char *name)
{
	struct loopring *lr = NULL;
	struct lat_error err = { "" };
	int r = loopring_open(name, &lr, &err);
	if (r < 0)
		fail_msg("loopring_open(%s): %d: %s", name, r, err.msg);
	return lr;
}

/* Reads slot i until n entries are had (or nothing more comes), into out. */
static size_t read_all(struct loopring *lr, size_t i, uint64_t *out, size_t n, uint64_t *lost)
{
	size_t got = 0, k;
	while (got < n && (k = loopring_read(lr, i, out + got, n - got, lost)) > 0)
		got += k;
	return got;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The CPUs the test may run on, as it started. */
static cpu_set_t allowed;

/* The calling thread on the which-th CPU of allowed (the last one if fewer), so that a
 * writer and its reader run at once on two CPUs rather than by turns on one.  The mask it
 * had before goes to *ret_old (NULL: not kept). */
static void pin(unsigned which, cpu_set_t *ret_old)
{
	cpu_set_t one;
	int found = -1;

	if (ret_old)
		assert_int_equal(sched_getaffinity(0, sizeof(*ret_old), ret_old), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed) && (found < 0 || which-- > 0))
			found = c;
	CPU_ZERO(&one);
	CPU_SET(found, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

/* Wakes numbered first.., written in bursts of a few thousand (faster than a reader copies
 * them) with pauses of 0 to 30 us between: the reader sees wakes lapped while it copies,
 * and wakes it reads in time. */
static void write_bursts(struct ls_loop *loop, uint64_t n, uint64_t tag)
{
	uint64_t x = 88172645463325252u ^ tag;

	for (uint64_t t = 0; t < n;) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t burst = 1000 + x % 8000;
		for (uint64_t end = t + burst; t < end && t < n; t++)
			ls_loop_wake_at(loop, t ^ tag);
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t until = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
				 (x >> 20) % 30000;
		while (clock_gettime(CLOCK_MONOTONIC, &ts) == 0 &&
		       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec < until)
			;
	}
}

static void test_wakes_written_in_this_process_are_read_back_in_order(void **state)
{
	(void)state;
	const char *name = loop_name("one");
	struct ls_loop loop = LS_LOOP_INIT;
	struct loopring_thread th;
	uint64_t out[16], lost = 0;

	assert_int_equal(ls_loop_open(&loop, name, 1000000), 0);
	struct loopring *lr = reader(name);
	assert_int_equal(loopring_pid(lr), getpid());
	assert_int_equal(loopring_nthreads(lr), 1);
	assert_int_equal(loopring_thread(lr, 0, &th), 0);
	assert_int_equal(th.tid, gettid_());
	assert_true(th.cpu >= 0);
	assert_int_equal(th.period_ns, 1000000);
	assert_false(th.closed);
	assert_int_equal(loopring_thread(lr, 1, &th), -ENOENT);

	/* written before the reader starts: skipped */
	ls_loop_wake_at(&loop, 1);
	loopring_skip_to_now(lr, 0);
	assert_int_equal(loopring_read(lr, 0, out, 16, &lost), 0);
	for (uint64_t t = 10; t < 20; t++)
		assert_int_equal(ls_loop_wake_at(&loop, t), t);
	uint64_t a = ls_loop_wake(&loop), b = ls_loop_wake(&loop);
	assert_true(a > 20 && b >= a);
	assert_int_equal(loopring_read(lr, 0, out, 4, &lost), 4);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[3], 13);
	assert_int_equal(loopring_read(lr, 0, out, 16, &lost), 8);
	assert_int_equal(out[0], 14);
	assert_int_equal(out[5], 19);
	assert_int_equal(out[6], a);
	assert_int_equal(out[7], b);
	assert_int_equal(lost, 0);
	assert_int_equal(loopring_read(lr, 0, out, 16, &lost), 0);
	/* a slot that is not there reads nothing */
	assert_int_equal(loopring_read(lr, LS_LOOP_SLOTS, out, 16, &lost), 0);

	ls_loop_close(&loop);
	assert_int_equal(loopring_thread(lr, 0, &th), 0);
	assert_true(th.closed);
	assert_false(exists(name)); /* the last close removed the name */
	/* a closed loop only reads the clock */
	assert_true(ls_loop_wake(&loop) >= b);
	assert_int_equal(ls_loop_wake_at(&loop, 5), 5);
	ls_loop_close(&loop);
	assert_int_equal(loopring_read(lr, 0, out, 16, &lost), 0);
	loopring_close(lr);
	loopring_close(NULL);
}

static void test_overflow_is_counted_exactly_and_the_newest_wakes_are_kept(void **state)
{
	(void)state;
	const char *name = loop_name("over");
	struct ls_loop loop = LS_LOOP_INIT;
	static uint64_t out[LS_LOOP_RING_SIZE + 8];
	uint64_t lost = 0;
	const uint64_t written = 3 * RING + 5;

	assert_int_equal(ls_loop_open(&loop, name, 0), 0);
	struct loopring *lr = reader(name);
	loopring_skip_to_now(lr, 0);
	for (uint64_t t = 0; t < written; t++)
		ls_loop_wake_at(&loop, t);
	size_t got = loopring_read(lr, 0, out, RING + 8, &lost);
	assert_int_equal(got, DEPTH);
	assert_int_equal(lost, written - DEPTH);
	for (size_t k = 0; k < got; k++)
		assert_int_equal(out[k], written - DEPTH + k);
	assert_int_equal(loopring_read(lr, 0, out, RING, &lost), 0);

	/* exactly a full ring: nothing lost; one more: one lost */
	for (uint64_t t = 0; t < DEPTH; t++)
		ls_loop_wake_at(&loop, 100000 + t);
	assert_int_equal(read_all(lr, 0, out, RING, &lost), DEPTH);
	assert_int_equal(lost, written - DEPTH);
	assert_int_equal(out[0], 100000);
	for (uint64_t t = 0; t < DEPTH + 1; t++)
		ls_loop_wake_at(&loop, 200000 + t);
	assert_int_equal(read_all(lr, 0, out, 10, &lost), 10); /* in small reads */
	assert_int_equal(out[0], 200001);
	assert_int_equal(lost, written - DEPTH + 1);
	assert_int_equal(read_all(lr, 0, out, RING, &lost), DEPTH - 10);
	assert_int_equal(out[DEPTH - 11], 200000 + DEPTH);
	/* a NULL lost is allowed */
	ls_loop_wake_at(&loop, 7);
	assert_int_equal(loopring_read(lr, 0, out, 1, NULL), 1);
	ls_loop_close(&loop);
	loopring_close(lr);
}

/*
 * Written as value = the wake's number, so a reader can check what it got:
 * each value above the last, every gap counted lost, and nothing else.
 * A value overwritten while copied would come back too high and make the
 * gaps add up to less than the loss counted.
 */
struct check {
	uint64_t next; /* the value expected next */
	uint64_t read, lost, gaps;
	uint64_t tag;
};

static void check_chunk(struct check *c, const uint64_t *out, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t v = out[k] ^ c->tag;
		if (v < c->next)
			fail_msg("value %llu after %llu", (unsigned long long)v,
				 (unsigned long long)c->next);
		c->gaps += v - c->next;
		c->next = v + 1;
	}
	c->read += n;
}

#define CROSS_WAKES 2000000u

/* A child process with the loop NAME open (on the first CPU): once it has opened it, it waits
 * for the parent's go (a byte, or the pipe closed), then writes what then writes (NULL:
 * nothing), closes the loop and exits.  Returns its pid; *ret_go is the pipe to say go on. */
static pid_t start_child(const char *name, uint64_t period_ns, void (*then)(struct ls_loop *),
			 int *ret_go)
{
	int ready[2], go[2];
	char byte = 0;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct ls_loop loop = LS_LOOP_INIT;
		close(go[1]);
		pin(0, NULL);
		byte = ls_loop_open(&loop, name, period_ns) == 0 ? 'y' : 'n';
		if (write(ready[1], &byte, 1) != 1)
			_exit(2);
		(void)!read(go[0], &byte, 1);
		if (then)
			then(&loop);
		ls_loop_close(&loop);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	assert_int_equal(byte, 'y');
	close(ready[0]);
	*ret_go = go[1];
	return child;
}

static void write_cross_wakes(struct ls_loop *loop)
{
	write_bursts(loop, CROSS_WAKES, 0);
}

static void test_a_reader_in_another_process_reads_each_wake_or_counts_it_lost(void **state)
{
	(void)state;
	const char *name = loop_name("fork");
	static uint64_t out[LS_LOOP_RING_SIZE];
	cpu_set_t mask;
	int go;

	pin(1, &mask);
	pid_t child = start_child(name, 1000, write_cross_wakes, &go);
	struct loopring *lr = reader(name);
	struct loopring_thread th;
	assert_int_equal(loopring_pid(lr), child);
	assert_int_equal(loopring_thread(lr, 0, &th), 0);
	assert_int_equal(th.tid, child);
	loopring_skip_to_now(lr, 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);

	struct check c = { 0 };
	int status = 0;
	bool ended = false;
	/* Chunks of several sizes: a whole ring copied while the writer laps it, and small ones. */
	static const size_t sizes[] = { LS_LOOP_RING_SIZE, 7, 1000, 1, 4000 };
	for (unsigned round = 0;; round++) {
		size_t n = loopring_read(lr, 0, out, sizes[round % 5], &c.lost);
		check_chunk(&c, out, n);
		if (n == 0 && ended)
			break;
		if (!ended && waitpid(child, &status, WNOHANG) == child)
			ended = true; /* read once more after it ended */
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(mask), &mask), 0);
	assert_int_equal(c.read + c.lost, CROSS_WAKES);
	assert_int_equal(c.gaps + (CROSS_WAKES - c.next), c.lost);
	assert_true(c.read > 0);
	assert_int_equal(loopring_thread(lr, 0, &th), 0);
	assert_true(th.closed);
	loopring_close(lr);
}

#define THREADS	     4u
#define THREAD_WAKES 300000u

struct writer {
	pthread_t thread;
	const char *name;
	unsigned index;
	pid_t tid;
	int r;
	pthread_barrier_t *opened;
};

static void *write_wakes(void *arg)
{
	struct writer *w = arg;
	struct ls_loop loop = LS_LOOP_INIT;

	w->tid = gettid_();
	pin(0, NULL);
	w->r = ls_loop_open(&loop, w->name, 1000u * (w->index + 1));
	pthread_barrier_wait(w->opened); /* every slot claimed, the reader started */
	pthread_barrier_wait(w->opened);
	write_bursts(&loop, THREAD_WAKES, (uint64_t)w->index << 56);
	ls_loop_close(&loop);
	return NULL;
}

static void test_several_threads_each_write_their_own_slot(void **state)
{
	(void)state;
	const char *name = loop_name("threads");
	struct writer ws[THREADS];
	struct check checks[THREADS];
	pthread_barrier_t opened;
	static uint64_t out[LS_LOOP_RING_SIZE];

	cpu_set_t mask;
	pin(1, &mask);
	assert_int_equal(pthread_barrier_init(&opened, NULL, THREADS + 1), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		ws[i] = (struct writer){ .name = name, .index = i, .opened = &opened };
		assert_int_equal(pthread_create(&ws[i].thread, NULL, write_wakes, &ws[i]), 0);
	}
	pthread_barrier_wait(&opened);
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(ws[i].r, 0);
	struct loopring *lr = reader(name);
	assert_int_equal(loopring_nthreads(lr), THREADS);
	/* which slot is whose: by tid, and its declared period says the same */
	unsigned whose[THREADS];
	for (size_t s = 0; s < THREADS; s++) {
		struct loopring_thread th;
		assert_int_equal(loopring_thread(lr, s, &th), 0);
		whose[s] = THREADS;
		for (unsigned i = 0; i < THREADS; i++)
			if (ws[i].tid == th.tid)
				whose[s] = i;
		assert_true(whose[s] < THREADS);
		assert_int_equal(th.period_ns, 1000u * (whose[s] + 1));
		for (size_t t = 0; t < s; t++)
			assert_int_not_equal(whose[t], whose[s]);
		checks[s] = (struct check){ .tag = (uint64_t)whose[s] << 56 };
		loopring_skip_to_now(lr, s);
	}
	pthread_barrier_wait(&opened);

	/* One reader for all slots while they write, as attach reads them. */
	unsigned done = 0;
	for (unsigned round = 0; done < THREADS; round++) {
		done = 0;
		for (size_t s = 0; s < THREADS; s++) {
			size_t n = loopring_read(lr, s, out, round % 2 ? 100 : LS_LOOP_RING_SIZE,
						 &checks[s].lost);
			check_chunk(&checks[s], out, n);
			struct loopring_thread th;
			assert_int_equal(loopring_thread(lr, s, &th), 0);
			if (n == 0 && th.closed && checks[s].read + checks[s].lost == THREAD_WAKES)
				done++;
		}
	}
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(ws[i].thread, NULL), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(mask), &mask), 0);
	for (size_t s = 0; s < THREADS; s++) {
		assert_int_equal(checks[s].read + checks[s].lost, THREAD_WAKES);
		assert_int_equal(checks[s].gaps + (THREAD_WAKES - checks[s].next), checks[s].lost);
	}
	assert_false(exists(name));
	loopring_close(lr);
	pthread_barrier_destroy(&opened);
}

static void test_a_loop_that_does_not_exist_is_enoent_and_says_what_to_check(void **state)
{
	(void)state;
	const char *name = loop_name("nothere");
	struct loopring *lr = (struct loopring *)&lr; /* untouched on failure */
	struct loopring *before = lr;
	struct lat_error err = { "" };

	assert_int_equal(loopring_open(name, &lr, &err), -ENOENT);
	assert_ptr_equal(lr, before);
	char want[200];
	snprintf(want, sizeof(want),
		 "no loop named %s: no /dev/shm/latscope-loop.%s; is the program running, and did "
		 "it call ls_loop_open?",
		 name, name);
	assert_string_equal(err.msg, want);
}

static void test_a_bad_name_is_einval_at_both_ends(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"a/b",
		"../x",
		"sp ace",
		"tab\t",
		"é",
		"12345678901234567890123456789012345678901234567890123456789012345", /* 65 */
	};
	struct ls_loop loop = LS_LOOP_INIT;
	struct loopring *lr = NULL;
	struct lat_error err = { "" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ls_loop_open(&loop, bad[i], 0), -EINVAL);
		assert_int_equal(loopring_open(bad[i], &lr, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "bad loop name"));
	}
	/* what cannot be in a name is shown escaped */
	assert_int_equal(loopring_open("tab\t", &lr, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'tab\\x09'"));
	assert_int_equal(ls_loop_open(&loop, NULL, 0), -EINVAL);
	assert_int_equal(ls_loop_open(NULL, "x", 0), -EINVAL);
	assert_int_equal(loopring_open(NULL, &lr, &err), -EINVAL);
	assert_null(lr);
	ls_loop_wake(&loop); /* a loop whose open failed is closed: only the clock is read */
	ls_loop_close(&loop);

	/* 64 characters and every kind allowed */
	char longest[65];
	snprintf(longest, sizeof(longest), "lt%ld.", (long)getpid());
	size_t at = strlen(longest);
	memset(longest + at, 'a', 64 - at);
	longest[64] = '\0';
	memcpy(longest + at, "Z9_.-", 5);
	strcpy(names[nnames++], longest);
	assert_int_equal(ls_loop_open(&loop, longest, 0), 0);
	lr = reader(longest);
	ls_loop_close(&loop);
	loopring_close(lr);
}

static void test_a_file_that_is_no_loop_is_eproto_and_left_alone(void **state)
{
	(void)state;
	const char *name = loop_name("junk");
	struct ls_loop loop = LS_LOOP_INIT;
	struct loopring *lr = NULL;
	struct lat_error err = { "" };
	const char junk[] = "not a loop, but somebody's file";
	char shm[LS_LOOP_SHM_NAME_SIZE], back[sizeof(junk)];

	make_object(name, junk, sizeof(junk), 4096);
	assert_int_equal(loopring_open(name, &lr, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "is not a latscope loop"));
	assert_int_equal(ls_loop_open(&loop, name, 0), -EEXIST);
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDONLY, 0);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	assert_memory_equal(back, junk, sizeof(junk));
	close(fd);

	/* too short for a header */
	make_object(name, "x", 1, 16);
	assert_int_equal(loopring_open(name, &lr, &err), -EPROTO);
	/* empty, or all zero: its program is still making it */
	make_object(name, "", 0, 0);
	assert_int_equal(loopring_open(name, &lr, &err), -EAGAIN);
	assert_non_null(strstr(err.msg, "not made yet"));
	assert_null(lr);
}

/* A dead pid: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return p;
}

static void
test_another_layout_version_is_eproto_and_replaced_once_its_program_is_gone(void **state)
{
	(void)state;
	const char *name = loop_name("v99");
	struct ls_loop_header h = {
		.magic = LS_LOOP_MAGIC, .version = 99, .nslots = 8, .ring_size = 64
	};
	struct ls_loop loop = LS_LOOP_INIT;
	struct loopring *lr = NULL;
	struct lat_error err = { "" };

	h.pid = (int32_t)dead_pid();
	make_object(name, &h, sizeof(h), 8192);
	assert_int_equal(loopring_open(name, &lr, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "has layout version 99; this latscope reads version 2"));

	/* its own version but not its layout: refused too */
	h.version = LS_LOOP_VERSION;
	make_object(name, &h, sizeof(h), 8192);
	assert_int_equal(loopring_open(name, &lr, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "does not have the layout"));

	/* its program is gone: the next open makes the loop anew */
	assert_int_equal(ls_loop_open(&loop, name, 0), 0);
	lr = reader(name);
	assert_int_equal(loopring_pid(lr), getpid());
	ls_loop_close(&loop);
	loopring_close(lr);
}

static void test_a_stale_loop_of_a_dead_process_is_made_anew_by_the_next_open(void **state)
{
	(void)state;
	const char *name = loop_name("stale");
	struct ls_loop loop = LS_LOOP_INIT;
	struct loopring_thread th;
	uint64_t out[8], lost = 0;

	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct ls_loop crashed = LS_LOOP_INIT;
		if (ls_loop_open(&crashed, name, 5000) != 0)
			_exit(2);
		for (uint64_t t = 0; t < 3; t++)
			ls_loop_wake_at(&crashed, 70 + t);
		_exit(0); /* as if it crashed: no ls_loop_close */
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	assert_true(exists(name));
	struct loopring *old = reader(name);
	assert_int_equal(loopring_pid(old), child);

	assert_int_equal(ls_loop_open(&loop, name, 1000), 0);
	struct loopring *lr = reader(name);
	assert_int_equal(loopring_pid(lr), getpid());
	assert_int_equal(loopring_nthreads(lr), 1);
	assert_int_equal(loopring_thread(lr, 0, &th), 0);
	assert_int_equal(th.tid, gettid_());
	assert_int_equal(th.period_ns, 1000);
	ls_loop_wake_at(&loop, 9);
	assert_int_equal(loopring_read(lr, 0, out, 8, &lost), 1);
	assert_int_equal(out[0], 9);

	/* a reader of the old one reads it on, undisturbed */
	assert_int_equal(loopring_thread(old, 0, &th), 0);
	assert_int_equal(th.tid, child);
	assert_int_equal(th.period_ns, 5000);
	assert_false(th.closed);
	assert_int_equal(loopring_read(old, 0, out, 8, &lost), 3);
	assert_int_equal(out[0], 70);
	assert_int_equal(out[2], 72);
	assert_int_equal(lost, 0);

	ls_loop_close(&loop);
	loopring_close(old);
	loopring_close(lr);
}

static void test_a_running_process_keeps_its_loop_name_busy(void **state)
{
	(void)state;
	const char *name = loop_name("busy");
	struct ls_loop loop = LS_LOOP_INIT;
	int go;

	pid_t child = start_child(name, 0, NULL, &go);
	assert_int_equal(ls_loop_open(&loop, name, 0), -EBUSY);
	assert_null(loop.slot);
	close(go);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(ls_loop_open(&loop, name, 0), 0);
	ls_loop_close(&loop);
}

static void test_the_last_close_removes_the_name_and_a_reader_reads_on(void **state)
{
	(void)state;
	const char *name = loop_name("last");
	struct ls_loop a = LS_LOOP_INIT, b = LS_LOOP_INIT;
	struct loopring_thread th;
	uint64_t out[4], lost = 0;
	struct stat st;
	char shm[LS_LOOP_SHM_NAME_SIZE];

	assert_int_equal(ls_loop_open(&a, name, 0), 0);
	assert_int_equal(ls_loop_open(&b, name, 0), 0); /* two slots of one thread */
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDONLY, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, sizeof(struct ls_loop_shm));

	struct loopring *lr = reader(name);
	assert_int_equal(loopring_nthreads(lr), 2);
	ls_loop_wake_at(&b, 3);
	ls_loop_close(&a);
	assert_true(exists(name));
	ls_loop_close(&b);
	assert_false(exists(name));
	assert_int_equal(loopring_thread(lr, 1, &th), 0);
	assert_true(th.closed);
	assert_int_equal(loopring_read(lr, 1, out, 4, &lost), 1);
	assert_int_equal(out[0], 3);
	loopring_close(lr);
}

static void test_a_loop_has_its_mode_and_sixty_four_slots(void **state)
{
	(void)state;
	const char *name = loop_name("slots");
	static struct ls_loop loops[LS_LOOP_SLOTS + 1];
	char shm[LS_LOOP_SHM_NAME_SIZE];
	struct stat st;
	mode_t old = umask(077); /* the mode asked for whatever the umask */

	assert_int_equal(ls_loop_open_mode(&loops[0], name, 0, 0640), 0);
	umask(old);
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDONLY, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_int_equal(st.st_mode & 0777, 0640);
	for (unsigned i = 1; i < LS_LOOP_SLOTS; i++)
		assert_int_equal(ls_loop_open(&loops[i], name, i), 0);
	assert_int_equal(ls_loop_open(&loops[LS_LOOP_SLOTS], name, 0), -ENOSPC);
	struct loopring *lr = reader(name);
	assert_int_equal(loopring_nthreads(lr), LS_LOOP_SLOTS);
	/* a closed slot is not given again */
	ls_loop_close(&loops[5]);
	assert_int_equal(ls_loop_open(&loops[LS_LOOP_SLOTS], name, 0), -ENOSPC);
	for (unsigned i = 0; i < LS_LOOP_SLOTS; i++)
		ls_loop_close(&loops[i]);
	loopring_close(lr);
}

/* As root: an object of another user is refused at the program's end, and a
 * reader who may not read it is told so. */
static void test_permissions_are_checked_at_both_ends(void **state)
{
	(void)state;
	const char *name = loop_name("perm");
	struct ls_loop loop = LS_LOOP_INIT;
	char shm[LS_LOOP_SHM_NAME_SIZE];

	if (geteuid() != 0)
		skip_because("this machine: the tests do not run as root");
	assert_int_equal(ls_loop_open(&loop, name, 0), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct loopring *lr = NULL;
		struct lat_error err = { "" };
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		int r = loopring_open(name, &lr, &err);
		_exit(r == -EACCES && strstr(err.msg, "Permission denied") ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	ls_loop_close(&loop);

	/* another user's object at the name: the program does not use it */
	make_object(name, "", 0, 0);
	assert_int_equal(ls_loop_shm_name(shm, name), 0);
	int fd = shm_open(shm, O_RDWR, 0);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	assert_int_equal(ls_loop_open(&loop, name, 0), -EPERM);
	assert_null(loop.slot);
}

/* Each test removes the names it made. */
#define TEST(f) cmocka_unit_test_teardown(f, remove_names)

int main(void)
{
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		TEST(test_wakes_written_in_this_process_are_read_back_in_order),
		TEST(test_overflow_is_counted_exactly_and_the_newest_wakes_are_kept),
		TEST(test_a_reader_in_another_process_reads_each_wake_or_counts_it_lost),
		TEST(test_several_threads_each_write_their_own_slot),
		TEST(test_a_loop_that_does_not_exist_is_enoent_and_says_what_to_check),
		TEST(test_a_bad_name_is_einval_at_both_ends),
		TEST(test_a_file_that_is_no_loop_is_eproto_and_left_alone),
		TEST(test_another_layout_version_is_eproto_and_replaced_once_its_program_is_gone),
		TEST(test_a_stale_loop_of_a_dead_process_is_made_anew_by_the_next_open),
		TEST(test_a_running_process_keeps_its_loop_name_busy),
		TEST(test_the_last_close_removes_the_name_and_a_reader_reads_on),
		TEST(test_a_loop_has_its_mode_and_sixty_four_slots),
		TEST(test_permissions_are_checked_at_both_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
