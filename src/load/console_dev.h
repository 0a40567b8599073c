/*
 * The devices a console load may write into: a terminal or /dev/kmsg, nothing
 * else.  latscope runs as root: a dev= naming a file or a disk would be overwritten.
 */
#ifndef LATSCOPE_LOAD_CONSOLE_DEV_H
#define LATSCOPE_LOAD_CONSOLE_DEV_H

#include <stddef.h>

#include "core/error.h"

/* 0 when path leads to a terminal or /dev/kmsg, else -errno (-ENOTTY: something
 * else) with the reason in err.  Opens nothing but an O_PATH descriptor. */
int console_dev_check(const char *path, struct lat_error *err);

/* The same check, then a blocking write-only descriptor on that very device
 * (O_NOCTTY, O_CLOEXEC), or -errno with the reason in err. */
int console_dev_open(const char *path, struct lat_error *err);

#endif
