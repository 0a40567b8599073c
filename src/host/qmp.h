/*
 * QEMU's machine protocol (QMP), the little of it that finds the vCPU
 * threads: connect to the monitor's unix socket (libvirt's guests have one
 * too), read the greeting {"QMP": {...}}, send {"execute":"qmp_capabilities"},
 * then {"execute":"query-cpus-fast"}, whose return is a list of CpuInfoFast
 * (qapi/machine.json): each with "cpu-index" and "thread-id".  Events
 * ({"event": ...}) may come between and are passed over.
 */
#ifndef LATSCOPE_HOST_QMP_H
#define LATSCOPE_HOST_QMP_H

#include <stddef.h>

#include "core/error.h"
#include "host/vcpus.h"

#define HOST_QMP_TIMEOUT_S 5            /* for each answer */

/* The greeting: 0, or -EPROTO. */
int host_qmp_greeting(const char *line, size_t len, struct lat_error *err);

/*
 * A reply line: 1 for an event (wait for the next line), 0 for a return,
 * -EPROTO for an error (its class and desc in err) or anything else.  With
 * vm not NULL, the return is query-cpus-fast's and its CPUs are added to vm.
 */
int host_qmp_reply(const char *line, size_t len, struct host_vm *vm, struct lat_error *err);

/* vm's vCPUs (vm->vcpus, without names) from the QMP socket at path. */
int host_qmp_query(const char *path, struct host_vm *vm, struct lat_error *err);

#endif
