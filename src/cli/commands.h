/* One entry point per subcommand, dispatched from main.c's command table. */
#ifndef LATSCOPE_CLI_COMMANDS_H
#define LATSCOPE_CLI_COMMANDS_H

/* argv[0] is the subcommand's name; the return value is the exit status. */
int cmd_run(int argc, char **argv);
int cmd_timer(int argc, char **argv);
int cmd_noise(int argc, char **argv);
int cmd_wake(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sys(int argc, char **argv);
int cmd_cyclictest(int argc, char **argv);

#endif
