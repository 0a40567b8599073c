/*
 * latscope host: the agent on a VM's host that a guest run asks about its
 * vCPUs (doc/host-protocol.md).  This file reads the options, finds the VM
 * and its vCPU threads, reads the secret, listens, and prints; host/agent.h
 * serves until a stop signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/array.h"
#include "core/parse.h"
#include "host/agent.h"
#include "host/record.h"
#include "host/find.h"
#include "host/listen.h"
#include "host/secret.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "probe/runner.h"
#include "report/tprint.h"

#define NAME "host"

struct host_cmd {
	const char *vm, *listen, *secret;
	uint64_t keep_ns;
	struct strlist vcpu, allow;
	bool no_record, quiet, help;
};

static const struct opt host_opts[] = {
	{ "vm", 0, OPT_STRING, offsetof(struct host_cmd, vm), .metavar = "PID|NAME|qmp:SOCKET",
	  .help = "the VM: its pid, a process whose comm or QEMU -name is NAME, or QEMU's QMP socket (required)" },
	{ "listen", 0, OPT_STRING, offsetof(struct host_cmd, listen), .metavar = "unix:PATH|ADDR:PORT|vsock:PORT",
	  .help = "where guests connect (port 0: a free one; default " HOST_DEFAULT_LISTEN ")" },
	{ "vcpu", 0, OPT_STRLIST, offsetof(struct host_cmd, vcpu), .metavar = "N=TID",
	  .help = "vCPU N is run by thread TID of the VM (repeat for each; instead of finding them by thread names)" },
	{ "secret", 0, OPT_STRING, offsetof(struct host_cmd, secret), .metavar = "FILE", .values = OPT_VALUES_FILE,
	  .help = "a client must prove it holds this file's bytes (HMAC-SHA256 of a nonce); mode 0600 or stricter" },
	{ "allow", 0, OPT_STRLIST, offsetof(struct host_cmd, allow), .metavar = "CIDR",
	  .help = "answer TCP clients from this address block only (repeatable; needed off loopback)" },
	{ "keep", 0, OPT_DURATION, offsetof(struct host_cmd, keep_ns), .min = NS_PER_SEC, .max = 600u * NS_PER_SEC,
	  .unit = NS_PER_SEC, .metavar = "DUR",
	  .help = "hold the last DUR of the host's trace to answer from; a bare number is seconds" },
	{ "no-record", 0, OPT_FLAG, offsetof(struct host_cmd, no_record),
	  .help = "record nothing: answer the clock line-up only (no root or tracefs needed; explain says why)" },
	{ "quiet", 'q', OPT_FLAG, offsetof(struct host_cmd, quiet),
	  .help = "print the start-up line and errors only, not a line per client" },
	{ "help", 'h', OPT_HELP, offsetof(struct host_cmd, help), .help = "show this help" },
};

static void help_more(FILE *out)
{
	fprintf(out, "\nIt records the scheduler, interrupt, migration and KVM events of every host CPU in a tracefs\n"
		"instance of its own (mounting tracefs where it is not mounted, and unmounting it at the end), holds\n"
		"the last --keep of them, and answers a guest's explain with each stretch a vCPU spent off its CPU or\n"
		"in the host.  Where it cannot record (not root, no tracefs) it says why and answers explain with that.\n"
		"A guest run asks it with --host SPEC (latscope timer --help).\n"
		"The protocol: doc/host-protocol.md.  Stop it with SIGINT, SIGTERM or SIGHUP (exit status 0).\n"
		"See latscope-host(1).\n");
}

static const struct cmd_spec host_spec = {
	.name = NAME,
	.synopsis = "--vm PID|NAME|qmp:SOCKET [--listen unix:PATH|ADDR:PORT|vsock:PORT] [--vcpu N=TID]...\n"
		    "                     [--secret FILE] [--allow CIDR]... [--keep DUR | --no-record] [-q]",
	.about = "The agent on a VM's host: it finds the VM's vCPU threads (by QMP query-cpus-fast, by their thread\n"
		 "names or from --vcpu), says how, and answers a guest run's questions over one connection at a\n"
		 "time: hello, time exchanges that line the guest's clock up with this host's, and what the host did\n"
		 "to a vCPU over an interval.",
	.opts = host_opts,
	.nopts = ARRAY_SIZE(host_opts),
	.help_offset = offsetof(struct host_cmd, help),
	.help_more = help_more,
	.pos_name = "argument",
};

const struct cmd_spec *cmd_host_spec(void)
{
	return &host_spec;
}

/* Where and to whom: the checks of --listen, --allow and --secret together. */
static int check_reach(const struct host_cmd *c, struct host_listen *l, struct host_cidr *allow,
		       struct lat_error *err)
{
	int r = host_listen_parse(c->listen, l, err);

	for (unsigned i = 0; r == 0 && i < c->allow.n; i++)
		r = host_cidr_parse(c->allow.items[i], &allow[i], err);
	if (r < 0)
		return r;
	if (c->allow.n && l->kind != HOST_LISTEN_TCP)
		return err_set(err, -EINVAL, "option '--allow': only for a --listen ADDR:PORT");
	if (l->kind == HOST_LISTEN_VSOCK && !c->secret)
		return err_set(err, -EINVAL, "option '--listen': '%s' is reachable from every guest of this host: give "
			       "--secret FILE", c->listen);
	if (!host_listen_is_local(l) && l->kind == HOST_LISTEN_TCP && (!c->allow.n || !c->secret))
		return err_set(err, -EINVAL, "option '--listen': '%s' is reachable from other machines: give --allow CIDR "
			       "and --secret FILE", c->listen);
	return 0;
}

static void print_note(void *ctx, const char *line)
{
	(void)ctx;
	tprintf(stdout, "latscope host: %s\n", line);
	fflush(stdout);
}

static void print_start(const struct host_vm *vm, const struct host_listener *l, bool secret)
{
	tprintf(stdout, "latscope host: VM pid %ld '%s', %zu vCPU%s by %s:", vm->pid, vm->name, vm->n, vm->n == 1 ? "" : "s",
		host_found_by_text(vm->found_by));
	for (size_t i = 0; i < vm->n; i++)
		tprintf(stdout, " %u=%ld", vm->vcpus[i].vcpu, vm->vcpus[i].tid);
	tprintf(stdout, "; listening on %s%s\n", l->bound, secret ? ", a secret required" : "");
	fflush(stdout);
}

/* A source that answers every explain with why the agent does not record. */
static int not_recording(void *ctx, const struct host_episodes_query *q, struct host_answer *ret, size_t max,
			 size_t *ret_n, size_t *ret_more, uint64_t *ret_complete_from, struct lat_error *err)
{
	(void)q, (void)ret, (void)max, (void)ret_n, (void)ret_more, (void)ret_complete_from;
	return err_set(err, -ENODATA, "this agent does not record: %s", (const char *)ctx);
}

/* The recording, or a source saying why there is none. */
static struct host_record *record(const struct host_cmd *c, struct host_source *src, struct lat_error *why)
{
	struct host_record *r = NULL;

	if (c->no_record)
		err_set(why, -ENODATA, "--no-record");
	if (c->no_record || host_record_start(c->keep_ns, &r, why) < 0) {
		*src = (struct host_source){ .episodes = not_recording, .ctx = why->msg };
		return NULL;
	}
	*src = host_record_source(r);
	return r;
}

/* After the start-up line: what is recorded, or why nothing is. */
static void print_record(const struct host_cmd *c, const struct host_record *r, const struct lat_error *why)
{
	if (!r)
		tprintf(stderr, "latscope host: not recording, so explain is answered with why: %s\n", why->msg);
	else if (!c->quiet)
		tprintf(stdout, "latscope host: recording every host CPU%s%s, the last %.0fs\n",
			host_record_kvm(r) ? " with KVM's exits" : " (no kvm events in this kernel)",
			host_record_mounted(r) ? " (tracefs mounted for it)" : "", (double)c->keep_ns / 1e9);
	fflush(stdout);
}

static void record_stop(struct host_record *r)
{
	struct lat_error note;
	int rc = host_record_stop(r, &note);
	if (rc < 0)
		tprintf(stderr, "latscope host: %s\n", note.msg);
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGQUIT";
}

/* Listen and serve: an exit status. */
static int serve(const struct host_cmd *c, const struct host_listen *where, const struct host_cidr *allow,
		 const struct host_vm *vm, const uint8_t *secret, size_t secret_len)
{
	struct host_listener l = { .fd = -1 };
	struct lat_error err, why;
	struct host_source src;
	sigset_t stop;

	/* Before the signals are blocked: the ring forks its guard, which must not inherit the mask. */
	struct host_record *rec = record(c, &src, &why);
	runner_stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, NULL);    /* from here every stop comes through the loop */
	if (host_listen_open(where, &l, &err) < 0) {
		tprintf(stderr, "latscope host: %s\n", err.msg);
		record_stop(rec);
		return EXIT_ERROR;
	}
	print_start(vm, &l, secret != NULL);
	print_record(c, rec, &why);
	const struct host_agent a = {
		.vm = vm, .secret = secret, .secret_len = secret_len, .allow = allow, .nallow = c->allow.n,
		.listener = &l, .note = c->quiet ? NULL : print_note, .src = &src,
		.tick = rec ? host_record_tick : NULL, .tick_ctx = rec,
	};
	int r = host_agent_run(&a, &stop, &err);
	host_listen_close(&l);
	record_stop(rec);
	if (r < 0) {
		tprintf(stderr, "latscope host: %s\n", err.msg);
		return EXIT_ERROR;
	}
	if (!c->quiet)
		tprintf(stdout, "latscope host: stopped by %s\n", signal_name(r));
	return EXIT_OK;
}

/* What a failed find or read said: a usage error when it is about what the options name. */
static int refused(int r, const char *msg)
{
	if (r == -ESRCH || r == -EEXIST || r == -ENOENT || r == -EINVAL || r == -EPERM)
		return storecmd_usage(NAME, msg);
	tprintf(stderr, "latscope host: %s\n", msg);
	return EXIT_ERROR;
}

int cmd_host(int argc, char **argv)
{
	struct host_cmd c = { .listen = HOST_DEFAULT_LISTEN, .keep_ns = HOST_KEEP_DEFAULT_NS };
	struct opt_result given;
	struct host_listen where;
	struct host_cidr allow[STRLIST_MAX];
	struct host_vm vm = { 0 };
	struct lat_error err;
	static uint8_t secret[HOST_SECRET_MAX];
	size_t secret_len = 0;
	int r = storecmd_parse(&host_spec, argc, argv, &c, &given);

	if (r != LAT_GO_ON)
		return storecmd_exit(r);
	if (!c.vm)
		return storecmd_refuse(NAME, "option '--vm' is required: the VM's pid, its name, or qmp:SOCKET");
	if (check_reach(&c, &where, allow, &err) < 0)
		return storecmd_usage(NAME, err.msg);
	if (c.secret && (r = host_secret_read(c.secret, secret, &secret_len, &err)) < 0) {
		char msg[sizeof(err.msg) + 32];
		snprintf(msg, sizeof(msg), "option '--secret': %s", err.msg);
		return refused(r, msg);
	}
	if ((r = host_vm_find(NULL, c.vm, c.vcpu.items, c.vcpu.n, &vm, &err)) < 0)
		return refused(r, err.msg);
	r = serve(&c, &where, allow, &vm, c.secret ? secret : NULL, secret_len);
	host_vm_free(&vm);
	return r;
}
