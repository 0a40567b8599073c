/*
 * --web-config FILE: the Prometheus exporter-toolkit web configuration
 * (node_exporter's --web.config.file), so that a fleet's Prometheus, already
 * set up for its exporters, scrapes latscope the same way:
 *
 *   tls_server_config:     cert_file, key_file, client_auth_type,
 *                          client_ca_file, min_version, max_version,
 *                          cipher_suites, curve_preferences,
 *                          prefer_server_cipher_suites
 *   http_server_config:    http2 (read, no effect: the server speaks HTTP/1.1)
 *   basic_auth_users:      USER: bcrypt hash
 *
 * Read as exporter-toolkit reads it: an unknown or repeated key is an error,
 * paths are relative to the file's directory, TLS is on when cert_file,
 * key_file, client_auth_type or client_ca_file is set, and then needs both
 * files.  Refused besides: a password that is not a bcrypt hash, a key file
 * others may read, a client certificate to verify without client_ca_file,
 * and http_server_config's headers (not served).
 */
#ifndef LATSCOPE_SERVE_WEBCFG_H
#define LATSCOPE_SERVE_WEBCFG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "serve/webtls.h"

struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$, cost 04-31 */
};

struct web_config {
	bool tls;
	char *cert_pem, *key_pem; /* the files' text, for libmicrohttpd */
	char *ca_pem;		  /* client_ca_file's; NULL: none */
	enum web_client_auth client_auth;
	char priorities[WEB_PRIORITIES_MAX]; /* for GnuTLS */
	struct web_user *users;		     /* basic_auth_users; none: no password asked */
	size_t nusers;
};

/*
 * Read and check path.  0 and *ret (free with web_config_free), or a
 * negative errno and "'PATH': line N: reason" (or "cannot read 'PATH': ...")
 * in err; *ret untouched.
 */
int web_config_load(const char *path, struct web_config **ret, struct lat_error *err);

/* NULL: nothing. */
void web_config_free(struct web_config *c);

/* "$2y$10$" + 53 characters of bcrypt's base64, cost 04-31. */
bool web_is_bcrypt(const char *hash);

#endif
