/* The user's --load-cmd, run by the supervisor. */
#ifndef LATSCOPE_LOAD_COMMAND_H
#define LATSCOPE_LOAD_COMMAND_H

#include <sys/types.h>

/* Fork /bin/sh -c cmd as the leader of a new process group, stdin from
 * /dev/null.  Returns its pid (= its process group) or -errno. */
pid_t command_spawn(const char *cmd);

#endif
