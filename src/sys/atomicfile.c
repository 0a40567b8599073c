#include "sys/atomicfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TMP_TAG ".latscope-"
#define TMP_RANDOM 12
#define TMP_BASE_MAX 200                /* of the target's name in the temporary one: NAME_MAX is 255 */
#define STALE_AGE_S 300                 /* a named temporary file this old, unlocked, has no writer */

/* ".NAME.latscope-" (NAME cut to fit), the prefix of NAME's temporary files. */
static char *tmp_prefix(const char *name)
{
	char *p;
	return asprintf(&p, ".%.*s" TMP_TAG, TMP_BASE_MAX, name) < 0 ? NULL : p;
}

/* A new name for a temporary file: the prefix and random letters. */
static char *tmp_name(const char *name)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[TMP_RANDOM];
	char *prefix = tmp_prefix(name), *p = NULL;

	if (!prefix)
		return NULL;
	if (getrandom(rnd, sizeof(rnd), 0) == (ssize_t)sizeof(rnd)) {
		char tail[TMP_RANDOM + 1];
		for (size_t i = 0; i < TMP_RANDOM; i++)
			tail[i] = letters[rnd[i] % (sizeof(letters) - 1u)];
		tail[TMP_RANDOM] = '\0';
		if (asprintf(&p, "%s%s", prefix, tail) < 0)
			p = NULL;
	}
	free(prefix);
	return p;
}

static bool all_of(const char *s, const char *set, size_t len)
{
	return strlen(s) == len && strspn(s, set) == len;
}

/* A file of ours, left by a writer that is gone: safe to remove. */
static bool stale(int dirfd, const char *entry, const char *prefix, const char *legacy)
{
	struct stat st, again;
	const char *rest;
	bool gone = false;

	if (fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    time(NULL) - st.st_mtime < STALE_AGE_S)
		return false;
	if (strncmp(entry, legacy, strlen(legacy)) == 0) {
		/* What latscope 0.1.0 left: .NAME.tmp-PID, never locked; its pid tells. */
		rest = entry + strlen(legacy);
		if (*rest == '\0' || strlen(rest) > 10 || strspn(rest, "0123456789") != strlen(rest))
			return false;
		long pid = strtol(rest, NULL, 10);
		return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
	}
	rest = entry + strlen(prefix);
	if (strncmp(entry, prefix, strlen(prefix)) != 0 || !all_of(rest, "abcdefghijklmnopqrstuvwxyz0123456789", TMP_RANDOM))
		return false;
	/* A writer holds its lock until it commits or dies. */
	int fd = openat(dirfd, entry, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	gone = flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &again) == 0 && again.st_ino == st.st_ino &&
	       again.st_dev == st.st_dev;
	close(fd);
	return gone;
}

/* Remove the temporary files of name that a killed writer left. */
static void remove_stale(int dirfd, const char *name)
{
	char *prefix = tmp_prefix(name), *legacy = NULL;
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d && fd >= 0)
		close(fd);
	if (!d || !prefix || asprintf(&legacy, ".%s.tmp-", name) < 0)
		legacy = NULL;
	while (d && prefix && legacy && (e = readdir(d)))
		if (e->d_name[0] == '.' && stale(dirfd, e->d_name, prefix, legacy))
			unlinkat(dirfd, e->d_name, 0);
	if (d)
		closedir(d);
	free(prefix);
	free(legacy);
}

/* A named temporary file in dirfd, locked; its name in *ret_tmp. */
static int open_named(int dirfd, const char *name, char **ret_tmp)
{
	for (int tries = 0; tries < 100; tries++) {
		char *tmp = tmp_name(name);
		if (!tmp)
			return -ENOMEM;
		int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			flock(fd, LOCK_EX | LOCK_NB);
			*ret_tmp = tmp;
			return fd;
		}
		free(tmp);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* An unnamed temporary file in dirfd that linkat can name later, or -1. */
static int open_unnamed(int dirfd)
{
	char proc[64];
	struct stat st;
	int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno == EOPNOTSUPP || errno == EISDIR || errno == ENOENT || errno == EINVAL ? -1 : -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (stat(proc, &st) < 0) {              /* no /proc: linkat could not name it */
		close(fd);
		return -1;
	}
	/* Named for a moment before the rename: locked like a named one. */
	flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

/* Standard output or error, when path is a link to the file it is open on; else -1. */
static int std_fd_behind(const char *path, const struct stat *st)
{
	struct stat link, s;

	if (lstat(path, &link) < 0 || !S_ISLNK(link.st_mode))
		return -1;
	for (int fd = 1; fd <= 2; fd++)
		if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fd;
	return -1;
}

/* A socket's file, connected to: stream or datagram, whichever it is. */
static int connect_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const int types[] = { SOCK_STREAM, SOCK_DGRAM };

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1u);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (const struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EPROTOTYPE)
			return -e;
	}
	return -EPROTOTYPE;
}

/* The descriptor a file written in place is written through. */
static int open_through(const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") == 0 ? 1 : -1;

	if (fd < 0 && stat(path, &st) < 0)
		return -errno;
	if (fd < 0)
		fd = std_fd_behind(path, &st);
	if (fd >= 0)
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else if (S_ISSOCK(st.st_mode))
		return connect_socket(path);
	else
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Written in place (see the header): "-", a device, FIFO or socket, or standard output behind a link. */
static bool written_in_place(const char *path, const struct stat *st, bool exists)
{
	if (strcmp(path, "-") == 0)
		return true;
	if (!exists || S_ISDIR(st->st_mode))
		return false;
	return !S_ISREG(st->st_mode) || std_fd_behind(path, st) >= 0;
}

static int open_in_place(const char *path, bool fifo, struct atomic_file *ret)
{
	struct atomic_file f = { .fd = -1, .dirfd = -1, .through = true };

	if (!(f.path = strdup(path)))
		return -ENOMEM;
	/* Proved writable now, as a file to replace is; a FIFO only when its reader is there. */
	if (fifo && access(path, W_OK) < 0) {
		free(f.path);
		return -errno;
	}
	if (!fifo && (f.fd = open_through(path)) < 0) {
		int r = f.fd;
		free(f.path);
		return r;
	}
	*ret = f;
	return 0;
}

static int open_in_dir(const char *path, bool named, struct atomic_file *ret)
{
	struct stat st;
	struct atomic_file f = { .fd = -1, .dirfd = -1 };
	char *dcopy = strdup(path), *bcopy = strdup(path);
	int r = -ENOMEM;

	if (!*path) {
		r = -ENOENT;
		goto fail;
	}
	const bool exists = stat(path, &st) == 0;
	if ((exists && S_ISDIR(st.st_mode)) || path[strlen(path) - 1] == '/') {
		r = -EISDIR;
		goto fail;
	}
	if (written_in_place(path, &st, exists)) {
		free(dcopy);
		free(bcopy);
		return open_in_place(path, exists && S_ISFIFO(st.st_mode), ret);
	}
	if (!dcopy || !bcopy || !(f.path = strdup(path)) || !(f.name = strdup(basename(bcopy))))
		goto fail;
	if (!f.name[0] || strcmp(f.name, ".") == 0 || strcmp(f.name, "..") == 0 || strcmp(f.name, "/") == 0) {
		r = -EISDIR;
		goto fail;
	}
	f.dirfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f.dirfd < 0) {
		r = -errno;
		goto fail;
	}
	remove_stale(f.dirfd, f.name);
	f.fd = named ? -1 : open_unnamed(f.dirfd);
	if (f.fd == -1)
		f.fd = open_named(f.dirfd, f.name, &f.tmp);
	if (f.fd < 0) {
		r = f.fd;
		goto fail;
	}
	free(dcopy);
	free(bcopy);
	*ret = f;
	return 0;
fail:
	if (f.dirfd >= 0)
		close(f.dirfd);
	free(f.path);
	free(f.name);
	free(dcopy);
	free(bcopy);
	return r;
}

int atomic_file_open(const char *path, struct atomic_file *ret)
{
	return open_in_dir(path, false, ret);
}

int atomic_file_open_named(const char *path, struct atomic_file *ret)
{
	return open_in_dir(path, true, ret);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

bool atomic_file_is_terminal(const struct atomic_file *f)
{
	return f->through && f->fd >= 0 && isatty(f->fd);
}

/* A file written in place, open (a FIFO's first write opens it) and after what stdio holds. */
static int through_ready(struct atomic_file *f)
{
	if (f->fd < 0 && (f->fd = open_through(f->path)) < 0) {
		int r = f->fd;
		f->fd = -1;
		return r;
	}
	/* Standard output may be the same file: what was printed to it comes first. */
	fflush(NULL);
	return 0;
}

int atomic_file_write(struct atomic_file *f, const void *data, size_t len)
{
	int r;

	if (f->through && (r = through_ready(f)) < 0)
		return r;
	return f->fd < 0 ? -EBADF : write_all(f->fd, data, len);
}

/* The end of a file written in place: what the device or reader says of the data. */
static int commit_in_place(struct atomic_file *f, bool replace)
{
	int r;

	if (!replace)
		return -EEXIST;
	if ((r = through_ready(f)) < 0)
		return r;
	/* Only a disk's data is made durable: a terminal, pipe or socket has no fsync. */
	r = fsync(f->fd) < 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP ? -errno : 0;
	if (close(f->fd) < 0 && r == 0)
		r = -errno;
	f->fd = -1;
	return r;
}

/* The file being replaced lends its permission bits and owner (set-id bits
 * never: they would not mean the same on this file). */
static int keep_mode(struct atomic_file *f)
{
	struct stat st;

	if (fstatat(f->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (fchown(f->fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
		return -errno;
	return fchmod(f->fd, st.st_mode & 0777) < 0 ? -errno : 0;
}

/* Give the unnamed temporary file a name. */
static int link_unnamed(struct atomic_file *f, const char *name)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
	return linkat(AT_FDCWD, proc, f->dirfd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

static int put_in_place(struct atomic_file *f, bool replace)
{
	int r;

	if (!f->tmp) {
		/* The target's name, if it is free; else a temporary one to rename from. */
		r = link_unnamed(f, f->name);
		if (r != -EEXIST || !replace)
			return r;
		for (int tries = 0; r == -EEXIST && tries < 100; tries++) {
			free(f->tmp);
			if (!(f->tmp = tmp_name(f->name)))
				return -ENOMEM;
			r = link_unnamed(f, f->tmp);
		}
		if (r < 0) {
			free(f->tmp);
			f->tmp = NULL;
			return r;
		}
	}
	if (replace)
		return renameat(f->dirfd, f->tmp, f->dirfd, f->name) < 0 ? -errno : 0;
	if (renameat2(f->dirfd, f->tmp, f->dirfd, f->name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A file system without RENAME_NOREPLACE: a hard link cannot replace either. */
	if (linkat(f->dirfd, f->tmp, f->dirfd, f->name, 0) < 0)
		return -errno;
	unlinkat(f->dirfd, f->tmp, 0);
	return 0;
}

static int commit(struct atomic_file *f, bool replace)
{
	int r;

	if (f->through)
		return commit_in_place(f, replace);
	if (f->fd < 0)
		return -EBADF;
	if ((replace && (r = keep_mode(f)) < 0) || (r = fsync(f->fd) < 0 ? -errno : 0) < 0)
		return r;
	if ((r = put_in_place(f, replace)) < 0)
		return r;
	free(f->tmp);
	f->tmp = NULL;
	r = close(f->fd) < 0 ? -errno : 0;
	f->fd = -1;
	if (r == 0 && fsync(f->dirfd) < 0)
		r = -errno;
	return r;
}

int atomic_file_commit(struct atomic_file *f)
{
	return commit(f, true);
}

int atomic_file_commit_new(struct atomic_file *f)
{
	return commit(f, false);
}

void atomic_file_close(struct atomic_file *f)
{
	/* Only an opened one has a path; a zeroed one's fd 0 is not ours. */
	if (!f->path)
		return;
	if (f->tmp && f->dirfd >= 0)
		unlinkat(f->dirfd, f->tmp, 0);
	if (f->fd >= 0)
		close(f->fd);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->tmp);
	free(f->path);
	free(f->name);
	*f = (struct atomic_file){ .fd = -1, .dirfd = -1 };
}
