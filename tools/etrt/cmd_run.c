/* etrt run: load a program, run a method on inputs from files or random ones, report
 * and write the outputs. Exercises the device contract: where I/O lives (--io), the
 * stream (--stream, --sms), async completion (--async). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "device/device.h"
#include "etrt/log.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/stream.h"
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
  long iterations;
  etrt_io_place io;
  int caller_stream;
  int sms;
  int async;
  int check_cpu;
  int allow_cpu;
} etrt_run_options;

static void etrt_run_usage(FILE *out) {
  fprintf(out,
          "usage: etrt run FILE.pte [options]\n\n"
          "Runs a method of an ExecuTorch program and reports its outputs.\n\n"
          "  --method NAME         the method to run (default: forward)\n"
          "  --input FILE          an input, in order: .npy, or .pb (ONNX TensorProto); repeat per input\n"
          "  --random-inputs SEED  random inputs at the declared (largest) shapes instead\n"
          "  --data FILE.ptd       external tensors the program refers to\n"
          "  --output-dir DIR      write output_0.npy, output_1.npy, ... into DIR\n"
          "  --iterations N        run N times and report the median time (default 1)\n"
          "  --io host|pinned|device  where the tool places inputs and outputs (default host)\n"
          "  --stream default|caller  the per-thread default stream, or a stream the tool creates and selects\n"
          "  --sms N               run on a green-context stream of N SMs and print the SMs granted\n"
          "  --async               execute_async, then wait on the completion event (needs --io device)\n"
          "  --check-cpu           also run on the CPU executor and report the largest difference\n"
          "  --allow-cpu           with no GPU, run plans built for one on the CPU\n\n"
          "Exit status: 0 success, 1 failure while running, 2 bad usage or bad input.\n");
}

static int etrt_run_parse(int argc, char **argv, etrt_run_options *o) {
  memset(o, 0, sizeof *o);
  o->method = "forward";
  o->iterations = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define ETRT_NEED_VALUE()                                             \
  do {                                                                \
    if (next == NULL) {                                               \
      fprintf(stderr, "etrt run: %s needs a value\n", a);            \
      return 2;                                                       \
    }                                                                 \
    ++i;                                                              \
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
      if (strcmp(next, "host") == 0) o->io = ETRT_IO_HOST;
      else if (strcmp(next, "pinned") == 0) o->io = ETRT_IO_PINNED;
      else if (strcmp(next, "device") == 0) o->io = ETRT_IO_DEVICE;
      else {
        fprintf(stderr, "etrt run: --io takes host, pinned or device, not '%s'\n", next);
        return 2;
      }
    } else if (strcmp(a, "--stream") == 0) {
      ETRT_NEED_VALUE();
      if (strcmp(next, "default") == 0) o->caller_stream = 0;
      else if (strcmp(next, "caller") == 0) o->caller_stream = 1;
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
    } else if (strcmp(a, "--check-cpu") == 0) {
      o->check_cpu = 1;
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
                 status == ETRT_ERROR_NOT_FOUND || status == ETRT_ERROR_UNSUPPORTED || status == ETRT_ERROR_IO
             ? 2
             : 1;
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
      case ETRT_DTYPE_FLOAT32: ((float *)v->data)[i] = (float)r; break;
      case ETRT_DTYPE_FLOAT64: ((double *)v->data)[i] = r; break;
      case ETRT_DTYPE_INT32: ((int32_t *)v->data)[i] = (int32_t)(r * 8); break;
      case ETRT_DTYPE_INT64: ((int64_t *)v->data)[i] = (int64_t)(r * 8); break;
      case ETRT_DTYPE_BOOL: ((uint8_t *)v->data)[i] = r > 0; break;
      default: ((uint8_t *)v->data)[i * etrt_dtype_size(v->dtype)] = (uint8_t)(r * 100); break;
    }
  }
}

static double etrt_run_element(const etrt_tensor_view *v, size_t i) {
  switch (v->dtype) {
    case ETRT_DTYPE_FLOAT32: return ((const float *)v->data)[i];
    case ETRT_DTYPE_FLOAT64: return ((const double *)v->data)[i];
    case ETRT_DTYPE_INT32: return ((const int32_t *)v->data)[i];
    case ETRT_DTYPE_INT64: return (double)((const int64_t *)v->data)[i];
    case ETRT_DTYPE_INT8: return ((const int8_t *)v->data)[i];
    case ETRT_DTYPE_UINT8: case ETRT_DTYPE_BOOL: return ((const uint8_t *)v->data)[i];
    case ETRT_DTYPE_INT16: return ((const int16_t *)v->data)[i];
    default: return 0.0;
  }
}

/* Memory for one tensor where --io says. */
typedef struct etrt_run_buffer {
  void *data;
  size_t size;
  etrt_io_place place;
} etrt_run_buffer;

static int etrt_run_alloc(const etrt_device_driver *driver, etrt_io_place place, size_t size, etrt_run_buffer *b) {
  b->size = size;
  b->place = place;
  size_t n = size ? size : 1;
  etrt_status s = ETRT_OK;
  if (place == ETRT_IO_HOST) {
    b->data = calloc(1, n);
  } else if (place == ETRT_IO_PINNED) {
    s = driver->malloc_pinned(n, &b->data);
  } else {
    s = driver->malloc_device(n, &b->data);
  }
  if (s != ETRT_OK || b->data == NULL) {
    fprintf(stderr, "etrt run: cannot allocate %zu bytes: %s\n", size, etrt_last_error());
    return 1;
  }
  return 0;
}

static void etrt_run_free(const etrt_device_driver *driver, etrt_run_buffer *b) {
  if (b->data == NULL) return;
  if (b->place == ETRT_IO_HOST) free(b->data);
  else if (b->place == ETRT_IO_PINNED) (void)driver->free_pinned(b->data);
  else (void)driver->free_device(b->data);
  b->data = NULL;
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
  etrt_run_buffer placed_inputs[ETRT_RUN_MAX_IO];
  etrt_run_buffer placed_outputs[ETRT_RUN_MAX_IO];
  etrt_tool_tensor host_outputs[ETRT_RUN_MAX_IO];
  void *stream;
  int stream_is_green;
} etrt_run_state;

static int etrt_run_load(etrt_run_state *st, int force_cpu, etrt_program **program, etrt_method **method) {
  etrt_program_options options = {.data_path = st->o.data, .allow_cpu_fallback = st->o.allow_cpu, .force_cpu = force_cpu};
  etrt_status s = etrt_program_load_file(st->o.path, &options, program);
  if (s != ETRT_OK) return etrt_run_fail("cannot load the program", s);
  s = etrt_method_create(*program, st->o.method, method);
  if (s != ETRT_OK) {
    int code = etrt_run_fail("cannot create the method", s);
    if (strstr(etrt_last_error(), "no GPU is present") != NULL && !st->o.allow_cpu)
      fprintf(stderr, "etrt run: this program needs a GPU; --allow-cpu runs it on the CPU instead\n");
    return code;
  }
  return 0;
}

static int etrt_run_prepare_inputs(etrt_run_state *st) {
  st->num_inputs = etrt_method_input_count(st->method);
  if (st->num_inputs > ETRT_RUN_MAX_IO) {
    fprintf(stderr, "etrt run: the method has %u inputs; the tool handles %d\n", st->num_inputs, ETRT_RUN_MAX_IO);
    return 2;
  }
  if (!st->o.random_inputs && (uint32_t)st->o.num_inputs != st->num_inputs) {
    fprintf(stderr, "etrt run: method '%s' takes %u input(s), %d given (--input FILE per input, or --random-inputs SEED)\n",
            st->o.method, st->num_inputs, st->o.num_inputs);
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
      s = etrt_tool_tensor_read(st->o.inputs[i], t);
      if (s != ETRT_OK) return etrt_run_fail(st->o.inputs[i], s);
    }
    etrt_tensor_view placed = t->view;
    if (st->o.io != ETRT_IO_HOST) {
      if (etrt_run_alloc(st->driver, st->o.io, t->nbytes, &st->placed_inputs[i])) return 1;
      placed.data = st->placed_inputs[i].data;
      if (st->o.io == ETRT_IO_PINNED) {
        memcpy(placed.data, t->view.data, t->nbytes);
      } else if (t->nbytes > 0) {
        s = st->driver->memcpy_async(placed.data, t->view.data, t->nbytes, ETRT_COPY_HOST_TO_DEVICE, ETRT_STREAM_PER_THREAD);
        if (s == ETRT_OK) s = st->driver->stream_synchronize(ETRT_STREAM_PER_THREAD);
        if (s != ETRT_OK) return etrt_run_fail("copying an input to the device", s);
      }
    }
    s = etrt_method_set_input(st->method, i, &placed);
    if (s != ETRT_OK) return etrt_run_fail(st->o.random_inputs ? "input" : st->o.inputs[i], s);
  }
  return 0;
}

static int etrt_run_prepare_outputs(etrt_run_state *st) {
  st->num_outputs = etrt_method_output_count(st->method);
  if (st->num_outputs > ETRT_RUN_MAX_IO) {
    fprintf(stderr, "etrt run: the method has %u outputs; the tool handles %d\n", st->num_outputs, ETRT_RUN_MAX_IO);
    return 2;
  }
  if (st->o.io == ETRT_IO_HOST) return 0;
  for (uint32_t i = 0; i < st->num_outputs; ++i) {
    etrt_tensor_info info;
    etrt_status s = etrt_program_output_info(st->program, st->o.method, i, &info);
    if (s != ETRT_OK) return etrt_run_fail("output", s);
    if (!info.is_tensor) continue;
    etrt_tensor_view largest = {.dtype = info.dtype, .rank = info.rank};
    memcpy(largest.sizes, info.sizes, sizeof largest.sizes);
    size_t size = (size_t)etrt_tensor_view_numel(&largest) * etrt_dtype_size(info.dtype);
    if (etrt_run_alloc(st->driver, st->o.io, size, &st->placed_outputs[i])) return 1;
    s = etrt_method_set_output(st->method, i, st->placed_outputs[i].data, size ? size : 1);
    if (s != ETRT_OK) return etrt_run_fail("output", s);
  }
  return 0;
}

/* Copies output i to host memory the tool owns. */
static int etrt_run_fetch_output(etrt_run_state *st, etrt_method *method, uint32_t i, etrt_tool_tensor *out) {
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
    s = st->driver->memcpy_async(out->view.data, v.data, nbytes, ETRT_COPY_DEVICE_TO_HOST, ETRT_STREAM_PER_THREAD);
    if (s == ETRT_OK) s = st->driver->stream_synchronize(ETRT_STREAM_PER_THREAD);
    if (s != ETRT_OK) return etrt_run_fail("copying an output to the host", s);
  } else {
    memcpy(out->view.data, v.data, nbytes);
  }
  return 0;
}

static int etrt_run_select_stream(etrt_run_state *st) {
  etrt_status s = ETRT_OK;
  if (st->o.sms > 0) {
    int granted = 0;
    s = etrt_green_stream_create(0, st->o.sms, &st->stream, &granted);
    if (s != ETRT_OK) return etrt_run_fail("cannot create a green-context stream", s);
    st->stream_is_green = 1;
    printf("green context: %d SMs asked, %d granted\n", st->o.sms, granted);
  } else if (st->o.caller_stream) {
    s = st->driver->stream_create(&st->stream);
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
  if (st->stream_is_green) (void)etrt_green_stream_destroy(st->stream);
  else (void)st->driver->stream_destroy(st->stream);
  st->stream = NULL;
}

static int etrt_run_execute(etrt_run_state *st, double *seconds) {
  double *times = calloc((size_t)st->o.iterations, sizeof *times);
  if (times == NULL) return etrt_run_fail("timing", ETRT_ERROR_OUT_OF_MEMORY);
  int code = 0;
  for (long it = 0; it < st->o.iterations && code == 0; ++it) {
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
  for (uint32_t i = 0; i < st->num_outputs; ++i) {
    etrt_tool_tensor *t = &st->host_outputs[i];
    if (etrt_run_fetch_output(st, st->method, i, t)) return 1;
    size_t count = (size_t)etrt_tensor_view_numel(&t->view);
    printf("output %u: %s [", i, etrt_dtype_name(t->view.dtype));
    for (int32_t a = 0; a < t->view.rank; ++a) printf("%s%lld", a ? ", " : "", (long long)t->view.sizes[a]);
    printf("] checksum %.9g\n", etrt_run_checksum(&t->view, count));
    if (st->o.output_dir != NULL) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%u.npy", st->o.output_dir, i);
      etrt_status s = etrt_tool_tensor_write_npy(path, &t->view);
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
  int code = etrt_run_load(st, 1, &program, &method);
  for (uint32_t i = 0; code == 0 && i < st->num_inputs; ++i) {
    etrt_status s = etrt_method_set_input(method, i, &st->host_inputs[i].view);
    if (s != ETRT_OK) code = etrt_run_fail("check-cpu input", s);
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
        double d = fabs(etrt_run_element(&cpu.view, k) - etrt_run_element(&st->host_outputs[i].view, k));
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
  if (st->driver == NULL && (st->o.io != ETRT_IO_HOST || st->o.caller_stream || st->o.sms || st->o.async)) {
    fprintf(stderr, "etrt run: --io pinned/device, --stream caller, --sms and --async need a GPU, and none is present\n");
    free(st);
    return 2;
  }
  if (st->o.async && st->o.io != ETRT_IO_DEVICE) {
    fprintf(stderr, "etrt run: --async needs --io device (execute_async is refused where an output is host memory)\n");
    free(st);
    return 2;
  }
  code = etrt_run_load(st, 0, &st->program, &st->method);
  if (code == 0) code = etrt_run_prepare_inputs(st);
  if (code == 0) code = etrt_run_prepare_outputs(st);
  if (code == 0) code = etrt_run_select_stream(st);
  double seconds = 0.0;
  if (code == 0) code = etrt_run_execute(st, &seconds);
  etrt_run_release_stream(st);
  if (code == 0) code = etrt_run_report(st);
  if (code == 0) {
    printf("time per iteration: %.3f ms (median of %ld)\n", seconds * 1e3, st->o.iterations);
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
