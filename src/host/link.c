#include "host/link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "core/nstime.h"
#include "serve/addr.h"

#define OPT "option '--host'"

/* Poll fd for events until deadline: 1 ready, 0 timed out, -errno. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		const uint64_t now = mono_ns();
		if (now >= deadline_ns)
			return 0;
		uint64_t ms = (deadline_ns - now + NS_PER_MS - 1u) / NS_PER_MS;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, ms > 60000u ? 60000 : (int)ms);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* A non-blocking connect finished by deadline: 0 or -errno. */
static int connect_by(int fd, const struct sockaddr *sa, socklen_t len, uint64_t deadline_ns)
{
	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS && errno != EAGAIN)
		return -errno;
	int r = wait_fd(fd, POLLOUT, deadline_ns);
	if (r <= 0)
		return r ? r : -ETIMEDOUT;
	int e = 0;
	socklen_t elen = sizeof(e);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		return -errno;
	return -e;
}

static int open_unix(const char *spec, const char *path, uint64_t deadline_ns,
		     struct lat_error *err)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	if (!*path || strlen(path) >= sizeof(un.sun_path))
		return err_set(err, -EINVAL,
			       OPT ": '%s': the path is empty or longer than %zu bytes", spec,
			       sizeof(un.sun_path) - 1u);
	strcpy(un.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, OPT ": '%s': %s", spec, strerror(errno));
	int r = connect_by(fd, (const struct sockaddr *)&un, sizeof(un), deadline_ns);
	if (r < 0) {
		close(fd);
		return err_set(err, r, OPT ": cannot connect to '%s': %s", spec, strerror(-r));
	}
	return fd;
}

static int open_vsock(const char *spec, const char *rest, uint64_t deadline_ns,
		      struct lat_error *err)
{
	char *end;
	errno = 0;
	unsigned long cid = strtoul(rest, &end, 10);
	unsigned long port = *end == ':' ? strtoul(end + 1, &end, 10) : 0;
	if (errno || *end || rest[0] < '0' || rest[0] > '9' || cid > UINT32_MAX || port == 0 ||
	    port > UINT32_MAX)
		return err_set(err, -EINVAL, OPT ": '%s' is not vsock:CID:PORT (decimal numbers)",
			       spec);
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, OPT ": '%s': this kernel has no vsock (%s)", spec,
			       strerror(errno));
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK,
				  .svm_cid = (unsigned)cid,
				  .svm_port = (unsigned)port };
	int r = connect_by(fd, (const struct sockaddr *)&vm, sizeof(vm), deadline_ns);
	if (r < 0) {
		close(fd);
		return err_set(err, r, OPT ": cannot connect to '%s': %s", spec, strerror(-r));
	}
	return fd;
}

static int open_tcp(const char *spec, uint64_t deadline_ns, struct lat_error *err)
{
	struct listen_addr a;
	int r = sock_addr_parse("--host", spec, &a, err);
	if (r < 0)
		return r;
	int fd = socket(a.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, OPT ": '%s': %s", spec, strerror(errno));
	if ((r = connect_by(fd, (const struct sockaddr *)&a.sa, a.len, deadline_ns)) < 0) {
		close(fd);
		return err_set(err, r, OPT ": cannot connect to '%s': %s", spec, strerror(-r));
	}
	return fd;
}

/* A virtio-serial port is a character device; a tty is set raw, so no byte
 * of a message is taken for a control character or echoed back. */
static int open_serial(const char *spec, const char *dev, struct lat_error *err)
{
	int fd = open(dev, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, -errno, OPT ": cannot open '%s': %s", dev, strerror(errno));
	struct termios t;
	if (isatty(fd) && tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		if (tcsetattr(fd, TCSANOW, &t) < 0) {
			const int e = errno;
			close(fd);
			return err_set(err, -e, OPT ": '%s': cannot make the tty raw: %s", spec,
				       strerror(e));
		}
	}
	return fd;
}

int host_link_open(const char *spec, uint64_t deadline_ns, struct host_link *l,
		   struct lat_error *err)
{
	int fd;

	if (strncmp(spec, "serial:", 7) == 0)
		fd = open_serial(spec, spec + 7, err);
	else if (strncmp(spec, "unix:", 5) == 0)
		fd = open_unix(spec, spec + 5, deadline_ns, err);
	else if (strncmp(spec, "vsock:", 6) == 0)
		fd = open_vsock(spec, spec + 6, deadline_ns, err);
	else
		fd = open_tcp(spec, deadline_ns, err);
	if (fd < 0)
		return fd;
	host_link_adopt(l, fd);
	return 0;
}

void host_link_adopt(struct host_link *l, int fd)
{
	l->fd = fd;
	l->lb.start = l->lb.len = 0;
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int host_link_send(struct host_link *l, const char *line, uint64_t deadline_ns)
{
	const size_t n = strlen(line);
	if (n == 0 || line[n - 1u] != '\n' || memchr(line, '\n', n - 1u) || n > HOST_LINE_MAX)
		return -EINVAL;
	for (size_t done = 0; done < n;) {
		/* a host gone must be an error here, not a SIGPIPE that ends the run */
		ssize_t w = send(l->fd, line + done, n - done, MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(l->fd, line + done, n - done); /* a serial port */
		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return errno == ECONNRESET ? -EPIPE : -errno;
		int r = wait_fd(l->fd, POLLOUT, deadline_ns);
		if (r <= 0)
			return r ? r : -ETIMEDOUT;
	}
	return 0;
}

int host_link_recv(struct host_link *l, const char **line, uint64_t deadline_ns)
{
	for (;;) {
		char *got;
		size_t len, room;
		int r = host_linebuf_line(&l->lb, &got, &len);
		if (r != 0) {
			*line = got;
			return r < 0 ? r : 0;
		}
		char *tail = host_linebuf_tail(&l->lb, &room);
		ssize_t n = read(l->fd, tail, room);
		if (n > 0) {
			host_linebuf_added(&l->lb, (size_t)n);
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		int w = wait_fd(l->fd, POLLIN, deadline_ns);
		if (w <= 0)
			return w ? w : -ETIMEDOUT;
	}
}

void host_link_close(struct host_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->lb.start = l->lb.len = 0;
}
