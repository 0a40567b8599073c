/*
 * The attach probe's uprobes (bpf/uprobe.bpf.c): a function's entry and
 * return in one running process, its calls handed to one ring per reader.
 * Found first (which threads call it, and the times of their first calls),
 * then routed (each thread to a reader) and started.
 */
#ifndef LATSCOPE_PROBE_UPROBE_H
#define LATSCOPE_PROBE_UPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

struct uprobe;
struct ring_buffer;

/* One call as the reader gets it. */
struct uprobe_call {
	pid_t tid;
	unsigned cpu;
	uint64_t entry_ns;
	uint64_t ret_ns;  /* 0: the return was not seen */
	uint64_t due_ns;  /* when the thread's sleep before it was to end; 0: unknown */
	uint64_t woke_ns; /* when that sleep returned; 0: unknown */
};

/* A thread that called the function before the run. */
struct uprobe_seen {
	pid_t tid;
	unsigned cpu; /* where its last call ran */
	uint64_t calls;
	size_t nfirst;
	uint64_t first[32];	/* its first calls' entries, oldest first */
	uint64_t first_due[32]; /* when each was due (0: unknown) */
};

struct uprobe_counts {
	uint64_t unrouted, lost, unreturned;
};

/*
 * The function func of process pid (its executable, else a library it has
 * mapped), probed.  0, or -errno with err naming what failed: -ENOENT no such
 * function (or process), -EPERM not permitted, -ENOTSUP no BPF in this build.
 */
int uprobe_open(pid_t pid, const char *func, struct uprobe **ret, struct lat_error *err);
/* Where the function was found ("/usr/bin/x"), for the result's notes. */
const char *uprobe_where(const struct uprobe *u);
/* The threads seen so far, up to cap of them.  The count, or -errno. */
int uprobe_seen(struct uprobe *u, struct uprobe_seen *out, size_t cap);
/* Thread tid's calls go to reader worker (< nworkers of uprobe_start). */
int uprobe_route(struct uprobe *u, pid_t tid, unsigned worker);
/* Rings for nworkers readers, and calls handed to them from now on.  0 or -errno. */
int uprobe_start(struct uprobe *u, unsigned nworkers, struct lat_error *err);
/* Reader worker's ring: fn(ctx, record, size) for each call it takes (struct uprobe_call
 * through uprobe_decode).  Open it on the reading thread; NULL on failure. */
struct ring_buffer *uprobe_reader(struct uprobe *u, unsigned worker,
				  int (*fn)(void *, void *, size_t), void *ctx);
/* A ring record as a call. */
void uprobe_decode(const void *record, struct uprobe_call *c);
/* The reader's calls so far, without a system call or an allocation: the number taken, or -errno. */
int uprobe_consume(struct ring_buffer *rb);
void uprobe_reader_free(struct ring_buffer *rb);
/* What the program counted: calls of threads not routed, calls a full ring lost, returns not seen. */
void uprobe_counts(const struct uprobe *u, struct uprobe_counts *ret);
void uprobe_close(struct uprobe *u);

#endif
