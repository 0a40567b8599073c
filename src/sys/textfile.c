#include "sys/textfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void textfile_trim_end(char *s)
{
	size_t len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

int textfile_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int r = 0;

	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[r < 0 ? 0 : len] = '\0';
	textfile_trim_end(buf);
	return r;
}

bool textfile_has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = s; n > 0 && (p = strstr(p, word)) != NULL; p += n)
		if ((p == s || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

int textfile_choice(const char *text, char open, char close, char *buf, size_t size)
{
	const char *start = strchr(text, open);
	const char *end = start ? strchr(start + 1, close) : NULL;

	buf[0] = '\0';
	if (!end || end == start + 1)
		return -EINVAL;
	size_t len = (size_t)(end - start - 1);
	if (len >= size)
		return -ERANGE;
	memcpy(buf, start + 1, len);
	buf[len] = '\0';
	return 0;
}
