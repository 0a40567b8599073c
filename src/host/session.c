#include "host/session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "host/hmac.h"

void host_session_start(struct host_session *s, const struct host_vm *vm, const uint8_t *secret, size_t secret_len,
			const uint8_t nonce[HOST_NONCE_BYTES])
{
	memset(s, 0, sizeof(*s));
	s->vm = vm;
	s->secret = secret;
	s->secret_len = secret_len;
	host_hex(nonce, HOST_NONCE_BYTES, s->nonce);
}

int host_session_greeting(const struct host_session *s, char **ret_line)
{
	struct host_greeting g = { .version = HOST_PROTO_VERSION, .auth = s->secret != NULL };

	memcpy(g.nonce, s->nonce, sizeof(g.nonce));
	return host_encode_greeting(&g, ret_line);
}

void host_session_auth(const char nonce[HOST_NONCE_HEX + 1], const uint8_t *secret, size_t secret_len,
		       char out[HOST_AUTH_HEX + 1])
{
	uint8_t mac[HMAC_SHA256_BYTES];

	hmac_sha256(secret, secret_len, nonce, HOST_NONCE_HEX, mac);
	host_hex(mac, sizeof(mac), out);
}

static bool authentic(const struct host_session *s, const struct host_msg *m)
{
	uint8_t want[HMAC_SHA256_BYTES], got[HMAC_SHA256_BYTES];

	if (!s->secret)
		return true;
	if (!m->has_auth || host_unhex(m->auth, got, sizeof(got)) < 0)
		return false;
	hmac_sha256(s->secret, s->secret_len, s->nonce, HOST_NONCE_HEX, want);
	return hmac_equal(want, got, sizeof(want));
}

static void fail(struct host_answer *a, bool close, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(struct host_answer *a, bool close, const char *fmt, ...)
{
	va_list ap;

	a->hello = false;
	a->close = close;
	a->msg.op = HOST_OP_ERROR;
	va_start(ap, fmt);
	vsnprintf(a->msg.error, sizeof(a->msg.error), fmt, ap);
	va_end(ap);
}

static void explain(const struct host_session *s, struct host_answer *a)
{
	const struct host_vm *vm = s->vm;

	if (!host_vm_vcpu(vm, a->msg.vcpu))
		fail(a, false, "no vCPU %u: VM pid %ld has %zu vCPU%s, numbered %u to %u", a->msg.vcpu, vm->pid, vm->n,
		     vm->n == 1 ? "" : "s", vm->n ? vm->vcpus[0].vcpu : 0, vm->n ? vm->vcpus[vm->n - 1].vcpu : 0);
	else
		fail(a, false, HOST_NOT_RECORDING);
}

void host_session_line(struct host_session *s, const char *line, size_t len, uint64_t t2, struct host_answer *ret)
{
	struct lat_error err;
	struct host_answer a = { 0 };

	if (host_decode_request(line, len, &a.msg, &err) < 0) {
		fail(&a, false, "%s", err.msg);
	} else if (a.msg.op == HOST_OP_HELLO) {
		if (!authentic(s, &a.msg)) {
			a.msg.has_seq = false;
			fail(&a, true, HOST_AUTH_FAILED);
		} else if (a.msg.version != HOST_PROTO_VERSION) {
			fail(&a, true, "version %u is not spoken here: this agent speaks version %d", a.msg.version,
			     HOST_PROTO_VERSION);
		} else {
			s->hello = a.hello = true;
		}
	} else if (!s->hello) {
		fail(&a, false, "say hello first: {\"op\":\"hello\",\"version\":%d%s}", HOST_PROTO_VERSION,
		     s->secret ? ",\"auth\":\"...\"" : "");
	} else if (a.msg.op == HOST_OP_TIME) {
		a.msg.t2 = t2;
	} else {
		explain(s, &a);
	}
	*ret = a;
}

int host_answer_encode(const struct host_session *s, struct host_answer *a, uint64_t t3, char **ret_line)
{
	if (a->hello)
		return host_encode_hello_reply(s->vm, ret_line);
	if (a->msg.op == HOST_OP_TIME)
		a->msg.t3 = t3;
	return host_encode_msg(&a->msg, true, ret_line);
}
