/*
 * The host agent's loop: one listening socket, at most one client at a
 * time (a second gets an error line and is closed), the stop signals through
 * a signalfd.  Each client's lines go through its session (host/session.h);
 * t2 is read as soon as the read that completed a line returns, t3 just
 * before its answer is written.  The agent starts nothing on request and
 * answers only about the VM it was given.
 */
#ifndef LATSCOPE_HOST_AGENT_H
#define LATSCOPE_HOST_AGENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "host/listen.h"
#include "host/session.h"
#include "host/vcpus.h"

#define HOST_SEND_TIMEOUT_S 2           /* a client that does not read is dropped */
#define HOST_TICK_NS 500000000u         /* how often tick runs: the recording's reads */

struct host_agent {
	const struct host_vm *vm;
	const uint8_t *secret;          /* NULL: no authentication */
	size_t secret_len;
	const struct host_cidr *allow;  /* TCP clients must be in one of these; none: any */
	size_t nallow;
	const struct host_listener *listener;
	const struct host_source *src;  /* the recording explain reads; NULL: none */
	void (*tick)(void *ctx);        /* every HOST_TICK_NS between messages; may be NULL */
	void *tick_ctx;
	/* What happened, one line each ("client 127.0.0.1:4321 connected"); may be NULL. */
	void (*note)(void *ctx, const char *line);
	void *note_ctx;
};

/* Serve until one of stop (blocked by the caller) arrives: the signal's
 * number, or a negative errno with err. */
int host_agent_run(const struct host_agent *a, const sigset_t *stop, struct lat_error *err);

#endif
