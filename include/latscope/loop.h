/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * latscope/loop.h: say where your program's cycle starts, and let latscope
 * measure it from outside (`latscope attach --loop NAME`).  Header only, for C
 * (C99 and later) and C++, Linux, GCC or Clang.  doc/loop.md is the overview.
 *
 *	#include <latscope/loop.h>
 *
 *	struct ls_loop loop = LS_LOOP_INIT;
 *	ls_loop_open(&loop, "control", 1000000);   // in the thread that runs the cycle
 *	for (;;) {
 *		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
 *		uint64_t now = ls_loop_wake(&loop);   // the top of the cycle
 *		...
 *	}
 *	ls_loop_close(&loop);
 *
 *	cc $(pkg-config --cflags latscope-loop) prog.c      (glibc before 2.34: also -lrt)
 *
 * THE CALLS
 *
 * int ls_loop_open(struct ls_loop *loop, const char *name, uint64_t period_ns)
 *	Joins the loop NAME ([A-Za-z0-9_.-], 1 to 64 characters) of this process,
 *	creating it if it is not there, and claims a slot of it for the calling
 *	thread: its tid, the CPU it runs on now and period_ns, the period it
 *	means to wake at (0: none declared).  Each thread that runs a cycle
 *	opens its own struct ls_loop, with the same name or another.  Not for
 *	the cycle itself: it opens a file, may wait for another thread's open or
 *	close of the same name, and faults in the slot's pages so that the
 *	cycle does not.  0, or a negative errno, and never prints:
 *	  -EINVAL  a bad name, or loop is NULL
 *	  -EBUSY   another running process has a loop of that name
 *	  -EEXIST  /dev/shm/latscope-loop.NAME is there and is no loop: left alone
 *	  -EPERM   /dev/shm/latscope-loop.NAME belongs to another user
 *	  -EPROTO  this process already opened NAME with another layout version
 *	  -ENOSPC  the loop has had LS_LOOP_SLOTS opens (slots are not reused)
 *	  -EAGAIN  the name kept changing under it (other processes racing)
 *	  or what shm_open, ftruncate, mmap or flock said.
 *	On failure the loop is left closed: ls_loop_wake on it only reads the
 *	clock and ls_loop_close does nothing, so a program may go on without it.
 *
 * int ls_loop_open_mode(struct ls_loop *loop, const char *name, uint64_t period_ns, mode_t mode)
 *	The same, with the permission bits of the object when this call creates
 *	it (ls_loop_open: 0600, the owner only; root reads it whatever the mode).
 *	0640 lets the owner's group read it: a reader need never write.
 *
 * uint64_t ls_loop_wake(struct ls_loop *loop)
 *	At the top of each cycle: reads CLOCK_MONOTONIC once (the vDSO: no
 *	system call), stores it in the thread's ring and publishes it by storing
 *	the ring's head (both release stores: plain stores on x86); returns the
 *	time read, in ns, for the program's own use.
 *	No system call, no lock, no allocation, never waits: a reader that
 *	falls behind loses the oldest wakes (it counts them), never the program's
 *	time.  On a closed loop it only reads the clock.
 *
 * uint64_t ls_loop_wake_due(struct ls_loop *loop, uint64_t due_ns)
 *	The same, for a loop that knows when this cycle was due (the time its
 *	clock_nanosleep with TIMER_ABSTIME was to end, CLOCK_MONOTONIC ns):
 *	latscope measures the cycle's lateness from it exactly, instead of from
 *	a grid it estimates from the wakes.
 *
 * uint64_t ls_loop_wake_at(struct ls_loop *loop, uint64_t now_ns)
 *	The same as ls_loop_wake with a time the program has read itself
 *	(CLOCK_MONOTONIC, ns).
 *
 * void ls_loop_close(struct ls_loop *loop)
 *	Releases the thread's slot: marks it closed and unmaps it.  What it
 *	wrote stays for a reader that has the loop open.  When no slot of the
 *	loop is open any more, the name is removed (a reader that has it open
 *	reads on).  Closing a closed loop does nothing.
 *
 * A loop belongs to the process that made it: a child of fork must not call
 * ls_loop_wake on its parent's loops (it may open loops of its own, under
 * other names).
 *
 * THE LAYOUT: the contract between the program and its reader
 *
 * One shared-memory object per name, /dev/shm/latscope-loop.NAME (shm_open
 * name "/latscope-loop.NAME"), of sizeof(struct ls_loop_shm) bytes, made
 * with mode 0600 unless ls_loop_open_mode said otherwise:
 *
 *	offset	size	field
 *	0	8	magic		LS_LOOP_MAGIC ("latloop" and a NUL, little-endian), stored last
 *	8	4	version		LS_LOOP_VERSION; a change of anything below changes it
 *	12	4	pid		the producer process
 *	16	8	pid_start	its start time, field 22 of /proc/PID/stat (0: unknown)
 *	24	4	nslots		LS_LOOP_SLOTS
 *	28	4	ring_size	LS_LOOP_RING_SIZE, a power of two
 *	32	4	slot_bytes	sizeof(struct ls_loop_slot)
 *	36	4	nused		slots claimed so far: a reader looks at [0, nused)
 *	40	8	created_ns	CLOCK_MONOTONIC when the object was made
 *	48	16	reserved
 *	64	...	slot[nslots], slot_bytes each:
 *	  +0	4	tid		0: free; claimed by a compare-and-swap from 0
 *	  +4	4	state		LS_LOOP_FREE, LS_LOOP_OPEN, LS_LOOP_CLOSED (release store)
 *	  +8	4	cpu		the CPU the thread ran on when it opened (-1: unknown)
 *	  +16	8	period_ns	the period declared (0: none)
 *	  +64	8	head		wakes written so far (release store), alone in its cache line
 *	  +128	8 * ring_size	ring	wake k (from 0) at ring[k % ring_size], CLOCK_MONOTONIC ns
 *	  +128 + 8 * ring_size	8 * ring_size	due	when wake k was due, at due[k % ring_size] (0: not said)
 *
 * Magic, version and pid keep their offsets in every version.  The fields of
 * the header and of a slot's first line are written before magic and state
 * are stored (release): a reader that sees them loads the rest after them.
 *
 * The ring of each slot has one producer (its thread) and one reader.  The
 * producer stores wake k into ring[k % ring_size] and due[k % ring_size]
 * (release) and then head = k + 1 (release).  The reader keeps its own tail: it loads head (acquire),
 * copies ring[tail % ring_size] .. ring[(head - 1) % ring_size] (each an
 * acquire load), then loads head again as head2, and keeps only the wakes
 * k > head2 - ring_size: any older one may have been overwritten while it
 * copied.  So a reader holds back at most ring_size - 1 wakes; those it could
 * not read are lost and counted (head - tail - what it read): every wake is
 * either read or counted, and the producer never waits for the reader.
 *
 * Objects left by a program that died (no ls_loop_close) are removed by the
 * next ls_loop_open of their name once their pid is gone (or is another
 * process's now: pid_start differs); a reader of the old object keeps it.
 * Opens and closes of one name take an exclusive flock on the object, which
 * the kernel drops when a process dies.
 */
#ifndef LATSCOPE_LOOP_H
#define LATSCOPE_LOOP_H

#if !defined(__GNUC__)
#error "latscope/loop.h needs GCC or Clang (their __atomic builtins)"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* syscall (for gettid and getcpu) and flock are BSD and Linux interfaces: gcc's and
 * clang's default -std=gnu*, and g++, have them; with -std=c99 or c11, define
 * _DEFAULT_SOURCE (or _GNU_SOURCE) before the first #include. */
#if defined(__GLIBC__) && !defined(__USE_MISC)
#error "latscope/loop.h: define _DEFAULT_SOURCE (or _GNU_SOURCE) before the first #include, or use -std=gnu11"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LS_LOOP_MAGIC	  UINT64_C(0x00706f6f6c74616c) /* "latloop\0" read as a little-endian uint64 */
#define LS_LOOP_VERSION	  2u
#define LS_LOOP_SLOTS	  64u
#define LS_LOOP_RING_SIZE 4096u
#define LS_LOOP_NAME_MAX  64u
#define LS_LOOP_PREFIX	  "/latscope-loop."
/* shm_open's name of a loop, with its NUL: "/latscope-loop." and up to 64 characters */
#define LS_LOOP_SHM_NAME_SIZE (sizeof(LS_LOOP_PREFIX) + LS_LOOP_NAME_MAX)

/* a slot's state */
#define LS_LOOP_FREE   0u
#define LS_LOOP_OPEN   1u
#define LS_LOOP_CLOSED 2u

struct ls_loop_header {
	uint64_t magic;
	uint32_t version;
	int32_t pid;
	uint64_t pid_start;
	uint32_t nslots;
	uint32_t ring_size;
	uint32_t slot_bytes;
	uint32_t nused;
	uint64_t created_ns;
	uint64_t reserved[2];
};

struct ls_loop_slot {
	int32_t tid;
	uint32_t state;
	int32_t cpu;
	uint32_t reserved0;
	uint64_t period_ns;
	uint64_t reserved1[5];
	uint64_t head;
	uint64_t reserved2[7];
	uint64_t ring[LS_LOOP_RING_SIZE];
	uint64_t due[LS_LOOP_RING_SIZE];
};

struct ls_loop_shm {
	struct ls_loop_header hdr;
	struct ls_loop_slot slot[LS_LOOP_SLOTS];
};

/* The offsets above, checked where the header is compiled. */
typedef char ls_loop_header_is_64_bytes[sizeof(struct ls_loop_header) == 64 ? 1 : -1];
typedef char ls_loop_head_at_64[offsetof(struct ls_loop_slot, head) == 64 ? 1 : -1];
typedef char ls_loop_ring_at_128[offsetof(struct ls_loop_slot, ring) == 128 ? 1 : -1];
typedef char ls_loop_ring_size_pow2[(LS_LOOP_RING_SIZE & (LS_LOOP_RING_SIZE - 1)) == 0 ? 1 : -1];

/* A thread's handle on its slot; private to the thread.  LS_LOOP_INIT is a closed loop. */
struct ls_loop {
	struct ls_loop_shm *shm;
	struct ls_loop_slot *slot; /* NULL: closed */
	uint64_t head;
	dev_t dev;
	ino_t ino;
	char shm_name[LS_LOOP_SHM_NAME_SIZE];
};

/* clang-format off */
#define LS_LOOP_INIT { NULL, NULL, 0, 0, 0, "" }
/* clang-format on */

/* shm_open's name for the loop NAME into buf: 0, or -EINVAL for a bad name. */
static inline int ls_loop_shm_name(char buf[LS_LOOP_SHM_NAME_SIZE], const char *name)
{
	size_t n = 0;

	if (!name)
		return -EINVAL;
	for (; name[n] != '\0'; n++) {
		char c = name[n];
		if (n >= LS_LOOP_NAME_MAX)
			return -EINVAL;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return -EINVAL;
	}
	if (n == 0)
		return -EINVAL;
	memcpy(buf, LS_LOOP_PREFIX, sizeof(LS_LOOP_PREFIX) - 1);
	memcpy(buf + sizeof(LS_LOOP_PREFIX) - 1, name, n + 1);
	return 0;
}

static inline uint64_t ls_loop_priv_put(struct ls_loop *loop, uint64_t now_ns, uint64_t due_ns)
{
	struct ls_loop_slot *slot = loop->slot;

	if (slot) {
		uint64_t h = loop->head;
		__atomic_store_n(&slot->ring[h & (LS_LOOP_RING_SIZE - 1)], now_ns,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&slot->due[h & (LS_LOOP_RING_SIZE - 1)], due_ns,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&slot->head, h + 1, __ATOMIC_RELEASE);
		loop->head = h + 1;
	}
	return now_ns;
}

static inline uint64_t ls_loop_wake_at(struct ls_loop *loop, uint64_t now_ns)
{
	return ls_loop_priv_put(loop, now_ns, 0);
}

static inline uint64_t ls_loop_priv_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ls_loop_wake(struct ls_loop *loop)
{
	return ls_loop_priv_put(loop, ls_loop_priv_mono(), 0);
}

static inline uint64_t ls_loop_wake_due(struct ls_loop *loop, uint64_t due_ns)
{
	return ls_loop_priv_put(loop, ls_loop_priv_mono(), due_ns);
}

/* What follows is ls_loop_open's and ls_loop_close's; not an interface. */

/* Field 22 (start time) of /proc/PID/stat, and whether PID is a zombie: 0 or -errno. */
static inline int ls_loop_priv_stat(pid_t pid, uint64_t *ret_start, int *ret_dead)
{
	char path[40], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command may hold anything but not past its ')' */
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	*ret_dead = *p == 'Z' || *p == 'X' || *p == 'x';
	for (field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EIO;
		p++;
	}
	*ret_start = strtoull(p, NULL, 10);
	return 0;
}

/* Whether the process pid, which started at start (0: unknown), still runs. */
static inline int ls_loop_priv_alive(pid_t pid, uint64_t start)
{
	uint64_t now_start = 0;
	int dead = 0;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	if (ls_loop_priv_stat(pid, &now_start, &dead) < 0)
		return 1; /* no /proc: kill said it is there */
	return !dead && (start == 0 || now_start == start);
}

static inline uint64_t ls_loop_priv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* The object NAME, opened and locked, that the name still leads to: 0 with *ret_fd, or -errno. */
static inline int ls_loop_priv_lock(const char *shm_name, int create, mode_t mode, int *ret_fd)
{
	struct stat st, now;
	int fd, r, tries;

	for (tries = 0; tries < 8; tries++) {
		fd = shm_open(shm_name, create ? O_RDWR | O_CREAT : O_RDWR, mode);
		if (fd < 0)
			return -errno;
		do
			r = flock(fd, LOCK_EX);
		while (r < 0 && errno == EINTR);
		if (r < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		/* The lock is the file's: another process may have removed the name meanwhile. */
		if (fstat(fd, &st) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		{
			int again = shm_open(shm_name, O_RDONLY, 0);
			r = again < 0 ? -errno : fstat(again, &now) < 0 ? -errno : 0;
			if (again >= 0)
				close(again);
		}
		if (r == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
			*ret_fd = fd;
			return 0;
		}
		close(fd);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return -EAGAIN;
}

/* Unlocked explicitly: the mapping holds the file open past close, and the lock with it. */
static inline void ls_loop_priv_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

static inline void ls_loop_priv_reset(struct ls_loop *loop)
{
	loop->shm = NULL;
	loop->slot = NULL;
	loop->head = 0;
}

/* Under the lock: the object fd made, joined or found stale (1: removed, open again). */
static inline int ls_loop_priv_take(struct ls_loop *loop, int fd, uint64_t period_ns)
{
	struct ls_loop_header h;
	struct ls_loop_shm *shm;
	struct stat st;
	uint64_t self_start = 0;
	pid_t self = getpid();
	int dead = 0, fresh, r;
	unsigned i, cpu = 0;
	void *map;
	pid_t tid;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid())
		return -EPERM;
	memset(&h, 0, sizeof(h));
	if (st.st_size > 0 && pread(fd, &h, sizeof(h), 0) < 0)
		return -errno;
	(void)ls_loop_priv_stat(self, &self_start, &dead);
	/* magic 0: never finished (made just now, or by a process that died making it) */
	fresh = st.st_size == 0 || h.magic == 0;
	if (!fresh) {
		if (st.st_size < (off_t)sizeof(h) || h.magic != LS_LOOP_MAGIC)
			return -EEXIST;
		if (h.pid != self || h.pid_start != self_start) {
			if (ls_loop_priv_alive(h.pid, h.pid_start))
				return -EBUSY;
			return 1; /* stale: its producer is gone */
		}
		if (h.version != LS_LOOP_VERSION ||
		    st.st_size != (off_t)sizeof(struct ls_loop_shm) || h.nslots != LS_LOOP_SLOTS ||
		    h.ring_size != LS_LOOP_RING_SIZE)
			return -EPROTO;
	} else if (ftruncate(fd, (off_t)sizeof(struct ls_loop_shm)) < 0) {
		return -errno;
	}
	map = mmap(NULL, sizeof(struct ls_loop_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	shm = (struct ls_loop_shm *)map;
	if (fresh) {
		/* Nobody reads it yet (magic is 0); a half-made one left by a crash is cleared. */
		if (st.st_size != 0) {
			memset(&shm->hdr, 0, sizeof(shm->hdr));
			for (i = 0; i < LS_LOOP_SLOTS; i++)
				memset(&shm->slot[i], 0, offsetof(struct ls_loop_slot, ring));
		}
		shm->hdr.version = LS_LOOP_VERSION;
		shm->hdr.pid = (int32_t)self;
		shm->hdr.pid_start = self_start;
		shm->hdr.nslots = LS_LOOP_SLOTS;
		shm->hdr.ring_size = LS_LOOP_RING_SIZE;
		shm->hdr.slot_bytes = (uint32_t)sizeof(struct ls_loop_slot);
		shm->hdr.created_ns = ls_loop_priv_now();
		__atomic_store_n(&shm->hdr.magic, LS_LOOP_MAGIC, __ATOMIC_RELEASE);
	}
	tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < LS_LOOP_SLOTS; i++) {
		int32_t expected = 0;
		struct ls_loop_slot *s = &shm->slot[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != LS_LOOP_FREE)
			continue;
		if (__atomic_compare_exchange_n(&s->tid, &expected, (int32_t)tid, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	if (i == LS_LOOP_SLOTS) {
		munmap(map, sizeof(struct ls_loop_shm));
		return -ENOSPC;
	}
	{
		struct ls_loop_slot *s = &shm->slot[i];
		uint32_t used = __atomic_load_n(&shm->hdr.nused, __ATOMIC_RELAXED);
		size_t k;

		r = (int)syscall(SYS_getcpu, &cpu, NULL, NULL);
		s->cpu = r < 0 ? -1 : (int32_t)cpu;
		s->period_ns = period_ns;
		__atomic_store_n(&s->head, 0, __ATOMIC_RELAXED);
		/* Fault the ring's pages in now, not in the cycle. */
		for (k = 0; k < LS_LOOP_RING_SIZE; k += 512)
			__atomic_store_n(&s->ring[k], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ring[LS_LOOP_RING_SIZE - 1], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, LS_LOOP_OPEN, __ATOMIC_RELEASE);
		if (used < i + 1)
			__atomic_store_n(&shm->hdr.nused, i + 1, __ATOMIC_RELEASE);
		loop->shm = shm;
		loop->slot = s;
		loop->head = 0;
		loop->dev = st.st_dev;
		loop->ino = st.st_ino;
	}
	return 0;
}

static inline int ls_loop_open_mode(struct ls_loop *loop, const char *name, uint64_t period_ns,
				    mode_t mode)
{
	int r, fd, tries;

	if (!loop)
		return -EINVAL;
	ls_loop_priv_reset(loop);
	r = ls_loop_shm_name(loop->shm_name, name);
	if (r < 0)
		return r;
	for (tries = 0; tries < 8; tries++) {
		struct stat st;
		r = ls_loop_priv_lock(loop->shm_name, 1, mode & 0777, &fd);
		if (r < 0)
			return r;
		/* made just now (empty): the mode asked for, whatever the umask */
		if (fstat(fd, &st) == 0 && st.st_size == 0 && st.st_uid == geteuid())
			(void)fchmod(fd, mode & 0777);
		r = ls_loop_priv_take(loop, fd, period_ns);
		if (r == 1)
			shm_unlink(loop->shm_name);
		ls_loop_priv_unlock(fd);
		if (r != 1)
			return r;
	}
	return -EAGAIN;
}

static inline int ls_loop_open(struct ls_loop *loop, const char *name, uint64_t period_ns)
{
	return ls_loop_open_mode(loop, name, period_ns, 0600);
}

static inline void ls_loop_close(struct ls_loop *loop)
{
	struct ls_loop_shm *shm;
	struct stat st;
	unsigned i, nopen = 0;
	int fd = -1, locked;

	if (!loop || !loop->slot)
		return;
	shm = loop->shm;
	locked = ls_loop_priv_lock(loop->shm_name, 0, 0, &fd) == 0;
	__atomic_store_n(&loop->slot->state, LS_LOOP_CLOSED, __ATOMIC_RELEASE);
	if (locked) {
		for (i = 0; i < LS_LOOP_SLOTS; i++)
			if (__atomic_load_n(&shm->slot[i].state, __ATOMIC_ACQUIRE) == LS_LOOP_OPEN)
				nopen++;
		/* The last one out removes the name, if the name still leads to this loop. */
		if (nopen == 0 && fstat(fd, &st) == 0 && st.st_dev == loop->dev &&
		    st.st_ino == loop->ino)
			shm_unlink(loop->shm_name);
		ls_loop_priv_unlock(fd);
	}
	munmap(shm, sizeof(struct ls_loop_shm));
	ls_loop_priv_reset(loop);
}

#ifdef __cplusplus
}
#endif

#endif
