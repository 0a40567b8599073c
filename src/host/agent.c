#include "host/agent.h"

#include <errno.h>
#include <linux/vm_sockets.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "host/proto.h"
#include "host/session.h"

#define TOO_LONG "a message is longer than 65536 bytes"
#define BUSY "this agent serves one client at a time, and one is connected"
#define NOT_ALLOWED "this address is not allowed (--allow)"

struct client {
	int fd;
	char peer[128];
	struct host_session session;
	struct host_linebuf lb;
};

static void note(const struct host_agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(const struct host_agent *a, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!a->note)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	a->note(a->note_ctx, line);
}

static bool send_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		n -= (size_t)w;
	}
	return true;
}

/* An error line without seq, sent to fd on its way out. */
static void send_error(int fd, const char *text)
{
	struct host_msg m = { .op = HOST_OP_ERROR };
	char *line;

	snprintf(m.error, sizeof(m.error), "%s", text);
	if (host_encode_msg(&m, true, &line) == 0) {
		send_all(fd, line, strlen(line));
		free(line);
	}
}

static void peer_text(const struct sockaddr_storage *sa, char *buf, size_t size)
{
	if (sa->ss_family == AF_INET || sa->ss_family == AF_INET6)
		listen_addr_format(sa, buf, size);
	else if (sa->ss_family == AF_VSOCK)
		snprintf(buf, size, "vsock CID %u", ((const struct sockaddr_vm *)sa)->svm_cid);
	else
		snprintf(buf, size, "a local client");
}

static bool allowed(const struct host_agent *a, const struct sockaddr_storage *sa)
{
	if (!a->nallow || (sa->ss_family != AF_INET && sa->ss_family != AF_INET6))
		return true;
	for (size_t i = 0; i < a->nallow; i++)
		if (host_cidr_match(&a->allow[i], sa))
			return true;
	return false;
}

static void drop(const struct host_agent *a, struct client *c, const char *why)
{
	if (c->fd < 0)
		return;
	note(a, "client %s %s", c->peer, why);
	host_session_end(&c->session);
	close(c->fd);
	c->fd = -1;
}

/* A new connection: the client, or turned away. */
static void accept_one(const struct host_agent *a, struct client *c)
{
	struct sockaddr_storage sa = { 0 };
	socklen_t len = sizeof(sa);
	struct timeval tv = { .tv_sec = HOST_SEND_TIMEOUT_S };
	uint8_t nonce[HOST_NONCE_BYTES];
	char peer[128], *line = NULL;
	int fd = accept4(a->listener->fd, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	peer_text(&sa, peer, sizeof(peer));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	const char *refuse = c->fd >= 0 ? BUSY : !allowed(a, &sa) ? NOT_ALLOWED : NULL;
	if (!refuse && getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		refuse = "the agent has no random nonce to give";
	if (refuse) {
		note(a, "client %s turned away: %s", peer, refuse);
		send_error(fd, refuse);
		close(fd);
		return;
	}
	c->fd = fd;
	c->lb.start = c->lb.len = 0;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	host_session_start(&c->session, a->vm, a->src, a->secret, a->secret_len, nonce);
	note(a, "client %s connected", peer);
	if (host_session_greeting(&c->session, &line) < 0 || !send_all(fd, line, strlen(line)))
		drop(a, c, "lost before its greeting");
	free(line);
}

/* Answer the whole lines c has sent, which arrived at t2. */
static void answer(const struct host_agent *a, struct client *c, uint64_t t2)
{
	char *line, *out;
	size_t len;
	int r;

	while (c->fd >= 0 && (r = host_linebuf_line(&c->lb, &line, &len)) != 0) {
		struct host_reply ans;
		if (r < 0) {
			send_error(c->fd, TOO_LONG);
			drop(a, c, "closed: " TOO_LONG);
			return;
		}
		host_session_line(&c->session, line, len, t2, &ans);
		if (ans.greet) {
			uint8_t nonce[HOST_NONCE_BYTES];
			if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
				drop(a, c, "closed: the agent has no random nonce to give");
				return;
			}
			r = host_session_renew(&c->session, nonce, ans.msg.token, &out);
		} else {
			r = host_reply_encode(&c->session, &ans, mono_ns(), &out);
		}
		if (r < 0) {
			drop(a, c, "closed: out of memory");
			return;
		}
		bool sent = send_all(c->fd, out, strlen(out));
		free(out);
		if (!sent)
			drop(a, c, "gone (or not reading)");
		else if (ans.close)
			drop(a, c, ans.msg.error[0] ? ans.msg.error : "closed");
	}
}

static void serve_client(const struct host_agent *a, struct client *c)
{
	size_t room;
	char *tail = host_linebuf_tail(&c->lb, &room);
	ssize_t n = read(c->fd, tail, room);
	uint64_t t2 = mono_ns();

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		drop(a, c, n == 0 ? "left" : "lost");
		return;
	}
	host_linebuf_added(&c->lb, (size_t)n);
	answer(a, c, t2);
}

int host_agent_run(const struct host_agent *a, const sigset_t *stop, struct lat_error *err)
{
	struct client *c = calloc(1, sizeof(*c));
	int sfd = signalfd(-1, stop, SFD_CLOEXEC | SFD_NONBLOCK), r = 0;

	if (!c || sfd < 0) {
		r = c ? err_set(err, -errno, "cannot wait for signals: %s", strerror(errno)) : err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	c->fd = -1;
	uint64_t next_tick = 0;
	while (r == 0) {
		struct pollfd p[3] = { { sfd, POLLIN, 0 }, { a->listener->fd, POLLIN, 0 }, { c->fd, POLLIN, 0 } };
		uint64_t now = mono_ns();
		if (a->tick && now >= next_tick) {
			a->tick(a->tick_ctx);
			next_tick = now + HOST_TICK_NS;
		}
		int wait_ms = a->tick ? (int)((next_tick - now) / 1000000u) + 1 : -1;
		if (poll(p, c->fd >= 0 ? 3 : 2, wait_ms) < 0) {
			if (errno != EINTR)
				r = err_set(err, -errno, "poll: %s", strerror(errno));
			continue;
		}
		struct signalfd_siginfo si;
		if (p[0].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			r = (int)si.ssi_signo;
		else if (c->fd >= 0 && p[2].revents)
			serve_client(a, c);
		else if (p[1].revents)
			accept_one(a, c);
	}
	if (c->fd >= 0)
		drop(a, c, "closed: the agent stops");
out:
	if (sfd >= 0)
		close(sfd);
	free(c);
	return r;
}
