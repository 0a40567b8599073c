#include "probe/loopring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <latscope/loop.h>

#include "core/termtext.h"

/* The wakes a reader may hold back: the producer may be writing the next one over the oldest. */
#define DEPTH (LS_LOOP_RING_SIZE - 1u)
#define MASK  (LS_LOOP_RING_SIZE - 1u)

struct loopring {
	const struct ls_loop_shm *shm;
	pid_t pid;
	uint64_t tail[LS_LOOP_SLOTS];
};

/* The header as a reader takes it: 0, or why not (-EAGAIN, -EPROTO) in err. */
static int check_header(const struct ls_loop_header *h, off_t size, const char *name,
			const char *path, struct lat_error *err)
{
	if (size == 0 || (size >= (off_t)sizeof(h->magic) && h->magic == 0))
		return err_set(err, -EAGAIN,
			       "loop %s is not made yet: its program is starting; try again", name);
	if (size < (off_t)sizeof(*h) || h->magic != LS_LOOP_MAGIC)
		return err_set(err, -EPROTO, "'/dev/shm%s' is not a latscope loop", path);
	if (h->version != LS_LOOP_VERSION)
		return err_set(err, -EPROTO,
			       "loop %s has layout version %u; this latscope reads version %u: "
			       "build the program and latscope with the same latscope/loop.h",
			       name, h->version, LS_LOOP_VERSION);
	if (h->nslots != LS_LOOP_SLOTS || h->ring_size != LS_LOOP_RING_SIZE ||
	    h->slot_bytes != sizeof(struct ls_loop_slot) ||
	    size < (off_t)sizeof(struct ls_loop_shm))
		return err_set(
			err, -EPROTO,
			"loop %s does not have the layout of its version %u (%u slots of %u wakes, "
			"%lld bytes)",
			name, h->version, h->nslots, h->ring_size, (long long)size);
	return 0;
}

int loopring_open(const char *name, struct loopring **ret, struct lat_error *err)
{
	char path[LS_LOOP_SHM_NAME_SIZE];
	struct ls_loop_header h;
	struct loopring *lr;
	struct stat st;
	void *map;
	int fd, r;

	if (ls_loop_shm_name(path, name) < 0) {
		char shown[96];
		term_escape(name ? name : "", shown, sizeof(shown));
		return err_set(err, -EINVAL,
			       "bad loop name '%s': a loop's name is 1 to %u of A-Z, a-z, 0-9, "
			       "'_', '.' and '-'",
			       shown, LS_LOOP_NAME_MAX);
	}
	fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return err_set(err, r,
				       "no loop named %s: no /dev/shm%s; is the program running, "
				       "and did it call ls_loop_open?",
				       name, path);
		return err_set(err, r, "cannot read loop %s: '/dev/shm%s': %s", name, path,
			       strerror(-r));
	}
	memset(&h, 0, sizeof(h));
	if (fstat(fd, &st) < 0 || pread(fd, &h, sizeof(h), 0) < 0) {
		r = -errno;
		close(fd);
		return err_set(err, r, "cannot read loop %s: '/dev/shm%s': %s", name, path,
			       strerror(-r));
	}
	r = check_header(&h, st.st_size, name, path, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	map = mmap(NULL, sizeof(struct ls_loop_shm), PROT_READ, MAP_SHARED, fd, 0);
	r = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (r < 0)
		return err_set(err, r, "cannot map loop %s: '/dev/shm%s': %s", name, path,
			       strerror(-r));
	lr = calloc(1, sizeof(*lr));
	if (!lr) {
		munmap(map, sizeof(struct ls_loop_shm));
		return err_set(err, -ENOMEM, "loop %s: out of memory", name);
	}
	lr->shm = map;
	/* Acquire: what the producer wrote before it stored magic is seen from here on. */
	(void)__atomic_load_n(&lr->shm->hdr.magic, __ATOMIC_ACQUIRE);
	lr->pid = (pid_t)lr->shm->hdr.pid;
	*ret = lr;
	return 0;
}

pid_t loopring_pid(const struct loopring *lr)
{
	return lr->pid;
}

size_t loopring_nthreads(const struct loopring *lr)
{
	uint32_t n = __atomic_load_n(&lr->shm->hdr.nused, __ATOMIC_ACQUIRE);
	return n < LS_LOOP_SLOTS ? n : LS_LOOP_SLOTS;
}

int loopring_thread(const struct loopring *lr, size_t i, struct loopring_thread *ret)
{
	if (i >= loopring_nthreads(lr))
		return -ENOENT;
	const struct ls_loop_slot *s = &lr->shm->slot[i];
	uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (state != LS_LOOP_OPEN && state != LS_LOOP_CLOSED)
		return -ENOENT;
	ret->tid = (pid_t)__atomic_load_n(&s->tid, __ATOMIC_RELAXED);
	ret->cpu = s->cpu;
	ret->period_ns = s->period_ns;
	ret->closed = state == LS_LOOP_CLOSED;
	return 0;
}

void loopring_skip_to_now(struct loopring *lr, size_t i)
{
	if (i < LS_LOOP_SLOTS)
		lr->tail[i] = __atomic_load_n(&lr->shm->slot[i].head, __ATOMIC_ACQUIRE);
}

/*
 * Copy, then check: the producer never waits, so it may write over the oldest
 * wakes while they are copied.  Wake k sits in ring[k & MASK] until the
 * producer writes wake k + LS_LOOP_RING_SIZE there, and it stores head = k +
 * LS_LOOP_RING_SIZE (release) before it does.  Each copy is an acquire load:
 * a copy that saw the newer wake makes the head load after it see that head.
 * So of the wakes copied, those below (head after the copy) - DEPTH may be
 * newer ones and are dropped (lost); the rest are the wakes asked for.
 */
size_t loopring_read(struct loopring *lr, size_t i, uint64_t *out, size_t n, uint64_t *lost)
{
	return loopring_read_due(lr, i, out, NULL, n, lost);
}

size_t loopring_read_due(struct loopring *lr, size_t i, uint64_t *out, uint64_t *due, size_t n, uint64_t *lost)
{
	uint64_t dropped = 0;
	size_t got = 0;

	if (i >= LS_LOOP_SLOTS || n == 0)
		return 0;
	const struct ls_loop_slot *s = &lr->shm->slot[i];
	uint64_t tail = lr->tail[i];
	/* Again only when the producer went round the whole ring during a copy. */
	for (int tries = 0; tries < 4 && got == 0; tries++) {
		uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
		if (head < tail) { /* not a head this reader has seen grow: start from it */
			tail = head;
			break;
		}
		if (head - tail > DEPTH) {
			dropped += head - tail - DEPTH;
			tail = head - DEPTH;
		}
		size_t take = head - tail < n ? (size_t)(head - tail) : n;
		if (take == 0)
			break;
		for (size_t k = 0; k < take; k++) {
			out[k] = __atomic_load_n(&s->ring[(tail + k) & MASK], __ATOMIC_ACQUIRE);
			if (due)
				due[k] = __atomic_load_n(&s->due[(tail + k) & MASK], __ATOMIC_ACQUIRE);
		}
		uint64_t head2 = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
		uint64_t first = head2 > DEPTH ? head2 - DEPTH : 0; /* the oldest wake still sure */
		size_t bad =
			first > tail ? (first - tail < take ? (size_t)(first - tail) : take) : 0;
		if (bad > 0 && bad < take) {
			memmove(out, out + bad, (take - bad) * sizeof(*out));
			if (due)
				memmove(due, due + bad, (take - bad) * sizeof(*due));
		}
		dropped += bad;
		got = take - bad;
		tail += take;
	}
	lr->tail[i] = tail;
	if (lost)
		*lost += dropped;
	return got;
}

void loopring_close(struct loopring *lr)
{
	if (!lr)
		return;
	munmap((void *)lr->shm, sizeof(struct ls_loop_shm));
	free(lr);
}
