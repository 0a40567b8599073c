/*
 * The agent's recording: a trace ring (trace/ring.h) of the last seconds of
 * the scheduler, interrupt, migration and (where the kernel has them) KVM
 * events on every host CPU, and the episodes of a vCPU read from it
 * (host/episodes.h).  The agent reads the kernel's buffers each tick, so
 * memory stays bounded by keep_ns however long it runs.
 */
#ifndef LATSCOPE_HOST_RECORD_H
#define LATSCOPE_HOST_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "host/session.h"

#define HOST_KEEP_DEFAULT_NS (10ull * 1000000000ull)

struct host_record;

/* Record on every online CPU, holding keep_ns (0: the default).  Mounts
 * tracefs where it is not mounted (host_record_mounted says so).  -errno with
 * err saying why: no tracefs, not root, built without tracefs. */
int host_record_start(uint64_t keep_ns, struct host_record **ret, struct lat_error *err);
/* kvm_exit and kvm_entry are recorded (the kernel has them). */
bool host_record_kvm(const struct host_record *r);
/* The agent's tick: read what the kernel holds. */
void host_record_tick(void *ctx);
/* What a session reads its episodes from. */
struct host_source host_record_source(struct host_record *r);
const char *host_record_mounted(const struct host_record *r);
/* As trace_ring_stop(); NULL is a no-op (1). */
int host_record_stop(struct host_record *r, struct lat_error *note);

#endif
