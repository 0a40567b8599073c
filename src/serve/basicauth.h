/*
 * HTTP basic authentication (RFC 7617) against basic_auth_users' bcrypt
 * hashes, checked with libxcrypt's crypt_rn.  Every refusal costs as much as
 * an acceptance: an unknown user's password is hashed too, and hashes are
 * compared in constant time, so timing tells no one which users exist.
 */
#ifndef LATSCOPE_SERVE_BASICAUTH_H
#define LATSCOPE_SERVE_BASICAUTH_H

#include <stdbool.h>

#include "serve/webcfg.h"

/* The realm asked for in WWW-Authenticate. */
#define BASIC_AUTH_CHALLENGE "Basic realm=\"latscope\", charset=\"UTF-8\""

/* authorization (the header's value; NULL: none) names a user of c with
 * the right password.  True when c has no users (nothing to ask). */
bool basic_auth_allows(const struct web_config *c, const char *authorization);

#endif
