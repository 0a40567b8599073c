/*
 * Fixed-size records on pipes: workers to supervisor, supervisor to latscope.
 * Each is one write below PIPE_BUF, so records from many writers never interleave.
 */
#ifndef LATSCOPE_LOAD_MSG_H
#define LATSCOPE_LOAD_MSG_H

#include <stdint.h>

#include "core/error.h"
#include "load/load.h"

enum msg_type { MSG_READY = 1, MSG_ERROR, MSG_OUTCOME };

struct load_msg {
	int32_t type;
	int32_t error;           /* MSG_ERROR: a positive errno */
	uint32_t worker;         /* MSG_READY, MSG_ERROR from a worker: its number */
	int32_t cmd_pid;         /* MSG_READY from the supervisor: also the command's process group; 0: none */
	struct load_outcome outcome;     /* MSG_OUTCOME; both ends are the same program */
	struct lat_error why;    /* MSG_ERROR: the reason */
};

int msg_send(int fd, const struct load_msg *m);
/* An error record with the reason; returns -error for the caller to pass on. */
int msg_send_error(int fd, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The next record within timeout_ms (-1: no limit): 0, -ETIMEDOUT, -EPIPE when
 * every writer is gone, or -errno. */
int msg_recv(int fd, int timeout_ms, struct load_msg *ret);

#endif
