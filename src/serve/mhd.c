#include "serve/mhd.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct mhd_api api;
static int load_rc;
static char load_why[200];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym's void * as a function pointer: the one conversion POSIX defines. */
#define LOAD(field, name) \
	do { \
		void *sym = dlsym(lib, name); \
		if (!sym) { \
			snprintf(load_why, sizeof(load_why), "%s has no %s", MHD_SONAME, name); \
			load_rc = -ENOENT; \
			return; \
		} \
		memcpy(&api.field, &sym, sizeof(sym)); \
	} while (0)

static void load(void)
{
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		const char *e = dlerror();
		snprintf(load_why, sizeof(load_why), "%s", e ? e : MHD_SONAME);
		load_rc = -ENOENT;
		return;
	}
	LOAD(start_daemon, "MHD_start_daemon");
	LOAD(stop_daemon, "MHD_stop_daemon");
	LOAD(response_with_free, "MHD_create_response_from_buffer_with_free_callback_cls");
	LOAD(response_copy, "MHD_create_response_from_buffer");
	LOAD(add_header, "MHD_add_response_header");
	LOAD(queue_response, "MHD_queue_response");
	LOAD(destroy_response, "MHD_destroy_response");
	LOAD(lookup_value, "MHD_lookup_connection_value");
	LOAD(connection_info, "MHD_get_connection_info");
}

int mhd_load(const struct mhd_api **ret, struct lat_error *err)
{
	pthread_once(&once, load);
	if (load_rc < 0)
		return err_set(err, load_rc, "cannot load %s: %s (Debian package libmicrohttpd12)", MHD_SONAME, load_why);
	*ret = &api;
	return 0;
}
