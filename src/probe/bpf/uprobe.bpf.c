// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * latscope attach in the kernel: a uprobe on the entry and a uretprobe on
 * the return of the user's function, in one process.  Before the run every
 * call of a new thread adds it to the threads map with the times of its
 * first calls, from which the loader finds the threads and the period.
 * Once the loader sets `running`, each call of a routed thread is handed to
 * its reader's ring at the return (or at the next entry, when the return
 * was not seen): one record, no wakeup (the reader polls).  Times are
 * bpf_ktime_get_ns(), CLOCK_MONOTONIC.
 */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

#include "uprobe.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 tgid = 0;
/* Set by the loader through the skeleton's bss when the run starts. */
volatile __u32 running = 0;

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LS_UP_RING);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, LS_UP_WORKERS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_UP_THREADS);
	__type(key, __u32);
	__type(value, struct ls_up_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_up_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_up_thread);
} blank SEC(".maps");

static __always_inline struct ls_up_stats *my_stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stats, &zero);
}

/* The running thread's state when it is one the map holds of the traced process. */
static __always_inline struct ls_up_thread *known_thread(__u32 *ret_tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if ((__u32)(id >> 32) != tgid)
		return 0;
	*ret_tid = tid;
	return bpf_map_lookup_elem(&threads, &tid);
}

/* The same, a new thread of the process added before the run. */
static __always_inline struct ls_up_thread *thread_of(__u32 *ret_tid)
{
	struct ls_up_thread *th = known_thread(ret_tid);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (th || running || (__u32)(id >> 32) != tgid)
		return th;
	/* A new thread's state, from a blank of the map's (too large for the stack). */
	__u32 zero = 0;
	struct ls_up_thread *fresh = bpf_map_lookup_elem(&blank, &zero);
	if (!fresh)
		return 0;
	__builtin_memset(fresh, 0, sizeof(*fresh));
	fresh->worker = LS_UP_NONE;
	bpf_map_update_elem(&threads, &tid, fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline void hand_over(struct ls_up_thread *th, __u32 tid, __u64 entry, __u64 ret,
				      __u64 due, __u64 woke)
{
	struct ls_up_stats *st = my_stats();
	__u32 worker = th->worker;

	if (worker == LS_UP_NONE) {
		if (st)
			st->unrouted++;
		return;
	}
	void *ring = bpf_map_lookup_elem(&rings, &worker);
	struct ls_up_call c = { .tid = tid,
				.cpu = bpf_get_smp_processor_id(),
				.entry_ns = entry,
				.ret_ns = ret,
				.due_ns = due,
				.woke_ns = woke };
	if ((!ring || bpf_ringbuf_output(ring, &c, sizeof(c), BPF_RB_NO_WAKEUP) != 0) && st)
		st->lost++;
}

/*
 * A syscall's arguments where the architecture's pt_regs keeps them, and
 * the numbers of the two sleeps (x86_64 and arm64; elsewhere no due times).
 */
#if defined(LS_ARCH_x86_64)
struct ls_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;
};
#define ARG0(r)		   ((r).di)
#define ARG1(r)		   ((r).si)
#define ARG2(r)		   ((r).dx)
#define NR_CLOCK_NANOSLEEP 230
#define NR_NANOSLEEP	   35
#elif defined(LS_ARCH_aarch64)
struct ls_regs {
	unsigned long regs[3];
};
#define ARG0(r)		   ((r).regs[0])
#define ARG1(r)		   ((r).regs[1])
#define ARG2(r)		   ((r).regs[2])
#define NR_CLOCK_NANOSLEEP 115
#define NR_NANOSLEEP	   101
#endif

#define LS_CLOCK_MONOTONIC 1
#define LS_TIMER_ABSTIME   1

struct ls_timespec {
	__s64 sec;
	__s64 nsec;
};

/* When a measured thread's sleep is to end, on CLOCK_MONOTONIC (bpf_ktime_get_ns's clock). */
SEC("raw_tracepoint/sys_enter")
int on_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
#ifdef NR_CLOCK_NANOSLEEP
	const long id = (long)ctx->args[1];
	if (id != NR_CLOCK_NANOSLEEP && id != NR_NANOSLEEP)
		return 0;
	__u32 tid;
	struct ls_up_thread *th = known_thread(&tid);
	if (!th)
		return 0;
	struct ls_regs r;
	struct ls_timespec ts;
	if (bpf_probe_read_kernel(&r, sizeof(r), (void *)ctx->args[0]) != 0)
		return 0;
	const int cns = id == NR_CLOCK_NANOSLEEP;
	const unsigned long clock = cns ? ARG0(r) : LS_CLOCK_MONOTONIC, flags = cns ? ARG1(r) : 0;
	const void *req = (const void *)(cns ? ARG2(r) : ARG0(r));
	th->due = 0;
	th->woke = 0;
	th->sleeping = 0;
	if (clock != LS_CLOCK_MONOTONIC || bpf_probe_read_user(&ts, sizeof(ts), req) != 0 ||
	    ts.sec < 0 || ts.nsec < 0)
		return 0;
	__u64 t = (__u64)ts.sec * 1000000000ull + (__u64)ts.nsec;
	th->due = flags & LS_TIMER_ABSTIME ? t : bpf_ktime_get_ns() + t;
	th->sleeping = 1;
#endif
	return 0;
}

/* The return of that sleep: the cycle's wakeup as the program itself would time it. */
SEC("raw_tracepoint/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid;
	struct ls_up_thread *th = known_thread(&tid);
	if (th && th->sleeping) {
		th->woke = bpf_ktime_get_ns();
		th->sleeping = 0;
	}
	return 0;
}

SEC("uprobe")
int on_entry(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = 0;
	struct ls_up_thread *th = thread_of(&tid);

	if (!th)
		return 0;
	if (th->entry_ns && running) {
		/* The last call's return was not seen (a longjmp, an exit): its entry still counts. */
		struct ls_up_stats *st = my_stats();
		if (st)
			st->unreturned++;
		hand_over(th, tid, th->entry_ns, 0, th->entry_due, th->entry_woke);
	}
	/* A due time in the future is not this call's: a sleep cut short by a signal. */
	th->entry_due = th->due && th->due <= now ? th->due : 0;
	th->entry_woke = th->entry_due && th->woke >= th->entry_due ? th->woke : 0;
	th->due = 0;
	th->woke = 0;
	th->entry_ns = now;
	if (th->calls < LS_UP_FIRST) {
		th->first[th->calls & (LS_UP_FIRST - 1u)] = now;
		th->first_due[th->calls & (LS_UP_FIRST - 1u)] = th->entry_due;
	}
	th->calls++;
	th->cpu = bpf_get_smp_processor_id();
	return 0;
}

SEC("uretprobe")
int on_return(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = 0;
	struct ls_up_thread *th = thread_of(&tid);

	if (!th || !th->entry_ns)
		return 0;
	if (running)
		hand_over(th, tid, th->entry_ns, now, th->entry_due, th->entry_woke);
	th->entry_ns = 0;
	return 0;
}
