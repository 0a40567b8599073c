/*
 * The VM of `latscope host --vm` and its vCPUs, the way the options say:
 *   qmp:SOCKET        QMP query-cpus-fast (host/qmp.h); the VM is the
 *                     process of the threads it names
 *   PID or NAME       with --vcpu N=TID items: those; else the threads' names
 */
#ifndef LATSCOPE_HOST_FIND_H
#define LATSCOPE_HOST_FIND_H

#include <stddef.h>

#include "core/error.h"
#include "host/vcpus.h"

#define HOST_QMP_PREFIX "qmp:"

/*
 * 0 with *ret filled (host_vm_free it); on failure a negative errno and one
 * line in err: -ESRCH, -EEXIST, -ENOENT, -EINVAL for what the options name
 * wrongly, other values for what could not be done (-EACCES, -EPROTO, ...).
 */
int host_vm_find(const char *root, const char *vm_spec, const char *const *vcpu_items, size_t nitems,
		 struct host_vm *ret, struct lat_error *err);

#endif
