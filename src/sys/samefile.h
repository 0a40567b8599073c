/* Whether two paths a command writes to are one file. */
#ifndef LATSCOPE_SYS_SAMEFILE_H
#define LATSCOPE_SYS_SAMEFILE_H

#include <stdbool.h>

/*
 * True when a and b name one file: by device and inode when both exist (a
 * symbolic link counts as what it points to); when neither exists yet, when
 * they are the same name in the same directory (by its device and inode, or,
 * when that does not exist either, by the path without "." parts and
 * doubled slashes).  One existing and the other not: different.
 */
bool same_file(const char *a, const char *b);

#endif
