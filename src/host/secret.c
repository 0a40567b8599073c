#include "host/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static int check(int fd, const char *path, struct lat_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_set(err, -EPERM, "'%s' is not a regular file", path);
	if (st.st_uid != geteuid())
		return err_set(err, -EPERM, "'%s' is owned by uid %u, not by this user (uid %u)", path,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_size > HOST_SECRET_MAX + 1)
		return err_set(err, -EINVAL, "'%s' is longer than %d bytes", path, HOST_SECRET_MAX);
	if (st.st_mode & 077)
		return err_set(err, -EPERM, "'%s' has mode %04o: others may read it; a secret must be 0600 or "
			       "stricter (chmod 600 '%s')", path, (unsigned)(st.st_mode & 07777), path);
	return 0;
}

int host_secret_read(const char *path, uint8_t buf[HOST_SECRET_MAX], size_t *ret_len, struct lat_error *err)
{
	uint8_t tmp[HOST_SECRET_MAX + 1];
	size_t n = 0;
	ssize_t got = 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0 && errno == ELOOP)
		return err_set(err, -EPERM, "'%s' is a symbolic link, not a regular file", path);
	if (fd < 0)
		return err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	int r = check(fd, path, err);
	while (r == 0 && n < sizeof(tmp) && (got = read(fd, tmp + n, sizeof(tmp) - n)) > 0)
		n += (size_t)got;
	if (r == 0 && got < 0)
		r = err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	close(fd);
	if (r < 0)
		return r;
	if (n && tmp[n - 1] == '\n')
		n--;
	if (n == 0)
		return err_set(err, -EINVAL, "'%s' is empty", path);
	if (n > HOST_SECRET_MAX)
		return err_set(err, -EINVAL, "'%s' is longer than %d bytes", path, HOST_SECRET_MAX);
	memcpy(buf, tmp, n);
	memset(tmp, 0, sizeof(tmp));
	*ret_len = n;
	return 0;
}
