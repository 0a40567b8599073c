/*
 * Each measuring thread reads PATH, opened read-only, block after block: a
 * pread at a time, or with io_uring several in flight.  The latency of a read
 * is from just before it was handed to the kernel to just after its
 * completion was seen.  What the reads cost the CPU comes from the context
 * the runner reads beside every window.
 */
#include "probe/io.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/nstime.h"
#include "sys/sysfacts.h"

#define HUGE (2u << 20)             /* the read buffers start on a 2 MiB boundary */

struct io_state {
	int fd;
	unsigned char *buf;             /* depth blocks (struct io_params.buffer says from where) */
	size_t buf_len;                 /* bytes at buf: hugepage, mapped, a multiple of 2 MiB */
	bool mapped;                    /* buf is a mapping (hugepage), else posix_memalign's */
	uint64_t next;                  /* seq: the next offset */
	uint64_t rng;                   /* random: xorshift64 state */
	struct io_uring ring;
	bool have_ring;
	uint64_t *sent;                 /* io_uring: when each slot's read was handed over */
};

static uint64_t next_offset(struct io_state *s, const struct io_params *ip)
{
	switch ((enum io_pattern)ip->pattern) {
	case IO_SAME:
		return 0;
	case IO_SEQ: {
		uint64_t off = s->next;
		s->next = off + ip->bs + ip->bs <= ip->span ? off + ip->bs : 0;
		return off;
	}
	case IO_RANDOM:
		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		return s->rng % (ip->span / ip->bs) * ip->bs;
	}
	return 0;
}

static int fail(struct probe_thread *t, int r, const char *what)
{
	snprintf(t->err, sizeof(t->err), "%s '%s': %s", what, ((const struct io_params *)t->pp)->path, strerror(-r));
	return r;
}

static void io_teardown(struct probe_thread *t)
{
	struct io_state *s = t->priv;
	if (!s)
		return;
	if (s->have_ring)
		io_uring_queue_exit(&s->ring);
	if (s->fd >= 0)
		close(s->fd);
	if (s->buf && s->mapped)
		munmap(s->buf, s->buf_len);
	else
		free(s->buf);
	free(s->sent);
	free(s);
	t->priv = NULL;
}

/*
 * --buffer hugepage: the buffer the reads land in, from a 2 MiB-aligned
 * mapping with MADV_HUGEPAGE.  An O_DIRECT read is one device request with a segment per
 * physically contiguous run of its buffer; from ordinary pages a 64 KiB
 * buffer is up to 16 segments, wherever the allocator put them, and on some
 * machines that alone changes a read's time several times over from one
 * process to the next.  A huge page makes it one contiguous run, every run.
 */
static void *map_buffer(size_t len)
{
	size_t over = len + HUGE;
	unsigned char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	unsigned char *a = (unsigned char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + over)
		munmap(a + len, (size_t)(p + over - (a + len)));
#ifdef MADV_HUGEPAGE
	(void)madvise(a, len, MADV_HUGEPAGE);   /* refused where THP is off: ordinary pages then */
#endif
	return a;
}

/* Why the kernel gave a huge-page buffer none, as far as can be told. */
static const char *why_no_huge(char *mode, size_t size)
{
#ifdef PR_GET_THP_DISABLE
	if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1)
		return "transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)";
#endif
	if (sys_thp_mode(NULL, mode, size) < 0)
		return "this kernel offers no transparent huge pages";
	if (strcmp(mode, "never") == 0)
		return "transparent huge pages are 'never' in /sys/kernel/mm/transparent_hugepage/enabled";
	return "the kernel had no free huge page to give";
}

/* --buffer hugepage: say what the reads land in when it is not huge pages throughout. */
static void check_huge(struct probe_thread *t, const struct io_state *s)
{
	uint64_t huge = 0;
	char mode[32];

	if (sys_huge_bytes(NULL, (uintptr_t)s->buf, s->buf_len, &huge) < 0)
		snprintf(t->note, sizeof(t->note), "--buffer hugepage: whether the read buffer got huge pages cannot be "
			 "read from /proc/self/smaps");
	else if (huge < s->buf_len)
		snprintf(t->note, sizeof(t->note), "--buffer hugepage: %llu of %llu KiB of the read buffer in huge pages, "
			 "the rest ordinary 4 KiB pages: %s", (unsigned long long)huge / 1024u,
			 (unsigned long long)s->buf_len / 1024u, why_no_huge(mode, sizeof(mode)));
}

/* The buffer the reads land in: what --buffer asks, pre-faulted. */
static int get_buffer(struct probe_thread *t, struct io_state *s, size_t len)
{
	const struct io_params *ip = t->pp;

	if (ip->buffer == IO_BUF_HUGEPAGE) {
		s->buf_len = (len + HUGE - 1) / HUGE * HUGE;
		s->mapped = true;
		if (!(s->buf = map_buffer(s->buf_len)))
			return -ENOMEM;
	} else {
		/* page-aligned, as O_DIRECT needs of memory, from where malloc puts it */
		long page = sysconf(_SC_PAGESIZE);
		void *p = NULL;
		s->buf_len = len;
		if (posix_memalign(&p, page > 0 ? (size_t)page : 4096u, len) != 0)
			return -ENOMEM;
		s->buf = p;
	}
	memset(s->buf, 0, s->buf_len);             /* pre-fault, in huge pages where granted */
	if (ip->buffer == IO_BUF_HUGEPAGE)
		check_huge(t, s);
	return 0;
}

static int io_setup(struct probe_thread *t)
{
	const struct io_params *ip = t->pp;
	struct io_state *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	t->priv = s;
	s->fd = -1;
	s->rng = UINT64_C(0x9e3779b97f4a7c15) ^ t->cpu;
	/* Several threads walk the file from different places. */
	s->next = (uint64_t)t->cpu * (ip->span / ip->bs / 64u + 1u) * ip->bs % ip->span;
	/* Read-only, always: latscope never writes to what it measures. */
	s->fd = open(ip->path, O_RDONLY | O_CLOEXEC | (ip->buffered ? 0 : O_DIRECT));
	if (s->fd < 0) {
		r = fail(t, -errno, "cannot open");
		goto fail;
	}
	uint64_t slots = ip->engine == IO_URING ? ip->depth : 1u;
	if ((r = get_buffer(t, s, (size_t)(slots * ip->bs))) < 0)
		goto fail;
	if (ip->engine == IO_URING) {
		s->sent = calloc(slots, sizeof(*s->sent));
		if (!s->sent) {
			r = -ENOMEM;
			goto fail;
		}
		if ((r = io_uring_queue_init((unsigned)ip->depth, &s->ring, 0)) < 0) {
			snprintf(t->err, sizeof(t->err), "io_uring_queue_init: %s", strerror(-r));
			goto fail;
		}
		s->have_ring = true;
	}
	return 0;
fail:
	io_teardown(t);
	return r;
}

static bool done(const struct probe_thread *t, uint64_t now, uint64_t n)
{
	return now >= t->end_ns || (t->rp->loops && n >= t->rp->loops) ||
	       atomic_load_explicit(t->stop, memory_order_relaxed);
}

static void record(struct recorder *rec, uint64_t t0, uint64_t t1)
{
	rec_sample(rec, &(struct rec_sample){ .now_ns = t1, .v = { t1 - t0 }, .nv = 1, .at_ns = t1 });
}

static void run_psync(struct probe_thread *t, struct io_state *s, const struct io_params *ip)
{
	uint64_t n = 0, now = mono_ns();

	while (!done(t, now, n)) {
		uint64_t off = next_offset(s, ip);
		uint64_t t0 = mono_ns();
		ssize_t got = pread(s->fd, s->buf, ip->bs, (off_t)off);
		now = mono_ns();
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)ip->bs) {
			t->run_rc = got < 0 ? -errno : -EIO;
			snprintf(t->err, sizeof(t->err), "read of %llu bytes at %llu: %s", (unsigned long long)ip->bs,
				 (unsigned long long)off, got < 0 ? strerror(errno) : "short read");
			return;
		}
		record(&t->rec, t0, now);
		n++;
	}
}

/* false only if the ring were full, which cannot be: it has depth entries and
 * at most depth reads are ever in flight. */
static bool submit_slot(struct io_state *s, const struct io_params *ip, unsigned slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
	if (!sqe)
		return false;
	io_uring_prep_read(sqe, s->fd, s->buf + (size_t)slot * ip->bs, (unsigned)ip->bs, next_offset(s, ip));
	io_uring_sqe_set_data64(sqe, slot);
	s->sent[slot] = mono_ns();
	return true;
}

static void run_uring(struct probe_thread *t, struct io_state *s, const struct io_params *ip)
{
	unsigned inflight = 0;
	uint64_t n = 0, now = mono_ns();
	struct io_uring_cqe *cqe;

	for (unsigned slot = 0; slot < ip->depth; slot++)
		inflight += submit_slot(s, ip, slot);
	io_uring_submit(&s->ring);
	while (inflight) {
		int r = io_uring_wait_cqe(&s->ring, &cqe);
		now = mono_ns();
		if (r == -EINTR)
			continue;
		if (r < 0) {
			t->run_rc = r;
			snprintf(t->err, sizeof(t->err), "io_uring_wait_cqe: %s", strerror(-r));
			break;
		}
		bool stopping = done(t, now, n), failed = false;
		unsigned prepared = 0;
		do {
			unsigned slot = (unsigned)io_uring_cqe_get_data64(cqe);
			int res = cqe->res;
			io_uring_cqe_seen(&s->ring, cqe);
			inflight--;
			if (res != (int)ip->bs) {
				t->run_rc = res < 0 ? res : -EIO;
				snprintf(t->err, sizeof(t->err), "read of %llu bytes: %s", (unsigned long long)ip->bs,
					 res < 0 ? strerror(-res) : "short read");
				failed = stopping = true;
			} else if (!stopping) {
				record(&t->rec, s->sent[slot], now);
				n++;
				if (!(stopping = done(t, now, n))) {
					bool ok = submit_slot(s, ip, slot);
					inflight += ok;
					prepared += ok;
				}
			}
		} while (io_uring_peek_cqe(&s->ring, &cqe) == 0);
		if (failed)
			break;
		/* Reads prepared before the stop came are in flight only once submitted. */
		if (prepared)
			io_uring_submit(&s->ring);
	}
	/* Reads still in flight after an error are reaped by io_uring_queue_exit. */
}

static void io_run(struct probe_thread *t)
{
	const struct io_params *ip = t->pp;
	struct io_state *s = t->priv;
	struct timespec ts = ns_to_ts(t->origin_ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			return;
	if (ip->engine == IO_URING)
		run_uring(t, s, ip);
	else
		run_psync(t, s, ip);
}

static const char *const io_metrics[] = { "latency" };

const struct probe_ops io_probe = {
	.name = "io",
	.title = "read latency and cost",
	.about = "reads: the latency of each, the throughput and what they cost the CPU",
	.nmetrics = 1,
	.metric_names = io_metrics,
	.unit_ns = 1000,
	.per_op_costs = true,
	.setup = io_setup,
	.run = io_run,
	.teardown = io_teardown,
};
