#include "measure/hostask.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/nstime.h"
#include "serve/addr.h"
#include "report/tprint.h"

/* Episodes shorter than this explain no spike above the threshold on their own. */
#define MIN_FLOOR_NS (50u * NS_PER_US)

int hostask_check(struct hostask *h, const char *host, const char *host_secret,
		  struct lat_error *err)
{
	struct lat_error why;

	memset(h, 0, sizeof(*h));
	if (host_secret && !host)
		return err_set(err, -EINVAL, "option '--host-secret' needs '--host'");
	/* A TCP address is checked before the run, as the other forms' files can only be at connect time. */
	struct listen_addr a;
	bool tcp = host && strncmp(host, "serial:", 7) != 0 && strncmp(host, "unix:", 5) != 0 &&
		   strncmp(host, "vsock:", 6) != 0;
	if (tcp && sock_addr_parse("--host", host, &a, err) < 0)
		return -EINVAL;
	if (!host_secret)
		return 0;
	int r = host_secret_read(host_secret, h->secret, &h->secret_len, &why);
	if (r < 0)
		return err_set(err, r, "option '--host-secret': %s", why.msg);
	h->has_secret = true;
	return 0;
}

void hostask_start(struct hostask *h, const char *host, const struct run_params *rp,
		   struct result *res)
{
	struct lat_error err;

	if (!host)
		return;
	uint64_t min = res->threshold_ns / 4u;
	struct host_guest_opts o = { .spec = host,
				     .secret = h->has_secret ? h->secret : NULL,
				     .secret_len = h->secret_len,
				     .vcpus = rp->cpus,
				     .min_ns = min > MIN_FLOOR_NS ? min : MIN_FLOOR_NS };
	if (host_guest_start(&o, &h->g, &err) < 0) {
		result_note(res, "--host: measuring without the host: %s",
			    err.msg); /* printed once, with the notes */
		h->g = NULL;
	}
	memset(h->secret, 0, sizeof(h->secret));
}

void hostask_finish(struct hostask *h, const char *cmd, struct result *res)
{
	if (!h->g)
		return;
	if (host_guest_finish(h->g, res) < 0)
		tprintf(stderr,
			"latscope %s: --host: cannot keep the host's answers: out of memory\n",
			cmd);
	host_guest_free(h->g);
	h->g = NULL;
}
