#include "serve/webfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(int fd, char *text, struct lat_error *err, int r, const char *path, const char *why)
{
	close(fd);
	free(text);
	return err_set(err, r, "cannot read '%s': %s", path, why);
}

int web_file_read(const char *path, char **ret_text, mode_t *ret_mode, struct lat_error *err)
{
	struct stat st;
	/* O_NONBLOCK: a FIFO put in a certificate's place must not hang the start */
	const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return err_set(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return fail(fd, NULL, err, -errno, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(fd, NULL, err, -EINVAL, path, "not a regular file");
	if (st.st_size > WEB_FILE_MAX)
		return fail(fd, NULL, err, -EFBIG, path, "larger than 1 MiB");
	char *text = malloc((size_t)st.st_size + 1u);
	if (!text)
		return fail(fd, NULL, err, -ENOMEM, path, "out of memory");
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		const ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(fd, text, err, -errno, path, strerror(errno));
		if (n == 0)
			break; /* shrunk while read: what is there is the file */
		got += (size_t)n;
	}
	text[got] = '\0';
	if (memchr(text, '\0', got))
		return fail(fd, text, err, -EINVAL, path, "a NUL byte in a text file");
	close(fd);
	*ret_text = text;
	*ret_mode = st.st_mode;
	return 0;
}
