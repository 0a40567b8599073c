#include <errno.h>
#include <sys/mman.h>

#include "sys/prep.h"

int memlock_all(void)
{
	return mlockall(MCL_CURRENT) < 0 ? -errno : 0;
}

void memlock_release(void)
{
	munlockall();
}
