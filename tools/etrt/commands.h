/* The subcommands of the etrt command line. Each returns the process exit status:
 * 0 success, 1 failure while working, 2 bad usage or bad input (nothing written). */
#ifndef ETRT_TOOLS_COMMANDS_H
#define ETRT_TOOLS_COMMANDS_H

typedef struct etrt_command {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv); /* argv[0] is the command's name */
} etrt_command;

int etrt_cmd_inspect(int argc, char **argv);
int etrt_cmd_run(int argc, char **argv);
int etrt_cmd_test(int argc, char **argv);
int etrt_cmd_build(int argc, char **argv);
int etrt_cmd_bench(int argc, char **argv);
int etrt_cmd_demo(int argc, char **argv);

#endif
