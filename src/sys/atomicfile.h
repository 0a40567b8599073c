/*
 * A file written whole or not at all: the data goes to a temporary file in the
 * target's directory, which takes the target's name only once it is complete
 * and on disk.  Opening early proves the directory writable before any work
 * is done.
 *
 * The temporary file has no name where the file system allows (O_TMPFILE), so
 * a writer killed at any moment leaves nothing behind; elsewhere it is
 * .NAME.latscope-XXXXXXXXXXXX (random), locked while its writer lives, and the
 * next write to NAME removes those whose writer is gone.  A new file is 0600
 * (less what the umask takes); a replaced one keeps its permission bits, and
 * its owner where the writer may give it.  A symbolic link at the target's name
 * is replaced, never written through.
 */
#ifndef LATSCOPE_SYS_ATOMICFILE_H
#define LATSCOPE_SYS_ATOMICFILE_H

#include <stddef.h>

struct atomic_file {
	char *path;                     /* the target as given */
	char *name;                     /* its name in dir */
	char *tmp;                      /* the temporary file's name in dir; NULL when it has none */
	int fd;
	int dirfd;
};

/* -errno (-EISDIR for a directory); ret untouched on failure. */
int atomic_file_open(const char *path, struct atomic_file *ret);
/* The same, always with a named temporary file: what a file system without
 * O_TMPFILE gets. */
int atomic_file_open_named(const char *path, struct atomic_file *ret);
/* Append to the temporary file. */
int atomic_file_write(struct atomic_file *f, const void *data, size_t len);
/* Put the file in place, replacing the target (fsync, rename, fsync the directory). */
int atomic_file_commit(struct atomic_file *f);
/* The same, but -EEXIST (and nothing changed) when the target exists. */
int atomic_file_commit_new(struct atomic_file *f);
/* Remove the temporary file if it is still there; safe after commit and on a
 * struct that was zeroed or initialized { .fd = -1 }. */
void atomic_file_close(struct atomic_file *f);

#endif
