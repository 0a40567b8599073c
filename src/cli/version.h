/*
 * What `latscope --version` prints: the version meson.build names and, when
 * the build's git describe (describe.h) says more than that, the describe in
 * parentheses.  describe is "0.2.0" on the commit tagged v0.2.0 (the v left
 * out), "0.2.0-14-g666b0e5" 14 commits after it, "8598520" where no v* tag is
 * reachable, any of them with "-dirty" for uncommitted changes, and the
 * version itself where the source is no git checkout (a release tarball).
 */
#ifndef LATSCOPE_CLI_VERSION_H
#define LATSCOPE_CLI_VERSION_H

#include <stddef.h>

/* "latscope VERSION" or "latscope VERSION (DESCRIBE)", no newline, into buf;
 * snprintf's count. */
int version_line(char *buf, size_t size, const char *version, const char *describe);

#endif
