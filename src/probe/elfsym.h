/* A function's place in an ELF file, as a uprobe wants it: its file offset. */
#ifndef LATSCOPE_PROBE_ELFSYM_H
#define LATSCOPE_PROBE_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

struct elfsym {
	uint64_t offset; /* in the file, where the function's code begins */
	bool stripped;	 /* the file has no .symtab (only what it exports) */
};

/*
 * Find function name (a defined STT_FUNC or ifunc) in the ELF file at path,
 * in its symbol table and then its dynamic one.  0; -ENOENT when it is not
 * there (ret->stripped says whether a symbol table was there to look in);
 * -ENOEXEC when the file is not ELF; -errno when it cannot be read.  err
 * names the file and the reason.
 */
int elfsym_find(const char *path, const char *name, struct elfsym *ret, struct lat_error *err);

#endif
