/*
 * Where `latscope host` listens (--listen) and whom it answers (--allow):
 *   unix:PATH      a unix socket (QEMU's -chardev socket,path=PATH connects to
 *                  it for a virtio-serial port); removed when the agent ends
 *   ADDR:PORT      TCP on a numeric address (serve/addr.h); port 0: a free one
 *   vsock:PORT     AF_VSOCK, where the host has it
 * Anything but loopback or a unix socket is reachable from elsewhere: the
 * command asks for --allow and --secret there (host_listen_is_local).
 */
#ifndef LATSCOPE_HOST_LISTEN_H
#define LATSCOPE_HOST_LISTEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/error.h"
#include "serve/addr.h"

#define HOST_DEFAULT_LISTEN "127.0.0.1:9465"

enum host_listen_kind { HOST_LISTEN_UNIX, HOST_LISTEN_TCP, HOST_LISTEN_VSOCK };

struct host_listen {
	enum host_listen_kind kind;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct listen_addr tcp;
	uint32_t vsock_port;
};

/* 0, or -EINVAL with "option '--listen': ..." in err. */
int host_listen_parse(const char *s, struct host_listen *ret, struct lat_error *err);
/* A unix socket or a loopback address: reachable from this host only. */
bool host_listen_is_local(const struct host_listen *l);

/* An address block of --allow: "10.0.0.0/8", "192.168.1.5", "[fd00::]/8", "::1". */
struct host_cidr {
	int family;                     /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned bits;
};

int host_cidr_parse(const char *s, struct host_cidr *ret, struct lat_error *err);
/* sa (an IPv4 peer, also as ::ffff:a.b.c.d) is in c. */
bool host_cidr_match(const struct host_cidr *c, const struct sockaddr_storage *sa);

struct host_listener {
	int fd;
	struct host_listen where;
	bool made_path;                 /* the unix socket file is ours to remove */
	char bound[160];                /* "unix:PATH", "127.0.0.1:41234", "vsock:5000" */
};

/* Bind and listen: 0 with *ret, or -errno with err naming the address. */
int host_listen_open(const struct host_listen *l, struct host_listener *ret, struct lat_error *err);
/* Close it and remove its unix socket file; a no-op on fd -1. */
void host_listen_close(struct host_listener *l);

#endif
