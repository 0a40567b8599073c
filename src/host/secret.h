/*
 * The shared secret of --secret FILE: a regular file of mode 0600 or
 * stricter, owned by the user reading it; its bytes are the secret, a
 * trailing newline left out.
 */
#ifndef LATSCOPE_HOST_SECRET_H
#define LATSCOPE_HOST_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define HOST_SECRET_MAX 4096

/* 0 with the secret in buf and its length in *ret_len; -EPERM (its type,
 * owner or mode), -EINVAL (empty or longer than HOST_SECRET_MAX), other
 * -errno, with err naming the option, the file and the reason. */
int host_secret_read(const char *path, uint8_t buf[HOST_SECRET_MAX], size_t *ret_len, struct lat_error *err);

#endif
