/*
 * Who may hold one of the HTTP server's connections, and for how long.
 *
 * libmicrohttpd's timeout is an idle one: a client that sends one header
 * line every few seconds (a slowloris) keeps its connection for ever, and
 * once its connection limit is full it stops accepting, so a scraper waits
 * in the listen queue behind the attackers.  The guard adds what it lacks:
 *
 *  - a deadline: a connection has request_ns to deliver a whole request,
 *    counted from its accept or from the end of its last answer; past it,
 *    it is cut;
 *  - room for a newcomer: once max_open connections wait for requests, a
 *    new one cuts the one that has waited longest (it is refused only when
 *    every connection is being answered).
 *
 * A connection being answered is never cut here: the server's idle timeout
 * covers a client that stops reading.  A cut is shutdown(2) of the socket:
 * the server sees the stream end and closes it in its own thread, so a cut
 * connection keeps its slot, uncounted, until serve_guard_closed().  Every
 * function is thread-safe: the server's thread reports, a watcher thread
 * enforces the deadlines.
 */
#ifndef LATSCOPE_SERVE_GUARD_H
#define LATSCOPE_SERVE_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct serve_guard;

/* How a connection is cut (NULL: shutdown(fd, SHUT_RDWR)); tests watch it. */
typedef void serve_guard_cut_fn(int fd);

/* The most connections the server may hold at once for a guard of
 * max_open: the open ones and as many cut but not yet closed. */
#define SERVE_GUARD_SLOTS(max_open) (2u * (max_open))

/* 0 or -ENOMEM; *ret untouched on failure. */
int serve_guard_new(unsigned max_open, uint64_t request_ns, serve_guard_cut_fn *cut,
		    struct serve_guard **ret);

/* A thread that cuts overdue connections every period_ns, until
 * serve_guard_free().  0 or a negative errno. */
int serve_guard_watch(struct serve_guard *g, uint64_t period_ns);

/* May one more connection be accepted at now?  Cuts the overdue ones, then,
 * when max_open still wait, the one waiting longest; false only when every
 * open connection is being answered. */
bool serve_guard_admit(struct serve_guard *g, uint64_t now);

/* The server took connection key (its socket fd) at now.  With no slot free
 * (the server broke its limit), the connection is cut at once. */
void serve_guard_opened(struct serve_guard *g, const void *key, int fd, uint64_t now);

/* Its request is whole and being answered: no deadline until answered. */
void serve_guard_answering(struct serve_guard *g, const void *key);

/* Its answer is sent (or abandoned): the next request is due request_ns
 * after now. */
void serve_guard_answered(struct serve_guard *g, const void *key, uint64_t now);

/* The server closed it: its slot is free. */
void serve_guard_closed(struct serve_guard *g, const void *key);

/* Cut every connection overdue at now; returns how many were cut. */
unsigned serve_guard_expire(struct serve_guard *g, uint64_t now);

/* Open connections not cut (for tests). */
unsigned serve_guard_open(struct serve_guard *g);

/* Stop the watcher and free g (NULL: nothing). */
void serve_guard_free(struct serve_guard *g);

#endif
