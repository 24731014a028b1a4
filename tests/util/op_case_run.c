/* The runner of the shared operator cases (op_cases.h): builds each case's one-op
 * network for cuda:0, runs it on the CPU executor and on another executor, and
 * compares the outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "op_cases.h"
#include "test_util.h"

static uint64_t co_seed = 0x9e3779b97f4a7c15ull;

static double co_uniform(void) {
  co_seed = co_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(co_seed >> 11) / 9007199254740992.0;
}

static int64_t co_numel(int32_t rank, const int64_t *dims) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

/* Random bytes of a value: floats in [-2, 2) (or [0.1, 4), or [-0.9, 0.9)), integers
 * in [-8, 8) (unsigned: [0, 16)), bools 0/1. */
static void *co_generate(const co_value *v) {
  int64_t n = co_numel(v->rank, v->dims);
  size_t size = etrt_dtype_size(v->dtype);
  void *p = malloc((size_t)(n > 0 ? n : 1) * size);
  if (v->fill == CO_GIVEN) {
    memcpy(p, v->data, (size_t)n * size);
    return p;
  }
  for (int64_t i = 0; i < n; ++i) {
    double u = co_uniform();
    double f = v->fill == CO_POSITIVE ? 0.1 + 3.9 * u
               : v->fill == CO_UNIT   ? 1.8 * u - 0.9
                                      : 4.0 * u - 2.0;
    /* Small integers, or (CO_FULL) every value of an 8-bit type. */
    int64_t k = v->fill == CO_FULL ? (int64_t)(u * 256.0) - 128 : (int64_t)(u * 16.0) - 8;
    switch (v->dtype) {
      case ETRT_DTYPE_FLOAT32:
        ((float *)p)[i] = (float)f;
        break;
      case ETRT_DTYPE_FLOAT64:
        ((double *)p)[i] = f;
        break;
      case ETRT_DTYPE_FLOAT16:
        ((uint16_t *)p)[i] = etrt_float_to_half((float)f);
        break;
      case ETRT_DTYPE_BFLOAT16:
        ((uint16_t *)p)[i] = etrt_float_to_bfloat16((float)f);
        break;
      case ETRT_DTYPE_INT8:
        ((int8_t *)p)[i] = (int8_t)k;
        break;
      case ETRT_DTYPE_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)(k + (v->fill == CO_FULL ? 128 : 8));
        break;
      case ETRT_DTYPE_INT32:
        ((int32_t *)p)[i] = (int32_t)k;
        break;
      case ETRT_DTYPE_INT64:
        ((int64_t *)p)[i] = k;
        break;
      case ETRT_DTYPE_BOOL:
        ((uint8_t *)p)[i] = (uint8_t)(u < 0.5);
        break;
      default:
        memset((char *)p + (size_t)i * size, 0, size);
        break;
    }
  }
  return p;
}

/* Compares the outputs; returns the number of mismatches (the first few printed). */
static int co_compare(const char *what, etrt_dtype dtype, int64_t n, const void *cpu,
                      const void *other, double tol) {
  int bad = 0;
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double a, b;
    if (dtype == ETRT_DTYPE_FLOAT32) {
      a = ((const float *)cpu)[i];
      b = ((const float *)other)[i];
    } else if (dtype == ETRT_DTYPE_FLOAT64) {
      a = ((const double *)cpu)[i];
      b = ((const double *)other)[i];
    } else if (dtype == ETRT_DTYPE_FLOAT16) {
      a = etrt_half_to_float(((const uint16_t *)cpu)[i]);
      b = etrt_half_to_float(((const uint16_t *)other)[i]);
    } else if (dtype == ETRT_DTYPE_BFLOAT16) {
      a = etrt_bfloat16_to_float(((const uint16_t *)cpu)[i]);
      b = etrt_bfloat16_to_float(((const uint16_t *)other)[i]);
    } else {
      size_t size = etrt_dtype_size(dtype);
      if (memcmp((const char *)cpu + (size_t)i * size, (const char *)other + (size_t)i * size,
                 size) != 0) {
        if (bad++ < 3) printf("  %s: element %lld differs\n", what, (long long)i);
      }
      continue;
    }
    if (isnan(a) && isnan(b)) continue;
    double err = fabs(a - b) / (fabs(a) > 1.0 ? fabs(a) : 1.0);
    if (err > worst) worst = err;
    if (!(err <= tol)) {
      if (bad++ < 3) printf("  %s: element %lld: cpu %.9g other %.9g\n", what, (long long)i, a, b);
    }
  }
  if (bad == 0 && (dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT64 ||
                   dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16))
    printf("  %s: %lld elements, largest relative difference %.3g (tolerance %.0e)\n", what,
           (long long)n, worst, tol);
  return bad;
}

/* A run with a bad index must fail with a message naming the op. */
static void co_expect_fault(const co_case *c, etrt_status s, const char *executor) {
  if (s == ETRT_OK) {
    etrt_test_fail(__FILE__, __LINE__, "%s: the %s executor accepted a bad index", c->label,
                   executor);
    return;
  }
  const char *message = etrt_last_error();
  printf("  %s: %s\n", executor, message);
  if (strstr(message, c->op) == NULL)
    etrt_test_fail(__FILE__, __LINE__, "%s: the %s executor's error does not name %s", c->label,
                   executor, c->op);
}

/* Reduced-precision matrix work (TF32, FP16, BF16) rounds the operands, so single
 * elements near cancellation can be far off relatively: compare ||other - cpu|| / ||cpu||. */
static int co_compare_norm(const char *what, int64_t n, const void *cpu, const void *other,
                           double tol) {
  double diff = 0.0, ref = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double a = ((const float *)cpu)[i], b = ((const float *)other)[i];
    diff += (a - b) * (a - b);
    ref += a * a;
  }
  double rel = ref > 0.0 ? sqrt(diff / ref) : sqrt(diff);
  printf("  %s: %lld elements, relative norm difference %.3g (tolerance %.0e)\n", what,
         (long long)n, rel, tol);
  return rel <= tol ? 0 : 1;
}

/* With `bad`: the case's index is out of range; both contexts must fail naming the op. */
static void co_run_case(const co_case *c, const etrt_device_driver *d, etrt_executor_kind kind,
                        void **keep, int bad) {
  etrt_network *net = NULL;
  etrt_engine *engine = NULL;
  etrt_exec_context *cpu = NULL, *other = NULL;
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  int32_t ids[CO_MAX_IO], out_ids[CO_MAX_IO];
  void *host_in[CO_MAX_IO] = {0}, *dev_in[CO_MAX_IO] = {0};
  void *cpu_out[CO_MAX_IO] = {0}, *other_out[CO_MAX_IO] = {0}, *dev_out[CO_MAX_IO] = {0};
  uint32_t io_of_input[CO_MAX_IO], input_io = 0;
  etrt_stream stream = NULL;
  const co_value *inputs = c->inputs;
  printf("%s\n", c->label);
  if (c->num_inputs > CO_MAX_IO || c->num_outputs > CO_MAX_IO) {
    etrt_test_fail(__FILE__, __LINE__, "%s: more than %d inputs or outputs", c->label, CO_MAX_IO);
    return;
  }

  CHECK_OK(etrt_network_create(&net));
  for (uint32_t i = 0; i < c->num_inputs; ++i) {
    char name[16];
    snprintf(name, sizeof name, "x%u", i);
    host_in[i] = co_generate(&inputs[i]);
    if (inputs[i].constant) {
      CHECK_OK(etrt_network_add_constant(net, name, inputs[i].dtype, inputs[i].rank, inputs[i].dims,
                                         host_in[i], &ids[i]));
    } else {
      CHECK_OK(etrt_network_add_input(net, name, inputs[i].dtype, inputs[i].rank, inputs[i].dims,
                                      inputs[i].dims, &ids[i]));
      io_of_input[i] = input_io++;
    }
  }
  etrt_status s = etrt_network_add_op(net, c->op, "node", c->num_inputs, ids, c->num_outputs,
                                      out_ids, c->num_attributes, c->attributes);
  CHECK_OK(s);
  if (s != ETRT_OK) goto done;
  for (uint32_t o = 0; o < c->num_outputs; ++o) {
    char name[16];
    snprintf(name, sizeof name, "y%u", o);
    CHECK_OK(etrt_network_mark_output(net, out_ids[o], name));
  }
  etrt_plan_options options = {
      .device = {ETRT_DEVICE_CUDA, 0}, .precision = c->precision, .name = c->label};
  CHECK_OK(etrt_plan_build(net, &options, &plan, &plan_size));
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  if (engine == NULL) goto done;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &cpu));
  CHECK_OK(etrt_exec_context_create(engine, d, &other));
  if (cpu == NULL || other == NULL) goto done;
  CHECK_EQ_INT(etrt_exec_context_executor(other), kind);
  CHECK_OK(d->stream_create(&stream));

  for (uint32_t i = 0; i < c->num_inputs; ++i) {
    if (inputs[i].constant) continue;
    size_t bytes =
        (size_t)co_numel(inputs[i].rank, inputs[i].dims) * etrt_dtype_size(inputs[i].dtype);
    CHECK_OK(d->malloc_device(bytes > 0 ? bytes : 1, &dev_in[i]));
    if (bytes > 0)
      CHECK_OK(d->memcpy_async(dev_in[i], host_in[i], bytes, ETRT_COPY_HOST_TO_DEVICE, stream));
    CHECK_OK(etrt_exec_context_set_address(cpu, io_of_input[i], host_in[i]));
    CHECK_OK(etrt_exec_context_set_address(other, io_of_input[i], dev_in[i]));
  }
  size_t out_bytes[CO_MAX_IO];
  etrt_dtype out_dtype[CO_MAX_IO];
  for (uint32_t o = 0; o < c->num_outputs; ++o) {
    uint32_t io = input_io + o;
    int32_t rank = 0;
    int64_t dims[ETRT_MAX_RANK];
    CHECK_OK(etrt_exec_context_output_shape(cpu, io, &rank, dims));
    out_dtype[o] = etrt_engine_io_at(engine, io)->dtype;
    out_bytes[o] = (size_t)co_numel(rank, dims) * etrt_dtype_size(out_dtype[o]);
    cpu_out[o] = calloc(1, out_bytes[o] + 1);
    other_out[o] = calloc(1, out_bytes[o] + 1);
    CHECK_OK(d->malloc_device(out_bytes[o] + 1, &dev_out[o]));
    CHECK_OK(etrt_exec_context_set_address(cpu, io, cpu_out[o]));
    CHECK_OK(etrt_exec_context_set_address(other, io, dev_out[o]));
  }
  if (bad) {
    co_expect_fault(c, etrt_exec_context_enqueue(cpu, NULL), "cpu");
    etrt_status s = etrt_exec_context_enqueue(other, stream);
    if (s == ETRT_OK) s = d->stream_synchronize(stream);
    /* Reported after the completed run, or else by the next enqueue. */
    if (s == ETRT_OK) s = etrt_exec_context_check(other);
    if (s == ETRT_OK) s = etrt_exec_context_enqueue(other, stream);
    co_expect_fault(c, s, "other");
    CHECK_OK(d->stream_synchronize(stream));
    goto done;
  }
  CHECK_OK(etrt_exec_context_enqueue(cpu, NULL));
  CHECK_OK(etrt_exec_context_enqueue(other, stream));
  for (uint32_t o = 0; o < c->num_outputs; ++o) {
    if (out_bytes[o] > 0)
      CHECK_OK(d->memcpy_async(other_out[o], dev_out[o], out_bytes[o], ETRT_COPY_DEVICE_TO_HOST,
                               stream));
  }
  CHECK_OK(d->stream_synchronize(stream));
  if (keep != NULL) {
    *keep = other_out[0];
    other_out[0] = NULL;
    goto done;
  }
  for (uint32_t o = 0; o < c->num_outputs && c->tol >= 0; ++o) {
    char what[64];
    snprintf(what, sizeof what, "%s output %u", c->op, o);
    int64_t n = (int64_t)(out_bytes[o] / etrt_dtype_size(out_dtype[o]));
    int bad = c->precision == ETRT_PRECISION_FP32
                  ? co_compare(what, out_dtype[o], n, cpu_out[o], other_out[o], c->tol)
                  : co_compare_norm(what, n, cpu_out[o], other_out[o], c->tol);
    if (bad > 0) etrt_test_fail(__FILE__, __LINE__, "%s: %d element(s) differ", c->label, bad);
  }

done:
  if (stream != NULL) d->stream_destroy(stream);
  for (uint32_t i = 0; i < CO_MAX_IO; ++i) {
    free(host_in[i]);
    free(cpu_out[i]);
    free(other_out[i]);
    if (dev_in[i] != NULL) d->free_device(dev_in[i]);
    if (dev_out[i] != NULL) d->free_device(dev_out[i]);
  }
  etrt_exec_context_destroy(other);
  etrt_exec_context_destroy(cpu);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

void co_run(const co_case *c, const etrt_device_driver *d, etrt_executor_kind kind, void **keep) {
  co_run_case(c, d, kind, keep, 0);
}

void co_run_bad(const co_case *c, const etrt_device_driver *d, etrt_executor_kind kind) {
  co_run_case(c, d, kind, NULL, 1);
}

int co_run_ops(const char *const *ops, size_t count, const etrt_device_driver *d,
               etrt_executor_kind kind) {
  size_t case_count = 0;
  const co_case *cases = co_cases(&case_count);
  int missing = 0;
  for (size_t r = 0; r < count; ++r) {
    int found = 0;
    for (size_t k = 0; k < case_count; ++k) {
      if (strcmp(cases[k].op, ops[r]) != 0) continue;
      ++found;
      co_run(&cases[k], d, kind, NULL);
    }
    if (found == 0) {
      fprintf(stderr, "operation %s has a row but no case in tests/util/op_cases.c\n", ops[r]);
      ++missing;
    }
  }
  return missing;
}
