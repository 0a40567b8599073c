/*
 * The TLS part of starting libmicrohttpd, kept apart from the rest of the
 * daemon's options (serve/http.c): the flags and an MHD_OPTION_ARRAY of
 * options that --web-config's tls_server_config asks for.
 *
 * libmicrohttpd asks a client for a certificate (GNUTLS_CERT_REQUEST) when it
 * has a trust list, but neither requires nor verifies one.  So when a
 * connection starts, before its handshake, the policy is set on its GnuTLS
 * session: required (GNUTLS_CERT_REQUIRE) and verified against client_ca_file
 * by GnuTLS during the handshake (gnutls_session_set_verify_cert), as Go's
 * RequireAndVerifyClientCert does.  A session that cannot be set so is shut.
 */
#ifndef LATSCOPE_SERVE_MHDTLS_H
#define LATSCOPE_SERVE_MHDTLS_H

#include <microhttpd.h>

#include "core/error.h"
#include "serve/webcfg.h"

struct mhd_tls {
	unsigned flags;			  /* MHD_USE_TLS, or 0 */
	struct MHD_OptionItem options[8]; /* for MHD_OPTION_ARRAY; ends with MHD_OPTION_END */
};

/*
 * ret for web (NULL or without TLS: no flags, no options).  web must outlive
 * the daemon.  -ENOENT with the reason in err when GnuTLS's functions cannot
 * be found in the loaded libmicrohttpd.
 */
int mhd_tls_options(const struct web_config *web, struct mhd_tls *ret, struct lat_error *err);

/*
 * Set web's client certificate policy on c's session, from the daemon's
 * MHD_OPTION_NOTIFY_CONNECTION at MHD_CONNECTION_NOTIFY_STARTED (serve/http.c
 * has the one notifier MHD keeps).  Nothing for a web without TLS or NULL.
 */
void mhd_tls_started(const struct web_config *web, struct MHD_Connection *c);

#endif
