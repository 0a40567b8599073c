/*
 * A file written whole or not at all: the data goes to a temporary file beside
 * the target, which replaces the target only once it is complete and on disk.
 * Opening early proves the path writable before any work is done.
 */
#ifndef LATSCOPE_SYS_ATOMICFILE_H
#define LATSCOPE_SYS_ATOMICFILE_H

#include <stddef.h>

struct atomic_file {
	char *path;
	char *tmp;
	int fd;
};

/* -errno (-EISDIR for a directory); ret untouched on failure. */
int atomic_file_open(const char *path, struct atomic_file *ret);
/* Append to the temporary file. */
int atomic_file_write(struct atomic_file *f, const void *data, size_t len);
/* Put the file in place (fsync, rename, fsync the directory). */
int atomic_file_commit(struct atomic_file *f);
/* Remove the temporary file if it is still there; safe after commit and on a zeroed struct. */
void atomic_file_close(struct atomic_file *f);

#endif
