/*
 * The guest's end of its link to `latscope host`: one byte stream, messages
 * one line each (doc/host-protocol.md).  --host names it:
 *   serial:DEVICE    a virtio-serial port (/dev/virtio-ports/NAME) or a tty,
 *                    the channel that needs no network in the guest;
 *   vsock:CID:PORT   AF_VSOCK, where the guest has it;
 *   unix:PATH        a unix socket (the agent on this machine, and the tests);
 *   ADDR:PORT        TCP to a numeric IPv4 or [IPv6] address.
 * Every wait has a deadline (CLOCK_MONOTONIC ns): a host that does not answer
 * costs the run a timeout, never a hang.
 */
#ifndef LATSCOPE_HOST_LINK_H
#define LATSCOPE_HOST_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "host/proto.h"

struct host_link {
	int fd;
	struct host_linebuf lb; /* what was read and not yet taken as a line */
};

/* Connect (or open) what spec names, by deadline: 0, or -errno with err naming
 * option '--host', the spec and the reason. */
int host_link_open(const char *spec, uint64_t deadline_ns, struct host_link *l,
		   struct lat_error *err);

/* Send line, which ends in its one newline (as host/proto.h's encoders make
 * it), whole, by deadline: 0 or -ETIMEDOUT, -EPIPE (the host went away),
 * -EINVAL (no newline at the end, or one before it). */
int host_link_send(struct host_link *l, const char *line, uint64_t deadline_ns);

/* The next line, without its newline and NUL-terminated, valid until the next
 * call: 0, or -ETIMEDOUT, -ECONNRESET (the host closed the link), -EMSGSIZE
 * (a line longer than HOST_LINE_MAX: the link is of no more use), -errno. */
int host_link_recv(struct host_link *l, const char **line, uint64_t deadline_ns);

/* Wrap an open descriptor (a socketpair's end, in tests); the link owns it. */
void host_link_adopt(struct host_link *l, int fd);

void host_link_close(struct host_link *l);

#endif
