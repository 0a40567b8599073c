#include "host/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/parse.h"

#define NOT_LISTEN "option '--listen': '%s' is not unix:PATH, ADDR:PORT (a numeric IPv4 address or [IPv6]) or vsock:PORT"

static int parse_vsock(const char *s, const char *p, struct host_listen *l, struct lat_error *err)
{
	uint64_t v;
	int r = parse_u64(p, &v);

	if (r == -EINVAL)
		return err_set(err, -EINVAL, NOT_LISTEN, s);
	if (r < 0 || v >= UINT32_MAX)    /* VMADDR_PORT_ANY is -1U */
		return err_set(err, -EINVAL, "option '--listen': '%s': the port is not in 0-%u", s, UINT32_MAX - 1u);
	l->kind = HOST_LISTEN_VSOCK;
	l->vsock_port = (uint32_t)v;
	return 0;
}

int host_listen_parse(const char *s, struct host_listen *ret, struct lat_error *err)
{
	struct host_listen l = { 0 };
	int r = 0;

	if (!strncmp(s, "unix:", 5)) {
		l.kind = HOST_LISTEN_UNIX;
		if (!s[5])
			return err_set(err, -EINVAL, "option '--listen': 'unix:' names no path");
		if (strlen(s + 5) >= sizeof(l.path))
			return err_set(err, -EINVAL, "option '--listen': the unix socket's path is longer than %zu bytes",
				       sizeof(l.path) - 1);
		memcpy(l.path, s + 5, strlen(s + 5) + 1);
	} else if (!strncmp(s, "vsock:", 6)) {
		r = parse_vsock(s, s + 6, &l, err);
	} else {
		l.kind = HOST_LISTEN_TCP;
		r = listen_addr_parse(s, &l.tcp, NULL);
		if (r == -ERANGE)
			return err_set(err, -EINVAL, "option '--listen': '%s': the port is not in 0-65535", s);
		if (r < 0 || l.tcp.none)
			return err_set(err, -EINVAL, NOT_LISTEN, s);
	}
	if (r == 0)
		*ret = l;
	return r;
}

bool host_listen_is_local(const struct host_listen *l)
{
	if (l->kind == HOST_LISTEN_UNIX)
		return true;
	if (l->kind != HOST_LISTEN_TCP)
		return false;
	if (l->tcp.sa.ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)&l->tcp.sa)->sin_addr.s_addr) >> 24) == 127u;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&l->tcp.sa)->sin6_addr);
}

int host_cidr_parse(const char *s, struct host_cidr *ret, struct lat_error *err)
{
	struct host_cidr c = { 0 };
	char host[INET6_ADDRSTRLEN + 2];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);

	if (n >= sizeof(host) || n == 0)
		goto bad;
	memcpy(host, s, n);
	host[n] = '\0';
	if (host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	if (inet_pton(AF_INET, host, c.addr) == 1)
		c.family = AF_INET;
	else if (inet_pton(AF_INET6, host, c.addr) == 1)
		c.family = AF_INET6;
	else
		goto bad;
	const unsigned max = c.family == AF_INET ? 32u : 128u;
	c.bits = max;
	if (slash) {
		const char *p = slash + 1;
		unsigned v = 0;
		if (!*p || strlen(p) > 3 || strspn(p, "0123456789") != strlen(p))
			goto bad;
		for (; *p; p++)
			v = v * 10u + (unsigned)(*p - '0');
		if (v > max)
			return err_set(err, -EINVAL, "option '--allow': '%s': a prefix of %u bits is longer than the address",
				       s, v);
		c.bits = v;
	}
	*ret = c;
	return 0;
bad:
	return err_set(err, -EINVAL, "option '--allow': '%s' is not an address block (such as 10.0.0.0/8, 192.168.1.5, "
		       "fd00::/8)", s);
}

bool host_cidr_match(const struct host_cidr *c, const struct sockaddr_storage *sa)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *a;

	if (sa->ss_family == AF_INET && c->family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (sa->ss_family == AF_INET6) {
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (c->family == AF_INET) {
			if (memcmp(a, mapped, sizeof(mapped)) != 0)
				return false;
			a += sizeof(mapped);
		}
	} else {
		return false;
	}
	unsigned full = c->bits / 8u, rest = c->bits % 8u;
	if (memcmp(a, c->addr, full) != 0)
		return false;
	return !rest || ((a[full] ^ c->addr[full]) & (uint8_t)(0xffu << (8u - rest))) == 0;
}

/* A socket file left at path by an agent that is gone is removed; anything else stays. */
static int clear_path(const char *path, struct lat_error *err)
{
	struct stat st;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_set(err, -errno, "cannot listen on 'unix:%s': %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return err_set(err, -EEXIST, "cannot listen on 'unix:%s': the file exists and is not a socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? -EADDRINUSE : 0;
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return err_set(err, r, "cannot listen on 'unix:%s': another program listens there", path);
	if (unlink(path) < 0)
		return err_set(err, -errno, "cannot remove the old socket 'unix:%s': %s", path, strerror(errno));
	return 0;
}

/* The socket address of l, and its length. */
static socklen_t address(const struct host_listen *l, struct sockaddr_storage *sa)
{
	memset(sa, 0, sizeof(*sa));
	switch (l->kind) {
	case HOST_LISTEN_UNIX: {
		struct sockaddr_un *un = (struct sockaddr_un *)sa;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, l->path, strlen(l->path) + 1);
		return sizeof(*un);
	}
	case HOST_LISTEN_VSOCK: {
		struct sockaddr_vm *vm = (struct sockaddr_vm *)sa;
		vm->svm_family = AF_VSOCK;
		vm->svm_cid = VMADDR_CID_ANY;
		vm->svm_port = l->vsock_port;
		return sizeof(*vm);
	}
	case HOST_LISTEN_TCP:
		break;
	}
	memcpy(sa, &l->tcp.sa, sizeof(*sa));
	return l->tcp.len;
}

static void describe(struct host_listener *h, const struct sockaddr_storage *sa)
{
	char a[96];

	if (h->where.kind == HOST_LISTEN_UNIX) {
		snprintf(h->bound, sizeof(h->bound), "unix:%s", h->where.path);
	} else if (h->where.kind == HOST_LISTEN_VSOCK) {
		snprintf(h->bound, sizeof(h->bound), "vsock:%u", ((const struct sockaddr_vm *)sa)->svm_port);
	} else {
		listen_addr_format(sa, a, sizeof(a));
		snprintf(h->bound, sizeof(h->bound), "%s", a);
	}
}

int host_listen_open(const struct host_listen *l, struct host_listener *ret, struct lat_error *err)
{
	struct host_listener h = { .fd = -1, .where = *l };
	struct sockaddr_storage sa;
	socklen_t len = address(l, &sa);
	int one = 1, r;

	describe(&h, &sa);
	if (l->kind == HOST_LISTEN_UNIX && (r = clear_path(l->path, err)) < 0)
		return r;
	h.fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h.fd < 0 && l->kind == HOST_LISTEN_VSOCK && (errno == EAFNOSUPPORT || errno == ENODEV))
		return err_set(err, -errno, "option '--listen': this host has no AF_VSOCK (load the vhost_vsock module)");
	if (h.fd < 0)
		return err_set(err, -errno, "cannot listen on '%s': %s", h.bound, strerror(errno));
	if (l->kind == HOST_LISTEN_TCP)
		setsockopt(h.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h.fd, (struct sockaddr *)&sa, len) < 0) {
		r = err_set(err, -errno, "cannot listen on '%s': %s", h.bound, strerror(errno));
		close(h.fd);
		return r;
	}
	h.made_path = l->kind == HOST_LISTEN_UNIX;
	len = sizeof(sa);
	if (listen(h.fd, 4) < 0 || getsockname(h.fd, (struct sockaddr *)&sa, &len) < 0) {
		r = err_set(err, -errno, "cannot listen on '%s': %s", h.bound, strerror(errno));
		host_listen_close(&h);
		return r;
	}
	describe(&h, &sa);
	*ret = h;
	return 0;
}

void host_listen_close(struct host_listener *l)
{
	if (l->fd < 0)
		return;
	close(l->fd);
	l->fd = -1;
	if (l->made_path)
		unlink(l->where.path);
	l->made_path = false;
}
