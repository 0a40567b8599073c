#include "trace/bpfcol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "trace/ev.h"

void bpfcol_event(const struct ls_bpf_ev *b, unsigned cpu, char last_next[LS_BPF_COMM], struct trace_ev *e)
{
	*e = (struct trace_ev){ .ts = b->ts, .arg = b->arg, .timer = b->timer, .pid = b->pid, .prio = b->prio,
				.prev_pid = b->prev_pid, .prev_prio = b->prev_prio, .type = (uint8_t)b->type,
				.cpu = (uint8_t)cpu };
	memcpy(e->comm, b->comm, sizeof(e->comm));
	e->comm[sizeof(e->comm) - 1u] = '\0';
	if (e->type == TRACE_EV_SCHED_SWITCH) {
		memcpy(e->prev_comm, last_next, sizeof(e->prev_comm));
		e->prev_comm[sizeof(e->prev_comm) - 1u] = '\0';
		memcpy(last_next, e->comm, LS_BPF_COMM);
	}
}

#if !HAVE_BPF
int bpfcol_start(const struct bpfcol_opts *o, struct bpf_collector **ret, struct lat_error *why)
{
	(void)o;
	*ret = NULL;
	return err_set(why, -ENOTSUP, "built without the BPF backend (meson option -Dbpf)");
}

void bpfcol_stop(struct bpf_collector *c)
{
	(void)c;
}

const struct bpfcol_cpu *bpfcol_cpu(const struct bpf_collector *c, unsigned cpu)
{
	(void)c;
	(void)cpu;
	return NULL;
}

unsigned bpfcol_ring_kb(const struct bpf_collector *c)
{
	(void)c;
	return 0;
}

const struct trace_events *bpfcol_events(const struct bpf_collector *c)
{
	(void)c;
	return NULL;
}

size_t bpfcol_cost(const struct bpf_collector *c, const struct bpfcol_prog_cost **ret)
{
	(void)c;
	*ret = NULL;
	return 0;
}

void bpfcol_free(struct bpf_collector *c)
{
	(void)c;
}
#else
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* bpftool's skeleton holds the object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "collect.skel.h"
#pragma GCC diagnostic pop

/* The records and the events in them are trace/ev.h's, by number. */
#define SAME(x) ((int)LS_EV_##x == (int)TRACE_EV_##x)
_Static_assert(SAME(HRTIMER_START) && SAME(HRTIMER_ENTRY) && SAME(HRTIMER_EXIT) && SAME(SCHED_WAKING) && SAME(SCHED_SWITCH) && SAME(IRQ_ENTRY) && SAME(IRQ_EXIT) && SAME(SOFTIRQ_ENTRY) && SAME(SOFTIRQ_EXIT) &&
		       LS_BPF_COMM == TRACE_COMM_LEN,
	       "collect.h and trace/ev.h disagree");
#undef SAME

/* How often the reader empties the ring: at 100 us on 256 CPUs that is
 * 51,200 records (2.5 MB); the ring holds a quarter second, 12 such reads. */
#define READ_EVERY_MS 20
#define RING_MIN (256u << 10)
#define RING_MAX (256u << 20)

struct bpf_collector {
	struct collect *skel;
	struct ring_buffer *rb;
	struct bpfcol_cpu *cpu;         /* indexed by CPU number */
	unsigned ncpu;
	size_t samples_cap;
	uint64_t detail_ns;
	unsigned ring_kb;
	struct bpfcol_prog_cost cost[BPFCOL_PROGS];     /* the programs' counts, read at the stop */
	size_t ncost;
	pthread_t reader;
	bool reading;
	int stop_fd;                    /* eventfd: the reader's stop */
	bool stream;
	struct trace_events *ev;        /* stream: the events */
};

static struct bpfcol_cpu *cpu_of(struct bpf_collector *c, __u32 cpu)
{
	return cpu < c->ncpu && c->cpu[cpu].cap ? &c->cpu[cpu] : NULL;
}

static void keep_sample(struct bpf_collector *c, struct bpfcol_cpu *k, const struct ls_bpf_sample *s)
{
	if (k->n == k->cap) {
		if (k->cap >= c->samples_cap) {
			k->not_kept++;
			return;
		}
		size_t cap = k->cap * 2 < c->samples_cap ? k->cap * 2 : c->samples_cap;
		void *p = realloc(k->s, cap * sizeof(*k->s));
		if (!p) {
			k->not_kept++;
			return;
		}
		k->s = p;
		k->cap = cap;
	}
	k->s[k->n++] = *s;
}

/* How late a detail's sample switched in: its sample came just before it. */
static uint64_t detail_late(const struct bpfcol_cpu *k, const struct ls_bpf_detail *d)
{
	if (k->n && k->s[k->n - 1u].deadline == d->deadline)
		return ls_sample_late(&k->s[k->n - 1u]);
	uint64_t end = d->n ? d->ev[d->n < LS_BPF_EV_CAP ? d->n - 1u : LS_BPF_EV_CAP - 1u].ts : d->deadline;
	return end > d->deadline ? end - d->deadline : 0;
}

/* The BPFCOL_DETAILS_KEPT largest: a newcomer replaces the smallest kept. */
static void keep_detail(struct bpfcol_cpu *k, const struct ls_bpf_detail *d)
{
	uint64_t late = detail_late(k, d);
	size_t at = k->nd;
	if (k->nd == BPFCOL_DETAILS_KEPT) {
		for (size_t i = 0; i < k->nd; i++)
			if (k->d[i].late_ns < (at < k->nd ? k->d[at].late_ns : late))
				at = i;
		if (at == k->nd)
			return;
	} else {
		k->nd++;
	}
	k->d[at].late_ns = late;
	k->d[at].d = *d;
}

/* Stream mode: a batch's events, after a lost marker when batches went missing. */
static void take_batch(struct bpf_collector *c, __u32 cpu, const struct ls_bpf_detail *d)
{
	struct bpfcol_cpu *k = &c->cpu[cpu];
	size_t n = d->n < LS_BPF_EV_CAP ? d->n : LS_BPF_EV_CAP;
	struct trace_ev e;

	if (d->seq != k->next_seq && n) {
		const struct trace_cpu_events *ce = &c->ev->cpu[cpu];
		e = (struct trace_ev){ .ts = ce->n ? ce->ev[ce->n - 1u].ts + 1u : d->ev[0].ts, .type = TRACE_EV_LOST,
				       .cpu = (uint8_t)cpu, .arg = (uint64_t)(d->seq - k->next_seq) * LS_BPF_EV_CAP };
		c->ev->cpu[cpu].lost += e.arg;
		trace_events_append(c->ev, &e);
	}
	k->next_seq = d->seq + 1u;
	for (size_t i = 0; i < n; i++) {
		bpfcol_event(&d->ev[i], cpu, k->last_next, &e);
		/* past the bound (counted in capped by the store) or out of memory: counted as lost */
		int r = trace_events_append(c->ev, &e);
		if (r < 0 && r != -E2BIG)
			c->ev->cpu[cpu].lost++;
	}
}

/* The last sample, whose record the program hands over only when the thread
 * sleeps again: from the map, as the program would have sent it. */
static void take_pending(struct bpf_collector *c, __u32 cpu, struct ls_bpf_cpu *st)
{
	if (c->stream) {
		take_batch(c, cpu, &st->d);     /* the last, partial batch */
		return;
	}
	if (st->phase != LS_PH_WOKEN && st->phase != LS_PH_SWITCHED)
		return;         /* nothing measured since the last record, or a sleep the stop cut short */
	struct ls_bpf_sample smp = { .kind = LS_REC_SAMPLE, .cpu = cpu, .tid = st->tid, .deadline = st->d.deadline,
				     .expiry_now = st->expiry_now, .expiry_ts = st->expiry_ts,
				     .waking_ts = st->waking_ts,
				     .switch_ts = st->phase == LS_PH_SWITCHED ? st->switch_ts : 0 };
	keep_sample(c, &c->cpu[cpu], &smp);
	if (ls_sample_late(&smp) > c->detail_ns) {
		st->d.kind = LS_REC_DETAIL;
		st->d.cpu = cpu;
		st->d.tid = st->tid;
		keep_detail(&c->cpu[cpu], &st->d);
	}
	c->cpu[cpu].records++;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct bpf_collector *c = ctx;
	const __u32 *kind = data;
	if (size >= sizeof(struct ls_bpf_sample) && *kind == LS_REC_SAMPLE) {
		const struct ls_bpf_sample *s = data;
		struct bpfcol_cpu *k = cpu_of(c, s->cpu);
		if (k)
			keep_sample(c, k, s);
	} else if (size >= sizeof(struct ls_bpf_detail) && *kind == LS_REC_DETAIL) {
		const struct ls_bpf_detail *d = data;
		struct bpfcol_cpu *k = cpu_of(c, d->cpu);
		if (k)
			keep_detail(k, d);
	} else if (size >= sizeof(struct ls_bpf_detail) && *kind == LS_REC_BATCH && c->stream) {
		const struct ls_bpf_detail *d = data;
		if (cpu_of(c, d->cpu))
			take_batch(c, d->cpu, d);
	}
	return 0;
}

static void *reader(void *arg)
{
	struct bpf_collector *c = arg;
	struct pollfd p = { .fd = c->stop_fd, .events = POLLIN };

	for (;;) {
		ring_buffer__consume(c->rb);
		int r = poll(&p, 1, READ_EVERY_MS);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;                  /* the stop, or a poll that cannot wait */
	}
	return NULL;
}

/* libbpf prints through this: nothing printed; its last warning is kept for
 * the reason a load failed (the verifier's refusal, a missing BTF type). */
static char libbpf_said[160];

__attribute__((format(printf, 2, 0))) static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char line[sizeof(libbpf_said)];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	if (line[0])
		memcpy(libbpf_said, line, sizeof(line));
	return 0;
}

static unsigned ring_bytes(const struct bpfcol_opts *o)
{
	/* A quarter second of every thread's records, and room for the details;
	 * in stream mode, a quarter second of batches. */
	uint64_t want = o->stream ? (uint64_t)o->n * (o->samples_per_sec / LS_BPF_EV_CAP + 1u) *
					    sizeof(struct ls_bpf_detail) / 4u
				  : (uint64_t)o->n * (o->samples_per_sec + 1u) * sizeof(struct ls_bpf_sample) / 4u;
	want += 4u * BPFCOL_DETAILS_KEPT * sizeof(struct ls_bpf_detail);
	unsigned bytes = RING_MIN;
	while (bytes < want && bytes < RING_MAX)
		bytes *= 2u;
	return bytes;
}

static int fail(struct bpf_collector *c, struct lat_error *why, int r, const char *what)
{
	bpfcol_free(c);
	if (r == -EPERM)
		return err_set(why, r, "%s: not permitted (root, or CAP_BPF and CAP_PERFMON, is needed)", what);
	if (r == -EACCES || r == -EINVAL)       /* the verifier, or a kernel without what it needs */
		return err_set(why, r, "%s: the kernel refused it (%s)%s%.160s", what, strerror(-r),
			       libbpf_said[0] ? ": " : "", libbpf_said);
	return err_set(why, r, "%s: %s", what, strerror(-r));
}

int bpfcol_start(const struct bpfcol_opts *o, struct bpf_collector **ret, struct lat_error *why)
{
	struct bpf_collector *c = calloc(1, sizeof(*c));
	int r;

	*ret = NULL;
	if (!c)
		return err_set(why, -ENOMEM, "out of memory");
	c->stop_fd = -1;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		free(c);
		return err_set(why, -ENOTSUP, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
	}
	libbpf_said[0] = '\0';
	libbpf_set_print(quiet);
	int possible = libbpf_num_possible_cpus();
	if (possible <= 0)
		return fail(c, why, possible < 0 ? possible : -EINVAL, "cannot count the possible CPUs");
	c->ncpu = (unsigned)possible;
	c->samples_cap = o->samples_cap ? o->samples_cap : 1;
	c->detail_ns = o->detail_ns;
	c->stream = o->stream;
	c->cpu = calloc(c->ncpu, sizeof(*c->cpu));
	if (!c->cpu || (c->stream && trace_events_new(c->ncpu, 0, &c->ev) < 0))
		return fail(c, why, -ENOMEM, "out of memory");
	for (size_t i = 0; i < o->n; i++) {
		if (o->cpu[i] >= c->ncpu)
			return fail(c, why, -EINVAL, "a measured CPU beyond the possible ones");
		struct bpfcol_cpu *k = &c->cpu[o->cpu[i]];
		k->cap = c->samples_cap < 4096 ? c->samples_cap : 4096;
		k->s = malloc(k->cap * sizeof(*k->s));
		k->d = malloc(BPFCOL_DETAILS_KEPT * sizeof(*k->d));
		if (!k->s || !k->d)
			return fail(c, why, -ENOMEM, "out of memory");
	}
	c->skel = collect__open();
	if (!c->skel)
		return fail(c, why, -errno, "cannot open the BPF collector");
	c->skel->rodata->detail_ns = o->detail_ns;
	c->skel->rodata->stream = o->stream;
	unsigned ring = ring_bytes(o);
	c->ring_kb = ring >> 10;
	if ((r = bpf_map__set_max_entries(c->skel->maps.cpus, c->ncpu)) < 0 ||
	    (r = bpf_map__set_max_entries(c->skel->maps.records, ring)) < 0)
		return fail(c, why, r, "cannot size the BPF collector's maps");
	if ((r = collect__load(c->skel)) < 0)
		return fail(c, why, r, "cannot load the BPF collector");
	int map = bpf_map__fd(c->skel->maps.cpus);
	for (size_t i = 0; i < o->n; i++) {
		struct ls_bpf_cpu st;
		__u32 key = o->cpu[i];
		memset(&st, 0, sizeof(st));
		st.tid = (__s32)o->tid[i];
		if ((r = bpf_map_update_elem(map, &key, &st, BPF_ANY)) < 0)
			return fail(c, why, -errno, "cannot tell the BPF collector the threads");
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.records), on_record, c, NULL);
	if (!c->rb)
		return fail(c, why, -errno, "cannot read the BPF collector's ring buffer");
	c->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (c->stop_fd < 0)
		return fail(c, why, -errno, "cannot make the reader's eventfd");
	if ((r = collect__attach(c->skel)) < 0)
		return fail(c, why, r, "cannot attach the BPF collector to the kernel's tracepoints");
	if ((r = pthread_create(&c->reader, NULL, reader, c)) != 0)
		return fail(c, why, -r, "cannot start the BPF collector's reader");
	c->reading = true;
	*ret = c;
	return 0;
}

void bpfcol_stop(struct bpf_collector *c)
{
	if (!c || !c->skel)
		return;
	collect__detach(c->skel);
	if (c->reading) {
		uint64_t one = 1;
		/* An eventfd's counter takes a 1 whatever it holds: the reader wakes. */
		(void)!write(c->stop_fd, &one, sizeof(one));
		pthread_join(c->reader, NULL);
		c->reading = false;
	}
	if (c->rb)
		ring_buffer__consume(c->rb);
	int map = bpf_map__fd(c->skel->maps.cpus);     /* < 0 when start failed before loading */
	struct ls_bpf_cpu *st = map >= 0 ? malloc(sizeof(*st)) : NULL;
	for (__u32 cpu = 0; st && cpu < c->ncpu; cpu++) {
		if (!c->cpu[cpu].cap || bpf_map_lookup_elem(map, &cpu, st) < 0)
			continue;
		c->cpu[cpu].records = st->records;
		c->cpu[cpu].lost = st->lost;
		c->cpu[cpu].details_dropped = st->details_dropped;
		take_pending(c, cpu, st);
	}
	free(st);
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (c->ncost < BPFCOL_PROGS && bpf_program__fd(prog) >= 0 &&
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
			struct bpfcol_prog_cost *pc = &c->cost[c->ncost++];
			snprintf(pc->name, sizeof(pc->name), "%s", bpf_program__name(prog));
			pc->runs = info.run_cnt;
			pc->run_ns = info.run_time_ns;
		}
	}
	ring_buffer__free(c->rb);
	c->rb = NULL;
	collect__destroy(c->skel);
	c->skel = NULL;
}

const struct bpfcol_cpu *bpfcol_cpu(const struct bpf_collector *c, unsigned cpu)
{
	return c && cpu < c->ncpu && c->cpu[cpu].cap ? &c->cpu[cpu] : NULL;
}

unsigned bpfcol_ring_kb(const struct bpf_collector *c)
{
	return c ? c->ring_kb : 0;
}

size_t bpfcol_cost(const struct bpf_collector *c, const struct bpfcol_prog_cost **ret)
{
	*ret = c ? c->cost : NULL;
	return c ? c->ncost : 0;
}

const struct trace_events *bpfcol_events(const struct bpf_collector *c)
{
	return c && c->stream ? c->ev : NULL;
}

void bpfcol_free(struct bpf_collector *c)
{
	if (!c)
		return;
	bpfcol_stop(c);
	ring_buffer__free(c->rb);
	collect__destroy(c->skel);
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	for (unsigned i = 0; c->cpu && i < c->ncpu; i++) {
		free(c->cpu[i].s);
		free(c->cpu[i].d);
	}
	free(c->cpu);
	trace_events_free(c->ev);
	free(c);
}
#endif
