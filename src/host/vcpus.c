#include "host/vcpus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/utf8.h"
#include "sys/textfile.h"

#define PATH_LEN 512
#define ARGS_MAX 65536                  /* of a command line read for -name */
#define THREAD_NAMES "'CPU N/KVM', 'CPU N/TCG', 'fc_vcpu N', 'vcpuN'"

const char *host_found_by_name(enum host_found_by f)
{
	switch (f) {
	case HOST_FOUND_QMP: return "qmp";
	case HOST_FOUND_NAMES: return "thread names";
	case HOST_FOUND_LIST: return "--vcpu";
	}
	return "?";
}

const char *host_found_by_text(enum host_found_by f)
{
	return f == HOST_FOUND_QMP ? "QMP query-cpus-fast" : host_found_by_name(f);
}

void host_vm_free(struct host_vm *vm)
{
	if (!vm)
		return;
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->n = 0;
}

const struct host_vcpu *host_vm_vcpu(const struct host_vm *vm, unsigned vcpu)
{
	for (size_t i = 0; i < vm->n; i++)
		if (vm->vcpus[i].vcpu == vcpu)
			return &vm->vcpus[i];
	return NULL;
}

int host_vm_add(struct host_vm *vm, unsigned vcpu, long tid)
{
	if (vm->n >= HOST_VCPUS_MAX)
		return -E2BIG;
	struct host_vcpu *v = realloc(vm->vcpus, (vm->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	vm->vcpus = v;
	v[vm->n] = (struct host_vcpu){ .vcpu = vcpu, .tid = tid };
	vm->n++;
	return 0;
}

/* The decimal number at p (no sign, below limit): the text after it, or NULL. */
static const char *number(const char *p, unsigned long limit, unsigned long *ret)
{
	unsigned long v = 0;
	const char *s = p;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10u + (unsigned long)(*p - '0');
		if (v >= limit)
			return NULL;
	}
	if (p == s || (p - s > 1 && *s == '0'))
		return NULL;
	*ret = v;
	return p;
}

int host_vcpu_from_comm(const char *comm, unsigned *ret)
{
	static const struct { const char *before, *after; } forms[] = {
		{ "CPU ", "/KVM" }, { "CPU ", "/TCG" }, { "fc_vcpu ", "" }, { "vcpu", "" },
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t len = strlen(forms[i].before);
		unsigned long v;
		const char *end;
		if (strncmp(comm, forms[i].before, len) != 0 || !(end = number(comm + len, HOST_VCPUS_MAX, &v)) ||
		    strcmp(end, forms[i].after) != 0)
			continue;
		*ret = (unsigned)v;
		return 0;
	}
	return -EINVAL;
}

int host_qemu_name(const char *args, size_t len, char *ret, size_t size)
{
	const char *end = args + len;

	for (const char *a = args; a < end; a += strnlen(a, (size_t)(end - a)) + 1) {
		if (strcmp(a, "-name") != 0 && strcmp(a, "--name") != 0)
			continue;
		const char *v = a + strlen(a) + 1;
		if (v >= end)
			return -ENOENT;
		if (!strncmp(v, "guest=", 6))
			v += 6;
		size_t n = strcspn(v, ",");
		if (n == 0)
			return -ENOENT;
		snprintf(ret, size, "%.*s", (int)n, v);
		return 0;
	}
	return -ENOENT;
}

/* s as text for JSON: each byte of a malformed UTF-8 sequence, and each control character, made '?'. */
static void as_text(char *s)
{
	while (*s) {
		uint32_t c;
		size_t n = utf8_decode((const unsigned char *)s, &c);
		if (n == 0 || c < 0x20u || c == 0x7fu) {
			*s++ = '?';
			continue;
		}
		s += n;
	}
}

static const char *root_of(const char *root)
{
	return root ? root : "";
}

static int comm_of(const char *root, long pid, long tid, char *buf, size_t size)
{
	char path[PATH_LEN];

	if (tid)
		snprintf(path, sizeof(path), "%s/proc/%ld/task/%ld/comm", root_of(root), pid, tid);
	else
		snprintf(path, sizeof(path), "%s/proc/%ld/comm", root_of(root), pid);
	return textfile_read(path, buf, size);
}

/* pid's command line, NUL-separated, in buf: its length, or -errno. */
static ssize_t args_of(const char *root, long pid, char *buf, size_t size)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "%s/proc/%ld/cmdline", root_of(root), pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return n;
}

int host_pid_of_thread(const char *root, long tid, long *ret)
{
	char path[PATH_LEN], line[256];

	snprintf(path, sizeof(path), "%s/proc/%ld/status", root_of(root), tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	int r = -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", ret) == 1) {
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

static bool is_thread_of(const char *root, long pid, long tid)
{
	char path[PATH_LEN];
	struct stat st;

	snprintf(path, sizeof(path), "%s/proc/%ld/task/%ld", root_of(root), pid, tid);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int host_vm_describe(const char *root, long pid, struct host_vm *vm, struct lat_error *err)
{
	char *args = malloc(ARGS_MAX);
	char comm[HOST_NAME_MAX_LEN];

	if (!args)
		return err_set(err, -ENOMEM, "out of memory");
	int r = comm_of(root, pid, 0, comm, sizeof(comm));
	ssize_t n = r < 0 ? r : args_of(root, pid, args, ARGS_MAX);
	if (r < 0 || n < 0) {
		free(args);
		return err_set(err, -ESRCH, "option '--vm': no process has pid %ld", pid);
	}
	vm->pid = pid;
	if (host_qemu_name(args, (size_t)n, vm->name, sizeof(vm->name)) < 0)
		snprintf(vm->name, sizeof(vm->name), "%s", comm);
	as_text(vm->name);
	free(args);
	return 0;
}

/* Whether process pid matches name, and how ("-name", "comm"), or NULL. */
static const char *matches(const char *root, long pid, const char *name, char *args)
{
	char comm[HOST_NAME_MAX_LEN], qname[HOST_NAME_MAX_LEN];
	ssize_t n = args_of(root, pid, args, ARGS_MAX);

	if (n > 0 && host_qemu_name(args, (size_t)n, qname, sizeof(qname)) == 0 && strcmp(qname, name) == 0)
		return "-name";
	if (comm_of(root, pid, 0, comm, sizeof(comm)) == 0 && strcmp(comm, name) == 0)
		return "comm";
	return NULL;
}

static int resolve_name(const char *root, const char *spec, long *ret_pid, struct lat_error *err)
{
	char path[PATH_LEN], list[256] = "";
	size_t found = 0, used = 0;
	struct dirent *d;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/proc", root_of(root));
	DIR *dir = opendir(path);
	char *args = malloc(ARGS_MAX);
	if (!dir || !args) {
		int e = dir ? ENOMEM : errno;
		if (dir)
			closedir(dir);
		free(args);
		return err_set(err, -e, "cannot read '%s': %s", path, strerror(e));
	}
	while ((d = readdir(dir)) != NULL) {
		unsigned long v;
		const char *end = number(d->d_name, 1ul << 31, &v), *how;
		if (!end || *end || !(how = matches(root, (long)v, spec, args)))
			continue;
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%lu (by its %s)", found ? ", " : "", v, how);
		pid = (long)v;
		found++;
	}
	closedir(dir);
	free(args);
	if (found == 0)
		return err_set(err, -ESRCH, "option '--vm': no process is named '%s' (by its comm or QEMU's -name)", spec);
	if (found > 1)
		return err_set(err, -EEXIST, "option '--vm': '%s' names %zu processes: %s; give the pid", spec, found, list);
	*ret_pid = pid;
	return 0;
}

int host_vm_resolve(const char *root, const char *spec, long *ret_pid, struct lat_error *err)
{
	unsigned long v;
	const char *end = number(spec, 1ul << 31, &v);
	long tgid;

	if (!end || *end)
		return resolve_name(root, spec, ret_pid, err);
	if (host_pid_of_thread(root, (long)v, &tgid) < 0)
		return err_set(err, -ESRCH, "option '--vm': no process has pid %lu", v);
	if (tgid != (long)v)
		return err_set(err, -ESRCH, "option '--vm': %lu is a thread of pid %ld, not a process", v, tgid);
	*ret_pid = (long)v;
	return 0;
}

int host_vcpus_by_names(const char *root, struct host_vm *vm, struct lat_error *err)
{
	char path[PATH_LEN], comm[HOST_NAME_MAX_LEN];
	struct dirent *d;
	int r = 0;

	snprintf(path, sizeof(path), "%s/proc/%ld/task", root_of(root), vm->pid);
	DIR *dir = opendir(path);
	if (!dir)
		return err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	while (r == 0 && (d = readdir(dir)) != NULL) {
		unsigned long tid;
		unsigned vcpu;
		const char *end = number(d->d_name, 1ul << 31, &tid);
		if (end && !*end && comm_of(root, vm->pid, (long)tid, comm, sizeof(comm)) == 0 &&
		    host_vcpu_from_comm(comm, &vcpu) == 0)
			r = host_vm_add(vm, vcpu, (long)tid);
	}
	closedir(dir);
	if (r < 0)
		return err_set(err, r, "pid %ld has more than %d vCPU threads", vm->pid, HOST_VCPUS_MAX);
	if (vm->n == 0)
		return err_set(err, -ENOENT, "option '--vm': pid %ld ('%s') has no thread named as a vCPU (" THREAD_NAMES
			       "): not a VM, or QEMU without -name ...,debug-threads=on; give --vm qmp:SOCKET or --vcpu N=TID",
			       vm->pid, vm->name);
	return host_vcpus_finish(root, vm, err);
}

int host_vcpus_from_list(const char *root, const char *const *items, size_t n, struct host_vm *vm,
			 struct lat_error *err)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long vcpu, tid;
		const char *end = number(items[i], HOST_VCPUS_MAX, &vcpu);
		if (!end || *end != '=' || !(end = number(end + 1, 1ul << 31, &tid)) || *end)
			return err_set(err, -EINVAL, "option '--vcpu': '%s' is not N=TID (a vCPU number below %d, a thread id)",
				       items[i], HOST_VCPUS_MAX);
		if (!is_thread_of(root, vm->pid, (long)tid))
			return err_set(err, -EINVAL, "option '--vcpu': '%s': %lu is not a thread of pid %ld", items[i], tid,
				       vm->pid);
		int r = host_vm_add(vm, (unsigned)vcpu, (long)tid);
		if (r < 0)
			return err_set(err, r, "out of memory");
	}
	return host_vcpus_finish(root, vm, err);
}

static int by_vcpu(const void *a, const void *b)
{
	const struct host_vcpu *x = a, *y = b;
	if (x->vcpu != y->vcpu)
		return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int host_vcpus_finish(const char *root, struct host_vm *vm, struct lat_error *err)
{
	qsort(vm->vcpus, vm->n, sizeof(vm->vcpus[0]), by_vcpu);
	for (size_t i = 0; i < vm->n; i++) {
		struct host_vcpu *v = &vm->vcpus[i];
		if (i && v->vcpu == vm->vcpus[i - 1].vcpu)
			return err_set(err, -EINVAL, "vCPU %u is given twice (threads %ld and %ld)", v->vcpu,
				       vm->vcpus[i - 1].tid, v->tid);
		for (size_t j = 0; j < i; j++)
			if (vm->vcpus[j].tid == v->tid)
				return err_set(err, -EINVAL, "thread %ld runs both vCPU %u and vCPU %u", v->tid,
					       vm->vcpus[j].vcpu, v->vcpu);
		if (comm_of(root, vm->pid, v->tid, v->name, sizeof(v->name)) < 0)
			return err_set(err, -EINVAL, "vCPU %u: %ld is not a thread of pid %ld", v->vcpu, v->tid, vm->pid);
		as_text(v->name);
	}
	return 0;
}
