/* etrt_conformance: the ONNX backend test data through the builder and the runtime.
 * Each case runs in a forked child with a time limit, so that a crash or a hang is
 * counted against that case and the run goes on; N children run at once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

#define ETRT_CONF_MAX_SUITES 16
#define ETRT_CONF_MAX_GATES 16

static const char *const etrt_conf_default_suites[] = {"node", "pytorch-converted",
                                                       "pytorch-operator", "simple"};

typedef struct etrt_conf_gate {
  char suite[64];
  double percent;
} etrt_conf_gate;

typedef struct etrt_conf_options {
  const char *data;
  const char *device;
  const char *suites[ETRT_CONF_MAX_SUITES];
  int num_suites;
  const char *filter;
  int jobs;
  int timeout;
  int verbose;
  int list_failures;
  int flags_from_data;
  int top;
  const char *json;
  etrt_conf_gate gates[ETRT_CONF_MAX_GATES];
  int num_gates;
} etrt_conf_options;

typedef struct etrt_conf_entry {
  int suite;
  char *name;
  char *dir;
  etrt_conf_result result;
  double seconds;
} etrt_conf_entry;

typedef struct etrt_conf_slot {
  pid_t pid; /* 0: free */
  int fd;    /* read end of the child's result pipe */
  size_t entry;
  struct timespec started;
  char log[4096]; /* the child's standard output and error */
} etrt_conf_slot;

static void etrt_conf_usage(FILE *out) {
  fprintf(out,
          "usage: etrt_conformance --data DIR [options]\n\n"
          "Builds every case of the ONNX backend test data (DIR/SUITE/CASE/model.onnx), runs it\n"
          "on each test_data_set_* and compares the outputs (rtol 1e-3, atol 1e-7; exact for\n"
          "integers and bools). Prints one line per suite and the reasons counted.\n\n"
          "  --data DIR            the test data (default /usr/share/libonnx-testdata/data)\n"
          "  --device cpu|cuda:N   where the engine partitions run (default cpu)\n"
          "  --suite NAME          a suite to run; repeat (default: node, pytorch-converted,\n"
          "                        pytorch-operator, simple)\n"
          "  --filter TEXT         only cases whose name (or SUITE/NAME) contains TEXT\n"
          "  -j N                  cases run at once (default: the number of processors)\n"
          "  --timeout S           seconds a case may take before it counts as timed out (default "
          "300)\n"
          "  --verbose             one line per case: name, result, executor, time\n"
          "  --list-failures       also list every case not supported, with its reason\n"
          "  --flags-from-data     build with --shape bounds and --shape-values derived from each\n"
          "                        case's test data (for debugging; by default each case is\n"
          "                        built from the model and --device alone, as a user would)\n"
          "  --top N               reasons shown per suite (default 10)\n"
          "  --min-pass SUITE:PCT  exit 1 when SUITE passes fewer than PCT percent; repeat\n"
          "  --json FILE           write a report of every case as JSON\n\n"
          "Exit status: 0 done (and every --min-pass met), 1 a --min-pass missed, 2 bad usage.\n");
}

static int etrt_conf_parse_int(const char *option, const char *text, int min, int *out) {
  char *end;
  long v = text ? strtol(text, &end, 10) : 0;
  if (text == NULL || *end != '\0' || v < min || v > 1000000) {
    fprintf(stderr, "etrt_conformance: %s takes a number >= %d, not '%s'\n", option, min,
            text ? text : "");
    return 0;
  }
  *out = (int)v;
  return 1;
}

static int etrt_conf_parse(int argc, char **argv, etrt_conf_options *o) {
  memset(o, 0, sizeof *o);
  o->data = "/usr/share/libonnx-testdata/data";
  o->device = "cpu";
  o->timeout = 300;
  o->top = 10;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  o->jobs = cpus > 0 ? (int)cpus : 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int takes_value =
        strcmp(a, "--data") == 0 || strcmp(a, "--device") == 0 || strcmp(a, "--suite") == 0 ||
        strcmp(a, "--filter") == 0 || strcmp(a, "-j") == 0 || strcmp(a, "--timeout") == 0 ||
        strcmp(a, "--top") == 0 || strcmp(a, "--min-pass") == 0 || strcmp(a, "--json") == 0;
    if (takes_value) {
      if (next == NULL) {
        fprintf(stderr, "etrt_conformance: %s needs a value\n", a);
        return 2;
      }
      ++i;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      etrt_conf_usage(stdout);
      return -1;
    } else if (strcmp(a, "--data") == 0) {
      o->data = next;
    } else if (strcmp(a, "--device") == 0) {
      etrt_device device;
      if (etrt_device_parse(next, &device) != 0) {
        fprintf(stderr, "etrt_conformance: --device takes cpu or cuda:N, not '%s'\n", next);
        return 2;
      }
      o->device = next;
    } else if (strcmp(a, "--suite") == 0) {
      if (o->num_suites == ETRT_CONF_MAX_SUITES) {
        fprintf(stderr, "etrt_conformance: at most %d suites\n", ETRT_CONF_MAX_SUITES);
        return 2;
      }
      o->suites[o->num_suites++] = next;
    } else if (strcmp(a, "--filter") == 0) {
      o->filter = next;
    } else if (strcmp(a, "-j") == 0) {
      if (!etrt_conf_parse_int(a, next, 1, &o->jobs)) return 2;
    } else if (strncmp(a, "-j", 2) == 0 && a[2] != '\0') {
      if (!etrt_conf_parse_int("-j", a + 2, 1, &o->jobs)) return 2;
    } else if (strcmp(a, "--timeout") == 0) {
      if (!etrt_conf_parse_int(a, next, 1, &o->timeout)) return 2;
    } else if (strcmp(a, "--top") == 0) {
      if (!etrt_conf_parse_int(a, next, 0, &o->top)) return 2;
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
      o->verbose = 1;
    } else if (strcmp(a, "--flags-from-data") == 0) {
      o->flags_from_data = 1;
    } else if (strcmp(a, "--list-failures") == 0) {
      o->list_failures = 1;
    } else if (strcmp(a, "--json") == 0) {
      o->json = next;
    } else if (strcmp(a, "--min-pass") == 0) {
      const char *colon = strrchr(next, ':');
      char *end = NULL;
      double pct = colon ? strtod(colon + 1, &end) : -1;
      etrt_conf_gate *g = &o->gates[o->num_gates];
      if (colon == NULL || colon == next || (size_t)(colon - next) >= sizeof g->suite ||
          end == colon + 1 || *end != '\0' || pct < 0 || pct > 100) {
        fprintf(stderr, "etrt_conformance: --min-pass takes SUITE:PERCENT (node:60), not '%s'\n",
                next);
        return 2;
      }
      if (o->num_gates == ETRT_CONF_MAX_GATES) {
        fprintf(stderr, "etrt_conformance: at most %d --min-pass\n", ETRT_CONF_MAX_GATES);
        return 2;
      }
      snprintf(g->suite, sizeof g->suite, "%.*s", (int)(colon - next), next);
      g->percent = pct;
      ++o->num_gates;
    } else {
      fprintf(stderr, "etrt_conformance: unknown argument '%s' (see --help)\n", a);
      return 2;
    }
  }
  if (o->num_suites == 0) {
    for (size_t k = 0; k < sizeof etrt_conf_default_suites / sizeof *etrt_conf_default_suites; ++k)
      o->suites[o->num_suites++] = etrt_conf_default_suites[k];
  }
  return 0;
}

/* ---- the case list ----------------------------------------------------------------- */

typedef struct etrt_conf_list {
  etrt_conf_entry *entries;
  size_t count, capacity;
} etrt_conf_list;

static int etrt_conf_list_add(etrt_conf_list *l, int suite, const char *name, const char *dir) {
  if (l->count == l->capacity) {
    size_t capacity = l->capacity ? l->capacity * 2 : 256;
    etrt_conf_entry *e = realloc(l->entries, capacity * sizeof *e);
    if (e == NULL) return 0;
    l->entries = e;
    l->capacity = capacity;
  }
  etrt_conf_entry *e = &l->entries[l->count];
  memset(e, 0, sizeof *e);
  e->suite = suite;
  e->name = strdup(name);
  e->dir = strdup(dir);
  if (e->name == NULL || e->dir == NULL) {
    free(e->name);
    free(e->dir);
    return 0;
  }
  ++l->count;
  return 1;
}

static int etrt_conf_matches(const etrt_conf_options *o, const char *suite, const char *name) {
  if (o->filter == NULL || strstr(name, o->filter) != NULL) return 1;
  char full[1024];
  snprintf(full, sizeof full, "%s/%s", suite, name);
  return strstr(full, o->filter) != NULL;
}

/* Every SUITE/CASE folder with a model.onnx, sorted by name; folders without one
 * (the "real" suite's download links) are not cases. */
static int etrt_conf_collect(const etrt_conf_options *o, etrt_conf_list *list) {
  for (int s = 0; s < o->num_suites; ++s) {
    char suite_dir[4096];
    snprintf(suite_dir, sizeof suite_dir, "%s/%s", o->data, o->suites[s]);
    struct dirent **names = NULL;
    int n = scandir(suite_dir, &names, NULL, alphasort);
    if (n < 0) {
      fprintf(stderr, "etrt_conformance: suite '%s': cannot read %s: %s\n", o->suites[s], suite_dir,
              strerror(errno));
      return 0;
    }
    int ok = 1;
    for (int i = 0; i < n; ++i) {
      const char *name = names[i]->d_name;
      char dir[8192], model[8300];
      snprintf(dir, sizeof dir, "%s/%s", suite_dir, name);
      snprintf(model, sizeof model, "%s/model.onnx", dir);
      struct stat st;
      if (ok && name[0] != '.' && stat(model, &st) == 0 && S_ISREG(st.st_mode) &&
          etrt_conf_matches(o, o->suites[s], name))
        ok = etrt_conf_list_add(list, s, name, dir);
      free(names[i]);
    }
    free(names);
    if (!ok) {
      fprintf(stderr, "etrt_conformance: out of memory\n");
      return 0;
    }
  }
  return 1;
}

/* ---- the workers ------------------------------------------------------------------- */

static double etrt_conf_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* ETRT_CONFORMANCE_FAULT=crash:NAME, hang:NAME or leak:NAME makes case NAME crash,
 * hang or leak memory, so that the runner's own test can check how each is counted. */
static void *etrt_conf_leaked;
static void etrt_conf_fault_for_tests(const char *name) {
  const char *fault = getenv("ETRT_CONFORMANCE_FAULT");
  if (fault == NULL) return;
  if (strncmp(fault, "leak:", 5) == 0 && strcmp(fault + 5, name) == 0) {
    etrt_conf_leaked = malloc(64);
    etrt_conf_leaked = NULL; /* unreachable from here on: a leak */
  }
  if (strncmp(fault, "crash:", 6) == 0 && strcmp(fault + 6, name) == 0) raise(SIGSEGV);
  if (strncmp(fault, "hang:", 5) == 0 && strcmp(fault + 5, name) == 0)
    for (;;) pause();
}

static void etrt_conf_child(const etrt_conf_options *o, const etrt_conf_entry *e, const char *log,
                            int fd) {
  int log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (log_fd >= 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(log_fd);
  }
  alarm((unsigned)o->timeout);
  etrt_conf_fault_for_tests(e->name);
  etrt_conf_result result;
  etrt_conf_case_run(e->dir, e->name, o->device, o->flags_from_data, &result);
  ssize_t written = write(fd, &result, sizeof result);
  close(fd);
  /* exit, not _exit: the sanitizers' leak check runs at exit and reports against
   * this case. */
  exit(written == (ssize_t)sizeof result ? 0 : 3);
}

static const char *etrt_conf_signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return NULL;
  }
}

/* The sanitizer's one-line summary in a child's log ("SUMMARY: AddressSanitizer:
 * heap-buffer-overflow file.c:12 in f"), or its last line; empty when none. */
static void etrt_conf_log_summary(const char *log, char *summary, size_t size, char *kind,
                                  size_t kind_size) {
  summary[0] = '\0';
  kind[0] = '\0';
  FILE *f = fopen(log, "r");
  if (f == NULL) return;
  char line[512], last[512] = "";
  while (fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "SUMMARY: ", 9) == 0) {
      snprintf(summary, size, "%s", line + 9);
      /* "AddressSanitizer: heap-buffer-overflow ..." -> its first two words, and
       * a leak report's count of bytes left out */
      const char *tool_end = strstr(line + 9, ": ");
      if (tool_end != NULL) {
        const char *what = tool_end + 2;
        int tool_len = (int)(tool_end - (line + 9));
        if (strstr(what, "leaked") != NULL)
          snprintf(kind, kind_size, "%.*s: memory leak", tool_len, line + 9);
        else
          snprintf(kind, kind_size, "%.*s: %.*s", tool_len, line + 9, (int)strcspn(what, " "),
                   what);
      }
    } else if (line[0] != '\0') {
      snprintf(last, sizeof last, "%s", line);
    }
  }
  fclose(f);
  if (summary[0] == '\0') snprintf(summary, size, "%s", last);
}

/* A child has finished: its record, or what its exit says. */
static void etrt_conf_reap(const etrt_conf_options *o, etrt_conf_slot *slot, int status,
                           etrt_conf_entry *e) {
  etrt_conf_result result;
  ssize_t n = read(slot->fd, &result, sizeof result);
  close(slot->fd);
  e->seconds = etrt_conf_since(&slot->started);
  int clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (n == (ssize_t)sizeof result && clean_exit) {
    e->result = result;
    e->result.key[sizeof e->result.key - 1] = '\0';
    e->result.detail[sizeof e->result.detail - 1] = '\0';
    return;
  }
  /* keep what the child found out about executors even when it died at exit */
  if (n == (ssize_t)sizeof result)
    e->result = result;
  else
    memset(&e->result, 0, sizeof e->result);
  etrt_conf_result *r = &e->result;
  char summary[512], kind[80];
  etrt_conf_log_summary(slot->log, summary, sizeof summary, kind, sizeof kind);
  r->outcome = ETRT_CONF_FAILED;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    snprintf(r->key, sizeof r->key, "timed out");
    snprintf(r->detail, sizeof r->detail, "timed out after %d s", o->timeout);
  } else if (WIFSIGNALED(status)) {
    const char *name = etrt_conf_signal_name(WTERMSIG(status));
    if (name)
      snprintf(r->key, sizeof r->key, "crashed: %s", name);
    else
      snprintf(r->key, sizeof r->key, "crashed: signal %d", WTERMSIG(status));
    snprintf(r->detail, sizeof r->detail, "%s", summary);
  } else {
    /* With a record, the case ran to its end and the exit found something (a leak
     * report); without one, it died on the way. */
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const char *what = n == (ssize_t)sizeof result ? "at exit" : "crashed";
    if (kind[0])
      snprintf(r->key, sizeof r->key, "%s: %s", what, kind);
    else
      snprintf(r->key, sizeof r->key, "%s: exit status %d", what, code);
    snprintf(r->detail, sizeof r->detail, "%s%sexit status %d%s", summary, summary[0] ? " (" : "",
             code, summary[0] ? ")" : "");
  }
}

static const char *etrt_conf_outcome_name(int outcome) {
  switch (outcome) {
    case ETRT_CONF_PASSED:
      return "passed";
    case ETRT_CONF_FAILED:
      return "FAILED";
    default:
      return "not supported";
  }
}

/* Which executor ran the case's operations. */
static void etrt_conf_executor(const etrt_conf_options *o, const etrt_conf_result *r, char *buf,
                               size_t size) {
  if (r->partitions == 0)
    snprintf(buf, size, "-");
  else if (r->gpu_ops == 0)
    snprintf(buf, size, "cpu");
  else if (r->cpu_ops == 0)
    snprintf(buf, size, "%s", o->device);
  else
    snprintf(buf, size, "%s+cpu (%u of %u ops on the GPU)", o->device, r->gpu_ops,
             r->gpu_ops + r->cpu_ops);
}

static void etrt_conf_print_case(const etrt_conf_options *o, const etrt_conf_entry *e,
                                 int with_detail) {
  char executor[96];
  etrt_conf_executor(o, &e->result, executor, sizeof executor);
  printf("%s/%s: %s [%s] %.2f s", o->suites[e->suite], e->name,
         etrt_conf_outcome_name(e->result.outcome), executor, e->seconds);
  if (e->result.outcome != ETRT_CONF_PASSED) {
    printf(": %s", e->result.key);
    if (with_detail && e->result.detail[0] && strcmp(e->result.detail, e->result.key) != 0)
      printf(" -- %s", e->result.detail);
  }
  printf("\n");
}

static int etrt_conf_run_all(const etrt_conf_options *o, etrt_conf_list *list, const char *tmpdir) {
  int jobs = o->jobs;
  etrt_conf_slot *slots = calloc((size_t)jobs, sizeof *slots);
  if (slots == NULL) return 0;
  for (int j = 0; j < jobs; ++j)
    snprintf(slots[j].log, sizeof slots[j].log, "%s/worker_%d.log", tmpdir, j);
  size_t next = 0, done = 0;
  int running = 0, ok = 1;
  while (done < list->count && ok) {
    for (int j = 0; j < jobs && next < list->count && running < jobs; ++j) {
      if (slots[j].pid != 0) continue;
      int fds[2];
      if (pipe(fds) != 0) {
        fprintf(stderr, "etrt_conformance: pipe: %s\n", strerror(errno));
        ok = 0;
        break;
      }
      fflush(stdout);
      fflush(stderr);
      clock_gettime(CLOCK_MONOTONIC, &slots[j].started);
      pid_t pid = fork();
      if (pid < 0) {
        fprintf(stderr, "etrt_conformance: fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        ok = 0;
        break;
      }
      if (pid == 0) {
        close(fds[0]);
        etrt_conf_child(o, &list->entries[next], slots[j].log, fds[1]);
      }
      /* Only the child holds the write end: its exit is the pipe's end of file. */
      close(fds[1]);
      slots[j].pid = pid;
      slots[j].fd = fds[0];
      slots[j].entry = next++;
      ++running;
    }
    if (running == 0) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "etrt_conformance: waitpid: %s\n", strerror(errno));
      ok = 0;
      break;
    }
    for (int j = 0; j < jobs; ++j) {
      if (slots[j].pid != pid) continue;
      etrt_conf_entry *e = &list->entries[slots[j].entry];
      etrt_conf_reap(o, &slots[j], status, e);
      slots[j].pid = 0;
      --running;
      ++done;
      if (o->verbose) etrt_conf_print_case(o, e, 0);
      break;
    }
  }
  /* on a failure of the runner itself, wait for the children already started */
  for (int j = 0; j < jobs; ++j)
    if (slots[j].pid != 0) {
      waitpid(slots[j].pid, NULL, 0);
      close(slots[j].fd);
    }
  for (int j = 0; j < jobs; ++j) unlink(slots[j].log);
  free(slots);
  return ok;
}

/* ---- the report -------------------------------------------------------------------- */

typedef struct etrt_conf_reason {
  int outcome;
  const char *key;
  int count;
} etrt_conf_reason;

typedef struct etrt_conf_tally {
  int total, passed, failed, unsupported;
  int gpu_all, gpu_part, gpu_none, no_ops; /* of the passing cases */
  etrt_conf_reason *reasons;
  int num_reasons;
} etrt_conf_tally;

static int etrt_conf_reason_order(const void *a, const void *b) {
  const etrt_conf_reason *x = a, *y = b;
  if (x->count != y->count) return y->count - x->count;
  if (x->outcome != y->outcome) return x->outcome - y->outcome;
  return strcmp(x->key, y->key);
}

static int etrt_conf_tally_suite(const etrt_conf_list *list, int suite, etrt_conf_tally *t) {
  memset(t, 0, sizeof *t);
  t->reasons = calloc(list->count + 1, sizeof *t->reasons);
  if (t->reasons == NULL) return 0;
  for (size_t i = 0; i < list->count; ++i) {
    const etrt_conf_entry *e = &list->entries[i];
    if (e->suite != suite) continue;
    const etrt_conf_result *r = &e->result;
    ++t->total;
    if (r->outcome == ETRT_CONF_PASSED) {
      ++t->passed;
      if (r->partitions == 0 || r->gpu_ops + r->cpu_ops == 0)
        ++t->no_ops;
      else if (r->cpu_ops == 0)
        ++t->gpu_all;
      else if (r->gpu_ops > 0)
        ++t->gpu_part;
      else
        ++t->gpu_none;
      continue;
    }
    if (r->outcome == ETRT_CONF_FAILED)
      ++t->failed;
    else
      ++t->unsupported;
    int k = 0;
    while (k < t->num_reasons &&
           !(t->reasons[k].outcome == r->outcome && strcmp(t->reasons[k].key, r->key) == 0))
      ++k;
    if (k == t->num_reasons)
      t->reasons[t->num_reasons++] = (etrt_conf_reason){r->outcome, r->key, 0};
    ++t->reasons[k].count;
  }
  qsort(t->reasons, (size_t)t->num_reasons, sizeof *t->reasons, etrt_conf_reason_order);
  return 1;
}

static double etrt_conf_percent(int part, int whole) { return whole ? 100.0 * part / whole : 0.0; }

static void etrt_conf_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static const char *etrt_conf_outcome_key(int outcome) {
  return outcome == ETRT_CONF_PASSED   ? "passed"
         : outcome == ETRT_CONF_FAILED ? "failed"
                                       : "not supported";
}

static int etrt_conf_write_json(const etrt_conf_options *o, const etrt_conf_list *list,
                                const etrt_conf_tally *tallies, double seconds) {
  FILE *f = fopen(o->json, "w");
  if (f == NULL) {
    fprintf(stderr, "etrt_conformance: cannot write %s: %s\n", o->json, strerror(errno));
    return 0;
  }
  fprintf(f, "{\"device\": ");
  etrt_conf_json_string(f, o->device);
  fprintf(f, ", \"data\": ");
  etrt_conf_json_string(f, o->data);
  fprintf(f, ", \"seconds\": %.1f,\n \"suites\": {", seconds);
  for (int s = 0; s < o->num_suites; ++s) {
    const etrt_conf_tally *t = &tallies[s];
    fprintf(f, "%s\n  ", s ? "," : "");
    etrt_conf_json_string(f, o->suites[s]);
    fprintf(f,
            ": {\"total\": %d, \"passed\": %d, \"failed\": %d, \"not_supported\": %d, "
            "\"passed_all_on_gpu\": %d, \"passed_partly_on_gpu\": %d, \"passed_on_cpu\": %d, "
            "\"passed_without_ops\": %d, \"reasons\": [",
            t->total, t->passed, t->failed, t->unsupported, t->gpu_all, t->gpu_part, t->gpu_none,
            t->no_ops);
    for (int k = 0; k < t->num_reasons; ++k) {
      fprintf(f, "%s{\"result\": \"%s\", \"count\": %d, \"reason\": ", k ? ", " : "",
              etrt_conf_outcome_key(t->reasons[k].outcome), t->reasons[k].count);
      etrt_conf_json_string(f, t->reasons[k].key);
      fputc('}', f);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "},\n \"cases\": [");
  for (size_t i = 0; i < list->count; ++i) {
    const etrt_conf_entry *e = &list->entries[i];
    char executor[96];
    etrt_conf_executor(o, &e->result, executor, sizeof executor);
    fprintf(f, "%s\n  {\"suite\": ", i ? "," : "");
    etrt_conf_json_string(f, o->suites[e->suite]);
    fprintf(f, ", \"name\": ");
    etrt_conf_json_string(f, e->name);
    fprintf(f, ", \"result\": \"%s\", \"reason\": ", etrt_conf_outcome_key(e->result.outcome));
    etrt_conf_json_string(f, e->result.key);
    fprintf(f, ", \"detail\": ");
    etrt_conf_json_string(f, e->result.detail);
    fprintf(f, ", \"executor\": ");
    etrt_conf_json_string(f, executor);
    fprintf(f, ", \"gpu_ops\": %u, \"cpu_ops\": %u, \"data_sets\": %u, \"seconds\": %.3f}",
            e->result.gpu_ops, e->result.cpu_ops, e->result.data_sets, e->seconds);
  }
  fprintf(f, "\n ]}\n");
  int ok = ferror(f) == 0;
  if (fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "etrt_conformance: writing %s failed\n", o->json);
  return ok;
}

static int etrt_conf_report(const etrt_conf_options *o, const etrt_conf_list *list,
                            double seconds) {
  /* the cases that went wrong, in order, each with its detail */
  for (size_t i = 0; i < list->count; ++i) {
    const etrt_conf_entry *e = &list->entries[i];
    if (e->result.outcome == ETRT_CONF_FAILED ||
        (o->list_failures && e->result.outcome == ETRT_CONF_UNSUPPORTED))
      etrt_conf_print_case(o, e, 1);
  }
  etrt_conf_tally tallies[ETRT_CONF_MAX_SUITES];
  int ok = 1, gates_met = 1;
  int total = 0, passed = 0, failed = 0, unsupported = 0;
  for (int s = 0; s < o->num_suites; ++s) ok &= etrt_conf_tally_suite(list, s, &tallies[s]);
  if (!ok) {
    fprintf(stderr, "etrt_conformance: out of memory\n");
    gates_met = 0;
    goto done;
  }
  printf("\n");
  for (int s = 0; s < o->num_suites; ++s) {
    const etrt_conf_tally *t = &tallies[s];
    total += t->total;
    passed += t->passed;
    failed += t->failed;
    unsupported += t->unsupported;
    if (t->total == 0 && o->filter != NULL) continue;
    printf("%s: %d/%d passed (%.1f%%), %d failed, %d not supported\n", o->suites[s], t->passed,
           t->total, etrt_conf_percent(t->passed, t->total), t->failed, t->unsupported);
    if (strcmp(o->device, "cpu") != 0 && t->passed > 0)
      printf(
          "  GPU share: of %d passing, %d ran all their operations on %s (%.1f%%), %d partly, "
          "%d on the CPU only, %d had none left after folding\n",
          t->passed, t->gpu_all, o->device, etrt_conf_percent(t->gpu_all, t->passed), t->gpu_part,
          t->gpu_none, t->no_ops);
    for (int k = 0; k < t->num_reasons && k < o->top; ++k)
      printf("  %5d  %-13s  %s\n", t->reasons[k].count,
             etrt_conf_outcome_name(t->reasons[k].outcome), t->reasons[k].key);
    if (t->num_reasons > o->top && o->top > 0)
      printf("  (%d more reasons: --top N or --json FILE)\n", t->num_reasons - o->top);
  }
  printf("total: %d/%d passed (%.1f%%), %d failed, %d not supported on %s in %.1f s\n", passed,
         total, etrt_conf_percent(passed, total), failed, unsupported, o->device, seconds);
  for (int g = 0; g < o->num_gates; ++g) {
    int s = 0;
    while (s < o->num_suites && strcmp(o->suites[s], o->gates[g].suite) != 0) ++s;
    if (s == o->num_suites || tallies[s].total == 0) {
      printf("--min-pass %s: no case of that suite ran; not checked\n", o->gates[g].suite);
      continue;
    }
    double pct = etrt_conf_percent(tallies[s].passed, tallies[s].total);
    if (pct + 1e-9 < o->gates[g].percent) {
      printf("%s: %.1f%% passed, below the required %g%%\n", o->gates[g].suite, pct,
             o->gates[g].percent);
      gates_met = 0;
    }
  }
  if (o->json != NULL && !etrt_conf_write_json(o, list, tallies, seconds)) gates_met = 0;
done:
  for (int s = 0; s < o->num_suites; ++s) free(tallies[s].reasons);
  return gates_met;
}

int main(int argc, char **argv) {
  etrt_conf_options o;
  int parsed = etrt_conf_parse(argc, argv, &o);
  if (parsed != 0) return parsed < 0 ? 0 : parsed;
  struct stat st;
  if (stat(o.data, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "etrt_conformance: no test data at %s (Debian package libonnx-testdata)\n",
            o.data);
    return 2;
  }
  etrt_conf_list list = {0};
  if (!etrt_conf_collect(&o, &list)) return 2;
  char tmpdir[] = "/tmp/etrt_conformance_XXXXXX";
  if (mkdtemp(tmpdir) == NULL) {
    fprintf(stderr, "etrt_conformance: cannot make a temporary folder: %s\n", strerror(errno));
    return 2;
  }
  if (o.jobs > (int)list.count && list.count > 0) o.jobs = (int)list.count;
  printf("etrt conformance: %zu cases from %d suite(s) of %s on %s, %d at a time\n", list.count,
         o.num_suites, o.data, o.device, o.jobs);
  struct timespec started;
  clock_gettime(CLOCK_MONOTONIC, &started);
  int ran = etrt_conf_run_all(&o, &list, tmpdir);
  rmdir(tmpdir);
  int status = 2;
  if (ran) status = etrt_conf_report(&o, &list, etrt_conf_since(&started)) ? 0 : 1;
  for (size_t i = 0; i < list.count; ++i) {
    free(list.entries[i].name);
    free(list.entries[i].dir);
  }
  free(list.entries);
  return status;
}
