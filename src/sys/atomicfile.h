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
 *
 * Only a regular file is replaced.  A target that is a character or block
 * device, a FIFO or a socket (or a symbolic link to one) is written in place,
 * as a shell's redirection would: /dev/null stays a device, a FIFO's reader
 * gets the data.  So is "-", standard output, and a symbolic link to the file
 * standard output or error is open on (/dev/stdout when it is a file).  A FIFO
 * is opened at the first write or the commit: opening waits for its reader,
 * which the command should not wait for before its work is done.
 */
#ifndef LATSCOPE_SYS_ATOMICFILE_H
#define LATSCOPE_SYS_ATOMICFILE_H

#include <stdbool.h>
#include <stddef.h>

struct atomic_file {
	char *path;                     /* the target as given */
	char *name;                     /* its name in dir; NULL when written in place */
	char *tmp;                      /* the temporary file's name in dir; NULL when it has none */
	int fd;
	int dirfd;                      /* -1 when written in place */
	bool through;                   /* written in place, not replaced (see above) */
};

/* -errno (-EISDIR for a directory); ret untouched on failure. */
int atomic_file_open(const char *path, struct atomic_file *ret);
/* The same, always with a named temporary file: what a file system without
 * O_TMPFILE gets. */
int atomic_file_open_named(const char *path, struct atomic_file *ret);
/* The output is a terminal: what a caller escapes its text for. */
bool atomic_file_is_terminal(const struct atomic_file *f);
/* Append to the temporary file (or write to the file written in place). */
int atomic_file_write(struct atomic_file *f, const void *data, size_t len);
/* Put the file in place, replacing the target (fsync, rename, fsync the
 * directory); for a file written in place, the end of the writing: the error
 * a device gives (ENOSPC from /dev/full) comes from here or the write. */
int atomic_file_commit(struct atomic_file *f);
/* The same, but -EEXIST (and nothing changed) when the target exists, as a
 * file written in place always does. */
int atomic_file_commit_new(struct atomic_file *f);
/* Remove the temporary file if it is still there; safe after commit and on a
 * struct that was zeroed or initialized { .fd = -1 }. */
void atomic_file_close(struct atomic_file *f);

#endif
