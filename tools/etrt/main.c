#include <stdio.h>
#include <string.h>

#include "commands.h"

static const etrt_command etrt_commands[] = {
    {"build", "build a .pte program from an ONNX model", etrt_cmd_build},
    {"run", "run a method of a .pte program on inputs from files", etrt_cmd_run},
    {"inspect", "print a summary of a .pte program (--json for tools)", etrt_cmd_inspect},
    {"test", "run the test cases of a bundled program (.bpte)", etrt_cmd_test},
    {"bench", "measure execute overhead and staging bandwidth on the GPU", etrt_cmd_bench},
    {"demo", "build and run the embedded MLP example (what `make run` does)", etrt_cmd_demo},
};

#define ETRT_COMMAND_COUNT (sizeof etrt_commands / sizeof etrt_commands[0])

static void etrt_usage(FILE *out) {
  fprintf(out,
          "usage: etrt COMMAND [ARGS]\n\n"
          "etrt runs ExecuTorch programs (.pte) whose heavy parts run in its inference\n"
          "engine on the GPU, and builds such programs from ONNX models.\n\ncommands:\n");
  for (size_t i = 0; i < ETRT_COMMAND_COUNT; ++i) {
    fprintf(out, "  %-9s %s\n", etrt_commands[i].name, etrt_commands[i].summary);
  }
  fprintf(out, "\n'etrt COMMAND --help' describes a command. ETRT_LOG=info|debug shows more.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    etrt_usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    etrt_usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("etrt 0.1.0\n");
    return 0;
  }
  for (size_t i = 0; i < ETRT_COMMAND_COUNT; ++i) {
    if (strcmp(argv[1], etrt_commands[i].name) == 0)
      return etrt_commands[i].main(argc - 1, argv + 1);
  }
  fprintf(stderr, "etrt: unknown command '%s'\n\n", argv[1]);
  etrt_usage(stderr);
  return 2;
}
