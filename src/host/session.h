/*
 * One client's conversation with the host agent, as a pure state machine:
 * a line in, the answer out (doc/host-protocol.md).  The agent reads the
 * clock and does the I/O; nothing here does.
 */
#ifndef LATSCOPE_HOST_SESSION_H
#define LATSCOPE_HOST_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/proto.h"
#include "host/vcpus.h"

#define HOST_NONCE_BYTES (HOST_NONCE_HEX / 2)

#define HOST_NOT_RECORDING "this agent does not record the vCPUs yet"
#define HOST_AUTH_FAILED "authentication failed"

struct host_session {
	const struct host_vm *vm;
	const uint8_t *secret;          /* NULL: no authentication */
	size_t secret_len;
	char nonce[HOST_NONCE_HEX + 1];
	bool hello;                     /* the client said hello (and proved the secret) */
};

struct host_answer {
	bool hello;                     /* the hello reply (the VM); else msg */
	struct host_msg msg;
	bool close;                     /* close the connection once it is sent */
};

/* A new session for vm (secret: NULL for none) with this nonce. */
void host_session_start(struct host_session *s, const struct host_vm *vm, const uint8_t *secret, size_t secret_len,
			const uint8_t nonce[HOST_NONCE_BYTES]);
/* Its greeting line: 0 or -ENOMEM. */
int host_session_greeting(const struct host_session *s, char **ret_line);

/* The answer to one line, which was read at t2 (CLOCK_MONOTONIC ns). */
void host_session_line(struct host_session *s, const char *line, size_t len, uint64_t t2, struct host_answer *ret);

/* The answer as a line, t3 (the send time) put in a time reply: 0 or -ENOMEM. */
int host_answer_encode(const struct host_session *s, struct host_answer *a, uint64_t t3, char **ret_line);

/* The hex HMAC a client sends in its hello for this nonce and secret. */
void host_session_auth(const char nonce[HOST_NONCE_HEX + 1], const uint8_t *secret, size_t secret_len,
		       char out[HOST_AUTH_HEX + 1]);

#endif
