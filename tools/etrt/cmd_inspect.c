#include <stdio.h>

#include "commands.h"

int etrt_cmd_inspect(int argc, char **argv) {
  fprintf(stderr, "etrt inspect: not built yet\n");
  return 2;
}
