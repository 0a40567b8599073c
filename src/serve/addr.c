#include "serve/addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#define NOT_ADDR_PORT "option '%s': '%s' is not ADDR:PORT (an IPv4 address or [IPv6]%s)"

/* The decimal port after the last ':'; digits only, 0..65535. */
static int parse_port(const char *opt, const char *s, const char *p, unsigned *ret, struct lat_error *err)
{
	unsigned v = 0;

	if (!*p)
		return err_set(err, -EINVAL, NOT_ADDR_PORT, opt, s, "");
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return err_set(err, -EINVAL, NOT_ADDR_PORT, opt, s, "");
		v = v * 10u + (unsigned)(*p - '0');
		if (v > 65535u)
			return err_set(err, -ERANGE, "option '%s': '%s': port is not in 0-65535", opt, s);
	}
	*ret = v;
	return 0;
}

int listen_addr_parse(const char *s, struct listen_addr *ret, struct lat_error *err)
{
	if (!strcmp(s, "none")) {
		*ret = (struct listen_addr){ .none = true };
		return 0;
	}
	int r = sock_addr_parse("--listen", s, ret, err);
	if (r == -EINVAL)       /* the listen option takes one more word */
		err_set(err, r, NOT_ADDR_PORT, "--listen", s, ", or none");
	return r;
}

int sock_addr_parse(const char *opt, const char *s, struct listen_addr *ret, struct lat_error *err)
{
	struct listen_addr a = { 0 };
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon;
	unsigned port;

	const bool v6 = s[0] == '[';
	colon = strrchr(s, ':');
	const char *hstart = s + v6, *hend = v6 ? strchr(s, ']') : colon;
	if (!colon || !hend || (v6 && hend + 1 != colon) || hend <= hstart ||
	    (size_t)(hend - hstart) >= sizeof(host))
		return err_set(err, -EINVAL, NOT_ADDR_PORT, opt, s, "");
	memcpy(host, hstart, (size_t)(hend - hstart));
	host[hend - hstart] = '\0';
	int r = parse_port(opt, s, colon + 1, &port, err);
	if (r < 0)
		return r;
	if (v6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a.sa;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return err_set(err, -EINVAL, NOT_ADDR_PORT, opt, s, "");
		a.len = sizeof(*in6);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&a.sa;
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		/* inet_pton takes only the dotted quad: no "1", no "0x7f.1". */
		if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
			return err_set(err, -EINVAL, NOT_ADDR_PORT, opt, s, "");
		a.len = sizeof(*in4);
	}
	*ret = a;
	return 0;
}

void listen_addr_format(const struct sockaddr_storage *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
	}
}
