#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/nstime.h"
#include "load/msg.h"

_Static_assert(sizeof(struct load_msg) <= 1024, "a record must stay far below PIPE_BUF (4096) to be written atomically");

int msg_send(int fd, const struct load_msg *m)
{
	ssize_t n;

	do
		n = write(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(*m) ? 0 : -EIO;
}

int msg_send_error(int fd, int error, const char *fmt, ...)
{
	struct load_msg m = { .type = MSG_ERROR, .error = error };
	va_list ap;

	va_start(ap, fmt);
	err_vset(&m.why, 0, fmt, ap);
	va_end(ap);
	msg_send(fd, &m);
	return -error;
}

int msg_recv(int fd, int timeout_ms, struct load_msg *ret)
{
	uint64_t deadline = mono_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * NS_PER_MS;
	struct load_msg m;
	size_t got = 0;

	while (got < sizeof(m)) {
		int wait_ms = -1;
		if (timeout_ms >= 0) {
			uint64_t now = mono_ns();
			wait_ms = now >= deadline ? 0 : (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		ssize_t n = read(fd, (char *)&m + got, sizeof(m) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		got += (size_t)n;
	}
	m.why.msg[sizeof(m.why.msg) - 1] = '\0';
	*ret = m;
	return 0;
}
