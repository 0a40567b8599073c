/* bash's completion script for latscope, from every command's tables (cli/compmodel.h). */
#ifndef LATSCOPE_CLI_COMPBASH_H
#define LATSCOPE_CLI_COMPBASH_H

#include <stdio.h>

#include "cli/commands.h"
#include "core/error.h"

/* The script completing the commands of the table cmds (n rows) into out:
 * 0, or a negative errno with err filled (comp_describe's). */
int compbash_write(FILE *out, const struct command *cmds, size_t n, struct lat_error *err);

#endif
