/*
 * --host on a measuring command: the secret checked before anything runs,
 * the agent reached before the run (or the run goes on without it, said once),
 * and its answers written into the result after the run (host/guest.h).
 */
#ifndef LATSCOPE_MEASURE_HOSTASK_H
#define LATSCOPE_MEASURE_HOSTASK_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "host/guest.h"
#include "host/secret.h"
#include "probe/params.h"

struct hostask {
	uint8_t secret[HOST_SECRET_MAX];
	size_t secret_len;
	bool has_secret;
	struct host_guest *g; /* NULL: not asking */
};

/* --host-secret without --host, or a secret file that will not do: -errno with
 * err naming the option (a usage error: -EINVAL, -EPERM, -ENOENT). */
int hostask_check(struct hostask *h, const char *host, const char *host_secret,
		  struct lat_error *err);

/* Before the run (stop signals blocked): connect.  A host out of reach is a
 * note of res (printed with the others, once); the run goes on. */
void hostask_start(struct hostask *h, const char *host, const struct run_params *rp,
		   struct result *res);

/* After the run, before the result is summed up: the answers into res. */
void hostask_finish(struct hostask *h, const char *cmd, struct result *res);

#endif
