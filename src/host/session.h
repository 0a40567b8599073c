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

#include "host/episodes.h"
#include "host/proto.h"
#include "host/proto_explain.h"
#include "host/vcpus.h"

#define HOST_NONCE_BYTES (HOST_NONCE_HEX / 2)

#define HOST_NOT_RECORDING "this agent does not record the vCPUs yet"
#define HOST_AUTH_FAILED "authentication failed"

/* Where the episodes come from: the agent's recording (host/record.h). */
struct host_source {
	/* As host_episodes(), over the recorded events; -errno with err saying why. */
	int (*episodes)(void *ctx, const struct host_episodes_query *q, struct host_answer *ret, size_t max,
			size_t *ret_n, size_t *ret_more, uint64_t *ret_complete_from, struct lat_error *err);
	void *ctx;
};

struct host_session {
	const struct host_vm *vm;
	const struct host_source *src;  /* NULL: not recording (explain answers so) */
	struct host_explain_reply *ex;  /* the last explain's answer, owned */
	const uint8_t *secret;          /* NULL: no authentication */
	size_t secret_len;
	char nonce[HOST_NONCE_HEX + 1];
	bool hello;                     /* the client said hello (and proved the secret) */
};

struct host_reply {
	bool hello;                     /* the hello reply (the VM); else msg */
	bool explained;                 /* the explain answer in the session's ex; else msg */
	bool greet;                     /* a greet: the agent starts the session over (host_session_renew) */
	struct host_msg msg;
	bool close;                     /* close the connection once it is sent */
};

/* A new session for vm (secret: NULL for none) with this nonce; src NULL: not recording. */
void host_session_start(struct host_session *s, const struct host_vm *vm, const struct host_source *src,
			const uint8_t *secret, size_t secret_len, const uint8_t nonce[HOST_NONCE_BYTES]);
void host_session_end(struct host_session *s);
/* Its greeting line: 0 or -ENOMEM. */
int host_session_greeting(const struct host_session *s, char **ret_line);

/* A greet's answer: the session started over with this nonce, and its
 * greeting carrying the greet's token.  0 or -ENOMEM. */
int host_session_renew(struct host_session *s, const uint8_t nonce[HOST_NONCE_BYTES], const char *token,
		       char **ret_line);

/* The answer to one line, which was read at t2 (CLOCK_MONOTONIC ns). */
void host_session_line(struct host_session *s, const char *line, size_t len, uint64_t t2, struct host_reply *ret);

/* The answer as a line, t3 (the send time) put in a time reply: 0 or -ENOMEM. */
int host_reply_encode(struct host_session *s, struct host_reply *a, uint64_t t3, char **ret_line);

/* The hex HMAC a client sends in its hello for this nonce and secret. */
void host_session_auth(const char nonce[HOST_NONCE_HEX + 1], const uint8_t *secret, size_t secret_len,
		       char out[HOST_AUTH_HEX + 1]);

#endif
