#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "sys/prep.h"

int pmqos_hold(int *ret_fd)
{
	int32_t zero = 0;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		int e = errno ? errno : EIO;
		close(fd);
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

void pmqos_release(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
