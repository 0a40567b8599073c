/*
 * The VM the host agent answers for, and its vCPU threads: found by QEMU's
 * QMP query-cpus-fast (host/qmp.h), by the names the hypervisors give their
 * vCPU threads, or from an explicit list.  Every path under root (NULL or ""
 * for "/"), so a test reads a fake /proc.
 *
 * Thread names known (/proc/PID/task/TID/comm):
 *   "CPU N/KVM", "CPU N/TCG"   QEMU (with -name ...,debug-threads=on)
 *   "fc_vcpu N"                Firecracker
 *   "vcpuN"                    Cloud Hypervisor
 */
#ifndef LATSCOPE_HOST_VCPUS_H
#define LATSCOPE_HOST_VCPUS_H

#include <stddef.h>

#include "core/error.h"

#define HOST_VCPUS_MAX 4096             /* KVM_MAX_VCPUS on the largest hosts */
#define HOST_NAME_MAX_LEN 64

enum host_found_by { HOST_FOUND_QMP, HOST_FOUND_NAMES, HOST_FOUND_LIST };

struct host_vcpu {
	unsigned vcpu;                  /* the guest's CPU number */
	long tid;                       /* the host thread running it */
	char name[HOST_NAME_MAX_LEN];   /* its comm */
};

struct host_vm {
	long pid;
	char name[HOST_NAME_MAX_LEN];   /* QEMU's -name, else the process's comm */
	enum host_found_by found_by;
	size_t n;
	struct host_vcpu *vcpus;        /* n of them, by vcpu; malloc'ed */
};

/* "qmp", "thread names", "--vcpu": the protocol's found_by. */
const char *host_found_by_name(enum host_found_by f);
/* "QMP query-cpus-fast", "thread names", "--vcpu": for the start-up line. */
const char *host_found_by_text(enum host_found_by f);

void host_vm_free(struct host_vm *vm);
/* The vCPU numbered vcpu, or NULL. */
const struct host_vcpu *host_vm_vcpu(const struct host_vm *vm, unsigned vcpu);

/* The vCPU number a thread's comm names (above), or -EINVAL. */
int host_vcpu_from_comm(const char *comm, unsigned *ret);

/* The guest name in a command line's NUL-separated arguments (QEMU's "-name
 * guest" or "-name guest=guest,debug-threads=on"): 0 with ret, -ENOENT. */
int host_qemu_name(const char *args, size_t len, char *ret, size_t size);

/*
 * The process --vm names: a pid, or a name matching one process's comm or
 * QEMU -name.  -ESRCH (none), -EEXIST (several, each listed with what
 * matched), with err naming --vm.
 */
int host_vm_resolve(const char *root, const char *spec, long *ret_pid, struct lat_error *err);

/* The VM's name and pid filled in for pid (vm->n and vcpus untouched). */
int host_vm_describe(const char *root, long pid, struct host_vm *vm, struct lat_error *err);

/* vm's vCPUs by their threads' names: -ENOENT when none is named so. */
int host_vcpus_by_names(const char *root, struct host_vm *vm, struct lat_error *err);

/* vm's vCPUs from "N=TID" items, each TID a thread of vm->pid. */
int host_vcpus_from_list(const char *root, const char *const *items, size_t n, struct host_vm *vm,
			 struct lat_error *err);

/* The process (thread group) thread tid belongs to: 0 with *ret, -ESRCH. */
int host_pid_of_thread(const char *root, long tid, long *ret);

/* Add vCPU vcpu run by thread tid to vm: 0, -ENOMEM, -E2BIG. */
int host_vm_add(struct host_vm *vm, unsigned vcpu, long tid);

/* Sort vm's vCPUs by number and fill their names from root's comm files;
 * -EINVAL when a number or a thread comes twice, or a thread is not vm->pid's. */
int host_vcpus_finish(const char *root, struct host_vm *vm, struct lat_error *err);

#endif
