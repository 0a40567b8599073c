#include "serve/mhdtls.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "serve/mhd.h"

#define GNUTLS_SONAME "libgnutls.so.30"

/* GnuTLS (libmicrohttpd's, already loaded) and the one MHD call http.c does not need. */
static struct {
	void (*set_request)(gnutls_session_t session, gnutls_certificate_request_t req);
	void (*set_verify_cert)(gnutls_session_t session, const char *hostname, unsigned flags);
	const union MHD_ConnectionInfo *(*connection_info)(struct MHD_Connection *c,
							   enum MHD_ConnectionInfoType type, ...);
} tls;
static int load_rc;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name)
{
	void *p = lib ? dlsym(lib, name) : NULL;
	if (!p)
		load_rc = -ENOENT;
	return p;
}

static void load(void)
{
	/* RTLD_NOLOAD: the very libraries libmicrohttpd runs with, or none */
	void *gnutls = dlopen(GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	void *mhd = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	void *p;

	/* dlsym's void * as a function pointer: the one conversion POSIX defines */
	p = sym(gnutls, "gnutls_certificate_server_set_request");
	memcpy(&tls.set_request, &p, sizeof(p));
	p = sym(gnutls, "gnutls_session_set_verify_cert");
	memcpy(&tls.set_verify_cert, &p, sizeof(p));
	p = sym(mhd, "MHD_get_connection_info");
	memcpy(&tls.connection_info, &p, sizeof(p));
}

/* Shut a connection whose policy could not be set: its handshake then fails. */
static void refuse(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		tls.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (i)
		shutdown(i->connect_fd, SHUT_RDWR);
}

void mhd_tls_started(const struct web_config *web, struct MHD_Connection *c)
{
	if (!web || !web->tls)
		return;
	const union MHD_ConnectionInfo *i =
		tls.connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!i || !i->tls_session) {
		refuse(c);
		return;
	}
	gnutls_session_t s = i->tls_session;
	switch (web->client_auth) {
	case WEB_NO_CLIENT_CERT: tls.set_request(s, GNUTLS_CERT_IGNORE); break;
	case WEB_REQUEST_CLIENT_CERT: tls.set_request(s, GNUTLS_CERT_REQUEST); break;
	case WEB_REQUIRE_ANY_CLIENT_CERT: tls.set_request(s, GNUTLS_CERT_REQUIRE); break;
	case WEB_VERIFY_CLIENT_CERT_IF_GIVEN:
		tls.set_request(s, GNUTLS_CERT_REQUEST);
		tls.set_verify_cert(s, NULL, 0);
		break;
	case WEB_REQUIRE_AND_VERIFY_CLIENT_CERT:
		tls.set_request(s, GNUTLS_CERT_REQUIRE);
		tls.set_verify_cert(s, NULL, 0); /* against client_ca_file, MHD's trust list */
		break;
	}
}

int mhd_tls_options(const struct web_config *web, struct mhd_tls *ret, struct lat_error *err)
{
	struct MHD_OptionItem *o = ret->options;

	memset(ret, 0, sizeof(*ret));
	o->option = MHD_OPTION_END;
	if (!web || !web->tls)
		return 0;
	pthread_once(&once, load);
	if (load_rc < 0)
		return err_set(
			err, load_rc,
			"cannot serve https: %s or its %s lacks the functions latscope needs",
			MHD_SONAME, GNUTLS_SONAME);
	ret->flags = MHD_USE_TLS;
	*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, web->key_pem };
	*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, web->cert_pem };
	*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)web->priorities };
	if (web->ca_pem)
		*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, web->ca_pem };
	*o = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return 0;
}
