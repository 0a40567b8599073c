/* The attach probe's uprobes: loading, attaching, finding, routing, reading. */
#include "probe/uprobe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "probe/elfsym.h"

#if !HAVE_BPF
int uprobe_open(pid_t pid, const char *func, struct uprobe **ret, struct lat_error *err)
{
	(void)pid;
	(void)func;
	*ret = NULL;
	return err_set(err, -ENOTSUP,
		       "built without the BPF backend (meson option -Dbpf): only --loop works");
}

const char *uprobe_where(const struct uprobe *u)
{
	(void)u;
	return "";
}

int uprobe_seen(struct uprobe *u, struct uprobe_seen *out, size_t cap)
{
	(void)u;
	(void)out;
	(void)cap;
	return -ENOTSUP;
}

int uprobe_route(struct uprobe *u, pid_t tid, unsigned worker)
{
	(void)u;
	(void)tid;
	(void)worker;
	return -ENOTSUP;
}

int uprobe_start(struct uprobe *u, unsigned nworkers, struct lat_error *err)
{
	(void)u;
	(void)nworkers;
	return err_set(err, -ENOTSUP, "built without the BPF backend");
}

struct ring_buffer *uprobe_reader(struct uprobe *u, unsigned worker,
				  int (*fn)(void *, void *, size_t), void *ctx)
{
	(void)u;
	(void)worker;
	(void)fn;
	(void)ctx;
	return NULL;
}

void uprobe_decode(const void *record, struct uprobe_call *c)
{
	(void)record;
	*c = (struct uprobe_call){ 0 };
}

int uprobe_consume(struct ring_buffer *rb)
{
	(void)rb;
	return -ENOTSUP;
}

void uprobe_reader_free(struct ring_buffer *rb)
{
	(void)rb;
}

void uprobe_counts(const struct uprobe *u, struct uprobe_counts *ret)
{
	(void)u;
	*ret = (struct uprobe_counts){ 0 };
}

void uprobe_close(struct uprobe *u)
{
	(void)u;
}
#else
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/bpf/uprobe.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "uprobe.skel.h"
#pragma GCC diagnostic pop

struct uprobe {
	struct uprobe_skel *skel;
	struct bpf_link *entry, *ret, *sleeps, *woken;
	int ring_fd[LS_UP_WORKERS];
	unsigned nworkers;
	char where[PATH_MAX];
};

const char *uprobe_where(const struct uprobe *u)
{
	return u->where;
}

/* libbpf says nothing on stderr: every failure is said once, by the caller. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The mapped file of pid that has func: its executable first, then each library in map order. */
static int locate(pid_t pid, const char *func, char *path, size_t size, uint64_t *off,
		  struct lat_error *err)
{
	struct elfsym sym;
	struct lat_error first = { { 0 } };
	char maps[64], line[PATH_MAX + 128], exe[64];
	bool stripped = false;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	int r = elfsym_find(exe, func, &sym, &first);
	if (r == 0) {
		ssize_t n = readlink(exe, path, size - 1u);
		path[n > 0 ? (size_t)n : 0] = '\0';
		if (n <= 0)
			snprintf(path, size, "%s", exe);
		*off = sym.offset;
		return 0;
	}
	if (r != -ENOENT)
		return err_set(err, r, "%s", first.msg);
	stripped = sym.stripped;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return err_set(err, -errno, "cannot read %s: %s", maps, strerror(errno));
	char last[PATH_MAX] = "";
	r = -ENOENT;
	while (r == -ENOENT && fgets(line, sizeof(line), f)) {
		char perms[8], file[PATH_MAX];
		if (sscanf(line, "%*s %7s %*s %*s %*s %4095s", perms, file) != 2 ||
		    perms[2] != 'x' || file[0] != '/' || strcmp(file, last) == 0)
			continue;
		snprintf(last, sizeof(last), "%s", file);
		char inroot[PATH_MAX + 32];
		snprintf(inroot, sizeof(inroot), "/proc/%d/root%s", (int)pid, file);
		struct lat_error e2;
		if (strlen(inroot) < size && elfsym_find(inroot, func, &sym, &e2) == 0) {
			memcpy(path, inroot, strlen(inroot) + 1u);
			*off = sym.offset;
			r = 0;
		}
	}
	fclose(f);
	if (r == 0)
		return 0;
	return err_set(
		err, -ENOENT, "process %d has no function %s in its executable or libraries%s",
		(int)pid, func,
		stripped ? " (its executable is stripped: no symbol table, only what it exports)"
			 : "");
}

int uprobe_open(pid_t pid, const char *func, struct uprobe **ret, struct lat_error *err)
{
	struct uprobe *u = calloc(1, sizeof(*u));
	uint64_t off = 0;
	int r;

	*ret = NULL;
	if (!u)
		return err_set(err, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < LS_UP_WORKERS; i++)
		u->ring_fd[i] = -1;
	if ((r = locate(pid, func, u->where, sizeof(u->where), &off, err)) < 0) {
		free(u);
		return r;
	}
	libbpf_set_print(quiet);
	u->skel = uprobe_skel__open();
	if (!u->skel) {
		r = err_set(err, -errno, "cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	u->skel->rodata->tgid = (__u32)pid;
	if ((r = uprobe_skel__load(u->skel)) < 0) {
		err_set(err, r, "cannot load the BPF program: %s%s", strerror(-r),
			r == -EPERM ? " (placing uprobes needs root: CAP_BPF and CAP_PERFMON)"
				    : "");
		goto fail;
	}
	u->entry = bpf_program__attach_uprobe(u->skel->progs.on_entry, false, pid, u->where,
					      (size_t)off);
	if (!u->entry) {
		r = err_set(err, -errno, "cannot place a uprobe on %s in %s: %s", func, u->where,
			    strerror(errno));
		goto fail;
	}
	u->ret = bpf_program__attach_uprobe(u->skel->progs.on_return, true, pid, u->where,
					    (size_t)off);
	if (!u->ret) {
		r = err_set(err, -errno, "cannot place a return probe on %s in %s: %s", func,
			    u->where, strerror(errno));
		goto fail;
	}
	/* Without the sleeps' due times lateness is measured from the estimated grid: said in the notes. */
	u->sleeps = bpf_program__attach(u->skel->progs.on_sys_enter);
	u->woken = bpf_program__attach(u->skel->progs.on_sys_exit);
	*ret = u;
	return 0;
fail:
	uprobe_close(u);
	return r;
}

int uprobe_seen(struct uprobe *u, struct uprobe_seen *out, size_t cap)
{
	int fd = bpf_map__fd(u->skel->maps.threads);
	__u32 key, next;
	__u32 *prev = NULL;
	size_t n = 0;

	while (n < cap && bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct ls_up_thread th;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &th) != 0 || th.calls == 0)
			continue;
		struct uprobe_seen *s = &out[n++];
		s->tid = (pid_t)key;
		s->cpu = th.cpu;
		s->calls = th.calls;
		s->nfirst = th.calls < LS_UP_FIRST ? (size_t)th.calls : LS_UP_FIRST;
		memcpy(s->first, th.first, s->nfirst * sizeof(s->first[0]));
		memcpy(s->first_due, th.first_due, s->nfirst * sizeof(s->first_due[0]));
	}
	return (int)n;
}

int uprobe_route(struct uprobe *u, pid_t tid, unsigned worker)
{
	int fd = bpf_map__fd(u->skel->maps.threads);
	__u32 key = (__u32)tid;
	struct ls_up_thread th;

	if (bpf_map_lookup_elem(fd, &key, &th) != 0)
		return -errno;
	th.worker = worker;
	return bpf_map_update_elem(fd, &key, &th, BPF_EXIST) == 0 ? 0 : -errno;
}

int uprobe_start(struct uprobe *u, unsigned nworkers, struct lat_error *err)
{
	int outer = bpf_map__fd(u->skel->maps.rings);

	if (nworkers > LS_UP_WORKERS)
		return err_set(err, -E2BIG, "more than %u CPUs to read calls on", LS_UP_WORKERS);
	for (unsigned i = 0; i < nworkers; i++) {
		__u32 key = i;
		u->ring_fd[i] =
			bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ls_attach", 0, 0, LS_UP_RING, NULL);
		if (u->ring_fd[i] < 0 ||
		    bpf_map_update_elem(outer, &key, &u->ring_fd[i], BPF_ANY) != 0)
			return err_set(err, -errno, "cannot make the ring of reader %u: %s", i,
				       strerror(errno));
		u->nworkers = i + 1u;
	}
	u->skel->bss->running = 1;
	return 0;
}

struct ring_buffer *uprobe_reader(struct uprobe *u, unsigned worker,
				  int (*fn)(void *, void *, size_t), void *ctx)
{
	if (worker >= u->nworkers)
		return NULL;
	return ring_buffer__new(u->ring_fd[worker], fn, ctx, NULL);
}

void uprobe_decode(const void *record, struct uprobe_call *c)
{
	struct ls_up_call r;
	memcpy(&r, record, sizeof(r));
	*c = (struct uprobe_call){ .tid = (pid_t)r.tid,
				   .cpu = r.cpu,
				   .entry_ns = r.entry_ns,
				   .ret_ns = r.ret_ns,
				   .due_ns = r.due_ns,
				   .woke_ns = r.woke_ns };
}

int uprobe_consume(struct ring_buffer *rb)
{
	return ring_buffer__consume(rb);
}

void uprobe_reader_free(struct ring_buffer *rb)
{
	ring_buffer__free(rb);
}

void uprobe_counts(const struct uprobe *u, struct uprobe_counts *ret)
{
	*ret = (struct uprobe_counts){ 0 };
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0 || !u->skel)
		return;
	struct ls_up_stats *per = calloc((size_t)ncpu, sizeof(*per));
	__u32 zero = 0;
	if (per && bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.stats), &zero, per) == 0)
		for (int i = 0; i < ncpu; i++) {
			ret->unrouted += per[i].unrouted;
			ret->lost += per[i].lost;
			ret->unreturned += per[i].unreturned;
		}
	free(per);
}

void uprobe_close(struct uprobe *u)
{
	if (!u)
		return;
	bpf_link__destroy(u->entry);
	bpf_link__destroy(u->ret);
	bpf_link__destroy(u->sleeps);
	bpf_link__destroy(u->woken);
	uprobe_skel__destroy(u->skel);
	for (unsigned i = 0; i < LS_UP_WORKERS; i++)
		if (u->ring_fd[i] >= 0)
			close(u->ring_fd[i]);
	free(u);
}
#endif
