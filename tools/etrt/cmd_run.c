/* etrt run: load a program, run a method on inputs from files or random ones, report
 * and write the outputs. Exercises the device contract: where I/O lives (--io), the
 * stream (--stream, --sms), async completion (--async). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/half.h"
#include "base/log.h"
#include "commands.h"
#include "device/device.h"
#include "engine/engine.h"
#include "duration.h"
#include "etrt/log.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/stream.h"
#include "runtime/program.h"
#include "tensor_file.h"

#define ETRT_RUN_MAX_IO 64

typedef enum { ETRT_IO_HOST, ETRT_IO_PINNED, ETRT_IO_DEVICE } etrt_io_place;

typedef struct etrt_run_options {
  const char *path;
  const char *method;
  const char *inputs[ETRT_RUN_MAX_IO];
  int num_inputs;
  int random_inputs;
  unsigned long seed;
  const char *data;
  const char *output_dir;
  const char *output_format; /* "npy" or "pb" */
  long iterations;
  etrt_io_place io;
  int caller_stream;
  int sms;
  int async;
  int profile_range;
  int check_cpu;
  int allow_cpu;
  int threads;
} etrt_run_options;

static void etrt_run_usage(FILE *out) {
  fprintf(
      out,
      "usage: etrt run FILE.pte [options]\n\n"
      "Runs a method of an ExecuTorch program and reports its outputs.\n\n"
      "  --method NAME         the method to run (default: forward)\n"
      "  --input FILE          an input, in order: .npy, or .pb (ONNX TensorProto); repeat per "
      "input.\n"
      "                        A .pb SequenceProto or OptionalProto, or a directory of 0.npy,\n"
      "                        1.npy, ... (or .pb), gives one input per tensor it holds: the\n"
      "                        inputs NAME[0], NAME[1], ... of a sequence (etrt build\n"
      "                        --sequence)\n"
      "  --random-inputs SEED  random inputs at the declared (largest) shapes instead\n"
      "  --data FILE.ptd       external tensors the program refers to\n"
      "  --output-dir DIR      write output_0.npy, output_1.npy, ... into DIR (created with\n"
      "                        its missing parents; a file in its place is refused); a\n"
      "                        sequence output's tensors are consecutive outputs\n"
      "  --output-format npy|pb  the outputs' files: .npy (bfloat16 as ml_dtypes saves it,\n"
      "                        '<V2') or .pb (ONNX TensorProto; bfloat16 as BFLOAT16)\n"
      "  --iterations N        run N times and report the median time (default 1)\n"
      "  --io host|pinned|device  where the tool places inputs and outputs (default host):\n"
      "                        host or pinned memory is bound as is; where the program keeps\n"
      "                        I/O on a GPU (etrt build --io-on-device) the runtime stages it\n"
      "                        through device memory (contract rule 3); device: memory on the\n"
      "                        program's GPU (cuda:1 for a program built for cuda:1), zero copy\n"
      "  --stream default|caller  the per-thread default stream, or a stream the tool creates and "
      "selects\n"
      "  --sms N               run on a green-context stream of N SMs and print the SMs granted\n"
      "  --async               execute_async, then wait on the completion event (needs --io "
      "device)\n"
      "  --profile-range       with --iterations N (N >= 2): the first execute (setup, algorithm\n"
      "                        searches) runs outside an attached profiler's range and the\n"
      "                        other N-1 inside it: ncu --profile-from-start off etrt run ...\n"
      "  --check-cpu           also run on the CPU executor and report the largest difference\n"
      "  --allow-cpu           with no GPU, run plans built for one on the CPU\n"
      "  --threads N           the most threads a CPU operator may use (default: every core\n"
      "                        the process may run on)\n\n"
      "Exit status: 0 success, 1 failure while running, 2 bad usage or bad input.\n");
}

static int etrt_run_parse(int argc, char **argv, etrt_run_options *o) {
  memset(o, 0, sizeof *o);
  o->method = "forward";
  o->iterations = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define ETRT_NEED_VALUE()                                 \
  do {                                                    \
    if (next == NULL) {                                   \
      fprintf(stderr, "etrt run: %s needs a value\n", a); \
      return 2;                                           \
    }                                                     \
    ++i;                                                  \
  } while (0)
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      etrt_run_usage(stdout);
      return -1;
    } else if (strcmp(a, "--method") == 0) {
      ETRT_NEED_VALUE();
      o->method = next;
    } else if (strcmp(a, "--input") == 0) {
      ETRT_NEED_VALUE();
      if (o->num_inputs == ETRT_RUN_MAX_IO) {
        fprintf(stderr, "etrt run: at most %d inputs\n", ETRT_RUN_MAX_IO);
        return 2;
      }
      o->inputs[o->num_inputs++] = next;
    } else if (strcmp(a, "--random-inputs") == 0) {
      ETRT_NEED_VALUE();
      o->random_inputs = 1;
      o->seed = strtoul(next, NULL, 10);
    } else if (strcmp(a, "--data") == 0) {
      ETRT_NEED_VALUE();
      o->data = next;
    } else if (strcmp(a, "--output-dir") == 0) {
      ETRT_NEED_VALUE();
      o->output_dir = next;
    } else if (strcmp(a, "--output-format") == 0) {
      ETRT_NEED_VALUE();
      if (strcmp(next, "npy") != 0 && strcmp(next, "pb") != 0) {
        fprintf(stderr, "etrt run: --output-format takes npy or pb, not '%s'\n", next);
        return 2;
      }
      o->output_format = next;
    } else if (strcmp(a, "--iterations") == 0) {
      ETRT_NEED_VALUE();
      char *end;
      o->iterations = strtol(next, &end, 10);
      if (*end != '\0' || o->iterations < 1) {
        fprintf(stderr, "etrt run: --iterations takes a positive number, not '%s'\n", next);
        return 2;
      }
    } else if (strcmp(a, "--io") == 0) {
      ETRT_NEED_VALUE();
      if (strcmp(next, "host") == 0)
        o->io = ETRT_IO_HOST;
      else if (strcmp(next, "pinned") == 0)
        o->io = ETRT_IO_PINNED;
      else if (strcmp(next, "device") == 0)
        o->io = ETRT_IO_DEVICE;
      else {
        fprintf(stderr, "etrt run: --io takes host, pinned or device, not '%s'\n", next);
        return 2;
      }
    } else if (strcmp(a, "--stream") == 0) {
      ETRT_NEED_VALUE();
      if (strcmp(next, "default") == 0)
        o->caller_stream = 0;
      else if (strcmp(next, "caller") == 0)
        o->caller_stream = 1;
      else {
        fprintf(stderr, "etrt run: --stream takes default or caller, not '%s'\n", next);
        return 2;
      }
    } else if (strcmp(a, "--sms") == 0) {
      ETRT_NEED_VALUE();
      o->sms = atoi(next);
      if (o->sms <= 0) {
        fprintf(stderr, "etrt run: --sms takes a positive number, not '%s'\n", next);
        return 2;
      }
    } else if (strcmp(a, "--async") == 0) {
      o->async = 1;
    } else if (strcmp(a, "--profile-range") == 0) {
      o->profile_range = 1;
    } else if (strcmp(a, "--check-cpu") == 0) {
      o->check_cpu = 1;
    } else if (strcmp(a, "--threads") == 0) {
      ETRT_NEED_VALUE();
      char *end;
      long threads = strtol(next, &end, 10);
      if (*end != '\0' || threads < 1 || threads > 1024) {
        fprintf(stderr, "etrt run: --threads takes a count from 1 to 1024, not '%s'\n", next);
        return 2;
      }
      o->threads = (int)threads;
    } else if (strcmp(a, "--allow-cpu") == 0) {
      o->allow_cpu = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "etrt run: unknown option '%s' (see etrt run --help)\n", a);
      return 2;
    } else if (o->path == NULL) {
      o->path = a;
    } else {
      fprintf(stderr, "etrt run: one program at a time ('%s' and '%s')\n", o->path, a);
      return 2;
    }
  }
  if (o->path == NULL) {
    etrt_run_usage(stderr);
    return 2;
  }
  if (o->profile_range && o->iterations < 2) {
    fprintf(stderr,
            "etrt run: --profile-range needs --iterations 2 or more (the first runs "
            "outside the range)\n");
    return 2;
  }
  if (o->num_inputs > 0 && o->random_inputs) {
    fprintf(stderr, "etrt run: give --input files or --random-inputs, not both\n");
    return 2;
  }
  return 0;
}

/* Exit status for a library failure: bad input is 2, trouble while running is 1. */
static int etrt_run_fail(const char *what, etrt_status status) {
  fprintf(stderr, "etrt run: %s: %s\n", what, etrt_last_error());
  return status == ETRT_ERROR_INVALID_FORMAT || status == ETRT_ERROR_INVALID_ARGUMENT ||
                 status == ETRT_ERROR_NOT_FOUND || status == ETRT_ERROR_UNSUPPORTED ||
                 status == ETRT_ERROR_IO
             ? 2
             : 1;
}

/* Moves a tensor's bytes between the row-major order of a tensor file and the
 * program's dim order (channels-last tensors): to_memory 1 reads `from` row-major. An
 * order that is the identity or not a permutation leaves the bytes as they are. */
static int etrt_run_relayout(etrt_tool_tensor *t, const uint8_t *order, int to_memory) {
  const int32_t rank = t->view.rank;
  int identity = 1, seen = 0;
  for (int32_t i = 0; i < rank; ++i) {
    if (order[i] >= rank || (seen & (1 << order[i]))) return 0;
    seen |= 1 << order[i];
    if (order[i] != i) identity = 0;
  }
  if (identity || t->nbytes == 0) return 0;
  uint8_t *moved = malloc(t->nbytes);
  if (moved == NULL) return etrt_run_fail("reordering a tensor", ETRT_ERROR_OUT_OF_MEMORY);
  const size_t item = etrt_dtype_size(t->view.dtype);
  int64_t strides[ETRT_MAX_RANK], index[ETRT_MAX_RANK] = {0}, numel = 1, at = 0;
  for (int32_t k = rank - 1; k >= 0; --k) {
    strides[order[k]] = numel;
    numel *= t->view.sizes[order[k]];
  }
  const uint8_t *from = t->view.data;
  for (int64_t e = 0; e < numel; ++e) {
    if (to_memory)
      memcpy(moved + (size_t)at * item, from + (size_t)e * item, item);
    else
      memcpy(moved + (size_t)e * item, from + (size_t)at * item, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      at += strides[d];
      if (++index[d] < t->view.sizes[d]) break;
      at -= strides[d] * index[d];
      index[d] = 0;
    }
  }
  free(t->view.data);
  t->view.data = moved;
  return 0;
}

/* --output-dir: every existing prefix of the path must be a directory; with `create`
 * the missing ones are made (mkdir -p). Checked before anything runs, so that a
 * path naming a file is refused with nothing written; created only when the outputs
 * are written. */
static int etrt_run_output_dir(const char *dir, int create) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof path) {
    fprintf(stderr, "etrt run: --output-dir '%s': not a usable path\n", dir);
    return 2;
  }
  memcpy(path, dir, len + 1);
  for (size_t end = 1; end <= len; ++end) {
    if (end < len && path[end] != '/') continue;
    char saved = path[end];
    path[end] = '\0';
    struct stat info;
    if (stat(path, &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        fprintf(stderr, "etrt run: --output-dir '%s': '%s' exists and is not a directory\n", dir,
                path);
        return 2;
      }
    } else if (errno != ENOENT) {
      fprintf(stderr, "etrt run: --output-dir '%s': %s: %s\n", dir, path, strerror(errno));
      return 2;
    } else if (!create) {
      return 0; /* the rest does not exist yet: made when the outputs are written */
    } else if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "etrt run: --output-dir '%s': cannot create '%s': %s\n", dir, path,
              strerror(errno));
      return 1;
    }
    path[end] = saved;
  }
  return 0;
}

static uint64_t etrt_run_random_state;
static double etrt_run_random(void) {
  etrt_run_random_state = etrt_run_random_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(etrt_run_random_state >> 11) / (double)(1ULL << 53);
}

static void etrt_run_fill_random(etrt_tensor_view *v, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    double r = etrt_run_random() * 2.0 - 1.0;
    switch (v->dtype) {
      case ETRT_DTYPE_FLOAT32:
        ((float *)v->data)[i] = (float)r;
        break;
      case ETRT_DTYPE_FLOAT64:
        ((double *)v->data)[i] = r;
        break;
      case ETRT_DTYPE_INT32:
        ((int32_t *)v->data)[i] = (int32_t)(r * 8);
        break;
      case ETRT_DTYPE_INT64:
        ((int64_t *)v->data)[i] = (int64_t)(r * 8);
        break;
      case ETRT_DTYPE_BOOL:
        ((uint8_t *)v->data)[i] = r > 0;
        break;
      case ETRT_DTYPE_FLOAT16:
        ((uint16_t *)v->data)[i] = etrt_float_to_half((float)r);
        break;
      case ETRT_DTYPE_BFLOAT16:
        ((uint16_t *)v->data)[i] = etrt_float_to_bfloat16((float)r);
        break;
      default:
        ((uint8_t *)v->data)[i * etrt_dtype_size(v->dtype)] = (uint8_t)(r * 100);
        break;
    }
  }
}

static double etrt_run_element(const etrt_tensor_view *v, size_t i) {
  switch (v->dtype) {
    case ETRT_DTYPE_FLOAT32:
      return ((const float *)v->data)[i];
    case ETRT_DTYPE_FLOAT64:
      return ((const double *)v->data)[i];
    case ETRT_DTYPE_INT32:
      return ((const int32_t *)v->data)[i];
    case ETRT_DTYPE_INT64:
      return (double)((const int64_t *)v->data)[i];
    case ETRT_DTYPE_INT8:
      return ((const int8_t *)v->data)[i];
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_BOOL:
      return ((const uint8_t *)v->data)[i];
    case ETRT_DTYPE_INT16:
      return ((const int16_t *)v->data)[i];
    case ETRT_DTYPE_UINT16:
      return ((const uint16_t *)v->data)[i];
    case ETRT_DTYPE_UINT32:
      return ((const uint32_t *)v->data)[i];
    case ETRT_DTYPE_UINT64:
      return (double)((const uint64_t *)v->data)[i];
    case ETRT_DTYPE_FLOAT16:
      return etrt_half_to_float(((const uint16_t *)v->data)[i]);
    case ETRT_DTYPE_BFLOAT16:
      return etrt_bfloat16_to_float(((const uint16_t *)v->data)[i]);
    default:
      return 0.0;
  }
}

/* Memory for one tensor where --io says. */
typedef struct etrt_run_buffer {
  void *data;
  size_t size;
  etrt_io_place place;
  int device; /* for ETRT_IO_DEVICE: the GPU the memory is on */
} etrt_run_buffer;

/* Makes `device` current for the device calls that follow (they act on the current
 * device), keeping the previous one for etrt_run_device_leave. */
static etrt_status etrt_run_device_enter(const etrt_device_driver *driver, int device,
                                         int *previous) {
  *previous = -1;
  etrt_status s = driver->get_device(previous);
  if (s == ETRT_OK && *previous != device) s = driver->set_device(device);
  return s;
}

static void etrt_run_device_leave(const etrt_device_driver *driver, int device, int previous) {
  if (previous >= 0 && previous != device) (void)driver->set_device(previous);
}

static int etrt_run_alloc(const etrt_device_driver *driver, etrt_io_place place, int device,
                          size_t size, etrt_run_buffer *b) {
  b->size = size;
  b->place = place;
  b->device = device;
  size_t n = size ? size : 1;
  etrt_status s = ETRT_OK;
  if (place == ETRT_IO_HOST) {
    b->data = calloc(1, n);
  } else if (place == ETRT_IO_PINNED) {
    s = driver->malloc_pinned(n, &b->data);
  } else {
    int previous;
    s = etrt_run_device_enter(driver, device, &previous);
    if (s == ETRT_OK) s = driver->malloc_device(n, &b->data);
    etrt_run_device_leave(driver, device, previous);
    if (s == ETRT_OK)
      etrt_log(ETRT_LOG_INFO, "etrt run: %zu bytes of device memory on cuda:%d", size, device);
  }
  if (s != ETRT_OK || b->data == NULL) {
    fprintf(stderr, "etrt run: cannot allocate %zu bytes: %s\n", size, etrt_last_error());
    return 1;
  }
  return 0;
}

static void etrt_run_free(const etrt_device_driver *driver, etrt_run_buffer *b) {
  if (b->data == NULL) return;
  if (b->place == ETRT_IO_HOST) {
    free(b->data);
  } else if (b->place == ETRT_IO_PINNED) {
    (void)driver->free_pinned(b->data);
  } else {
    int previous;
    if (etrt_run_device_enter(driver, b->device, &previous) == ETRT_OK)
      (void)driver->free_device(b->data);
    etrt_run_device_leave(driver, b->device, previous);
  }
  b->data = NULL;
}

/* A copy between host memory and memory of `device`, on that device's per-thread
 * stream, finished on return. */
static etrt_status etrt_run_copy(const etrt_device_driver *driver, int device, void *dst,
                                 const void *src, size_t size, etrt_copy_kind kind) {
  int previous;
  etrt_status s = etrt_run_device_enter(driver, device, &previous);
  if (s == ETRT_OK) s = driver->memcpy_async(dst, src, size, kind, ETRT_STREAM_PER_THREAD);
  if (s == ETRT_OK) s = driver->stream_synchronize(ETRT_STREAM_PER_THREAD);
  etrt_run_device_leave(driver, device, previous);
  return s;
}

static double etrt_run_median(double *values, long n) {
  for (long i = 1; i < n; ++i) {
    double v = values[i];
    long j = i - 1;
    while (j >= 0 && values[j] > v) {
      values[j + 1] = values[j];
      --j;
    }
    values[j + 1] = v;
  }
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static double etrt_run_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct etrt_run_state {
  etrt_run_options o;
  const etrt_device_driver *driver;
  etrt_program *program;
  etrt_method *method;
  uint32_t num_inputs, num_outputs;
  etrt_tool_tensor host_inputs[ETRT_RUN_MAX_IO];
  const char *input_sources[ETRT_RUN_MAX_IO]; /* the --input each came from */
  etrt_run_buffer placed_inputs[ETRT_RUN_MAX_IO];
  etrt_run_buffer placed_outputs[ETRT_RUN_MAX_IO];
  etrt_tool_tensor host_outputs[ETRT_RUN_MAX_IO];
  void *stream;
  int stream_is_green;
  int program_device; /* the GPU the program runs on; -1: none */
} etrt_run_state;

/* The GPU a program runs on, for I/O it plans in host memory and for the streams the
 * tool creates: the device of the first tensor the program places on a GPU (a
 * program built for cuda:1 labels the tensors of its delegates cuda:1), else the
 * device of the first delegate whose engine runs on a GPU (contract rule 1: the
 * plan decides; programs assembled without device labels still record it there).
 * -1 for a program that runs on the CPU. */
static int etrt_run_program_device(const etrt_program *program, const char *method) {
  const etrt_pte_plan *plan = etrt_program_plan(program, method);
  if (plan == NULL) return -1;
  for (size_t i = 0; i < plan->values_count; ++i) {
    if (plan->values[i].kind != ETRT_PTE_VALUE_TENSOR) continue;
    etrt_device device = etrt_pte_tensor_device(&plan->values[i].tensor);
    if (device.type == ETRT_DEVICE_CUDA) return device.index;
  }
  for (size_t d = 0; d < plan->delegates_count; ++d) {
    etrt_pte_bytes payload;
    etrt_engine *engine = NULL;
    if (etrt_pte_program_delegate_data(program->pte, &plan->delegates[d], &payload) != ETRT_OK ||
        etrt_engine_deserialize(payload.data, payload.size, &engine) != ETRT_OK)
      continue; /* not an etrt engine: it says nothing of a device */
    etrt_device device = etrt_engine_device(engine);
    etrt_engine_destroy(engine);
    if (device.type == ETRT_DEVICE_CUDA) return device.index;
  }
  return -1;
}

/* Where --io device places a tensor: the device the program plans it on (device
 * I/O of a program built with --io-on-device), else the program's device. */
static int etrt_run_tensor_device(const etrt_run_state *st, const etrt_tensor_info *info) {
  return info->device.type == ETRT_DEVICE_CUDA ? info->device.index : st->program_device;
}

/* --io device needs a GPU to place I/O on. */
static int etrt_run_device_of(const etrt_run_state *st, const etrt_tensor_info *info,
                              const char *what, uint32_t i) {
  int device = etrt_run_tensor_device(st, info);
  if (device < 0) {
    fprintf(
        stderr,
        "etrt run: --io device: %s %u: the program runs on the CPU, not on a GPU; use --io host\n",
        what, i);
  }
  return device;
}

/* --method: an unknown name is refused with every method of the program (the
 * library's message shortens a long list). */
static int etrt_run_check_method(const etrt_program *program, const char *name) {
  uint32_t count = etrt_program_method_count(program);
  for (uint32_t i = 0; i < count; ++i) {
    if (strcmp(etrt_program_method_name(program, i), name) == 0) return 0;
  }
  fprintf(stderr, "etrt run: the program has no method '%s'; its %u method%s:", name, count,
          count == 1 ? " is" : "s are");
  for (uint32_t i = 0; i < count; ++i)
    fprintf(stderr, "%s '%s'", i ? "," : "", etrt_program_method_name(program, i));
  fprintf(stderr, "%s (--method NAME)\n", count ? "" : " none");
  return 2;
}

static int etrt_run_load(etrt_run_state *st, int force_cpu, etrt_program **program,
                         etrt_method **method) {
  etrt_program_options options = {.data_path = st->o.data,
                                  .allow_cpu_fallback = st->o.allow_cpu,
                                  .force_cpu = force_cpu,
                                  .threads = st->o.threads};
  etrt_status s = etrt_program_load_file(st->o.path, &options, program);
  if (s != ETRT_OK) return etrt_run_fail("cannot load the program", s);
  if (etrt_run_check_method(*program, st->o.method)) return 2;
  s = etrt_method_create(*program, st->o.method, method);
  if (s != ETRT_OK) {
    int code = etrt_run_fail("cannot create the method", s);
    if (strstr(etrt_last_error(), "no GPU is present") != NULL && !st->o.allow_cpu)
      fprintf(stderr,
              "etrt run: this program needs a GPU; --allow-cpu runs it on the CPU instead\n");
    return code;
  }
  return 0;
}

static int etrt_run_prepare_inputs(etrt_run_state *st) {
  st->num_inputs = etrt_method_input_count(st->method);
  if (st->num_inputs > ETRT_RUN_MAX_IO) {
    fprintf(stderr, "etrt run: the method has %u inputs; the tool handles %d\n", st->num_inputs,
            ETRT_RUN_MAX_IO);
    return 2;
  }
  uint32_t given = 0;
  for (int k = 0; !st->o.random_inputs && k < st->o.num_inputs; ++k) {
    uint32_t before = given;
    etrt_status s =
        etrt_tool_values_read(st->o.inputs[k], st->host_inputs, ETRT_RUN_MAX_IO, &given);
    if (s != ETRT_OK) return etrt_run_fail(st->o.inputs[k], s);
    for (uint32_t i = before; i < given; ++i) st->input_sources[i] = st->o.inputs[k];
  }
  if (!st->o.random_inputs && given != st->num_inputs) {
    fprintf(stderr,
            "etrt run: method '%s' takes %u input(s), %u given (--input FILE per input, a "
            "sequence file or directory giving one per tensor, or --random-inputs SEED)\n",
            st->o.method, st->num_inputs, given);
    return 2;
  }
  etrt_run_random_state = st->o.seed * 2654435761ULL + 1;
  for (uint32_t i = 0; i < st->num_inputs; ++i) {
    etrt_tensor_info info;
    etrt_status s = etrt_program_input_info(st->program, st->o.method, i, &info);
    if (s != ETRT_OK) return etrt_run_fail("input", s);
    etrt_tool_tensor *t = &st->host_inputs[i];
    if (!info.is_tensor) {
      fprintf(stderr, "etrt run: input %u is not a tensor; the tool sets tensor inputs only\n", i);
      return 2;
    }
    if (st->o.random_inputs) {
      t->view.dtype = info.dtype;
      t->view.rank = info.rank;
      memcpy(t->view.sizes, info.sizes, sizeof t->view.sizes);
      int64_t count = etrt_tensor_view_numel(&t->view);
      t->nbytes = (size_t)count * etrt_dtype_size(info.dtype);
      t->view.data = calloc(1, t->nbytes ? t->nbytes : 1);
      if (t->view.data == NULL) return etrt_run_fail("input", ETRT_ERROR_OUT_OF_MEMORY);
      etrt_run_fill_random(&t->view, (size_t)count);
    } else {
      etrt_tool_tensor_relabel(t, info.dtype);
      /* Files hold row-major tensors; the method takes its own dim order. */
      if (t->view.rank == info.rank && etrt_run_relayout(t, info.dim_order, 1)) return 1;
    }
    etrt_tensor_view placed = t->view;
    if (st->o.io != ETRT_IO_HOST) {
      int device = -1;
      if (st->o.io == ETRT_IO_DEVICE && (device = etrt_run_device_of(st, &info, "input", i)) < 0)
        return 2;
      if (etrt_run_alloc(st->driver, st->o.io, device, t->nbytes, &st->placed_inputs[i])) return 1;
      placed.data = st->placed_inputs[i].data;
      if (st->o.io == ETRT_IO_PINNED) {
        memcpy(placed.data, t->view.data, t->nbytes);
      } else if (t->nbytes > 0) {
        s = etrt_run_copy(st->driver, device, placed.data, t->view.data, t->nbytes,
                          ETRT_COPY_HOST_TO_DEVICE);
        if (s != ETRT_OK) return etrt_run_fail("copying an input to the device", s);
      }
    }
    s = etrt_method_set_input(st->method, i, &placed);
    if (s != ETRT_OK) return etrt_run_fail(st->o.random_inputs ? "input" : st->input_sources[i], s);
  }
  return 0;
}

static int etrt_run_prepare_outputs(etrt_run_state *st) {
  st->num_outputs = etrt_method_output_count(st->method);
  if (st->num_outputs > ETRT_RUN_MAX_IO) {
    fprintf(stderr, "etrt run: the method has %u outputs; the tool handles %d\n", st->num_outputs,
            ETRT_RUN_MAX_IO);
    return 2;
  }
  for (uint32_t i = 0; i < st->num_outputs; ++i) {
    etrt_tensor_info info;
    etrt_status s = etrt_program_output_info(st->program, st->o.method, i, &info);
    if (s != ETRT_OK) return etrt_run_fail("output", s);
    if (!info.is_tensor) continue;
    /* With --io host an output the program plans in host memory stays in the
     * method's own memory; one it leaves to the caller on a GPU (--io-on-device)
     * gets a host buffer that the delegate stages through device memory (rule 3). */
    if (st->o.io == ETRT_IO_HOST && info.device.type != ETRT_DEVICE_CUDA) continue;
    int device = -1;
    if (st->o.io == ETRT_IO_DEVICE && (device = etrt_run_device_of(st, &info, "output", i)) < 0)
      return 2;
    etrt_tensor_view largest = {.dtype = info.dtype, .rank = info.rank};
    memcpy(largest.sizes, info.sizes, sizeof largest.sizes);
    size_t size = (size_t)etrt_tensor_view_numel(&largest) * etrt_dtype_size(info.dtype);
    if (etrt_run_alloc(st->driver, st->o.io, device, size, &st->placed_outputs[i])) return 1;
    s = etrt_method_set_output(st->method, i, st->placed_outputs[i].data, size ? size : 1);
    if (s != ETRT_OK) return etrt_run_fail("output", s);
  }
  return 0;
}

/* Copies output i to host memory the tool owns. */
static int etrt_run_fetch_output(etrt_run_state *st, etrt_method *method, uint32_t i,
                                 etrt_tool_tensor *out) {
  etrt_tensor_view v;
  etrt_status s = etrt_method_get_output(method, i, &v);
  if (s != ETRT_OK) return etrt_run_fail("output", s);
  size_t nbytes = (size_t)etrt_tensor_view_numel(&v) * etrt_dtype_size(v.dtype);
  out->view = v;
  out->nbytes = nbytes;
  out->view.data = malloc(nbytes ? nbytes : 1);
  if (out->view.data == NULL) return etrt_run_fail("output", ETRT_ERROR_OUT_OF_MEMORY);
  if (nbytes == 0) return 0;
  etrt_pointer_info info = {ETRT_POINTER_PAGEABLE_HOST, -1};
  if (st->driver != NULL) (void)st->driver->pointer_info(v.data, &info);
  if (info.kind == ETRT_POINTER_DEVICE) {
    s = etrt_run_copy(st->driver, info.device, out->view.data, v.data, nbytes,
                      ETRT_COPY_DEVICE_TO_HOST);
    if (s != ETRT_OK) return etrt_run_fail("copying an output to the host", s);
  } else {
    memcpy(out->view.data, v.data, nbytes);
  }
  /* Back to the row-major order of tensor files. */
  etrt_tensor_info declared;
  if (etrt_program_output_info(st->program, st->o.method, i, &declared) == ETRT_OK &&
      declared.is_tensor && declared.rank == v.rank)
    return etrt_run_relayout(out, declared.dim_order, 0);
  return 0;
}

static int etrt_run_select_stream(etrt_run_state *st) {
  etrt_status s = ETRT_OK;
  if (st->o.sms > 0) {
    int granted = 0;
    s = etrt_green_stream_create(st->program_device > 0 ? st->program_device : 0, st->o.sms,
                                 &st->stream, &granted);
    if (s != ETRT_OK) return etrt_run_fail("cannot create a green-context stream", s);
    st->stream_is_green = 1;
    printf("green context: %d SMs asked, %d granted\n", st->o.sms, granted);
  } else if (st->o.caller_stream) {
    int device = st->program_device > 0 ? st->program_device : 0, previous;
    s = etrt_run_device_enter(st->driver, device, &previous);
    if (s == ETRT_OK) s = st->driver->stream_create(&st->stream);
    etrt_run_device_leave(st->driver, device, previous);
    if (s != ETRT_OK) return etrt_run_fail("cannot create a stream", s);
  } else {
    return 0;
  }
  s = etrt_stream_push(st->stream);
  if (s != ETRT_OK) return etrt_run_fail("cannot select the stream", s);
  return 0;
}

static void etrt_run_release_stream(etrt_run_state *st) {
  if (st->stream == NULL) return;
  (void)etrt_stream_pop();
  if (st->stream_is_green)
    (void)etrt_green_stream_destroy(st->stream);
  else
    (void)st->driver->stream_destroy(st->stream);
  st->stream = NULL;
}

static int etrt_run_execute(etrt_run_state *st, double *seconds) {
  double *times = calloc((size_t)st->o.iterations, sizeof *times);
  if (times == NULL) return etrt_run_fail("timing", ETRT_ERROR_OUT_OF_MEMORY);
  int code = 0;
  /* The program's device is made current while it runs, so that what the method
   * creates on the current device (its completion event) is on the device of the
   * stream the tool selected. */
  int device = st->program_device, previous = -1;
  if (device >= 0 && st->driver != NULL) {
    etrt_status s = etrt_run_device_enter(st->driver, device, &previous);
    if (s != ETRT_OK) code = etrt_run_fail("selecting the program's device", s);
  }
  int profiling = 0;
  for (long it = 0; it < st->o.iterations && code == 0; ++it) {
    if (it == 1 && st->o.profile_range) {
      etrt_status s = st->driver->profiler_range != NULL
                          ? st->driver->profiler_range(1)
                          : etrt_error(ETRT_ERROR_UNSUPPORTED, "the %s device has no profiler",
                                       st->driver->name);
      if (s != ETRT_OK) {
        code = etrt_run_fail("--profile-range", s);
        break;
      }
      profiling = 1;
    }
    double t0 = etrt_run_now();
    etrt_status s;
    if (st->o.async) {
      void *event = NULL;
      s = etrt_method_execute_async(st->method, &event);
      if (s == ETRT_OK && event != NULL) s = st->driver->event_synchronize(event);
    } else {
      s = etrt_method_execute(st->method);
    }
    times[it] = etrt_run_now() - t0;
    if (s != ETRT_OK) code = etrt_run_fail("execute", s) == 2 ? 2 : 1;
  }
  if (profiling) (void)st->driver->profiler_range(0);
  if (device >= 0 && st->driver != NULL) etrt_run_device_leave(st->driver, device, previous);
  *seconds = etrt_run_median(times, st->o.iterations);
  free(times);
  return code;
}

static double etrt_run_checksum(const etrt_tensor_view *v, size_t count) {
  double sum = 0.0;
  for (size_t k = 0; k < count; ++k) sum += etrt_run_element(v, k);
  return sum;
}

static int etrt_run_report(etrt_run_state *st) {
  if (st->o.output_dir != NULL) {
    int code = etrt_run_output_dir(st->o.output_dir, 1);
    if (code != 0) return code;
  }
  for (uint32_t i = 0; i < st->num_outputs; ++i) {
    etrt_tool_tensor *t = &st->host_outputs[i];
    if (etrt_run_fetch_output(st, st->method, i, t)) return 1;
    size_t count = (size_t)etrt_tensor_view_numel(&t->view);
    printf("output %u: %s [", i, etrt_dtype_name(t->view.dtype));
    for (int32_t a = 0; a < t->view.rank; ++a)
      printf("%s%lld", a ? ", " : "", (long long)t->view.sizes[a]);
    printf("] checksum %.9g\n", etrt_run_checksum(&t->view, count));
    if (st->o.output_dir != NULL) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%u.%s", st->o.output_dir, i,
               st->o.output_format ? st->o.output_format : "npy");
      etrt_status s = etrt_tool_tensor_write(path, &t->view);
      if (s != ETRT_OK) {
        etrt_run_fail("writing outputs", s);
        return 1;
      }
    }
  }
  return 0;
}

/* --check-cpu: the same inputs through the CPU executor, and the largest difference. */
static int etrt_run_check_cpu(etrt_run_state *st) {
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  etrt_run_buffer outputs[ETRT_RUN_MAX_IO] = {{0}};
  int code = etrt_run_load(st, 1, &program, &method);
  for (uint32_t i = 0; code == 0 && i < st->num_inputs; ++i) {
    etrt_status s = etrt_method_set_input(method, i, &st->host_inputs[i].view);
    if (s != ETRT_OK) code = etrt_run_fail("check-cpu input", s);
  }
  /* Outputs a --io-on-device program leaves to the caller get host memory here. */
  for (uint32_t i = 0; code == 0 && i < st->num_outputs; ++i) {
    etrt_tensor_info info;
    etrt_status s = etrt_program_output_info(program, st->o.method, i, &info);
    if (s != ETRT_OK) {
      code = etrt_run_fail("check-cpu output", s);
      break;
    }
    if (!info.is_tensor || info.device.type != ETRT_DEVICE_CUDA) continue;
    etrt_tensor_view largest = {.dtype = info.dtype, .rank = info.rank};
    memcpy(largest.sizes, info.sizes, sizeof largest.sizes);
    size_t size = (size_t)etrt_tensor_view_numel(&largest) * etrt_dtype_size(info.dtype);
    code = etrt_run_alloc(st->driver, ETRT_IO_HOST, -1, size, &outputs[i]);
    if (code == 0 &&
        (s = etrt_method_set_output(method, i, outputs[i].data, size ? size : 1)) != ETRT_OK)
      code = etrt_run_fail("check-cpu output", s);
  }
  if (code == 0) {
    etrt_status s = etrt_method_execute(method);
    if (s != ETRT_OK) code = etrt_run_fail("check-cpu execute", s);
  }
  double worst = 0.0;
  uint32_t worst_output = 0;
  for (uint32_t i = 0; code == 0 && i < st->num_outputs; ++i) {
    etrt_tool_tensor cpu = {0};
    code = etrt_run_fetch_output(st, method, i, &cpu);
    if (code == 0) {
      size_t count = (size_t)etrt_tensor_view_numel(&cpu.view);
      for (size_t k = 0; k < count; ++k) {
        double d =
            fabs(etrt_run_element(&cpu.view, k) - etrt_run_element(&st->host_outputs[i].view, k));
        if (d > worst || d != d) {
          worst = d;
          worst_output = i;
        }
      }
    }
    etrt_tool_tensor_release(&cpu);
  }
  if (code == 0) printf("check-cpu: largest difference %.3g (output %u)\n", worst, worst_output);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  for (uint32_t i = 0; i < ETRT_RUN_MAX_IO; ++i) etrt_run_free(st->driver, &outputs[i]);
  return code;
}

int etrt_cmd_run(int argc, char **argv) {
  etrt_run_state *st = calloc(1, sizeof *st);
  if (st == NULL) return 1;
  int code = etrt_run_parse(argc, argv, &st->o);
  if (code != 0) {
    free(st);
    return code < 0 ? 0 : code;
  }
  st->driver = etrt_device_driver_get();
  if (st->driver == NULL && (st->o.io != ETRT_IO_HOST || st->o.caller_stream || st->o.sms ||
                             st->o.async || st->o.profile_range)) {
    fprintf(stderr,
            "etrt run: --io pinned/device, --stream caller, --sms, --async and --profile-range "
            "need a GPU, and none is present\n");
    free(st);
    return 2;
  }
  if (st->o.output_dir != NULL && (code = etrt_run_output_dir(st->o.output_dir, 0)) != 0) {
    free(st);
    return code;
  }
  if (st->o.async && st->o.io != ETRT_IO_DEVICE) {
    fprintf(stderr,
            "etrt run: --async needs --io device (execute_async is refused where an output is host "
            "memory)\n");
    free(st);
    return 2;
  }
  code = etrt_run_load(st, 0, &st->program, &st->method);
  st->program_device = -1;
  if (code == 0 && st->driver != NULL &&
      (st->o.io != ETRT_IO_HOST || st->o.caller_stream || st->o.sms))
    st->program_device = etrt_run_program_device(st->program, st->o.method);
  if (code == 0) code = etrt_run_prepare_inputs(st);
  if (code == 0) code = etrt_run_prepare_outputs(st);
  if (code == 0) code = etrt_run_select_stream(st);
  double seconds = 0.0;
  if (code == 0) code = etrt_run_execute(st, &seconds);
  etrt_run_release_stream(st);
  if (code == 0) code = etrt_run_report(st);
  if (code == 0) {
    char text[32];
    printf("time per iteration: %s (median of %ld)\n",
           etrt_tool_format_duration(seconds, text, sizeof text), st->o.iterations);
    if (st->o.check_cpu) code = etrt_run_check_cpu(st);
  }
  etrt_method_destroy(st->method);
  etrt_program_destroy(st->program);
  for (uint32_t i = 0; i < ETRT_RUN_MAX_IO; ++i) {
    etrt_tool_tensor_release(&st->host_inputs[i]);
    etrt_tool_tensor_release(&st->host_outputs[i]);
    etrt_run_free(st->driver, &st->placed_inputs[i]);
    etrt_run_free(st->driver, &st->placed_outputs[i]);
  }
  free(st);
  return code;
}
