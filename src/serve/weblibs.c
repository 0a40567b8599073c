#include "serve/weblibs.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct yaml_api yaml;
static crypt_rn_fn *crypt_rn_p;
static int yaml_rc, crypt_rc;
static char yaml_why[200], crypt_why[200];
static pthread_once_t yaml_once = PTHREAD_ONCE_INIT, crypt_once = PTHREAD_ONCE_INIT;

/* name's address in lib into *fn (dlsym's void * as a function pointer, as POSIX allows). */
static int sym(void *lib, const char *soname, const char *name, void *fn, char *why, size_t size)
{
	void *p = dlsym(lib, name);
	if (!p) {
		snprintf(why, size, "%s has no %s", soname, name);
		return -ENOENT;
	}
	memcpy(fn, &p, sizeof(p));
	return 0;
}

static void *open_lib(const char *soname, char *why, size_t size)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(why, size, "%s", e ? e : soname);
	}
	return lib;
}

static void load_yaml(void)
{
	const size_t n = sizeof(yaml_why);
	void *lib = open_lib(YAML_SONAME, yaml_why, n);
	if (!lib) {
		yaml_rc = -ENOENT;
		return;
	}
	const struct {
		const char *name;
		void *fn;
	} syms[] = {
		{ "yaml_parser_initialize", &yaml.parser_initialize },
		{ "yaml_parser_set_input_string", &yaml.parser_set_input_string },
		{ "yaml_parser_load", &yaml.parser_load },
		{ "yaml_parser_delete", &yaml.parser_delete },
		{ "yaml_document_get_root_node", &yaml.document_get_root_node },
		{ "yaml_document_get_node", &yaml.document_get_node },
		{ "yaml_document_delete", &yaml.document_delete },
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]) && yaml_rc == 0; i++)
		yaml_rc = sym(lib, YAML_SONAME, syms[i].name, syms[i].fn, yaml_why, n);
}

static void load_crypt(void)
{
	void *lib = open_lib(CRYPT_SONAME, crypt_why, sizeof(crypt_why));
	crypt_rc =
		lib ? sym(lib, CRYPT_SONAME, "crypt_rn", &crypt_rn_p, crypt_why, sizeof(crypt_why))
		    : -ENOENT;
}

int weblibs_yaml(const struct yaml_api **ret, struct lat_error *err)
{
	pthread_once(&yaml_once, load_yaml);
	if (yaml_rc < 0)
		return err_set(err, yaml_rc, "cannot load %s: %s (Debian package libyaml-0-2)",
			       YAML_SONAME, yaml_why);
	*ret = &yaml;
	return 0;
}

int weblibs_crypt(crypt_rn_fn **ret, struct lat_error *err)
{
	pthread_once(&crypt_once, load_crypt);
	if (crypt_rc < 0)
		return err_set(err, crypt_rc, "cannot load %s: %s (Debian package libcrypt1)",
			       CRYPT_SONAME, crypt_why);
	*ret = crypt_rn_p;
	return 0;
}
