/*
 * The command table, dispatched from main.c: one row per subcommand.  A
 * measuring command is its measure_cmd (measure/measure.h), which names its probe;
 * `latscope run` schedules the probes of the table whose description has a
 * suite share.  A new probe is one row here (doc/adding-a-probe.md).
 */
#ifndef LATSCOPE_CLI_COMMANDS_H
#define LATSCOPE_CLI_COMMANDS_H

#include <stddef.h>

struct cmd_spec;
struct front_end;
struct measure_cmd;

struct command {
	const char *name;
	/* argv[0] is the subcommand's name; the return value is the exit status.
	 * NULL for a measuring command: measure_main(mc, ...) runs it. */
	int (*fn)(int argc, char **argv);
	const struct measure_cmd *mc;   /* a measuring command's description, or NULL */
	const char *help;
	/* What reads every command's options (latscope completion) finds them in
	 * mc, in fe, the tool a front end stands in for, or else in the spec. */
	const struct front_end *fe;
	const struct cmd_spec *(*spec)(void);
};

extern const struct command commands[];
extern const size_t ncommands;

/* The entry points of the commands that are not just a measurement. */
int cmd_run(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sys(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_host(int argc, char **argv);
int cmd_completion(int argc, char **argv);

/* Their options and arguments, as --help lists them. */
const struct cmd_spec *cmd_run_spec(void);
const struct cmd_spec *cmd_runs_spec(void);
const struct cmd_spec *cmd_tune_spec(void);
const struct cmd_spec *cmd_show_spec(void);
const struct cmd_spec *cmd_rm_spec(void);
const struct cmd_spec *cmd_import_spec(void);
const struct cmd_spec *cmd_compare_spec(void);
const struct cmd_spec *cmd_merge_spec(void);
const struct cmd_spec *cmd_export_spec(void);
const struct cmd_spec *cmd_report_spec(void);
const struct cmd_spec *cmd_sys_spec(void);
const struct cmd_spec *cmd_monitor_spec(void);
const struct cmd_spec *cmd_host_spec(void);
const struct cmd_spec *cmd_completion_spec(void);

/* Run row c with argv[0] its name. */
int command_run(const struct command *c, int argc, char **argv);

#endif
