/*
 * A guest run's conversation with `latscope host` (doc/host-protocol.md):
 * connect, the greeting and hello (with the secret's HMAC when the agent asks
 * for one), then time exchanges that line the guest's CLOCK_MONOTONIC up with
 * the host's (host/sync.h).  Every call has a deadline; nothing here prints.
 */
#ifndef LATSCOPE_HOST_CLIENT_H
#define LATSCOPE_HOST_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "host/link.h"
#include "host/proto_explain.h"
#include "host/sync.h"

struct host_client {
	struct host_link link;
	struct host_sync sync;
	uint64_t seq; /* of the last request */
	long vm_pid;  /* the agent's VM, from its hello */
	char vm_name[64];
	char found_by[32]; /* how the agent found the vCPUs */
	unsigned nvcpus;
	uint64_t t[4]; /* the last exchange: t1 t2 t3 t4 */
};

/*
 * Connect to spec (host/link.h's forms) and say hello by deadline (CLOCK_MONOTONIC
 * ns); secret (NULL: none) is what the agent's --secret file holds.  0, or
 * -errno with err saying why in one line: the link's errors, -EACCES (the
 * agent asks for a secret that was not given, or refused it), -EPROTO (not a
 * latscope host, or another version).
 */
int host_client_connect(struct host_client *c, const char *spec, const uint8_t *secret,
			size_t secret_len, uint64_t deadline_ns, struct lat_error *err);

/* One time exchange by deadline, added to c->sync: 0, or -errno with err.
 * An exchange the clock line-up refuses (host_sync_add) is 0: it is kept out. */
int host_client_exchange(struct host_client *c, uint64_t deadline_ns, struct lat_error *err);

/* The episodes of vCPU vcpu that began in [from_ns, to_ns) of host time, held
 * at least min_ns (host/episodes.h), by deadline: 0, or -errno with err
 * (-EREMOTEIO: the agent answered with an error, which err quotes). */
int host_client_explain(struct host_client *c, unsigned vcpu, uint64_t from_ns, uint64_t to_ns, uint64_t min_ns,
			uint64_t deadline_ns, struct host_explain_reply *ret, struct lat_error *err);

void host_client_close(struct host_client *c);

#endif
