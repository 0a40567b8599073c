/*
 * The files a web configuration names (itself, the certificate, the key, the
 * client CA), read whole into memory: libmicrohttpd takes PEM text, and a
 * file read once cannot change between a check and its use.
 */
#ifndef LATSCOPE_SERVE_WEBFILE_H
#define LATSCOPE_SERVE_WEBFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"

enum { WEB_FILE_MAX = 1 << 20 }; /* bytes: far above any PEM chain or web configuration */

/*
 * path's text, NUL-terminated, in *ret_text (free it) and its mode in
 * *ret_mode.  A regular file only, at most WEB_FILE_MAX bytes.  On failure
 * a negative errno and "cannot read 'PATH': reason" in err; nothing set.
 */
int web_file_read(const char *path, char **ret_text, mode_t *ret_mode, struct lat_error *err);

#endif
