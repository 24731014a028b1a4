/* Runs a command and prints its peak resident memory, for
 * tests/python/test_lazy_cuda_libraries.py:
 *
 *   etrt_peak_rss PROGRAM [ARG...]     prints "peak_rss_kib N", exits with its status
 *
 * Linux records in a process's peak the resident size of the image it replaced at
 * exec, so a command started straight from Python reports at least Python's own
 * size; started from this small program it reports its own. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: etrt_peak_rss PROGRAM [ARG...]\n");
    return 2;
  }
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    perror("etrt_peak_rss: fork");
    return 2;
  }
  if (child == 0) {
    execvp(argv[1], argv + 1);
    perror("etrt_peak_rss: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(child, &status, 0, &usage) != child) {
    perror("etrt_peak_rss: wait4");
    return 2;
  }
  printf("peak_rss_kib %ld\n", usage.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
