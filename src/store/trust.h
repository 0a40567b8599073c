/*
 * Whether latscope may write a store that exists already.  A file another
 * user owns, or one others may write, is theirs to change under us: writing
 * our runs into it hands them over (they read and remove them, and SQLite
 * gives its -wal and -shm the file's owner and mode).  Reading trusts any store.
 */
#ifndef LATSCOPE_STORE_TRUST_H
#define LATSCOPE_STORE_TRUST_H

#include <sys/stat.h>
#include <sys/types.h>

#include "core/error.h"

/*
 * 0 when user me may write the store file described by st (the store itself,
 * or its -wal or -shm) without being told to trust it: a regular file of me's
 * own that neither its group nor others may write.  Otherwise -EPERM and why
 * ("it belongs to another user ..."), for the caller to put the file's name in front of.
 */
int store_trust_file(const struct stat *st, uid_t me, struct lat_error *err);

#endif
