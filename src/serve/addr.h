/*
 * The --listen value: "ADDR:PORT" with ADDR a numeric IPv4 address or a
 * bracketed IPv6 one ("127.0.0.1:9464", "[::1]:9464"), or "none".  No host
 * names: resolving one would make the bound address depend on DNS.
 */
#ifndef LATSCOPE_SERVE_ADDR_H
#define LATSCOPE_SERVE_ADDR_H

#include <stdbool.h>
#include <sys/socket.h>

#include "core/error.h"

struct listen_addr {
	bool none; /* "none": serve nothing */
	struct sockaddr_storage sa;
	socklen_t len;
};

/* 0, or -EINVAL with "option '--listen': 'S' is not ADDR:PORT ..." in err. */
int listen_addr_parse(const char *s, struct listen_addr *ret, struct lat_error *err);

/* ADDR:PORT for any option (opt: "--host"); 0, or -EINVAL / -ERANGE with
 * "option '--host': 'S' is not ADDR:PORT ..." in err.  ret->none is false. */
int sock_addr_parse(const char *opt, const char *s, struct listen_addr *ret, struct lat_error *err);

/* "127.0.0.1:9464" / "[::1]:9464" of a bound address, for messages. */
void listen_addr_format(const struct sockaddr_storage *sa, char *buf, size_t size);

#endif
