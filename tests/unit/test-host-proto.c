/*
 * The host agent's protocol (src/host/proto.c) and a client's session with it
 * (src/host/session.c): lines out of a stream, each message there and back,
 * each refusal, the size limit.  No socket: the agent's I/O is
 * tests/integration/test_host.py's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "host/proto.h"
#include "host/session.h"

static size_t feed(struct host_linebuf *lb, const char *text)
{
	size_t room, n = strlen(text);
	char *tail = host_linebuf_tail(lb, &room);

	assert_true(room >= n);
	for (size_t i = 0; i < n; i++)  /* bytes, not a string: the buffer holds no NUL */
		tail[i] = text[i];
	host_linebuf_added(lb, n);
	return n;
}

static void test_a_line_split_across_reads_comes_out_whole_once_its_newline_arrives(void **state)
{
	(void)state;
	static struct host_linebuf lb;
	char *line;
	size_t len;

	feed(&lb, "{\"op\":\"ti");
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 0);
	feed(&lb, "me\",\"t1\":5}\n{\"op\"");
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 1);
	assert_string_equal(line, "{\"op\":\"time\",\"t1\":5}");
	assert_int_equal(len, strlen(line));
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 0);
	feed(&lb, ":\"hello\"}\n\n");
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 1);
	assert_string_equal(line, "{\"op\":\"hello\"}");
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 1);
	assert_int_equal(len, 0);
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 0);
}

static void test_a_line_of_64_kib_with_its_newline_passes_and_one_byte_more_is_refused(void **state)
{
	(void)state;
	static struct host_linebuf lb;
	char *big = malloc(HOST_LINE_MAX + 1), *line;
	size_t len, room;

	assert_non_null(big);
	memset(big, 'x', HOST_LINE_MAX - 1);
	big[HOST_LINE_MAX - 1] = '\n';
	big[HOST_LINE_MAX] = '\0';
	feed(&lb, big);
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 1);
	assert_int_equal(len, HOST_LINE_MAX - 1);
	assert_int_equal(host_linebuf_line(&lb, &line, &len), 0);
	big[HOST_LINE_MAX - 1] = 'x';
	feed(&lb, big);
	host_linebuf_tail(&lb, &room);
	assert_int_equal(room, 0);
	assert_int_equal(host_linebuf_line(&lb, &line, &len), -EMSGSIZE);
	free(big);
}

static void round_trip_request(const struct host_msg *m, struct host_msg *back)
{
	char *line;
	struct lat_error err;

	assert_int_equal(host_encode_msg(m, false, &line), 0);
	assert_int_equal(line[strlen(line) - 1], '\n');
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	assert_int_equal(host_decode_request(line, strlen(line) - 1, back, &err), 0);
	free(line);
}

static void test_each_request_comes_back_as_it_went(void **state)
{
	(void)state;
	struct host_msg hello = { .op = HOST_OP_HELLO, .version = 1, .has_auth = true }, t = { .op = HOST_OP_TIME },
			ex = { .op = HOST_OP_EXPLAIN, .has_seq = true, .seq = 9, .vcpu = 3, .from_ns = 100, .to_ns = 250 },
			back;

	memset(hello.auth, 'a', HOST_AUTH_HEX);
	round_trip_request(&hello, &back);
	assert_int_equal(back.op, HOST_OP_HELLO);
	assert_int_equal(back.version, 1);
	assert_true(back.has_auth);
	assert_string_equal(back.auth, hello.auth);
	t.has_seq = true;
	t.seq = 7;
	t.t1 = UINT64_C(1234567890123456789);
	round_trip_request(&t, &back);
	assert_int_equal(back.op, HOST_OP_TIME);
	assert_true(back.has_seq);
	assert_int_equal(back.seq, 7);
	assert_true(back.t1 == t.t1);
	round_trip_request(&ex, &back);
	assert_int_equal(back.op, HOST_OP_EXPLAIN);
	assert_int_equal(back.seq, 9);
	assert_int_equal(back.vcpu, 3);
	assert_int_equal(back.from_ns, 100);
	assert_int_equal(back.to_ns, 250);
}

static void test_the_greeting_and_the_agents_replies_come_back_as_they_went(void **state)
{
	(void)state;
	struct host_greeting g = { .version = 1, .auth = true }, gb;
	struct host_msg t = { .op = HOST_OP_TIME, .has_seq = true, .seq = 2, .t1 = 10, .t2 = 20, .t3 = 30 },
			e = { .op = HOST_OP_ERROR, .has_seq = true, .seq = 4, .error = "no vCPU 9" }, back;
	struct lat_error err;
	char *line;

	memcpy(g.nonce, "00112233445566778899aabbccddeeff", HOST_NONCE_HEX + 1);
	assert_int_equal(host_encode_greeting(&g, &line), 0);
	assert_int_equal(host_decode_greeting(line, strlen(line), &gb, &err), 0);
	assert_int_equal(gb.version, 1);
	assert_true(gb.auth);
	assert_string_equal(gb.nonce, g.nonce);
	free(line);
	assert_int_equal(host_encode_msg(&t, true, &line), 0);
	assert_int_equal(host_decode_reply(line, strlen(line), &back, &err), 0);
	assert_int_equal(back.t1, 10);
	assert_int_equal(back.t2, 20);
	assert_int_equal(back.t3, 30);
	assert_int_equal(back.seq, 2);
	free(line);
	assert_int_equal(host_encode_msg(&e, true, &line), 0);
	assert_string_equal(line, "{\"op\":\"error\",\"seq\":4,\"error\":\"no vCPU 9\"}\n");
	assert_int_equal(host_decode_reply(line, strlen(line), &back, &err), 0);
	assert_string_equal(back.error, "no vCPU 9");
	free(line);
}

static void test_each_bad_request_is_refused_with_one_line_and_its_seq_kept(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int r;
		const char *msg;
	} bad[] = {
		{ "{\"op\":\"time\"", -EINVAL, "not JSON: " },
		{ "[1,2]", -EINVAL, "a message is a JSON object" },
		{ "{\"seq\":1}", -EINVAL, "'op' is missing or not a string" },
		{ "{\"op\":\"reboot\",\"seq\":5}", -ENOTSUP, "unknown op 'reboot' (known: hello, time, explain, greet)" },
		{ "{\"op\":\"time\",\"seq\":5}", -EINVAL, "'t1' is missing" },
		{ "{\"op\":\"time\",\"seq\":5,\"t1\":-1}", -EINVAL, "'t1' is not a whole number" },
		{ "{\"op\":\"time\",\"seq\":5,\"t1\":1.5}", -EINVAL, "'t1' is not a whole number" },
		{ "{\"op\":\"time\",\"seq\":\"x\",\"t1\":1}", -EINVAL, "'seq' is not a whole number" },
		{ "{\"op\":\"hello\",\"seq\":5}", -EINVAL, "'version' is missing" },
		{ "{\"op\":\"explain\",\"seq\":5,\"vcpu\":0,\"from_ns\":9,\"to_ns\":8}", -EINVAL, "'from_ns' is after 'to_ns'" },
		{ "{\"op\":\"explain\",\"seq\":5,\"vcpu\":99999,\"from_ns\":1,\"to_ns\":8}", -EINVAL, "'vcpu' is above 4095" },
		{ "{\"op\":\"error\",\"seq\":5,\"error\":\"x\"}", -ENOTSUP, "op 'error' is the agent's" },
		{ "{\"op\":\"time\",\"seq\":5,\"t1\":1,\"t1\":2}", -EINVAL, "not JSON: " },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct host_msg m;
		struct lat_error err = { "" };
		assert_int_equal(host_decode_request(bad[i].line, strlen(bad[i].line), &m, &err), bad[i].r);
		assert_non_null(strstr(err.msg, bad[i].msg));
		assert_null(strchr(err.msg, '\n'));
		if (strstr(bad[i].line, "\"seq\":5") && strncmp(bad[i].msg, "not JSON", 8) != 0)
			assert_true(m.has_seq && m.seq == 5);
	}
}

static void test_a_hello_longer_than_64_kib_is_refused_by_its_encoder(void **state)
{
	(void)state;
	struct host_vm vm = { .pid = 1, .name = "big" };
	char *line;

	for (unsigned i = 0; i < 2000; i++) {
		assert_int_equal(host_vm_add(&vm, i, 1000 + (long)i), 0);
		memset(vm.vcpus[i].name, 'n', sizeof(vm.vcpus[i].name) - 1);
	}
	assert_int_equal(host_encode_hello_reply(&vm, &line), -EMSGSIZE);
	vm.n = 2;
	assert_int_equal(host_encode_hello_reply(&vm, &line), 0);
	free(line);
	host_vm_free(&vm);
}

static struct host_vm two_vcpus = {
	.pid = 4242, .name = "guest", .found_by = HOST_FOUND_QMP, .n = 2,
	.vcpus = (struct host_vcpu[]){ { 0, 4250, "CPU 0/KVM" }, { 1, 4251, "CPU 1/KVM" } },
};

static const uint8_t nonce[HOST_NONCE_BYTES] = { 0xde, 0xad, 0xbe, 0xef };

/* The session's answer to line (read at 6, sent at 7) is want, or holds it when part is true. */
static void expect(struct host_session *s, const char *line, const char *want, bool part, bool close)
{
	struct host_reply a;
	char *out;

	host_session_line(s, line, strlen(line), 6, &a);
	assert_int_equal(host_reply_encode(s, &a, 7, &out), 0);
	if (part)
		assert_non_null(strstr(out, want));
	else
		assert_string_equal(out, want);
	assert_int_equal(a.close, close);
	free(out);
}

static void test_hello_tells_the_vm_and_time_gives_the_read_and_send_times(void **state)
{
	(void)state;
	struct host_session s;
	char *out;

	host_session_start(&s, &two_vcpus, NULL, NULL, 0, nonce);
	assert_int_equal(host_session_greeting(&s, &out), 0);
	assert_string_equal(out, "{\"latscope_host\":1,\"nonce\":\"deadbeef000000000000000000000000\",\"auth\":false}\n");
	free(out);
	expect(&s, "{\"op\":\"time\",\"seq\":1,\"t1\":5}",
	       "{\"op\":\"error\",\"seq\":1,\"error\":\"say hello first: {\\\"op\\\":\\\"hello\\\",\\\"version\\\":1}\"}\n", false,
	       false);
	expect(&s, "{\"op\":\"hello\",\"version\":1}",
	       "{\"op\":\"hello\",\"version\":1,\"vm\":{\"pid\":4242,\"name\":\"guest\"},\"found_by\":\"qmp\","
	       "\"vcpus\":[{\"vcpu\":0,\"tid\":4250,\"name\":\"CPU 0/KVM\"},{\"vcpu\":1,\"tid\":4251,\"name\":"
	       "\"CPU 1/KVM\"}],\"clock\":\"CLOCK_MONOTONIC\"}\n", false, false);
	expect(&s, "{\"op\":\"time\",\"seq\":2,\"t1\":5}", "{\"op\":\"time\",\"seq\":2,\"t1\":5,\"t2\":6,\"t3\":7}\n", false,
	       false);
}

static void test_explain_names_a_missing_vcpu_and_says_plainly_that_nothing_is_recorded(void **state)
{
	(void)state;
	struct host_session s;

	host_session_start(&s, &two_vcpus, NULL, NULL, 0, nonce);
	expect(&s, "{\"op\":\"hello\",\"version\":1}", "\"op\":\"hello\"", true, false);
	expect(&s, "{\"op\":\"explain\",\"seq\":3,\"vcpu\":2,\"from_ns\":1,\"to_ns\":2}",
	       "{\"op\":\"error\",\"seq\":3,\"error\":\"no vCPU 2: VM pid 4242 has 2 vCPUs, numbered 0 to 1\"}\n", false, false);
	expect(&s, "{\"op\":\"explain\",\"seq\":4,\"vcpu\":1,\"from_ns\":1,\"to_ns\":2}",
	       "{\"op\":\"error\",\"seq\":4,\"error\":\"" HOST_NOT_RECORDING "\"}\n", false, false);
	expect(&s, "{\"op\":\"frobnicate\",\"seq\":5}", "unknown op 'frobnicate'", true, false);
	expect(&s, "{\"op\":\"hello\",\"version\":2}", "version 2 is not spoken here", true, true);
}

static void test_with_a_secret_only_the_right_hmac_of_the_nonce_says_hello(void **state)
{
	(void)state;
	static const uint8_t secret[] = "correct horse";
	static const char failed[] = "{\"op\":\"error\",\"error\":\"authentication failed\"}\n";
	struct host_session s;
	char auth[HOST_AUTH_HEX + 1], line[160];
	char *out;

	host_session_start(&s, &two_vcpus, NULL, secret, sizeof(secret) - 1, nonce);
	assert_int_equal(host_session_greeting(&s, &out), 0);
	assert_non_null(strstr(out, "\"auth\":true"));
	free(out);
	expect(&s, "{\"op\":\"hello\",\"version\":1}", failed, false, true);
	host_session_auth(s.nonce, (const uint8_t *)"wrong horse", 11, auth);
	snprintf(line, sizeof(line), "{\"op\":\"hello\",\"version\":1,\"seq\":1,\"auth\":\"%s\"}", auth);
	expect(&s, line, failed, false, true);
	host_session_auth(s.nonce, secret, sizeof(secret) - 1, auth);
	snprintf(line, sizeof(line), "{\"op\":\"hello\",\"version\":1,\"auth\":\"%s\"}", auth);
	expect(&s, line, "\"op\":\"hello\"", true, false);
}

/* A recording that always holds the same many episodes of the vCPU asked about. */
static int many_episodes(void *ctx, const struct host_episodes_query *q, struct host_answer *ret, size_t max,
			 size_t *ret_n, size_t *ret_more, uint64_t *ret_complete_from, struct lat_error *err)
{
	(void)err;
	*(struct host_episodes_query *)ctx = *q;
	for (size_t i = 0; i < max; i++) {
		ret[i] = (struct host_answer){ .q = { .tid = q->tid, .vcpu = q->vcpu, .from = q->from + i, .to = q->to },
					       .covered = true, .nstretches = HOST_STRETCHES, .nran = HOST_TOP };
		ret[i].state_ns[HOST_ST_PREEMPTED] = q->to - q->from - i;
		for (unsigned k = 0; k < HOST_STRETCHES; k++)
			ret[i].stretch[k] = (struct host_stretch){ q->from + k, q->from + k + 1, HOST_ST_PREEMPTED, 3 };
		for (unsigned k = 0; k < HOST_TOP; k++)
			ret[i].ran[k] = (struct host_ran){ .ns = 5, .id = 999, .prio = 49, .policy = 1, .comm = "stress-ng" };
	}
	*ret_n = max;
	*ret_more = 3;
	*ret_complete_from = 77;
	return 0;
}

static void test_explain_answers_the_vcpus_episodes_as_many_as_fit_one_line_and_counts_the_rest(void **state)
{
	(void)state;
	struct host_episodes_query asked = { 0 };
	const struct host_source src = { many_episodes, &asked };
	struct host_explain_reply *r = malloc(sizeof(*r));
	struct lat_error err;
	struct host_session s;
	struct host_reply a;
	char *out;

	host_session_start(&s, &two_vcpus, &src, NULL, 0, nonce);
	expect(&s, "{\"op\":\"hello\",\"version\":1}", "\"op\":\"hello\"", true, false);
	const char *q = "{\"op\":\"explain\",\"seq\":9,\"vcpu\":1,\"from_ns\":1000,\"to_ns\":2000000,\"min_ns\":500}";
	host_session_line(&s, q, strlen(q), 6, &a);
	assert_true(a.explained);
	assert_int_equal(host_reply_encode(&s, &a, 7, &out), 0);
	assert_true(strlen(out) <= HOST_LINE_MAX);
	assert_int_equal(asked.tid, 4251);
	assert_int_equal(asked.vcpu, 1);
	assert_int_equal(asked.min_ns, 500);
	assert_int_equal(host_decode_explain_reply(out, strlen(out) - 1, r, &err), 0);
	assert_int_equal(r->seq, 9);
	assert_int_equal(r->vcpu, 1);
	assert_int_equal(r->complete_from_ns, 77);
	assert_true(r->n >= 1);
	assert_int_equal(r->n + r->more, HOST_EPISODES_MAX + 3);
	assert_int_equal(r->ep[0].q.from, 1000);
	assert_string_equal(r->ep[0].ran[0].comm, "stress-ng");
	free(out);
	/* Leaving min_ns out asks for the default. */
	q = "{\"op\":\"explain\",\"seq\":10,\"vcpu\":0,\"from_ns\":1,\"to_ns\":2}";
	host_session_line(&s, q, strlen(q), 6, &a);
	assert_int_equal(asked.min_ns, HOST_MIN_NS_DEFAULT);
	assert_int_equal(asked.tid, 4250);
	host_session_end(&s);
	free(r);
}

static void test_a_greet_starts_the_session_over_with_a_new_nonce_and_its_token(void **state)
{
	(void)state;
	static const uint8_t other[HOST_NONCE_BYTES] = { 0x01, 0x02 };
	struct host_session s;
	struct host_greeting g;
	struct host_reply a;
	struct lat_error err;
	char *out;

	host_session_start(&s, &two_vcpus, NULL, NULL, 0, nonce);
	expect(&s, "{\"op\":\"hello\",\"version\":1}", "\"op\":\"hello\"", true, false);
	const char *q = "{\"op\":\"greet\",\"token\":\"a1b2\"}";
	host_session_line(&s, q, strlen(q), 6, &a);
	assert_true(a.greet);
	assert_int_equal(host_session_renew(&s, other, a.msg.token, &out), 0);
	assert_int_equal(host_decode_greeting(out, strlen(out), &g, &err), 0);
	assert_string_equal(g.token, "a1b2");
	assert_string_equal(g.nonce, "01020000000000000000000000000000");
	free(out);
	/* Over: hello again before anything else. */
	expect(&s, "{\"op\":\"time\",\"seq\":1,\"t1\":5}", "say hello first", true, false);
	expect(&s, "{\"op\":\"greet\",\"token\":\"no spaces\"}", "'token' is not 1 to 64 letters", true, false);
	host_session_end(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_line_split_across_reads_comes_out_whole_once_its_newline_arrives),
		cmocka_unit_test(test_a_line_of_64_kib_with_its_newline_passes_and_one_byte_more_is_refused),
		cmocka_unit_test(test_each_request_comes_back_as_it_went),
		cmocka_unit_test(test_the_greeting_and_the_agents_replies_come_back_as_they_went),
		cmocka_unit_test(test_each_bad_request_is_refused_with_one_line_and_its_seq_kept),
		cmocka_unit_test(test_a_hello_longer_than_64_kib_is_refused_by_its_encoder),
		cmocka_unit_test(test_hello_tells_the_vm_and_time_gives_the_read_and_send_times),
		cmocka_unit_test(test_explain_names_a_missing_vcpu_and_says_plainly_that_nothing_is_recorded),
		cmocka_unit_test(test_with_a_secret_only_the_right_hmac_of_the_nonce_says_hello),
		cmocka_unit_test(test_explain_answers_the_vcpus_episodes_as_many_as_fit_one_line_and_counts_the_rest),
		cmocka_unit_test(test_a_greet_starts_the_session_over_with_a_new_nonce_and_its_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
