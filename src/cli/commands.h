/* One entry point per subcommand, dispatched from main.c's command table. */
#ifndef LATSCOPE_CLI_COMMANDS_H
#define LATSCOPE_CLI_COMMANDS_H

/* argv[0] is the subcommand's name; the return value is the exit status. */
int cmd_timer(int argc, char **argv);

#endif
