/* --web-config: the exporter-toolkit file's reader, its TLS names and basic
 * auth (served over TLS by the real thing: tests/integration/test_webconfig.py). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/array.h"
#include "serve/basicauth.h"
#include "serve/webcfg.h"
#include "serve/webtls.h"
#include "tmpdir.h"

/* A bcrypt hash of "s3cret" at the lowest cost, so the tests stay fast. */
static char hash[128];

static void write_file(const char *name, const char *text, mode_t mode)
{
	const char *path = in_tmpdir(name);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0); /* whatever the umask */
	close(fd);
}

static int setup(void **state)
{
	struct crypt_data *d = calloc(1, sizeof(*d));
	char salt[64];

	if (make_tmpdir(state) < 0 || !d ||
	    !crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, (int)sizeof(salt)))
		return -1;
	const char *h = crypt_rn("s3cret", salt, d, (int)sizeof(*d));
	if (!h || h[0] == '*')
		return -1;
	snprintf(hash, sizeof(hash), "%s", h);
	free(d);
	write_file("cert.pem", "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
		   0644);
	write_file("key.pem", "-----BEGIN PRIVATE KEY-----\nMA==\n-----END PRIVATE KEY-----\n",
		   0600);
	write_file("open-key.pem", "-----BEGIN PRIVATE KEY-----\nMA==\n-----END PRIVATE KEY-----\n",
		   0644);
	write_file("ca.pem", "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
		   0644);
	return 0;
}

/* Load text as a web configuration: its return, the reason in err. */
static int load(const char *text, struct web_config **ret, struct lat_error *err)
{
	write_file("web.yml", text, 0600);
	return web_config_load(in_tmpdir("web.yml"), ret, err);
}

static void assert_refused(const char *text, int code, const char *reason)
{
	struct lat_error err = { { 0 } };
	struct web_config *c = NULL;

	assert_int_equal(load(text, &c, &err), code);
	assert_null(c);
	if (!strstr(err.msg, reason))
		fail_msg("'%s' lacks '%s'", err.msg, reason);
	assert_non_null(strstr(err.msg, in_tmpdir("web.yml"))); /* names the file */
	assert_null(strchr(err.msg, '\n'));
}

static void test_an_empty_file_serves_http_to_anyone(void **state)
{
	(void)state;
	struct web_config *c = NULL;

	assert_int_equal(load("", &c, NULL), 0);
	assert_false(c->tls);
	assert_int_equal(c->nusers, 0);
	assert_true(basic_auth_allows(c, NULL));
	web_config_free(c);
	assert_int_equal(load("tls_server_config: ~\nbasic_auth_users:\n", &c, NULL), 0);
	assert_false(c->tls);
	web_config_free(c);
}

static void test_tls_with_client_certificates_reads_every_file_relative_to_the_config(void **state)
{
	(void)state;
	struct web_config *c = NULL;
	struct lat_error err = { { 0 } };

	assert_int_equal(load("tls_server_config:\n"
			      "  cert_file: cert.pem\n"
			      "  key_file: key.pem\n"
			      "  client_auth_type: RequireAndVerifyClientCert\n"
			      "  client_ca_file: ca.pem\n"
			      "  min_version: TLS13\n"
			      "http_server_config:\n"
			      "  http2: false\n",
			      &c, &err),
			 0);
	assert_true(c->tls);
	assert_non_null(strstr(c->cert_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(c->key_pem, "PRIVATE KEY"));
	assert_non_null(c->ca_pem);
	assert_int_equal(c->client_auth, WEB_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_non_null(strstr(c->priorities, "+VERS-TLS1.3"));
	assert_null(strstr(c->priorities, "+VERS-TLS1.2"));
	web_config_free(c);
}

static void test_basic_auth_takes_the_right_password_only(void **state)
{
	(void)state;
	char text[512];
	struct web_config *c = NULL;

	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n  bob: \"%s\"\n", hash,
		 hash);
	assert_int_equal(load(text, &c, NULL), 0);
	assert_int_equal(c->nusers, 2);
	/* base64 of alice:s3cret, alice:wrong, carol:s3cret, alice (no colon) */
	assert_true(basic_auth_allows(c, "Basic YWxpY2U6czNjcmV0"));
	assert_true(basic_auth_allows(c, "basic   YWxpY2U6czNjcmV0  "));
	assert_false(basic_auth_allows(c, "Basic YWxpY2U6d3Jvbmc="));
	assert_false(basic_auth_allows(c, "Basic Y2Fyb2w6czNjcmV0"));
	assert_false(basic_auth_allows(c, "Basic YWxpY2U="));
	assert_false(basic_auth_allows(c, NULL));
	assert_false(basic_auth_allows(c, ""));
	assert_false(basic_auth_allows(c, "Bearer YWxpY2U6czNjcmV0"));
	assert_false(basic_auth_allows(c, "Basic YWxpY2U6czNjcmV0="));
	assert_false(basic_auth_allows(c, "Basic YWxp!2U6czNjcmV0"));
	assert_false(basic_auth_allows(c, "BasicYWxpY2U6czNjcmV0"));
	web_config_free(c);
}

static void test_a_plain_text_password_is_refused(void **state)
{
	(void)state;
	assert_refused("basic_auth_users:\n  alice: s3cret\n", -EINVAL,
		       "line 2: basic_auth_users: the password of 'alice' is not a bcrypt hash");
	assert_refused("basic_auth_users:\n  alice:\n", -EINVAL, "not a bcrypt hash");
	assert_refused("basic_auth_users:\n  alice: "
		       "'$2y$03$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n",
		       -EINVAL, "not a bcrypt hash");
}

static void test_unknown_or_repeated_keys_are_refused_with_their_line(void **state)
{
	(void)state;
	assert_refused("tls_config:\n  cert_file: cert.pem\n", -EINVAL,
		       "line 1: unknown key 'tls_config'");
	assert_refused(
		"tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  certfile: x\n",
		-EINVAL, "line 4: unknown key 'certfile' in tls_server_config");
	assert_refused("http_server_config:\n  http3: true\n", -EINVAL,
		       "unknown key 'http3' in http_server_config");
	assert_refused("http_server_config:\n  headers:\n    X-Frame-Options: deny\n", -EINVAL,
		       "headers are not supported");
	assert_refused("basic_auth_users: {}\nbasic_auth_users: {}\n", -EINVAL,
		       "line 2: the file: 'basic_auth_users' given twice");
	assert_refused("- tls_server_config\n", -EINVAL, "the file: not a mapping");
	assert_refused("tls_server_config: [1]\n", -EINVAL, "tls_server_config: not a mapping");
	assert_refused("tls_server_config: {\n", -EINVAL, "not YAML");
	assert_refused("http_server_config:\n  http2: maybe\n", -EINVAL,
		       "http2: not true or false");
}

static void test_tls_settings_that_cannot_work_are_refused(void **state)
{
	(void)state;
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n", -EINVAL, "key_file missing");
	assert_refused("tls_server_config:\n  key_file: key.pem\n", -EINVAL, "cert_file missing");
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		       "  client_auth_type: RequireSomething\n",
		       -EINVAL, "client_auth_type: 'RequireSomething' is not one Go knows");
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		       "  client_ca_file: ca.pem\n",
		       -EINVAL,
		       "client_ca_file: given, but client_auth_type asks for no certificate");
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		       "  client_auth_type: RequireAndVerifyClientCert\n",
		       -EINVAL, "needs client_ca_file");
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		       "  min_version: TLS14\n",
		       -EINVAL, "min_version: 'TLS14' is not TLS10-TLS13");
	assert_refused(
		"tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		"  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n",
		-EINVAL,
		"cipher_suites: 'TLS_RSA_WITH_RC4_128_SHA' is not a suite Go and GnuTLS offer");
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
		       "  curve_preferences: [CurveP224]\n",
		       -EINVAL, "curve_preferences: 'CurveP224'");
	assert_refused("tls_server_config:\n  cert_file: missing.pem\n  key_file: key.pem\n",
		       -ENOENT, "line 2: cert_file: cannot read");
	assert_refused("tls_server_config:\n  cert_file: key.pem\n  key_file: cert.pem\n", -EINVAL,
		       "holds no PEM");
}

static void test_a_key_others_may_read_is_refused(void **state)
{
	(void)state;
	assert_refused("tls_server_config:\n  cert_file: cert.pem\n  key_file: open-key.pem\n",
		       -EPERM,
		       "key_file: 'open-key.pem' holds a private key and everyone may read it");
}

static void test_a_file_that_cannot_be_read_is_refused_naming_it(void **state)
{
	(void)state;
	struct lat_error err = { { 0 } };
	struct web_config *c = NULL;

	assert_int_equal(web_config_load(in_tmpdir("nothing.yml"), &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "cannot read"));
	assert_non_null(strstr(err.msg, "nothing.yml"));
	assert_int_equal(web_config_load(tmpdir, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a regular file"));
	assert_null(c);
}

static void test_priorities_follow_versions_suites_and_curves(void **state)
{
	(void)state;
	static const char *const ciphers[] = { "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
					       "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" };
	static const char *const curves[] = { "X25519" };
	struct web_tls_names n = { .min_version = 12,
				   .max_version = 12,
				   .ciphers = ciphers,
				   .nciphers = ARRAY_SIZE(ciphers),
				   .curves = curves,
				   .ncurves = 1,
				   .prefer_server = true };
	char buf[WEB_PRIORITIES_MAX];

	assert_int_equal(web_tls_priorities(&n, buf, NULL), 0);
	assert_string_equal(buf, "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:-MAC-ALL:-KX-ALL"
				 ":+AES-128-GCM:+AEAD:+ECDHE-RSA:+AES-256-GCM"
				 ":-GROUP-ALL:+GROUP-X25519:%SERVER_PRECEDENCE");
	n.min_version = 13;
	n.max_version = 12;
	assert_int_equal(web_tls_priorities(&n, buf, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_empty_file_serves_http_to_anyone),
		cmocka_unit_test(
			test_tls_with_client_certificates_reads_every_file_relative_to_the_config),
		cmocka_unit_test(test_basic_auth_takes_the_right_password_only),
		cmocka_unit_test(test_a_plain_text_password_is_refused),
		cmocka_unit_test(test_unknown_or_repeated_keys_are_refused_with_their_line),
		cmocka_unit_test(test_tls_settings_that_cannot_work_are_refused),
		cmocka_unit_test(test_a_key_others_may_read_is_refused),
		cmocka_unit_test(test_a_file_that_cannot_be_read_is_refused_naming_it),
		cmocka_unit_test(test_priorities_follow_versions_suites_and_curves),
	};
	return cmocka_run_group_tests(tests, setup, remove_tmpdir);
}
