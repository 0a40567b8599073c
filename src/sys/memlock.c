#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>

#include "sys/prep.h"

void memlock_prepare(void)
{
#ifdef M_ARENA_MAX
	/* Every thread that allocates would get its own 64 MiB malloc arena, and
	 * mlockall counts all of it against RLIMIT_MEMLOCK: one arena keeps the
	 * locked size to what is really used (a few MiB). */
	mallopt(M_ARENA_MAX, 1);
#endif
}

int memlock_all(void)
{
	return mlockall(MCL_CURRENT) < 0 ? -errno : 0;
}

void memlock_release(void)
{
	munlockall();
}
