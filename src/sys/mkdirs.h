/* Directories made on the way to a file latscope keeps. */
#ifndef LATSCOPE_SYS_MKDIRS_H
#define LATSCOPE_SYS_MKDIRS_H

#include <sys/types.h>

/*
 * Create dir and the directories above it that are missing, each with mode
 * (less what the umask takes), like mkdir -p: 0 when dir is a directory now,
 * else -errno (-ENOTDIR when something else has its name).  Directories that
 * already exist keep their mode.
 */
int make_dirs(const char *dir, mode_t mode);

/*
 * The same, making only what lies below top: top must be a directory already
 * (else -ENOENT or -ENOTDIR) and dir top or a path under it (else -EINVAL).
 */
int make_dirs_under(const char *top, const char *dir, mode_t mode);

#endif
