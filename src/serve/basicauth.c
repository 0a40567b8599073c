#include "serve/basicauth.h"

#include <crypt.h> /* struct crypt_data; the function is loaded (serve/weblibs.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/weblibs.h"

enum { CREDENTIALS_MAX = 1024 }; /* decoded user:password bytes: more is refused */

static int b64_value(char ch)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = ch ? strchr(alphabet, ch) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

/* Standard base64 with its padding; the length decoded, or -1. */
static int b64_decode(const char *in, size_t len, unsigned char *out, size_t size)
{
	size_t n = 0;

	if (len % 4u)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		size_t pad = 0;
		for (size_t k = 0; k < 4; k++) {
			const bool last = i + 4 == len;
			if (in[i + k] == '=' && last && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if ((v[k] = b64_value(in[i + k])) < 0 || pad) {
				return -1;
			}
		}
		const uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
				   (uint32_t)v[2] << 6 | (uint32_t)v[3];
		if (n + 3u - pad > size)
			return -1;
		out[n++] = (unsigned char)(w >> 16);
		if (pad < 2)
			out[n++] = (unsigned char)(w >> 8);
		if (pad < 1)
			out[n++] = (unsigned char)w;
	}
	return (int)n;
}

/* Equal strings, in a time that depends on their lengths only. */
static bool same(const char *a, const char *b)
{
	const size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static bool password_matches(const char *password, const char *hash)
{
	struct crypt_data *data =
		calloc(1, sizeof(*data)); /* 32 KiB: not on a server thread's stack */
	if (!data)
		return false;
	crypt_rn_fn *crypt_rn;
	struct lat_error err;
	const char *got = weblibs_crypt(&crypt_rn, &err) == 0
				  ? crypt_rn(password, hash, data, (int)sizeof(*data))
				  : NULL;
	const bool ok = got && got[0] != '*' && same(got, hash);
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ok;
}

bool basic_auth_allows(const struct web_config *c, const char *authorization)
{
	unsigned char cred[CREDENTIALS_MAX + 1];

	if (!c || !c->nusers)
		return true;
	if (!authorization)
		return false;
	const char *p = authorization;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncasecmp(p, "Basic", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
		return false;
	for (p += 5; *p == ' ' || *p == '\t';)
		p++;
	size_t len = strlen(p);
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	const int n = b64_decode(p, len, cred, CREDENTIALS_MAX);
	if (n < 0 || memchr(cred, '\0', (size_t)n))
		return false;
	cred[n] = '\0';
	char *colon = strchr((char *)cred, ':');
	if (!colon)
		return false;
	*colon = '\0';
	const struct web_user *user = NULL;
	for (size_t i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, (const char *)cred))
			user = &c->users[i];
	/* an unknown user's password is hashed all the same, against the first user's salt */
	const bool ok = password_matches(colon + 1, user ? user->hash : c->users[0].hash);
	explicit_bzero(cred, sizeof(cred));
	return ok && user;
}
