/* Plans: build -> deserialize -> run round trip, determinism, the header fields, zero
 * copy of weights, and every refusal of a corrupted or hostile plan (each naming the
 * field and its byte offset). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/digest.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "engine/plan_format.h"
#include "engine_test_models.h"
#include "test_util.h"

/* x [1..4, 3] + b [3] -> Relu -> y; and a Gemm with every attribute kind exercised
 * through a tensor attribute-free op set. */
static etrt_status small_plan(etrt_device device, uint8_t **plan, size_t *size) {
  etrt_network *net;
  etrt_status s = etrt_network_create(&net);
  if (s != ETRT_OK) return s;
  int32_t x, b, add, y;
  const float bias[3] = {0.25f, -2.0f, 0.5f};
  s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){1, 3}, (int64_t[]){4, 3},
                             &x);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "b", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){3}, bias, &b);
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Add", "add", 2, (int32_t[]){x, b}, 1, &add, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_add_op(net, "Relu", "relu", 1, &add, 1, &y, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, y, "y");
  etrt_plan_options options = {.device = device, .name = "small"};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, plan, size);
  etrt_network_destroy(net);
  return s;
}

/* Where `pattern` first occurs in the plan, or -1. */
static long find(const uint8_t *plan, size_t size, const void *pattern, size_t n) {
  for (size_t i = 0; i + n <= size; ++i) {
    if (memcmp(plan + i, pattern, n) == 0) return (long)i;
  }
  return -1;
}

static void redigest(uint8_t *plan, size_t size) {
  etrt_sha256(plan + ETRT_PLAN_HEADER_SIZE, size - ETRT_PLAN_HEADER_SIZE, plan + 48);
}

static uint8_t *copy_plan(const uint8_t *plan, size_t size) {
  uint8_t *p = aligned_alloc(64, etrt_align_up(size, 64));
  memcpy(p, plan, size);
  return p;
}

static void run_small(etrt_engine *engine) {
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  float x[6] = {1, 1, 1, -1, 3, -1}, y[6];
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){2, 3}));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, x));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  const float want[6] = {1.25f, 0, 1.5f, 0, 1.0f, 0};
  for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], want[i], 1e-6);
  etrt_exec_context_destroy(ctx);
}

static void test_round_trip_and_header(void) {
  uint8_t *plan;
  size_t size;
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CPU, 0}, &plan, &size));
  CHECK(memcmp(plan, "ETRTPLAN", 8) == 0);
  CHECK_EQ_INT(etrt_plan_load_u32(plan + 8), ETRT_PLAN_VERSION);
  CHECK_EQ_INT(etrt_plan_load_u64(plan + 40), size - ETRT_PLAN_HEADER_SIZE);
  CHECK_EQ_INT(size % 64, 0);
  uint8_t *aligned = copy_plan(plan, size);
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(aligned, size, &engine));
  CHECK(strcmp(etrt_engine_name(engine), "small") == 0);
  CHECK_EQ_INT(etrt_engine_device(engine).type, ETRT_DEVICE_CPU);
  int major = -1, minor = -1;
  etrt_engine_compute_capability(engine, &major, &minor);
  CHECK(major == 0 && minor == 0);
  const etrt_engine_io *x = etrt_engine_io_at(engine, 0);
  CHECK(x->is_input && !x->is_shape_input && x->dtype == ETRT_DTYPE_FLOAT32 && x->rank == 2 &&
        x->min_sizes[0] == 1 && x->max_sizes[0] == 4 && x->min_sizes[1] == 3);
  CHECK(etrt_engine_io_at(engine, 2) == NULL);
  /* An aligned plan's weights are used in place. */
  CHECK(engine->weights >= aligned && engine->weights < aligned + size);
  run_small(engine);
  etrt_engine_destroy(engine);
  /* A misaligned plan works too, its weights copied once. */
  uint8_t *odd = malloc(size + 1);
  memcpy(odd + 1, plan, size);
  CHECK_OK(etrt_engine_deserialize(odd + 1, size, &engine));
  CHECK(engine->weights < odd || engine->weights >= odd + size + 1);
  CHECK_EQ_INT((uintptr_t)engine->weights % 64, 0);
  run_small(engine);
  etrt_engine_destroy(engine);
  free(odd);
  free(aligned);
  free(plan);
}

static void test_deterministic(void) {
  uint8_t *a, *b;
  size_t na, nb;
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CPU, 0}, &a, &na));
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CPU, 0}, &b, &nb));
  CHECK(na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
  test_mlp m;
  test_mlp_init(&m, 3);
  CHECK_OK(test_mlp_plan(&m, (etrt_device){ETRT_DEVICE_CUDA, 1}, &a, &na));
  CHECK_OK(test_mlp_plan(&m, (etrt_device){ETRT_DEVICE_CUDA, 1}, &b, &nb));
  CHECK(na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
}

static void test_cuda_header(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, y;
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){4}, (int64_t[]){4}, &x));
  CHECK_OK(etrt_network_add_op(net, "Relu", NULL, 1, &x, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *plan;
  size_t size;
  etrt_engine *engine;
  int major, minor;
  /* No capability given: 9.0. */
  CHECK_OK(
      etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CUDA, 2}}, &plan, &size));
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_engine_compute_capability(engine, &major, &minor);
  CHECK(major == 9 && minor == 0);
  CHECK(etrt_engine_device(engine).type == ETRT_DEVICE_CUDA &&
        etrt_engine_device(engine).index == 2);
  CHECK(strcmp(etrt_engine_name(engine), "engine") == 0);
  etrt_engine_destroy(engine);
  free(plan);
  CHECK_OK(etrt_plan_build(net,
                           &(etrt_plan_options){.device = {ETRT_DEVICE_CUDA, 0},
                                                .precision = ETRT_PRECISION_FP16,
                                                .compute_major = 8,
                                                .compute_minor = 6},
                           &plan, &size));
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_engine_compute_capability(engine, &major, &minor);
  CHECK(major == 8 && minor == 6);
  CHECK_EQ_INT(etrt_plan_load_u32(plan + 32), ETRT_PRECISION_FP16);
  etrt_engine_destroy(engine);
  free(plan);
  /* Builder refusals. */
  char long_name[200];
  memset(long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  CHECK_FAILS(etrt_plan_build(net, &(etrt_plan_options){.name = long_name}, &plan, &size),
              ETRT_ERROR_INVALID_ARGUMENT, "longer than 111 bytes");
  CHECK_FAILS(
      etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 3}}, &plan, &size),
      ETRT_ERROR_INVALID_ARGUMENT, "device type 0 index 3");
  CHECK_FAILS(
      etrt_plan_build(net, &(etrt_plan_options){.precision = (etrt_precision)9}, &plan, &size),
      ETRT_ERROR_INVALID_ARGUMENT, "precision");
  etrt_network_destroy(net);
  CHECK_OK(etrt_network_create(&net));
  CHECK_FAILS(etrt_plan_build(net, &(etrt_plan_options){.name = "e"}, &plan, &size),
              ETRT_ERROR_INVALID_ARGUMENT, "no outputs");
  etrt_network_destroy(net);
}

/* Deserializing `plan` (after `mutate` and, if asked, a fresh digest) is refused with
 * `status` and a message holding `text` and "byte offset". */
static void expect_refused(const uint8_t *plan, size_t size, long at, const void *bytes, size_t n,
                           int fix_digest, etrt_status status, const char *text, int line) {
  uint8_t *p = copy_plan(plan, size);
  if (at >= 0) memcpy(p + at, bytes, n);
  if (fix_digest) redigest(p, size);
  etrt_engine *engine = NULL;
  etrt_clear_error();
  etrt_status s = etrt_engine_deserialize(p, size, &engine);
  if (s != status || strstr(etrt_last_error(), text) == NULL ||
      strstr(etrt_last_error(), "byte offset") == NULL) {
    etrt_test_fail(__FILE__, line, "mutation at %ld: got %s '%s', wanted %s '%s'", at,
                   etrt_status_name(s), etrt_last_error(), etrt_status_name(status), text);
  }
  if (engine != NULL) etrt_engine_destroy(engine);
  free(p);
}

#define REFUSED(at, bytes, n, fix, status, text) \
  expect_refused(plan, size, (at), (bytes), (n), (fix), (status), (text), __LINE__)

static void u32le(uint8_t *out, uint32_t v) { etrt_plan_store_u32(out, v); }

static void test_refusals(void) {
  uint8_t *plan;
  size_t size;
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CPU, 0}, &plan, &size));
  uint8_t w[8];
  /* Header. */
  REFUSED(0, "XTRTPLAN", 8, 0, ETRT_ERROR_INVALID_FORMAT, "magic at byte offset 0");
  u32le(w, 2);
  REFUSED(8, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "format version at byte offset 8: version 2");
  u32le(w, 256);
  REFUSED(12, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "header size at byte offset 12");
  u32le(w, 7);
  REFUSED(16, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "device type at byte offset 16");
  u32le(w, 1);
  REFUSED(20, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "device index at byte offset 20");
  REFUSED(24, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "compute capability at byte offset 24");
  u32le(w, 5);
  REFUSED(32, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "precision at byte offset 32");
  REFUSED(36, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "flags at byte offset 36");
  etrt_plan_store_u64(w, size);
  REFUSED(40, w, 8, 0, ETRT_ERROR_INVALID_FORMAT, "body size at byte offset 40");
  uint8_t name[ETRT_PLAN_NAME_SIZE];
  memset(name, 'a', sizeof name);
  REFUSED(ETRT_PLAN_NAME_OFFSET, name, sizeof name, 0, ETRT_ERROR_INVALID_FORMAT,
          "engine name at byte offset 80");
  REFUSED(ETRT_PLAN_NAME_OFFSET + 20, "z", 1, 0, ETRT_ERROR_INVALID_FORMAT, "padding is not zero");
  /* Digest: one flipped byte anywhere in the body. */
  for (size_t i = ETRT_PLAN_HEADER_SIZE; i < size; i += 7) {
    uint8_t flipped = plan[i] ^ 0x40;
    REFUSED((long)i, &flipped, 1, 0, ETRT_ERROR_INVALID_FORMAT, "digest at byte offset 48");
  }
  /* Truncated anywhere. */
  for (size_t n = 0; n < size; n += 13) {
    etrt_engine *engine = NULL;
    etrt_clear_error();
    CHECK(etrt_engine_deserialize(plan, n, &engine) == ETRT_ERROR_INVALID_FORMAT && engine == NULL);
    CHECK_STR_CONTAINS(etrt_last_error(), "byte offset");
  }
  /* Body fields, with the digest made right again (a hostile writer). */
  long op = find(plan, size, "\x04\0\0\0Relu", 8);
  CHECK(op > 0);
  REFUSED(op + 4, "Relq", 4, 1, ETRT_ERROR_UNSUPPORTED, "op type at byte offset");
  REFUSED(op + 4, "Relq", 4, 1, ETRT_ERROR_UNSUPPORTED, "unknown operation 'Relq'");
  /* Relu's input id follows its op type, name ("relu") and input count. */
  long input_id = op + 8 + 8 + 4;
  u32le(w, 99);
  REFUSED(input_id, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "input at byte offset");
  REFUSED(input_id, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "value 99");
  u32le(w, (uint32_t)-7);
  REFUSED(input_id, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "value -7");
  /* Relu reading its own output: not produced by an earlier node. */
  uint8_t own[4];
  memcpy(own, plan + input_id + 4 + 4, 4);
  REFUSED(input_id, own, 4, 1, ETRT_ERROR_INVALID_FORMAT, "not produced by an earlier node");
  /* Strings out of bounds. */
  u32le(w, 0x7fffffffu);
  REFUSED(op + 8, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "string length 2147483647 exceeds");
  u32le(w, 60000);
  REFUSED(op + 8, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "truncated");
  REFUSED(op + 4, "R\0lu", 4, 1, ETRT_ERROR_INVALID_FORMAT, "NUL byte");
  /* The constant 'b': name, kind, flags, reserved, dtype, rank, dims, data offset, size. */
  long b = find(plan, size,
                "\x01\0\0\0"
                "b",
                5);
  CHECK(b > 0);
  long b_kind = b + 5, b_dtype = b + 9, b_rank = b + 13, b_dims = b + 17, b_offset = b + 33;
  REFUSED(b_kind, "\x09", 1, 1, ETRT_ERROR_INVALID_FORMAT, "kind at byte offset");
  REFUSED(b_kind + 1, "\x01", 1, 1, ETRT_ERROR_INVALID_FORMAT, "flags at byte offset");
  REFUSED(b_kind + 2, "\x01", 1, 1, ETRT_ERROR_INVALID_FORMAT, "reserved, must be 0");
  u32le(w, 99);
  REFUSED(b_dtype, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "dtype at byte offset");
  REFUSED(b_dtype, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "unknown dtype 99");
  u32le(w, 9);
  REFUSED(b_rank, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "rank 9 is outside [0, 8]");
  etrt_plan_store_u64(w, (uint64_t)-1);
  REFUSED(b_dims, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "min dims at byte offset");
  etrt_plan_store_u64(w, 4);
  REFUSED(b_dims, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "out of order");
  etrt_plan_store_u64(w, 1);
  REFUSED(b_dims, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "constant's dims must be fixed");
  etrt_plan_store_u64(w, 32);
  REFUSED(b_offset, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "data offset at byte offset");
  etrt_plan_store_u64(w, 1u << 20);
  REFUSED(b_offset, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "lies outside");
  etrt_plan_store_u64(w, 16);
  REFUSED(b_offset + 8, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "data size at byte offset");
  /* Input x's bounds out of order (value record first, then the I/O table). */
  long x = find(plan, size, "\x01\0\0\0x", 5);
  etrt_plan_store_u64(w, 10);
  REFUSED(x + 17, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "axis 0 bounds [10, 4] are out of order");
  /* The I/O table restates the value: a disagreement is refused. */
  long io_x = find(plan + x + 5, size - (size_t)x - 5, "\x01\0\0\0x", 5) + x + 5;
  CHECK(io_x > x);
  REFUSED(io_x + 4, "q", 1, 1, ETRT_ERROR_INVALID_FORMAT, "differs from value");
  etrt_plan_store_u64(w, 2);
  REFUSED(io_x + 5 + 8 + 8, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "differ from value");
  /* Body header counts and the weights region. */
  u32le(w, 0x00ffffff);
  REFUSED(ETRT_PLAN_HEADER_SIZE + 4, w, 4, 1, ETRT_ERROR_INVALID_FORMAT,
          "value count at byte offset 196");
  REFUSED(ETRT_PLAN_HEADER_SIZE + 12, "\x01", 1, 1, ETRT_ERROR_INVALID_FORMAT, "reserved");
  etrt_plan_store_u64(w, etrt_plan_load_u64(plan + ETRT_PLAN_HEADER_SIZE + 16) + 8);
  REFUSED(ETRT_PLAN_HEADER_SIZE + 16, w, 8, 1, ETRT_ERROR_INVALID_FORMAT,
          "weights offset at byte offset 208");
  /* The recorded output bounds must be what inference gives. */
  long y = find(plan, size, "\x01\0\0\0y", 5);
  long io_y = find(plan + y + 5, size - (size_t)y - 5, "\x01\0\0\0y", 5) + y + 5;
  CHECK(y > 0 && io_y > y);
  uint8_t *p = copy_plan(plan, size);
  etrt_plan_store_u64(p + y + 17 + 16, 3);       /* value record: max dims[0] */
  etrt_plan_store_u64(p + io_y + 5 + 8 + 16, 3); /* I/O entry: max dims[0] */
  redigest(p, size);
  etrt_engine *engine = NULL;
  CHECK_FAILS(etrt_engine_deserialize(p, size, &engine), ETRT_ERROR_INVALID_FORMAT,
              "is recorded as float32 [1..3, 3..3], inference gives float32 [1..4, 3..3]");
  CHECK_STR_CONTAINS(etrt_last_error(), "byte offset");
  CHECK(engine == NULL);
  free(p);
  free(plan);
}

/* Max dims whose size overflows pass the reader only with an axis at 2^40 (no bound);
 * once inference ran, only values whose dims are known at execute may have them: x ->
 * Shape -> y with x made [2^40, 2^40] by a hostile writer is refused. */
static void test_overflowing_dims(void) {
  etrt_network *net;
  int32_t x, y;
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){1, 1},
                                  (int64_t[]){4, 4}, &x));
  CHECK_OK(etrt_network_add_op(net, "Shape", "shape", 1, &x, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}, .name = "big"};
  uint8_t *plan;
  size_t size;
  CHECK_OK(etrt_plan_build(net, &options, &plan, &size));
  etrt_network_destroy(net);
  /* x's value record (max dims at +33) and its I/O entry (at +29). */
  long vx = find(plan, size, "\x01\0\0\0x", 5);
  CHECK(vx > 0);
  long ix = find(plan + vx + 5, size - (size_t)vx - 5, "\x01\0\0\0x", 5) + vx + 5;
  CHECK(ix > vx);
  const long at[] = {vx + 33, vx + 41, ix + 29, ix + 37};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; ++i)
    etrt_plan_store_u64(plan + at[i], (uint64_t)1 << 40);
  redigest(plan, size);
  etrt_engine *engine = NULL;
  CHECK_FAILS(etrt_engine_deserialize(plan, size, &engine), ETRT_ERROR_INVALID_FORMAT,
              "'x': the size of its max dims overflows");
  CHECK(engine == NULL);
  free(plan);
}

/* A tuning record rides on a cuda plan: it round-trips, the plan still runs the same
 * graph, and every bad field is refused naming the field and its offset. */
static void test_tuning_record(void) {
  uint8_t *plain, *plan;
  size_t plain_size, size;
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CUDA, 0}, &plain, &plain_size));
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plain, plain_size, &engine));
  CHECK(!engine->info.tuning.present && engine->info.tuning.count == 0);
  etrt_engine_destroy(engine);
  const etrt_plan_conv_choice choices[2] = {{0, 1, 1, 4096}, {1, 7, 0, 0}};
  etrt_plan_tuning tuning = {.present = 1,
                             .gpu = "NVIDIA H200",
                             .compute_major = 9,
                             .compute_minor = 0,
                             .cudnn_version = 91000,
                             .count = 2,
                             .choices = choices};
  CHECK_OK(etrt_plan_tuning_attach(plain, plain_size, &tuning, &plan, &size));
  CHECK(size > plain_size && (size - plain_size) % 64 == 0);
  CHECK_EQ_INT(etrt_plan_load_u32(plan + 36), ETRT_PLAN_FLAG_TUNED);
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  const etrt_plan_tuning *t = &engine->info.tuning;
  CHECK(t->present && strcmp(t->gpu, "NVIDIA H200") == 0 && t->compute_major == 9 &&
        t->compute_minor == 0 && t->cudnn_version == 91000 && t->count == 2);
  CHECK(t->choices[0].node == 0 && t->choices[0].algorithm == 1 && t->choices[0].math == 1 &&
        t->choices[0].scratch_bytes == 4096);
  CHECK(t->choices[1].node == 1 && t->choices[1].algorithm == 7 && t->choices[1].math == 0);
  CHECK_EQ_INT(engine->graph.node_count, 2);
  etrt_engine_destroy(engine);
  /* What `etrt inspect` shows. */
  etrt_engine_types types;
  CHECK(etrt_engine_plan_types(plan, size, &types) == 1);
  CHECK(types.tuned == 1 && strcmp(types.tuned_gpu, "NVIDIA H200") == 0 && types.tuned_major == 9 &&
        types.tuned_minor == 0 && types.tuned_cudnn == 91000 && types.tuned_convolutions == 2);
  CHECK(etrt_engine_plan_types(plain, plain_size, &types) == 1 && types.tuned == 0);
  /* Attaching twice, or to a cpu plan, is refused. */
  uint8_t *again;
  size_t again_size;
  CHECK_FAILS(etrt_plan_tuning_attach(plan, size, &tuning, &again, &again_size),
              ETRT_ERROR_INVALID_ARGUMENT, "without one");
  uint8_t *cpu;
  size_t cpu_size;
  CHECK_OK(small_plan((etrt_device){ETRT_DEVICE_CPU, 0}, &cpu, &cpu_size));
  CHECK_FAILS(etrt_plan_tuning_attach(cpu, cpu_size, &tuning, &again, &again_size),
              ETRT_ERROR_INVALID_ARGUMENT, "cuda plan");
  /* A cpu plan claiming a record. */
  uint8_t w[8];
  u32le(w, ETRT_PLAN_FLAG_TUNED);
  expect_refused(cpu, cpu_size, 36, w, 4, 0, ETRT_ERROR_INVALID_FORMAT, "flags", __LINE__);
  free(cpu);
  /* The record starts at the old weights offset. */
  long r = (long)etrt_plan_load_u64(plain + ETRT_PLAN_HEADER_SIZE + 16);
  CHECK_EQ_INT(etrt_plan_load_u32(plan + r), 11);
  long fields = r + 4 + 11, choice = fields + 16;
  u32le(w, 0);
  REFUSED(r, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "tuning record GPU name");
  u32le(w, 1000);
  REFUSED(r, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "tuning record GPU name");
  u32le(w, 100);
  REFUSED(fields, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "compute capability");
  u32le(w, 0);
  REFUSED(fields + 8, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "cuDNN version");
  u32le(w, 3);
  REFUSED(fields + 12, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "choice count");
  u32le(w, 2);
  REFUSED(choice, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "choice 0 node index");
  u32le(w, 0);
  REFUSED(choice + 24, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "choice 1 node index");
  u32le(w, 8);
  REFUSED(choice + 4, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "algorithm");
  u32le(w, 4);
  REFUSED(choice + 8, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "math type");
  u32le(w, 1);
  REFUSED(choice + 12, w, 4, 1, ETRT_ERROR_INVALID_FORMAT, "reserved");
  uint64_t big = (ETRT_PLAN_TUNING_MAX_SCRATCH + 1);
  etrt_plan_store_u64(w, big);
  REFUSED(choice + 16, w, 8, 1, ETRT_ERROR_INVALID_FORMAT, "scratch bytes");
  /* A record claimed by the flag on a plan that has none: its first field is read
   * where the weights start, so the offsets no longer agree. */
  uint8_t *claimed = copy_plan(plain, plain_size);
  u32le(claimed + 36, ETRT_PLAN_FLAG_TUNED);
  redigest(claimed, plain_size);
  CHECK(etrt_engine_deserialize(claimed, plain_size, &engine) == ETRT_ERROR_INVALID_FORMAT);
  CHECK(strstr(etrt_last_error(), "byte offset") != NULL);
  free(claimed);
  free(plan);
  free(plain);
}

int main(void) {
  RUN_TEST(test_round_trip_and_header);
  RUN_TEST(test_deterministic);
  RUN_TEST(test_cuda_header);
  RUN_TEST(test_refusals);
  RUN_TEST(test_overflowing_dims);
  RUN_TEST(test_tuning_record);
  return TEST_EXIT();
}
