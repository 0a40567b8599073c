#include "host/session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hmac.h"

void host_session_start(struct host_session *s, const struct host_vm *vm, const struct host_source *src,
			const uint8_t *secret, size_t secret_len, const uint8_t nonce[HOST_NONCE_BYTES])
{
	memset(s, 0, sizeof(*s));
	s->vm = vm;
	s->src = src;
	s->secret = secret;
	s->secret_len = secret_len;
	host_hex(nonce, HOST_NONCE_BYTES, s->nonce);
}

void host_session_end(struct host_session *s)
{
	free(s->ex);
	s->ex = NULL;
}

int host_session_greeting(const struct host_session *s, char **ret_line)
{
	struct host_greeting g = { .version = HOST_PROTO_VERSION, .auth = s->secret != NULL };

	memcpy(g.nonce, s->nonce, sizeof(g.nonce));
	return host_encode_greeting(&g, ret_line);
}

int host_session_renew(struct host_session *s, const uint8_t nonce[HOST_NONCE_BYTES], const char *token,
		       char **ret_line)
{
	struct host_greeting g = { .version = HOST_PROTO_VERSION, .auth = s->secret != NULL };

	s->hello = false;
	host_hex(nonce, HOST_NONCE_BYTES, s->nonce);
	memcpy(g.nonce, s->nonce, sizeof(g.nonce));
	snprintf(g.token, sizeof(g.token), "%s", token);
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

static void fail(struct host_reply *a, bool close, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(struct host_reply *a, bool close, const char *fmt, ...)
{
	va_list ap;

	a->hello = false;
	a->close = close;
	a->msg.op = HOST_OP_ERROR;
	va_start(ap, fmt);
	vsnprintf(a->msg.error, sizeof(a->msg.error), fmt, ap);
	va_end(ap);
}

static void explain(struct host_session *s, struct host_reply *a)
{
	const struct host_vm *vm = s->vm;
	const struct host_vcpu *v = host_vm_vcpu(vm, a->msg.vcpu);
	struct lat_error err;

	if (!v) {
		fail(a, false, "no vCPU %u: VM pid %ld has %zu vCPU%s, numbered %u to %u", a->msg.vcpu, vm->pid, vm->n,
		     vm->n == 1 ? "" : "s", vm->n ? vm->vcpus[0].vcpu : 0, vm->n ? vm->vcpus[vm->n - 1].vcpu : 0);
		return;
	}
	if (!s->src) {
		fail(a, false, HOST_NOT_RECORDING);
		return;
	}
	if (!s->ex && !(s->ex = malloc(sizeof(*s->ex)))) {
		fail(a, false, "out of memory");
		return;
	}
	struct host_explain_reply *ex = s->ex;
	memset(ex, 0, sizeof(*ex));
	*ex = (struct host_explain_reply){ .has_seq = a->msg.has_seq, .seq = a->msg.seq, .vcpu = a->msg.vcpu,
					   .from_ns = a->msg.from_ns, .to_ns = a->msg.to_ns, .min_ns = a->msg.min_ns };
	const struct host_episodes_query q = { .tid = (int32_t)v->tid, .vcpu = (int32_t)v->vcpu, .from = ex->from_ns,
					       .to = ex->to_ns, .min_ns = ex->min_ns };
	if (s->src->episodes(s->src->ctx, &q, ex->ep, HOST_EPISODES_MAX, &ex->n, &ex->more, &ex->complete_from_ns,
			     &err) < 0)
		fail(a, false, "%s", err.msg);
	else
		a->explained = true;
}

void host_session_line(struct host_session *s, const char *line, size_t len, uint64_t t2, struct host_reply *ret)
{
	struct lat_error err;
	struct host_reply a = { 0 };

	if (host_decode_request(line, len, &a.msg, &err) < 0) {
		fail(&a, false, "%s", err.msg);
	} else if (a.msg.op == HOST_OP_GREET) {
		a.greet = true;
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

int host_reply_encode(struct host_session *s, struct host_reply *a, uint64_t t3, char **ret_line)
{
	if (a->hello)
		return host_encode_hello_reply(s->vm, ret_line);
	if (a->explained)
		return host_encode_explain_reply(s->ex, ret_line);
	if (a->msg.op == HOST_OP_TIME)
		a->msg.t3 = t3;
	return host_encode_msg(&a->msg, true, ret_line);
}
