#include "host/proto_explain.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "host/explain_json.h"
#include "host/proto.h"

static json_t *reply_json(const struct host_explain_reply *r)
{
	json_t *eps = json_array();
	json_t *o =
		json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "op", "explain", "vcpu",
			  (json_int_t)r->vcpu, "from_ns", (json_int_t)r->from_ns, "to_ns",
			  (json_int_t)r->to_ns, "min_ns", (json_int_t)r->min_ns, "complete_from_ns",
			  (json_int_t)r->complete_from_ns, "more", (json_int_t)r->more);
	int bad = !eps || !o;

	for (size_t i = 0; !bad && i < r->n; i++)
		bad |= json_array_append_new(eps, host_answer_to_json(&r->ep[i]));
	if (!bad && r->has_seq)
		bad |= json_object_set_new(o, "seq", json_integer((json_int_t)r->seq));
	if (!bad)
		bad |= json_object_set(o, "episodes", eps);
	json_decref(eps);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int host_encode_explain_reply(struct host_explain_reply *r, char **ret_line)
{
	for (;;) {
		json_t *o = reply_json(r);
		if (!o)
			return -ENOMEM;
		int rc = host_encode_line(o, ret_line);
		if (rc != -EMSGSIZE || !r->n)
			return rc;
		r->n--;
		r->more++;
	}
}

int host_decode_explain_reply(const char *line, size_t len, struct host_explain_reply *ret,
			      struct lat_error *err)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	uint64_t vcpu = 0, more = 0;
	int r = -EINVAL;

	if (!o)
		return err_set(err, -EINVAL, "not JSON: %s (column %d)", jerr.text, jerr.column);
	memset(ret, 0, sizeof(*ret));
	const char *op = json_string_value(json_object_get(o, "op"));
	json_t *eps = json_object_get(o, "episodes");
	if (!op || strcmp(op, "explain") != 0) {
		err_set(err, -EINVAL, "not an explain answer");
		goto out;
	}
	int has = host_json_u64(o, "seq", false, &ret->seq, err);
	if (has < 0 || host_json_u64(o, "vcpu", true, &vcpu, err) < 0 ||
	    host_json_u64(o, "from_ns", true, &ret->from_ns, err) < 0 ||
	    host_json_u64(o, "to_ns", true, &ret->to_ns, err) < 0 ||
	    host_json_u64(o, "min_ns", true, &ret->min_ns, err) < 0 ||
	    host_json_u64(o, "complete_from_ns", true, &ret->complete_from_ns, err) < 0 ||
	    host_json_u64(o, "more", true, &more, err) < 0)
		goto out;
	if (!json_is_array(eps) || json_array_size(eps) > HOST_EPISODES_MAX) {
		err_set(err, -EINVAL, "'episodes' is not an array of at most %d",
			HOST_EPISODES_MAX);
		goto out;
	}
	ret->has_seq = has > 0;
	ret->vcpu = (unsigned)vcpu;
	ret->more = (size_t)more;
	for (size_t i = 0; i < json_array_size(eps); i++) {
		if (host_answer_from_json(json_array_get(eps, i), &ret->ep[i], err) < 0)
			goto out;
		ret->n++;
	}
	r = 0;
out:
	json_decref(o);
	return r;
}
