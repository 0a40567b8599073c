#include "store/trust.h"

#include <errno.h>

/* What a refusal ends with: what the user can do about it. */
#define WAYS_OUT "give a store of your own, or --db-trust to write it all the same"

int store_trust_file(const struct stat *st, uid_t me, struct lat_error *err)
{
	if (!S_ISREG(st->st_mode))
		return err_set(err, -EPERM, "it is not a regular file; %s", WAYS_OUT);
	if (st->st_uid != me)
		return err_set(
			err, -EPERM,
			"it belongs to another user (uid %u; this is uid %u), who could read and "
			"remove what is stored; %s",
			(unsigned)st->st_uid, (unsigned)me, WAYS_OUT);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return err_set(err, -EPERM,
			       "other users may write it (mode %04o); chmod go-w it, or --db-trust "
			       "to write it all the same",
			       (unsigned)(st->st_mode & 07777));
	return 0;
}
