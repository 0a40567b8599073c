/*
 * tls_server_config's names (Go's crypto/tls names, as exporter-toolkit reads
 * them) turned into what GnuTLS takes: a priority string for
 * MHD_OPTION_HTTPS_PRIORITIES, and the client certificate policy.
 *
 * GnuTLS allows the TLS 1.2 suites that combine an allowed key exchange,
 * cipher and MAC, where Go lists suites; so cipher_suites allows the key
 * exchanges, ciphers and MACs its suites name, and with TLS 1.3 allowed its
 * AEAD ciphers stay allowed (Go's cipher_suites never restricts TLS 1.3).
 * Go's insecure suites (RC4, 3DES, CBC with SHA-256) are refused, as exporter-toolkit does.
 */
#ifndef LATSCOPE_SERVE_WEBTLS_H
#define LATSCOPE_SERVE_WEBTLS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

enum web_client_auth {
	WEB_NO_CLIENT_CERT,		    /* "" or NoClientCert */
	WEB_REQUEST_CLIENT_CERT,	    /* asked for, not required, not verified */
	WEB_REQUIRE_ANY_CLIENT_CERT,	    /* required, not verified */
	WEB_VERIFY_CLIENT_CERT_IF_GIVEN,    /* verified against client_ca_file when sent */
	WEB_REQUIRE_AND_VERIFY_CLIENT_CERT, /* required and verified */
};

/* TLS versions as 10..13 (TLS10 .. TLS13). */
enum { WEB_TLS_MIN_DEFAULT = 12, WEB_TLS_MAX_DEFAULT = 13, WEB_PRIORITIES_MAX = 1024 };

/* 0 and *ret set, or -EINVAL (the name is not one Go knows). */
int web_tls_version(const char *name, int *ret);
int web_client_auth(const char *name, enum web_client_auth *ret);

struct web_tls_names {
	int min_version, max_version;
	const char *const *ciphers; /* cipher_suites; NULL or none: GnuTLS's defaults */
	size_t nciphers;
	const char *const *curves; /* curve_preferences */
	size_t ncurves;
	bool prefer_server; /* prefer_server_cipher_suites */
};

/*
 * The GnuTLS priority string for n in buf[WEB_PRIORITIES_MAX].  -EINVAL with
 * "cipher_suites: 'X' is not ..." (or curve_preferences, min_version) in err.
 */
int web_tls_priorities(const struct web_tls_names *n, char *buf, struct lat_error *err);

#endif
