/*
 * libyaml and libxcrypt for --web-config, loaded when a web configuration is
 * read, as libmicrohttpd is (serve/mhd.h): every latscope command locks its
 * memory, and a user's 8 MiB memory-lock limit has no room for libraries
 * only the monitor's --web-config uses.
 */
#ifndef LATSCOPE_SERVE_WEBLIBS_H
#define LATSCOPE_SERVE_WEBLIBS_H

#include <stddef.h>
#include <yaml.h>

#include "core/error.h"

#define YAML_SONAME  "libyaml-0.so.2"
#define CRYPT_SONAME "libcrypt.so.1"

struct yaml_api {
	int (*parser_initialize)(yaml_parser_t *p);
	void (*parser_set_input_string)(yaml_parser_t *p, const unsigned char *in, size_t size);
	int (*parser_load)(yaml_parser_t *p, yaml_document_t *doc);
	void (*parser_delete)(yaml_parser_t *p);
	yaml_node_t *(*document_get_root_node)(yaml_document_t *doc);
	yaml_node_t *(*document_get_node)(yaml_document_t *doc, int index);
	void (*document_delete)(yaml_document_t *doc);
};

/* libxcrypt's crypt_rn: the hash of phrase with setting's salt and cost, in data. */
typedef char *crypt_rn_fn(const char *phrase, const char *setting, void *data, int size);

/* Loaded once; -ENOENT with err naming the library and its Debian package. */
int weblibs_yaml(const struct yaml_api **ret, struct lat_error *err);
int weblibs_crypt(crypt_rn_fn **ret, struct lat_error *err);

#endif
