/*
 * The host agent's protocol, version 1 (doc/host-protocol.md): over a byte
 * stream, one JSON object a line, each line at most HOST_LINE_MAX bytes with
 * its '\n'.  Everything here is pure: lines in, structs out, and back; the
 * agent (host/agent.h) does the reading and writing.
 */
#ifndef LATSCOPE_HOST_PROTO_H
#define LATSCOPE_HOST_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "host/vcpus.h"

#define HOST_PROTO_VERSION 1
#define HOST_LINE_MAX 65536             /* bytes of one message, its '\n' included */
#define HOST_NONCE_HEX 32               /* hex digits of the greeting's nonce */
#define HOST_AUTH_HEX 64                /* hex digits of the hello's HMAC-SHA256 */
#define HOST_CLOCK "CLOCK_MONOTONIC"
#define HOST_MIN_NS_DEFAULT 1000000u    /* explain's min_ns when a client leaves it out */

/* Lines out of a byte stream that may split them anywhere. */
struct host_linebuf {
	size_t start, len;              /* the bytes not yet taken: buf[start, len) */
	char buf[HOST_LINE_MAX];
};

/* Where the next read goes, and how much fits (never 0 while no line waits
 * that is over the limit: host_linebuf_line says so first). */
char *host_linebuf_tail(struct host_linebuf *lb, size_t *ret_room);
/* n more bytes were read into the tail. */
void host_linebuf_added(struct host_linebuf *lb, size_t n);
/* The next whole line, '\n' cut off and NUL-terminated (valid until the next
 * call): 1 with *ret_line and *ret_len, 0 when none is whole yet, -EMSGSIZE
 * when HOST_LINE_MAX bytes came without a '\n'. */
int host_linebuf_line(struct host_linebuf *lb, char **ret_line, size_t *ret_len);

/* greet: a client on a link that outlives its runs (a virtio-serial port) asks
 * for a fresh greeting, with its token, and the session starts over. */
enum host_op { HOST_OP_HELLO, HOST_OP_TIME, HOST_OP_EXPLAIN, HOST_OP_ERROR, HOST_OP_GREET };

#define HOST_TOKEN_MAX 64               /* characters of a greet's token */

/* A message of either side, by its op. */
struct host_msg {
	enum host_op op;
	bool has_seq;
	uint64_t seq;
	unsigned version;                       /* hello */
	bool has_auth;                          /* hello: the client's HMAC */
	char auth[HOST_AUTH_HEX + 1];
	uint64_t t1, t2, t3;                    /* time: t2 and t3 in the agent's reply */
	unsigned vcpu;                          /* explain */
	uint64_t from_ns, to_ns;
	uint64_t min_ns;                        /* the shortest episode asked about */
	char error[256];                        /* error */
	char token[HOST_TOKEN_MAX + 1];         /* greet */
};

/* The agent's greeting. */
struct host_greeting {
	unsigned version;
	char nonce[HOST_NONCE_HEX + 1];
	bool auth;
	char token[HOST_TOKEN_MAX + 1];         /* the greet's it answers; "" on connect */
};

/*
 * A client's line: 0 with *ret, or -EINVAL (bad JSON, not an object, a field
 * missing or of the wrong type), -ENOTSUP (an op not known), with one line in
 * err; ret->has_seq and ret->seq say the line's seq when it had a readable one,
 * so that the error carries it.
 */
int host_decode_request(const char *line, size_t len, struct host_msg *ret, struct lat_error *err);
/* An agent's line (hello's vm and vcpus are not read back: the guest side
 * that needs them reads them); the same returns. */
int host_decode_reply(const char *line, size_t len, struct host_msg *ret, struct lat_error *err);
int host_decode_greeting(const char *line, size_t len, struct host_greeting *ret, struct lat_error *err);

/*
 * Lines, '\n' included, malloc'ed into *ret_line: 0, -ENOMEM, or -EMSGSIZE
 * when the line would pass HOST_LINE_MAX.
 */
int host_encode_greeting(const struct host_greeting *g, char **ret_line);
/* A client's hello, time or explain; an agent's time or error (seq only when has_seq). */
int host_encode_msg(const struct host_msg *m, bool reply, char **ret_line);
/* The agent's hello: the VM and its vCPUs. */
int host_encode_hello_reply(const struct host_vm *vm, char **ret_line);

/* For the other message files (host/proto_explain.c): key of o as a whole
 * number >= 0: 1 when there, 0 when absent and not needed, -EINVAL. */
int host_json_u64(const json_t *o, const char *key, bool need, uint64_t *ret, struct lat_error *err);
/* o (its reference taken) as one line with its '\n': 0, -ENOMEM, -EMSGSIZE. */
int host_encode_line(json_t *o, char **ret_line);

/* bytes as lower-case hex into out (2n + 1 bytes). */
void host_hex(const uint8_t *bytes, size_t n, char *out);
/* 2n hex digits into n bytes: 0, or -EINVAL. */
int host_unhex(const char *hex, uint8_t *out, size_t n);

#endif
