/*
 * The BPF backend of --trace: loads trace/bpf/collect.bpf.c, tells it which
 * thread measures on which CPU, and gathers its records while the run goes
 * on (a thread of its own empties the ring buffer every READ_EVERY_MS; the
 * program never wakes it, so the measured path pays for no wakeup).
 *
 * What it keeps per CPU: every sample record (up to samples_cap; the rest
 * counted), and the event lists of the BPFCOL_DETAILS_KEPT largest samples
 * above detail_ns: more than the spikes a result explains (tracerun.c).
 */
#ifndef LATSCOPE_TRACE_BPFCOL_H
#define LATSCOPE_TRACE_BPFCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "trace/bpf/collect.h"
#include "trace/evbuf.h"

#define BPFCOL_DETAILS_KEPT 32

struct bpfcol_opts {
	const unsigned *cpu;            /* n measuring threads: cpu[i] runs tid[i] */
	const pid_t *tid;
	size_t n;
	uint64_t detail_ns;             /* samples later than this (deadline to switch) bring their events */
	size_t samples_cap;             /* sample records kept per CPU */
	uint64_t samples_per_sec;       /* per thread (stream: events a second per CPU): sizes the ring */
	bool stream;                    /* every event of the measured CPUs (the noise probe), into events */
};

struct bpfcol_detail {
	uint64_t late_ns;               /* deadline to switch in */
	struct ls_bpf_detail d;
};

struct bpfcol_cpu {
	struct ls_bpf_sample *s;        /* in the order of their deadlines */
	size_t n, cap;
	uint64_t not_kept;              /* past samples_cap */
	struct bpfcol_detail *d;        /* the largest samples' events; any order */
	size_t nd;
	uint64_t records, lost;         /* the program's counts: handed over, ring full */
	uint64_t details_dropped;       /* late samples whose events were not sent: the ring was half full */
	uint32_t next_seq;              /* stream: the batch expected next */
	char last_next[LS_BPF_COMM];    /* stream: the last switch's next, the next switch's prev */
};

struct bpf_collector;

/* Load, attach and start reading.  -ENOTSUP when built without BPF; any other
 * failure (no BTF, no privilege, an old kernel) says why, so --trace can say
 * why it used tracefs instead. */
int bpfcol_start(const struct bpfcol_opts *o, struct bpf_collector **ret, struct lat_error *why);
/* Detach, read what is left and the program's counts.  Idempotent. */
void bpfcol_stop(struct bpf_collector *c);
/* After bpfcol_stop: the records of cpu (NULL: none measured there). */
const struct bpfcol_cpu *bpfcol_cpu(const struct bpf_collector *c, unsigned cpu);
#define BPFCOL_PROGS 16

/* How many times one of the collector's programs ran and for how long. */
struct bpfcol_prog_cost {
	char name[32];                  /* on_sched_switch, ...: the tracepoint it is attached to */
	uint64_t runs, run_ns;
};

/* After bpfcol_stop: each program's runs and time, as the kernel counts them
 * while kernel.bpf_stats_enabled is 1 (all 0 otherwise): the collector's own
 * cost, measured.  The number of programs, at most BPFCOL_PROGS. */
size_t bpfcol_cost(const struct bpf_collector *c, const struct bpfcol_prog_cost **ret);
/* After bpfcol_stop, in stream mode: every event of the measured CPUs, in
 * time order per CPU, with a TRACE_EV_LOST marker where a batch was lost;
 * NULL otherwise. */
const struct trace_events *bpfcol_events(const struct bpf_collector *c);
/* One of the collector's events as trace/ev.h has it, on cpu; prev_comm is
 * the comm of the last switch's next (last_next, updated here). */
void bpfcol_event(const struct ls_bpf_ev *b, unsigned cpu, char last_next[LS_BPF_COMM], struct trace_ev *e);
/* The ring buffer's size, in KiB. */
unsigned bpfcol_ring_kb(const struct bpf_collector *c);
/* Stops when still running.  NULL is a no-op. */
void bpfcol_free(struct bpf_collector *c);

#endif
