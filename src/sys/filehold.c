#include "sys/filehold.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/atomicfile.h"
#include "sys/mkdirs.h"
#include "sys/pidns.h"
#include "sys/statefile.h"
#include "sys/textfile.h"

#define STATE_PREFIX "tune-"
#define STATE_MAGIC  "latscope tune 1"

/* Where the state files and the lock are: a test's directory, or TUNE_STATE_DIR. */
static const char *state_dir(const struct tune_where *w)
{
	return w && w->state_dir ? w->state_dir : TUNE_STATE_DIR;
}

void file_hold_init(struct file_hold *h)
{
	memset(h, 0, sizeof(*h));
}

/* What a kernel answers for one object that cannot take the value: an
 * optional write (a managed IRQ's affinity) is passed over for it.  EPERM
 * too: a managed interrupt refuses root with it on some kernels (6.18: a
 * virtio block queue's), and only root applies a hold. */
static bool refused(int r)
{
	return r == -EIO || r == -EINVAL || r == -EPERM;
}

static const char *needs_root(int r)
{
	return r == -EACCES || r == -EPERM ? " (needs root)" : "";
}

/* A path the state file may name: below the root, one word. */
static bool path_ok(const char *rel)
{
	return rel[0] && rel[0] != '/' && !strstr(rel, "..") && !strpbrk(rel, " \t\n");
}

static int full_path(const char *root, const char *rel, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", root, rel);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* value and a newline to the kernel file root/rel, in one write, as sysfs wants it. */
static int put(const char *root, const char *rel, const char *value,
	       int (*refuse)(const char *path))
{
	char path[512], line[300];
	int r = full_path(root, rel, path, sizeof(path));
	int n = snprintf(line, sizeof(line), "%s\n", value);
	if (r < 0 || n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	if (refuse && (r = refuse(path)) < 0)
		return r;
	/* Never O_CREAT: only the kernel's files.  O_TRUNC as the shell's > has it: the
	 * kernel's files ignore it, a test's fake file would keep a longer old tail. */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t done;
	do
		done = write(fd, line, (size_t)n);
	while (done < 0 && errno == EINTR);
	r = done == n ? 0 : done < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

static int put_failed(struct lat_error *err, int r, const char *root, const char *rel)
{
	if (r == -ENOENT)
		return err_set(err, r, "cannot write '%s/%s': it is gone", root, rel);
	return err_set(err, r, "cannot write '%s/%s': %s%s", root, rel, strerror(-r),
		       needs_root(r));
}

/*
 * The value to write back for what a file reads: the marked choice of
 * "always [madvise] never"; anything else (a list, a mask with or without
 * commas, a number) is taken back as read.
 */
static int keepable(const char *root, const char *rel, char *ret, size_t size,
		    struct lat_error *err)
{
	char path[512], text[1024];
	int r = full_path(root, rel, path, sizeof(path));
	if (r < 0 || (r = textfile_read(path, text, sizeof(text))) < 0)
		return err_set(err, r, "cannot read '%s/%s': %s%s", root, rel, strerror(-r),
			       needs_root(r));
	if (strchr(text, '[') && textfile_choice(text, '[', ']', text, sizeof(text)) < 0)
		return err_set(err, -EINVAL, "cannot read '%s': no [choice] in it", path);
	if (strchr(text, '\n'))
		return err_set(err, -EINVAL, "cannot keep '%s': more than one line", path);
	if (strlen(text) >= size)
		return err_set(err, -E2BIG, "cannot keep '%s': its value is too long", path);
	strcpy(ret, text);
	return 0;
}

static int write_state_file(struct file_hold *h, const char *dir, const char *fix, size_t n,
			    struct lat_error *err)
{
	struct atomic_file f = { .fd = -1 };
	char head[192];
	int r;

	int len = snprintf(h->file, sizeof(h->file), "%s/" STATE_PREFIX "%s-%lu-%ld", dir, fix,
			   pidns_self(), (long)getpid());
	if (len < 0 || (size_t)len >= sizeof(h->file)) {
		h->file[0] = '\0';
		return err_set(err, -ENAMETOOLONG, "cannot name a state file in '%s'", dir);
	}
	if ((r = make_dirs(dir, 0755)) < 0 || (r = atomic_file_open(h->file, &f)) < 0)
		goto out;
	r = statefile_head(STATE_MAGIC, head, sizeof(head));
	if (r == 0) {
		size_t at = strlen(head);
		snprintf(head + at, sizeof(head) - at, "fix %s\n", fix);
		r = atomic_file_write(&f, head, strlen(head));
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		char line[512];
		snprintf(line, sizeof(line), "old %d %s %s\n", h->old[i].optional, h->old[i].path,
			 h->old[i].value);
		r = atomic_file_write(&f, line, strlen(line));
	}
	/* Never over another's: a killed run's file with this pid holds the true old values. */
	if (r == 0)
		r = atomic_file_commit_new(&f);
out:
	atomic_file_close(&f);
	if (r == -EEXIST)
		err_set(err, r,
			"'%s' exists: fix '%s' is held by this process, or was by a killed one",
			h->file, fix);
	else if (r < 0)
		err_set(err, r, "cannot write '%s': %s%s", h->file, strerror(-r), needs_root(r));
	if (r < 0)
		h->file[0] = '\0';
	return r;
}

static bool fix_name_ok(const char *fix)
{
	size_t len = fix ? strlen(fix) : 0;
	return len > 0 && len < 64 && strspn(fix, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

int file_hold_apply(const struct tune_where *w, const char *fix, const struct tune_plan *p,
		    struct file_hold *h, struct lat_error *err)
{
	const char *root = w && w->sysroot ? w->sysroot : "/";
	size_t len = strlen(root);
	int r;

	file_hold_init(h);
	h->refuse = w ? w->refuse : NULL;
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= sizeof(h->root))
		return err_set(err, -ENAMETOOLONG, "the sysfs root is too long");
	memcpy(h->root, root, len);
	if (!fix_name_ok(fix))
		return err_set(err, -EINVAL, "'%s' is no fix name", fix ? fix : "");
	if (p->n == 0)
		return 0;
	if (!(h->old = calloc(p->n, sizeof(*h->old))))
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n; i++) {
		struct tune_write *o = &h->old[i];
		if (!path_ok(p->w[i].path)) {
			r = err_set(err, -EINVAL, "'%s' is not a file below the root",
				    p->w[i].path);
			goto fail;
		}
		strcpy(o->path, p->w[i].path);
		o->optional = p->w[i].optional;
		if ((r = keepable(h->root, o->path, o->value, sizeof(o->value), err)) < 0)
			goto fail;
	}
	/* Named before changed: a kill from here on leaves what to restore. */
	if ((r = write_state_file(h, state_dir(w), fix, p->n,
				  err)) < 0)
		goto fail;
	for (size_t i = 0; i < p->n; i++) {
		r = put(h->root, p->w[i].path, p->w[i].value, h->refuse);
		if (r < 0 && p->w[i].optional && refused(r)) {
			if (!h->skipped++)
				snprintf(h->skipped_what, sizeof(h->skipped_what), "/%s: %s",
					 p->w[i].path, strerror(-r));
			continue;
		}
		if (r < 0) {
			put_failed(err, r, h->root, p->w[i].path);
			file_hold_restore(h,
					  NULL); /* the ones before are written: back with them */
			return r;
		}
		h->old[h->n++] =
			h->old[i]; /* the done ones first: i >= n, nothing is overwritten */
	}
	return 0;
fail:
	free(h->old);
	h->old = NULL;
	return r;
}

int file_hold_restore(struct file_hold *h, struct lat_error *err)
{
	int first = 0;
	/* Backwards: a later write may rest on an earlier one (a minimum clock on its governor). */
	for (size_t k = h->n; k-- > 0;) {
		int r = put(h->root, h->old[k].path, h->old[k].value, h->refuse);
		if (r < 0 && !first)
			first = put_failed(err, r, h->root, h->old[k].path);
	}
	if (first == 0 && h->file[0] && unlink(h->file) < 0 && errno != ENOENT)
		first = err_set(err, -errno, "cannot remove '%s': %s", h->file, strerror(errno));
	free(h->old);
	h->old = NULL;
	h->n = 0;
	h->file[0] = '\0';
	return first;
}

int file_hold_keep(struct file_hold *h, struct lat_error *err)
{
	int r = 0;
	if (h->file[0] && unlink(h->file) < 0 && errno != ENOENT)
		r = err_set(err, -errno, "cannot remove '%s': %s", h->file, strerror(errno));
	free(h->old);
	h->old = NULL;
	h->n = 0;
	h->file[0] = '\0';
	return r;
}

/* ---- the state files of killed runs -------------------------------------- */

struct stale {
	const struct tune_where *w;
	char root[256];
	unsigned long self_ns;
	unsigned files;
	struct lat_error *err;
	int first;
};

/* One "old OPTIONAL PATH VALUE" line into *ret; -EINVAL when it is none. */
static int parse_old(char *line, struct tune_write *ret)
{
	int optional, at = 0;
	textfile_trim_end(line);
	if (sscanf(line, "old %d %191s %n", &optional, ret->path, &at) != 2 || !path_ok(ret->path))
		return -EINVAL;
	/* The value is the rest of the line, blanks and all ("" for an empty file). */
	const char *value = at ? line + at : "";
	if (strlen(value) >= sizeof(ret->value))
		return -EINVAL;
	strcpy(ret->value, value);
	ret->optional = optional != 0;
	return 0;
}

/* The writes back of one killed run: a file gone since has nothing left to restore. */
static int put_back(struct stale *st, const struct tune_write *old, size_t n)
{
	int first = 0;
	for (size_t k = n; k-- > 0;) {
		int r = put(st->root, old[k].path, old[k].value, st->w ? st->w->refuse : NULL);
		if (r == -ENOENT || (r < 0 && old[k].optional && refused(r)))
			continue;
		if (r < 0 && !first)
			first = put_failed(st->first ? NULL : st->err, r, st->root, old[k].path);
	}
	return first;
}

static int stale_one(const char *path, FILE *in, void *data)
{
	struct stale *st = data;
	struct statefile_owner o;
	struct tune_write *old = NULL;
	size_t n = 0;
	char line[512];
	int r = 0;

	if (statefile_read_owner(in, STATE_MAGIC, &o) < 0 || statefile_owner_alive(&o, st->self_ns))
		return 0;
	while (r == 0 && fgets(line, sizeof(line), in)) {
		struct tune_write t;
		if (strncmp(line, "old ", 4) != 0 || parse_old(line, &t) < 0)
			continue; /* the "fix" line, or one this version does not know */
		struct tune_write *more = realloc(old, (n + 1) * sizeof(*old));
		if (!more)
			r = err_set(st->first ? NULL : st->err, -ENOMEM, "out of memory");
		else
			(old = more)[n++] = t;
	}
	if (r == 0)
		r = put_back(st, old, n);
	free(old);
	if (r == 0 && unlink(path) < 0 && errno != ENOENT)
		r = err_set(st->first ? NULL : st->err, -errno, "cannot remove '%s': %s", path,
			    strerror(errno));
	if (r == 0)
		st->files++;
	else if (!st->first)
		st->first = r; /* kept, for the next run to retry; the other files go on */
	return 0;
}

static void lock_path(const struct tune_where *w, char *buf, size_t size)
{
	snprintf(buf, size, "%s/tune.lock", state_dir(w));
}

int file_hold_restore_stale(const struct tune_where *w, unsigned *ret_files, struct lat_error *err)
{
	const char *root = w && w->sysroot ? w->sysroot : "/";
	size_t len = strlen(root);
	struct stale st = { .w = w, .self_ns = pidns_self(), .err = err };

	*ret_files = 0;
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= sizeof(st.root))
		return err_set(err, -ENAMETOOLONG, "the sysfs root is too long");
	memcpy(st.root, root, len);
	int r = statefile_each(state_dir(w), STATE_PREFIX,
			       stale_one, &st, err);
	*ret_files = st.files;
	/* A killed tune's lock file, which nobody holds: removed as its holder would have. */
	char path[512];
	lock_path(w, path, sizeof(path));
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlink(path);
	if (fd >= 0)
		close(fd);
	return r < 0 ? r : st.first;
}

/* Locked: the holder's pid in the file, for the one refused. */
static int lock_taken(int fd, const char *path, struct lat_error *err)
{
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		int r = -errno;
		close(fd);
		return err_set(err, r, "cannot write '%s': %s", path, strerror(-r));
	}
	return fd;
}

int file_hold_lock(const struct tune_where *w, struct lat_error *err)
{
	const char *dir = state_dir(w);
	char path[512];
	int r;

	lock_path(w, path, sizeof(path));
	if ((r = make_dirs(dir, 0755)) < 0)
		return err_set(err, r, "cannot make '%s': %s%s", dir, strerror(-r), needs_root(r));
	for (;;) {
		struct stat st, now;
		char holder[32] = "";
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			r = -errno;
			return err_set(err, r, "cannot open '%s': %s%s", path, strerror(-r),
				       needs_root(r));
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* The holder before removes the file as it lets go: lock the one there now. */
			if (fstat(fd, &st) == 0 && stat(path, &now) == 0 && st.st_ino == now.st_ino &&
			    st.st_dev == now.st_dev)
				return lock_taken(fd, path, err);
			close(fd);
			continue;
		}
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		close(fd);
		if (r != -EBUSY)
			return err_set(err, r, "cannot lock '%s': %s", path, strerror(-r));
		return err_set(err, r,
			       "another latscope tune is running (pid %s): two would measure each "
			       "other and undo each other's changes",
			       holder[0] ? holder : "unknown");
	}
}

void file_hold_unlock(const struct tune_where *w, int fd)
{
	char path[512];
	if (fd < 0)
		return;
	lock_path(w, path, sizeof(path));
	unlink(path); /* still locked: one who opened it meanwhile sees it gone and opens anew */
	close(fd);
}
