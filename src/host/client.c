#include "host/client.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/nstime.h"
#include "host/proto.h"
#include "host/session.h"

/* Send m and read the agent's answer to it into ret: 0 or -errno with err. */
static int ask(struct host_client *c, const struct host_msg *m, uint64_t deadline_ns,
	       const char **ret_line, struct lat_error *err)
{
	char *line;
	int r = host_encode_msg(m, false, &line);
	if (r < 0)
		return err_set(err, r, "cannot make a request to the host: %s", strerror(-r));
	r = host_link_send(&c->link, line, deadline_ns);
	free(line);
	if (r == 0)
		r = host_link_recv(&c->link, ret_line, deadline_ns);
	if (r < 0)
		return err_set(err, r, "the host did not answer: %s",
			       r == -ETIMEDOUT	  ? "no answer in time"
			       : r == -ECONNRESET ? "it closed the link"
						  : strerror(-r));
	return 0;
}

/* The VM and its vCPUs, from the agent's hello. */
static int read_hello(struct host_client *c, const char *line, struct lat_error *err)
{
	json_error_t jerr;
	json_t *o = json_loads(line, 0, &jerr);
	const char *op = json_string_value(json_object_get(o, "op"));
	int r = 0;

	if (op && strcmp(op, "error") == 0) {
		const char *why = json_string_value(json_object_get(o, "error"));
		r = err_set(err, why && strcmp(why, HOST_AUTH_FAILED) == 0 ? -EACCES : -EPROTO,
			    "the host refused: %s", why ? why : "(no reason)");
	} else if (!op || strcmp(op, "hello") != 0 || !json_is_array(json_object_get(o, "vcpus"))) {
		r = err_set(err, -EPROTO, "the host's hello is not one of latscope host's");
	} else {
		json_t *vm = json_object_get(o, "vm");
		const char *name = json_string_value(json_object_get(vm, "name"));
		const char *by = json_string_value(json_object_get(o, "found_by"));
		c->vm_pid = (long)json_integer_value(json_object_get(vm, "pid"));
		snprintf(c->vm_name, sizeof(c->vm_name), "%s", name ? name : "?");
		snprintf(c->found_by, sizeof(c->found_by), "%s", by ? by : "?");
		c->nvcpus = (unsigned)json_array_size(json_object_get(o, "vcpus"));
	}
	json_decref(o);
	return r;
}

/*
 * Ask for a greeting of our own and wait for it: on a link that outlives runs
 * (a virtio-serial port, whose far end the agent keeps open) what the last
 * run left unread, and the greeting of the agent's connection, come first and
 * are passed over.
 */
static int greet(struct host_client *c, uint64_t deadline_ns, struct host_greeting *ret, struct lat_error *err)
{
	uint8_t rnd[8];
	struct host_msg m = { .op = HOST_OP_GREET };
	const char *line;
	char *out;
	int r, sent;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return err_set(err, -EIO, "has no random token to greet with");
	host_hex(rnd, sizeof(rnd), m.token);
	if ((r = host_encode_msg(&m, false, &out)) < 0)
		return err_set(err, r, "cannot be greeted: out of memory");
	sent = host_link_send(&c->link, out, deadline_ns);
	free(out);
	for (;;) {
		struct lat_error why;
		struct host_msg old;
		/*
		 * A peer that said its own line and closed (another service on the
		 * port) refuses our greeting; what it said tells the user more.
		 */
		if ((r = host_link_recv(&c->link, &line, deadline_ns)) < 0) {
			if (sent < 0)
				return err_set(err, sent, "cannot be written to: %s", strerror(-sent));
			return err_set(err, r, "did not greet: %s", r == -ETIMEDOUT ? "nothing came in time" : strerror(-r));
		}
		if (host_decode_greeting(line, strlen(line), ret, &why) == 0) {
			if (strcmp(ret->token, m.token) == 0)
				break;
			continue;       /* the connection's greeting, or an earlier run's */
		}
		/* An answer an earlier run did not wait for is passed over; anything else is no latscope host. */
		if (host_decode_reply(line, strlen(line), &old, &why) < 0 && !strstr(line, "\"op\":\"explain\""))
			return err_set(err, -EPROTO, "is not a latscope host of protocol %d", HOST_PROTO_VERSION);
	}
	if (ret->version != HOST_PROTO_VERSION)
		return err_set(err, -EPROTO, "is not a latscope host of protocol %d", HOST_PROTO_VERSION);
	return 0;
}

int host_client_connect(struct host_client *c, const char *spec, const uint8_t *secret,
			size_t secret_len, uint64_t deadline_ns, struct lat_error *err)
{
	struct host_greeting g;
	const char *line;
	int r;

	memset(c, 0, sizeof(*c));
	c->link.fd = -1;
	host_sync_init(&c->sync);
	if ((r = host_link_open(spec, deadline_ns, &c->link, err)) < 0)
		return r;
	struct lat_error why;
	if ((r = greet(c, deadline_ns, &g, &why)) < 0) {
		host_client_close(c);
		return err_set(err, r, "'%s' %s", spec, why.msg);
	}
	if (g.auth && !secret) {
		host_client_close(c);
		return err_set(err, -EACCES,
			       "the host at '%s' asks for a secret, and none was given", spec);
	}
	struct host_msg hello = { .op = HOST_OP_HELLO,
				  .version = HOST_PROTO_VERSION,
				  .has_auth = g.auth };
	if (g.auth)
		host_session_auth(g.nonce, secret, secret_len, hello.auth);
	if ((r = ask(c, &hello, deadline_ns, &line, err)) < 0 ||
	    (r = read_hello(c, line, err)) < 0) {
		host_client_close(c);
		return r;
	}
	return 0;
}

int host_client_exchange(struct host_client *c, uint64_t deadline_ns, struct lat_error *err)
{
	struct host_msg m = { .op = HOST_OP_TIME, .has_seq = true, .seq = ++c->seq };
	struct host_msg reply;
	const char *line;

	m.t1 = mono_ns();
	int r = ask(c, &m, deadline_ns, &line, err);
	const uint64_t t4 = mono_ns();
	if (r < 0)
		return r;
	if (host_decode_reply(line, strlen(line), &reply, err) < 0)
		return -EPROTO;
	if (reply.op != HOST_OP_TIME || !reply.has_seq || reply.seq != m.seq || reply.t1 != m.t1)
		return err_set(err, -EPROTO,
			       "the host answered a time exchange with something else");
	c->t[0] = m.t1;
	c->t[1] = reply.t2;
	c->t[2] = reply.t3;
	c->t[3] = t4;
	host_sync_add(&c->sync, m.t1, reply.t2, reply.t3, t4);
	return 0;
}

int host_client_explain(struct host_client *c, unsigned vcpu, uint64_t from_ns, uint64_t to_ns, uint64_t min_ns,
			uint64_t deadline_ns, struct host_explain_reply *ret, struct lat_error *err)
{
	struct host_msg m = { .op = HOST_OP_EXPLAIN, .has_seq = true, .seq = ++c->seq, .vcpu = vcpu,
			      .from_ns = from_ns, .to_ns = to_ns, .min_ns = min_ns };
	struct host_msg reply;
	const char *line;
	int r = ask(c, &m, deadline_ns, &line, err);

	if (r < 0)
		return r;
	if (host_decode_reply(line, strlen(line), &reply, err) == 0 && reply.op == HOST_OP_ERROR)
		return err_set(err, -EREMOTEIO, "the host says: %s", reply.error);
	if (host_decode_explain_reply(line, strlen(line), ret, err) < 0)
		return -EPROTO;
	if (!ret->has_seq || ret->seq != m.seq || ret->vcpu != vcpu)
		return err_set(err, -EPROTO, "the host answered an explain with another one's answer");
	return 0;
}

void host_client_close(struct host_client *c)
{
	host_link_close(&c->link);
}
