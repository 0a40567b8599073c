/*
 * What the attach probe's BPF program (uprobe.bpf.c) and its loader
 * (probe/uprobe.c) share: the record of one call and a thread's state.
 */
#ifndef LATSCOPE_PROBE_BPF_UPROBE_H
#define LATSCOPE_PROBE_BPF_UPROBE_H

#include <linux/types.h>

/* Calls a thread's state keeps the times of, for the period's estimate. */
#define LS_UP_FIRST 32u
/* The loader's readers, one ring each. */
#define LS_UP_WORKERS 64u
/* A thread no reader takes (found before the run, not measured). */
#define LS_UP_NONE 0xffffffffu
/* Threads of the program the map holds. */
#define LS_UP_THREADS 1024u
/* Each reader's ring: 8192 calls, 8 s of a 1 kHz loop between two reads. */
#define LS_UP_RING (256u * 1024u)

/* One call: its entry and, when the return was seen, its return; 0: none.
 * due_ns: when the thread's last clock_nanosleep before it was to end (0:
 * unknown: no such sleep since the last call, or on another clock), and
 * woke_ns when that sleep returned (0: unknown). */
struct ls_up_call {
	__u32 tid;
	__u32 cpu;
	__u64 entry_ns;
	__u64 ret_ns;
	__u64 due_ns;
	__u64 woke_ns;
};

struct ls_up_thread {
	__u32 worker; /* its reader's ring; LS_UP_NONE: none */
	__u32 cpu;    /* where its last call ran */
	__u64 calls;
	__u64 entry_ns;		      /* the call under way; 0: none */
	__u64 entry_due, entry_woke;  /* its due time and the return of its sleep; 0: unknown */
	__u64 due;		      /* the end of its last sleep since its last call; 0: none */
	__u64 woke;		      /* when that sleep returned; 0: not yet */
	__u32 sleeping;		      /* in that sleep */
	__u64 first[LS_UP_FIRST];     /* the entries of its first calls */
	__u64 first_due[LS_UP_FIRST]; /* and when each was due (0: unknown) */
};

/* Per CPU, read after the run. */
struct ls_up_stats {
	__u64 unrouted;	  /* calls of threads no reader takes */
	__u64 lost;	  /* calls a full ring could not take */
	__u64 unreturned; /* entries whose return was not seen */
};

#endif
