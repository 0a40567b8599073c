#include "serve/webcfg.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/array.h"
#include "serve/webfile.h"
#include "serve/weblibs.h"

enum { LIST_MAX = 64 };

/* One string setting as the file gives it: its text ("" when absent) and where. */

/* libyaml, loaded by parse() before any use (serve/weblibs.h) */
static const struct yaml_api *Y;
struct field {
	const char *s;
	const yaml_node_t *at;
};

/* What the file says, before it is checked: pointers into the parsed document. */
struct raw {
	struct field cert, key, client_auth, client_ca, min_version, max_version;
	const char *ciphers[LIST_MAX], *curves[LIST_MAX];
	size_t nciphers, ncurves;
	bool prefer_server;
	yaml_node_t *users; /* basic_auth_users; NULL: none */
};

struct reader {
	yaml_document_t doc;
	const char *path;
	struct raw raw;
	struct lat_error *err;
};

__attribute__((format(printf, 4, 5))) static int fail(const struct reader *r, const yaml_node_t *at,
						      int code, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!at)
		return err_set(r->err, code, "'%s': %s", r->path, why);
	return err_set(r->err, code, "'%s': line %zu: %s", r->path, at->start_mark.line + 1u, why);
}

static const char *text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* YAML's null: an empty plain scalar, ~ or null (Go's zero value). */
static bool is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
		if (!strcmp(text(n), nulls[i]))
			return true;
	return false;
}

static int string(const struct reader *r, const yaml_node_t *n, const char *key, struct field *ret)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail(r, n, -EINVAL, "%s: not a string", key);
	ret->s = is_null(n) ? "" : text(n);
	ret->at = n;
	return 0;
}

/* YAML 1.1's booleans, as Go's yaml.v2 reads them. */
static int boolean(const struct reader *r, const yaml_node_t *n, const char *key, bool *ret)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on",   "On",   "ON",   "y",	  "Y" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off",   "Off",   "OFF",   "n",  "N" };

	if (is_null(n)) {
		*ret = false;
		return 0;
	}
	for (size_t i = 0; n->type == YAML_SCALAR_NODE && i < ARRAY_SIZE(yes); i++)
		if (!strcmp(text(n), yes[i]) || !strcmp(text(n), no[i])) {
			*ret = !strcmp(text(n), yes[i]);
			return 0;
		}
	return fail(r, n, -EINVAL, "%s: not true or false", key);
}

static int list(struct reader *r, const yaml_node_t *n, const char *key, const char **out,
		size_t *nout)
{
	*nout = 0;
	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, -EINVAL, "%s: not a list", key);
	for (const yaml_node_item_t *i = n->data.sequence.items.start;
	     i < n->data.sequence.items.top; i++) {
		const yaml_node_t *item = Y->document_get_node(&r->doc, *i);
		struct field f = { "", NULL };
		if (*nout == LIST_MAX)
			return fail(r, item, -E2BIG, "%s: more than %d names", key, LIST_MAX);
		int rc = string(r, item, key, &f);
		if (rc < 0)
			return rc;
		out[(*nout)++] = f.s;
	}
	return 0;
}

typedef int pair_fn(struct reader *r, const char *key, const yaml_node_t *at,
		    const yaml_node_t *value);

/* Each pair of the mapping n (null: none), keys strings given once, to fn. */
static int each_pair(struct reader *r, yaml_node_t *n, const char *what, pair_fn *fn)
{
	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail(r, n, -EINVAL, "%s: not a mapping", what);
	for (const yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = Y->document_get_node(&r->doc, p->key);
		if (k->type != YAML_SCALAR_NODE)
			return fail(r, k, -EINVAL, "%s: a key that is not a string", what);
		for (const yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(text(Y->document_get_node(&r->doc, q->key)), text(k)))
				return fail(r, k, -EINVAL, "%s: '%s' given twice", what, text(k));
		int rc = fn(r, text(k), k, Y->document_get_node(&r->doc, p->value));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int tls_pair(struct reader *r, const char *key, const yaml_node_t *at, const yaml_node_t *v)
{
	struct raw *w = &r->raw;
	static const struct {
		const char *key;
		size_t offset;
	} strings[] = {
		{ "cert_file", offsetof(struct raw, cert) },
		{ "key_file", offsetof(struct raw, key) },
		{ "client_auth_type", offsetof(struct raw, client_auth) },
		{ "client_ca_file", offsetof(struct raw, client_ca) },
		{ "min_version", offsetof(struct raw, min_version) },
		{ "max_version", offsetof(struct raw, max_version) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(strings); i++)
		if (!strcmp(key, strings[i].key))
			return string(r, v, key,
				      (struct field *)(void *)((char *)w + strings[i].offset));
	if (!strcmp(key, "cipher_suites"))
		return list(r, v, key, w->ciphers, &w->nciphers);
	if (!strcmp(key, "curve_preferences"))
		return list(r, v, key, w->curves, &w->ncurves);
	if (!strcmp(key, "prefer_server_cipher_suites"))
		return boolean(r, v, key, &w->prefer_server);
	return fail(r, at, -EINVAL, "unknown key '%s' in tls_server_config", key);
}

static int http_pair(struct reader *r, const char *key, const yaml_node_t *at, const yaml_node_t *v)
{
	bool http2;

	if (!strcmp(key, "http2"))
		return boolean(r, v, key, &http2);
	if (!strcmp(key, "headers"))
		return fail(r, at, -EINVAL,
			    "http_server_config: headers are not supported by latscope");
	return fail(r, at, -EINVAL, "unknown key '%s' in http_server_config", key);
}

static int top_pair(struct reader *r, const char *key, const yaml_node_t *at, const yaml_node_t *v)
{
	yaml_node_t *node = (yaml_node_t *)v;

	if (!strcmp(key, "tls_server_config"))
		return each_pair(r, node, key, tls_pair);
	if (!strcmp(key, "http_server_config"))
		return each_pair(r, node, key, http_pair);
	if (!strcmp(key, "basic_auth_users")) {
		if (!is_null(v) && v->type != YAML_MAPPING_NODE)
			return fail(r, v, -EINVAL, "basic_auth_users: not a mapping");
		r->raw.users = is_null(v) ? NULL : node;
		return 0;
	}
	return fail(r, at, -EINVAL, "unknown key '%s'", key);
}

bool web_is_bcrypt(const char *h)
{
	static const char b64[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[6] != '$')
		return false;
	const int cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || cost < 4 || cost > 31)
		return false;
	return strspn(h + 7, b64) == 53;
}

static int read_users(struct reader *r, struct web_config *c)
{
	yaml_node_t *u = r->raw.users;
	crypt_rn_fn *check;
	if (!u)
		return 0;
	/* the hashes are checked at each request: a library that cannot be loaded is said now */
	int lr = weblibs_crypt(&check, r->err);
	if (lr < 0)
		return lr;
	const size_t n = (size_t)(u->data.mapping.pairs.top - u->data.mapping.pairs.start);
	if (n && !(c->users = calloc(n, sizeof(*c->users))))
		return fail(r, NULL, -ENOMEM, "out of memory");
	for (const yaml_node_pair_t *p = u->data.mapping.pairs.start; p < u->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = Y->document_get_node(&r->doc, p->key);
		const yaml_node_t *v = Y->document_get_node(&r->doc, p->value);
		struct field name = { "", NULL }, hash = { "", NULL };
		int rc = string(r, k, "basic_auth_users", &name);
		if (rc < 0 || (rc = string(r, v, "basic_auth_users", &hash)) < 0)
			return rc;
		for (size_t i = 0; i < c->nusers; i++)
			if (!strcmp(c->users[i].name, name.s))
				return fail(r, k, -EINVAL, "basic_auth_users: '%s' given twice",
					    name.s);
		if (!web_is_bcrypt(hash.s))
			return fail(r, v, -EINVAL,
				    "basic_auth_users: the password of '%s' is not a bcrypt hash "
				    "(plain text is not accepted)",
				    name.s);
		struct web_user *w = &c->users[c->nusers];
		if (!(w->name = strdup(name.s)) || !(w->hash = strdup(hash.s))) {
			free(w->name);
			return fail(r, NULL, -ENOMEM, "out of memory");
		}
		c->nusers++;
	}
	return 0;
}

/* A file the configuration names, relative to its directory, read whole. */
static int named_file(const struct reader *r, const struct field *f, const char *what,
		      const char *pem_mark, char **ret, mode_t *mode)
{
	char path[PATH_MAX];
	const char *slash = strrchr(r->path, '/');
	struct lat_error why = { { 0 } };

	if (f->s[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", f->s);
	else if (snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - r->path), r->path, f->s) >=
		 (int)sizeof(path))
		return fail(r, f->at, -ENAMETOOLONG, "%s: path too long", what);
	int rc = web_file_read(path, ret, mode, &why);
	if (rc < 0)
		return fail(r, f->at, rc, "%s: %s", what, why.msg);
	if (!strstr(*ret, pem_mark)) {
		free(*ret);
		*ret = NULL;
		return fail(r, f->at, -EINVAL, "%s: '%s' holds no PEM '%s'", what, path, pem_mark);
	}
	return 0;
}

static int read_tls(struct reader *r, struct web_config *c)
{
	const struct raw *w = &r->raw;
	struct web_tls_names names = { .min_version = WEB_TLS_MIN_DEFAULT,
				       .max_version = WEB_TLS_MAX_DEFAULT,
				       .ciphers = w->ciphers,
				       .nciphers = w->nciphers,
				       .curves = w->curves,
				       .ncurves = w->ncurves,
				       .prefer_server = w->prefer_server };
	struct lat_error why = { { 0 } };
	mode_t mode;
	int rc;

	if (w->min_version.s[0] && web_tls_version(w->min_version.s, &names.min_version) < 0)
		return fail(r, w->min_version.at, -EINVAL, "min_version: '%s' is not TLS10-TLS13",
			    w->min_version.s);
	if (w->max_version.s[0] && web_tls_version(w->max_version.s, &names.max_version) < 0)
		return fail(r, w->max_version.at, -EINVAL, "max_version: '%s' is not TLS10-TLS13",
			    w->max_version.s);
	if (web_client_auth(w->client_auth.s, &c->client_auth) < 0)
		return fail(r, w->client_auth.at, -EINVAL,
			    "client_auth_type: '%s' is not one Go knows", w->client_auth.s);
	c->tls = w->cert.s[0] || w->key.s[0] || w->client_auth.s[0] || w->client_ca.s[0];
	if (!c->tls)
		return 0;
	if (!w->cert.s[0])
		return fail(r, NULL, -EINVAL, "tls_server_config: cert_file missing");
	if (!w->key.s[0])
		return fail(r, NULL, -EINVAL, "tls_server_config: key_file missing");
	if (w->client_ca.s[0] && c->client_auth == WEB_NO_CLIENT_CERT)
		return fail(r, w->client_ca.at, -EINVAL,
			    "client_ca_file: given, but client_auth_type asks for no certificate");
	if ((c->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
	     c->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT) &&
	    !w->client_ca.s[0])
		return fail(r, w->client_auth.at, -EINVAL,
			    "client_auth_type: %s needs client_ca_file (the CA to verify against)",
			    w->client_auth.s);
	if ((rc = web_tls_priorities(&names, c->priorities, &why)) < 0)
		return fail(r, NULL, rc, "%s", why.msg);
	if ((rc = named_file(r, &w->cert, "cert_file", "-----BEGIN CERTIFICATE-----", &c->cert_pem,
			     &mode)) < 0 ||
	    (rc = named_file(r, &w->key, "key_file", "PRIVATE KEY-----", &c->key_pem, &mode)) < 0)
		return rc;
	/* as ssh refuses such a key: anyone on the machine could pose as this endpoint */
	if (mode & S_IROTH)
		return fail(
			r, w->key.at, -EPERM,
			"key_file: '%s' holds a private key and everyone may read it (chmod o-r)",
			w->key.s);
	if (w->client_ca.s[0])
		return named_file(r, &w->client_ca, "client_ca_file", "-----BEGIN CERTIFICATE-----",
				  &c->ca_pem, &mode);
	return 0;
}

static int parse(struct reader *r, const char *in, struct web_config *c)
{
	yaml_parser_t p;
	int lr = weblibs_yaml(&Y, r->err);

	if (lr < 0)
		return lr;

	if (!Y->parser_initialize(&p))
		return fail(r, NULL, -ENOMEM, "out of memory");
	Y->parser_set_input_string(&p, (const unsigned char *)in, strlen(in));
	if (!Y->parser_load(&p, &r->doc)) {
		int rc = fail(r, NULL, -EINVAL, "line %zu: not YAML: %s", p.problem_mark.line + 1u,
			      p.problem ? p.problem : "malformed");
		Y->parser_delete(&p);
		return rc;
	}
	Y->parser_delete(&p);
	yaml_node_t *root = Y->document_get_root_node(&r->doc);
	int rc = root ? each_pair(r, root, "the file", top_pair) : 0;
	if (rc == 0)
		rc = read_users(r, c);
	if (rc == 0)
		rc = read_tls(r, c);
	Y->document_delete(&r->doc);
	return rc;
}

int web_config_load(const char *path, struct web_config **ret, struct lat_error *err)
{
	struct reader r = { .path = path, .err = err, .raw = { .prefer_server = true } };
	struct field none = { "", NULL };
	char *in;
	mode_t mode;

	r.raw.cert = r.raw.key = r.raw.client_auth = r.raw.client_ca = none;
	r.raw.min_version = r.raw.max_version = none;
	int rc = web_file_read(path, &in, &mode, err);
	if (rc < 0)
		return rc;
	struct web_config *c = calloc(1, sizeof(*c));
	if (!c) {
		free(in);
		return err_set(err, -ENOMEM, "'%s': out of memory", path);
	}
	rc = parse(&r, in, c);
	free(in);
	if (rc < 0) {
		web_config_free(c);
		return rc;
	}
	*ret = c;
	return 0;
}

void web_config_free(struct web_config *c)
{
	if (!c)
		return;
	free(c->cert_pem);
	if (c->key_pem) /* a private key: not left in freed memory */
		explicit_bzero(c->key_pem, strlen(c->key_pem));
	free(c->key_pem);
	free(c->ca_pem);
	for (size_t i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	free(c);
}
