#include "host/proto.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *host_linebuf_tail(struct host_linebuf *lb, size_t *ret_room)
{
	*ret_room = sizeof(lb->buf) - lb->len;
	return lb->buf + lb->len;
}

void host_linebuf_added(struct host_linebuf *lb, size_t n)
{
	lb->len += n;
}

int host_linebuf_line(struct host_linebuf *lb, char **ret_line, size_t *ret_len)
{
	char *p = lb->buf + lb->start, *nl = memchr(p, '\n', lb->len - lb->start);

	if (nl) {
		*nl = '\0';
		*ret_line = p;
		*ret_len = (size_t)(nl - p);
		lb->start = (size_t)(nl - lb->buf) + 1u;
		return 1;
	}
	/* No whole line: what is left moves to the front, to make room. */
	memmove(lb->buf, p, lb->len - lb->start);
	lb->len -= lb->start;
	lb->start = 0;
	return lb->len >= sizeof(lb->buf) ? -EMSGSIZE : 0;
}

static const char *const op_names[] = { "hello", "time", "explain", "error", "greet" };

int host_json_u64(const json_t *o, const char *key, bool need, uint64_t *ret, struct lat_error *err)
{
	const json_t *v = json_object_get(o, key);

	if (!v && !need)
		return 0;
	if (!v)
		return err_set(err, -EINVAL, "'%s' is missing", key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return err_set(err, -EINVAL, "'%s' is not a whole number", key);
	*ret = (uint64_t)json_integer_value(v);
	return 1;
}

static int get_uint(json_t *o, const char *key, uint64_t max, unsigned *ret, struct lat_error *err)
{
	uint64_t v;
	int r = host_json_u64(o, key, true, &v, err);

	if (r < 0)
		return r;
	if (v > max)
		return err_set(err, -EINVAL, "'%s' is above %llu", key, (unsigned long long)max);
	*ret = (unsigned)v;
	return 0;
}

/* The object in line with its op and seq read: the op's index, or -errno. */
static int open_msg(const char *line, size_t len, json_t **ret, struct host_msg *m, struct lat_error *err)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);

	memset(m, 0, sizeof(*m));
	if (!o)
		return err_set(err, -EINVAL, "not JSON: %s (column %d)", jerr.text, jerr.column);
	*ret = o;
	if (!json_is_object(o))
		return err_set(err, -EINVAL, "a message is a JSON object");
	int r = host_json_u64(o, "seq", false, &m->seq, err);
	if (r < 0)
		return r;
	m->has_seq = r > 0;
	const char *op = json_string_value(json_object_get(o, "op"));
	if (!op)
		return err_set(err, -EINVAL, "'op' is missing or not a string");
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (!strcmp(op, op_names[i])) {
			m->op = (enum host_op)i;
			return (int)i;
		}
	if (strlen(op) > 40)            /* said whole or not at all: a cut could split a character */
		return err_set(err, -ENOTSUP, "unknown op of %zu bytes (known: hello, time, explain, greet)", strlen(op));
	return err_set(err, -ENOTSUP, "unknown op '%s' (known: hello, time, explain, greet)", op);
}

static int read_request(json_t *o, struct host_msg *m, struct lat_error *err)
{
	int r = 0;

	switch (m->op) {
	case HOST_OP_HELLO: {
		json_t *auth = json_object_get(o, "auth");
		if ((r = get_uint(o, "version", 0xffff, &m->version, err)) < 0)
			return r;
		if (!auth)
			return 0;
		const char *a = json_string_value(auth);
		if (!a || strlen(a) != HOST_AUTH_HEX)
			return 0;       /* not an HMAC: as if missing, which the agent refuses */
		memcpy(m->auth, a, HOST_AUTH_HEX + 1);
		m->has_auth = true;
		return 0;
	}
	case HOST_OP_TIME:
		return host_json_u64(o, "t1", true, &m->t1, err) < 0 ? -EINVAL : 0;
	case HOST_OP_EXPLAIN:
		m->min_ns = HOST_MIN_NS_DEFAULT;
		if ((r = get_uint(o, "vcpu", HOST_VCPUS_MAX - 1, &m->vcpu, err)) < 0 ||
		    (r = host_json_u64(o, "from_ns", true, &m->from_ns, err)) < 0 ||
		    (r = host_json_u64(o, "to_ns", true, &m->to_ns, err)) < 0 ||
		    (r = host_json_u64(o, "min_ns", false, &m->min_ns, err)) < 0)
			return r;
		if (m->from_ns > m->to_ns)
			return err_set(err, -EINVAL, "'from_ns' is after 'to_ns'");
		return 0;
	case HOST_OP_GREET: {
		const char *t = json_string_value(json_object_get(o, "token"));
		if (!t || !*t || strlen(t) > HOST_TOKEN_MAX ||
		    strspn(t, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != strlen(t))
			return err_set(err, -EINVAL, "'token' is not 1 to %d letters, digits, '-' or '_'", HOST_TOKEN_MAX);
		snprintf(m->token, sizeof(m->token), "%s", t);
		return 0;
	}
	case HOST_OP_ERROR:
		break;
	}
	return err_set(err, -ENOTSUP, "op 'error' is the agent's");
}

/* line opened, then its fields read by read_fields. */
static int decode(const char *line, size_t len, int (*read_fields)(json_t *, struct host_msg *, struct lat_error *),
		  struct host_msg *ret, struct lat_error *err)
{
	json_t *o = NULL;
	int r = open_msg(line, len, &o, ret, err);

	if (r >= 0)
		r = read_fields(o, ret, err);
	json_decref(o);
	return r < 0 ? r : 0;
}

int host_decode_request(const char *line, size_t len, struct host_msg *ret, struct lat_error *err)
{
	return decode(line, len, read_request, ret, err);
}

static int read_reply(json_t *o, struct host_msg *m, struct lat_error *err)
{
	switch (m->op) {
	case HOST_OP_HELLO:
		return get_uint(o, "version", 0xffff, &m->version, err);
	case HOST_OP_TIME:
		if (host_json_u64(o, "t1", true, &m->t1, err) < 0 || host_json_u64(o, "t2", true, &m->t2, err) < 0 ||
		    host_json_u64(o, "t3", true, &m->t3, err) < 0)
			return -EINVAL;
		return 0;
	case HOST_OP_ERROR: {
		const char *e = json_string_value(json_object_get(o, "error"));
		if (!e)
			return err_set(err, -EINVAL, "'error' is missing or not a string");
		snprintf(m->error, sizeof(m->error), "%s", e);
		return 0;
	}
	case HOST_OP_EXPLAIN:
	case HOST_OP_GREET:
		break;
	}
	return err_set(err, -ENOTSUP, "op '%s' has no reply of its kind (an explain answer is read by "
		       "host_decode_explain_reply, a greeting by host_decode_greeting)", op_names[m->op]);
}

int host_decode_reply(const char *line, size_t len, struct host_msg *ret, struct lat_error *err)
{
	return decode(line, len, read_reply, ret, err);
}

int host_decode_greeting(const char *line, size_t len, struct host_greeting *ret, struct lat_error *err)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	struct host_greeting g = { 0 };
	int r = -EINVAL;

	if (!o)
		return err_set(err, -EINVAL, "not JSON: %s (column %d)", jerr.text, jerr.column);
	const char *nonce = json_string_value(json_object_get(o, "nonce"));
	json_t *auth = json_object_get(o, "auth");
	if (get_uint(o, "latscope_host", 0xffff, &g.version, err) < 0)
		goto out;
	if (!nonce || strlen(nonce) != HOST_NONCE_HEX || strspn(nonce, "0123456789abcdef") != HOST_NONCE_HEX) {
		err_set(err, -EINVAL, "'nonce' is not %d hex digits", HOST_NONCE_HEX);
		goto out;
	}
	if (!json_is_boolean(auth)) {
		err_set(err, -EINVAL, "'auth' is missing or not true or false");
		goto out;
	}
	memcpy(g.nonce, nonce, sizeof(g.nonce));
	g.auth = json_is_true(auth);
	const char *token = json_string_value(json_object_get(o, "token"));
	if (token)
		snprintf(g.token, sizeof(g.token), "%s", token);
	*ret = g;
	r = 0;
out:
	json_decref(o);
	return r;
}

int host_encode_line(json_t *o, char **ret_line)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	if (n + 1u > HOST_LINE_MAX) {
		free(text);
		return -EMSGSIZE;
	}
	char *line = realloc(text, n + 2u);
	if (!line) {
		free(text);
		return -ENOMEM;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*ret_line = line;
	return 0;
}

int host_encode_greeting(const struct host_greeting *g, char **ret_line)
{
	json_t *o = json_pack("{s:I,s:s,s:b}", "latscope_host", (json_int_t)g->version, "nonce", g->nonce, "auth", g->auth);
	if (o && g->token[0] && json_object_set_new(o, "token", json_string(g->token)) < 0) {
		json_decref(o);
		o = NULL;
	}
	return host_encode_line(o, ret_line);
}

static json_t *msg_json(const struct host_msg *m, bool reply)
{
	json_t *o = json_pack("{s:s}", "op", op_names[m->op]);
	int bad = !o;

	if (o && m->has_seq)
		bad |= json_object_set_new(o, "seq", json_integer((json_int_t)m->seq));
	switch (m->op) {
	case HOST_OP_HELLO:
		bad |= json_object_set_new(o, "version", json_integer(m->version));
		if (m->has_auth)
			bad |= json_object_set_new(o, "auth", json_string(m->auth));
		break;
	case HOST_OP_TIME:
		bad |= json_object_set_new(o, "t1", json_integer((json_int_t)m->t1));
		if (reply)
			bad |= json_object_set_new(o, "t2", json_integer((json_int_t)m->t2)) |
			       json_object_set_new(o, "t3", json_integer((json_int_t)m->t3));
		break;
	case HOST_OP_EXPLAIN:
		bad |= json_object_set_new(o, "vcpu", json_integer(m->vcpu)) |
		       json_object_set_new(o, "from_ns", json_integer((json_int_t)m->from_ns)) |
		       json_object_set_new(o, "to_ns", json_integer((json_int_t)m->to_ns)) |
		       json_object_set_new(o, "min_ns", json_integer((json_int_t)m->min_ns));
		break;
	case HOST_OP_ERROR:
		bad |= json_object_set_new(o, "error", json_string(m->error));
		break;
	case HOST_OP_GREET:
		bad |= json_object_set_new(o, "token", json_string(m->token));
		break;
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int host_encode_msg(const struct host_msg *m, bool reply, char **ret_line)
{
	if ((size_t)m->op >= sizeof(op_names) / sizeof(op_names[0]))
		return -EINVAL;
	return host_encode_line(msg_json(m, reply), ret_line);
}

int host_encode_hello_reply(const struct host_vm *vm, char **ret_line)
{
	json_t *vcpus = json_array();

	for (size_t i = 0; vcpus && i < vm->n; i++) {
		const struct host_vcpu *v = &vm->vcpus[i];
		if (json_array_append_new(vcpus, json_pack("{s:I,s:I,s:s}", "vcpu", (json_int_t)v->vcpu, "tid",
							   (json_int_t)v->tid, "name", v->name)) < 0) {
			json_decref(vcpus);
			return -ENOMEM;
		}
	}
	if (!vcpus)
		return -ENOMEM;
	return host_encode_line(json_pack("{s:s,s:i,s:{s:I,s:s},s:s,s:o,s:s}", "op", "hello", "version", HOST_PROTO_VERSION,
				     "vm", "pid", (json_int_t)vm->pid, "name", vm->name, "found_by",
				     host_found_by_name(vm->found_by), "vcpus", vcpus, "clock", HOST_CLOCK),
			   ret_line);
}

void host_hex(const uint8_t *bytes, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15u];
	}
	out[2 * n] = '\0';
}

static int nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int host_unhex(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = nibble(hex[2 * i]), lo = hi < 0 ? -1 : nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return hex[2 * n] == '\0' ? 0 : -EINVAL;
}
