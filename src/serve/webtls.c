#include "serve/webtls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"

static const struct {
	const char *name;
	int version;
} versions[] = {
	{ "TLS10", 10 },
	{ "TLS11", 11 },
	{ "TLS12", 12 },
	{ "TLS13", 13 },
};

static const struct {
	const char *name;
	enum web_client_auth auth;
} auths[] = {
	{ "", WEB_NO_CLIENT_CERT },
	{ "NoClientCert", WEB_NO_CLIENT_CERT },
	{ "RequestClientCert", WEB_REQUEST_CLIENT_CERT },
	{ "RequireAnyClientCert", WEB_REQUIRE_ANY_CLIENT_CERT },
	{ "VerifyClientCertIfGiven", WEB_VERIFY_CLIENT_CERT_IF_GIVEN },
	{ "RequireAndVerifyClientCert", WEB_REQUIRE_AND_VERIFY_CLIENT_CERT },
};

/* Go's names (tls.CipherSuites(), the ones exporter-toolkit takes) and the GnuTLS key exchange
 * (NULL: TLS 1.3's, none), cipher and MAC.  Go's insecure ones it refuses, and so do we. */
static const struct {
	const char *name, *kx, *cipher, *mac;
} suites[] = {
	{ "TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305",
	  "AEAD" },
	{ "TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD" },
	{ "TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD" },
	{ "TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305", "AEAD" },
};

static const struct {
	const char *name, *group;
} curves[] = {
	{ "CurveP256", "SECP256R1" },
	{ "CurveP384", "SECP384R1" },
	{ "CurveP521", "SECP521R1" },
	{ "X25519", "X25519" },
};

int web_tls_version(const char *name, int *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
		if (!strcmp(name, versions[i].name)) {
			*ret = versions[i].version;
			return 0;
		}
	return -EINVAL;
}

int web_client_auth(const char *name, enum web_client_auth *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(auths); i++)
		if (!strcmp(name, auths[i].name)) {
			*ret = auths[i].auth;
			return 0;
		}
	return -EINVAL;
}

/* Append ":+WORD" (or ":-WORD"), once; false when buf is full. */
static bool add(char *buf, const char *sign, const char *word)
{
	char item[64];
	const size_t len = strlen(buf);

	snprintf(item, sizeof(item), ":%s%s", sign, word);
	const size_t n = strlen(item);
	for (const char *p = strstr(buf, item); p; p = strstr(p + 1, item))
		if (p[n] == ':' || p[n] == '\0')
			return true;
	if (len + n + 1u > WEB_PRIORITIES_MAX)
		return false;
	memcpy(buf + len, item, n + 1u);
	return true;
}

static int add_suites(const struct web_tls_names *n, char *buf, struct lat_error *err)
{
	bool ok =
		add(buf, "-", "CIPHER-ALL") && add(buf, "-", "MAC-ALL") && add(buf, "-", "KX-ALL");

	for (size_t i = 0; i < n->nciphers; i++) {
		size_t k = 0;
		while (k < ARRAY_SIZE(suites) && strcmp(n->ciphers[i], suites[k].name) != 0)
			k++;
		if (k == ARRAY_SIZE(suites))
			return err_set(
				err, -EINVAL,
				"cipher_suites: '%s' is not a suite Go and GnuTLS offer (AES-GCM, "
				"ChaCha20-Poly1305 or AES-CBC with SHA-1, by Go's name)",
				n->ciphers[i]);
		ok = ok && add(buf, "+", suites[k].cipher) && add(buf, "+", suites[k].mac) &&
		     (!suites[k].kx || add(buf, "+", suites[k].kx));
	}
	if (n->max_version >= 13)
		ok = ok && add(buf, "+", "AES-128-GCM") && add(buf, "+", "AES-256-GCM") &&
		     add(buf, "+", "CHACHA20-POLY1305") && add(buf, "+", "AEAD");
	return ok ? 0 : err_set(err, -E2BIG, "cipher_suites: too many");
}

int web_tls_priorities(const struct web_tls_names *n, char *buf, struct lat_error *err)
{
	static const char *const gnutls_version[] = { "VERS-TLS1.0", "VERS-TLS1.1", "VERS-TLS1.2",
						      "VERS-TLS1.3" };
	int r;

	if (n->min_version > n->max_version)
		return err_set(err, -EINVAL, "min_version: above max_version");
	snprintf(buf, WEB_PRIORITIES_MAX, "NORMAL");
	bool ok = add(buf, "-", "VERS-ALL");
	for (int v = n->min_version; v <= n->max_version; v++)
		ok = ok && add(buf, "+", gnutls_version[v - 10]);
	if (n->nciphers && (r = add_suites(n, buf, err)) < 0)
		return r;
	if (n->ncurves)
		ok = ok && add(buf, "-", "GROUP-ALL");
	for (size_t i = 0; i < n->ncurves; i++) {
		size_t k = 0;
		char group[32];
		while (k < ARRAY_SIZE(curves) && strcmp(n->curves[i], curves[k].name) != 0)
			k++;
		if (k == ARRAY_SIZE(curves))
			return err_set(err, -EINVAL,
				       "curve_preferences: '%s' is not CurveP256, "
				       "CurveP384, CurveP521 or X25519",
				       n->curves[i]);
		snprintf(group, sizeof(group), "GROUP-%s", curves[k].group);
		ok = ok && add(buf, "+", group);
	}
	if (n->prefer_server) {
		const size_t len = strlen(buf);
		ok = ok && len + sizeof(":%SERVER_PRECEDENCE") <= WEB_PRIORITIES_MAX;
		if (ok)
			memcpy(buf + len, ":%SERVER_PRECEDENCE", sizeof(":%SERVER_PRECEDENCE"));
	}
	return ok ? 0 : err_set(err, -E2BIG, "tls_server_config: too many names");
}
