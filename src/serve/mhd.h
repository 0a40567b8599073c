/*
 * libmicrohttpd, loaded when the monitor serves rather than linked.
 *
 * Debian's libmicrohttpd brings GnuTLS and its seven libraries with it;
 * linked, every latscope command would map them, and mlockall() of a timer
 * run would no longer fit the 8 MiB memory-lock limit a user gets by default.
 * Loaded here, only `latscope monitor` maps them.
 */
#ifndef LATSCOPE_SERVE_MHD_H
#define LATSCOPE_SERVE_MHD_H

#include <microhttpd.h>

#include "core/error.h"

#define MHD_SONAME "libmicrohttpd.so.12"

struct mhd_api {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *daemon);
	struct MHD_Response *(*response_with_free)(size_t size, const void *buffer, MHD_ContentReaderFreeCallback crfc,
						   void *crfc_cls);
	struct MHD_Response *(*response_copy)(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_header)(struct MHD_Response *response, const char *header, const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *connection, unsigned int status_code,
					  struct MHD_Response *response);
	void (*destroy_response)(struct MHD_Response *response);
	const char *(*lookup_value)(struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key);
	const union MHD_ConnectionInfo *(*connection_info)(struct MHD_Connection *connection,
							   enum MHD_ConnectionInfoType info_type, ...);
};

/* The library's functions, loaded once (later calls return the same).
 * -ENOENT with "cannot load libmicrohttpd.so.12: ..." in err. */
int mhd_load(const struct mhd_api **ret, struct lat_error *err);

#endif
