/* Build-time tuning of the cuDNN convolutions on a real GPU (engine/plan_tune.h): a
 * build for cuda:0 times them and records one choice per convolution, tagged with this
 * GPU and cuDNN; a context of that plan takes the choices without timing and computes
 * what the CPU computes; a record edited to another GPU's name is not used (the
 * convolutions are timed, a mismatch logged at info level); --no-tune (no_tune) and
 * ETRT_CONV_TUNE=0 write no record. Skips without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/built_program_testing.h"
#include "../unit/onnx_build_testing.h"
#include "device/device.h"
#include "device/device_scope.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "engine/executor_cuda.h"
#include "engine/plan_format.h"
#include "etrt/log.h"
#include "test_util.h"

static const etrt_device_driver *d;

/* x[8,16,28,28] -> Conv 3x3 (pads 1) -> Relu -> Conv 3x3 (pads 1) -> Relu -> y [8,32,28,28]:
 * both convolutions take cuDNN (with or without the channels-last layout) and are timed
 * (a channels-last 1x1 one would be a cuBLASLt product, with nothing to tune). */
static uint8_t *two_conv_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"8", "16", "28", "28"};
  tm_input(&m, "x", 4, dims);
  static float w1[32 * 16 * 3 * 3], w2[32 * 32 * 3 * 3];
  for (size_t i = 0; i < sizeof w1 / sizeof w1[0]; ++i)
    w1[i] = ((float)((i * 7) % 11) / 11 - 0.5f) * 0.2f;
  for (size_t i = 0; i < sizeof w2 / sizeof w2[0]; ++i)
    w2[i] = ((float)((i * 5) % 13) / 13 - 0.5f) * 0.2f;
  tm_initializer_f32(&m, "w1", 4, (int64_t[]){32, 16, 3, 3}, w1);
  tm_initializer_f32(&m, "w2", 4, (int64_t[]){32, 32, 3, 3}, w2);
  static const int64_t pads[4] = {1, 1, 1, 1};
  tm_node(&m, "Conv", "conv1", "x,w1", "c1", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu1", "c1", "r1", 0);
  tm_node(&m, "Conv", "conv2", "r1,w2", "c2", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu2", "c2", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 17, size);
}

#define X_COUNT (8 * 16 * 28 * 28)
#define Y_COUNT (8 * 32 * 28 * 28)

static char progress_text[8192];

static void progress(const char *line, void *user) {
  (void)user;
  size_t used = strlen(progress_text);
  snprintf(progress_text + used, sizeof progress_text - used, "%s\n", line);
}

/* The .pte of the model built for `device`, and a copy of its one plan in *plan. */
static uint8_t *build(const char *device, int no_tune, size_t *pte_size, uint8_t **plan,
                      size_t *plan_size) {
  size_t size;
  uint8_t *onnx = two_conv_onnx(&size);
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = device;
  o.precision = ETRT_PRECISION_FP16;
  o.no_tune = no_tune;
  o.progress = progress;
  progress_text[0] = '\0';
  bp_built b = {0};
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &b.bytes, &b.size));
  free(onnx);
  bp_parse(&b);
  *plan = bp_delegate_copy(&b, plan_size);
  etrt_pte_program_free(b.program);
  *pte_size = b.size;
  return b.bytes;
}

/* Runs a built program on x and copies y out; takes (and frees) `pte`. */
static void run(uint8_t *pte, size_t size, const float *x, float *y) {
  bp_loaded l;
  bp_load(pte, size, &l);
  etrt_tensor_view xv = bp_view((void *)x, ETRT_DTYPE_FLOAT32, 4, (int64_t[]){8, 16, 28, 28});
  if (l.method != NULL) CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
  if (l.method != NULL) CHECK_OK(etrt_method_execute(l.method));
  etrt_tensor_view yv = {0};
  if (l.method != NULL) CHECK_OK(etrt_method_get_output(l.method, 0, &yv));
  if (yv.data != NULL) memcpy(y, yv.data, Y_COUNT * sizeof(float));
  bp_unload(&l);
}

static etrt_cuda_tuning_counters counters(void) {
  etrt_cuda_tuning_counters c;
  etrt_executor_cuda_tuning_counters(&c);
  return c;
}

/* Creates and destroys one context of `plan` on cuda:0; returns what it added to the
 * counters. */
static etrt_cuda_tuning_counters one_context(const uint8_t *plan, size_t size) {
  etrt_cuda_tuning_counters before = counters(), after;
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_device_scope scope;
  CHECK_OK(etrt_device_scope_enter(d, 0, &scope));
  etrt_exec_context *context = NULL;
  if (engine != NULL) CHECK_OK(etrt_exec_context_create(engine, d, &context));
  etrt_exec_context_destroy(context);
  CHECK_OK(etrt_device_scope_exit(&scope, ETRT_OK));
  etrt_engine_destroy(engine);
  after = counters();
  after.recorded -= before.recorded;
  after.timed -= before.timed;
  return after;
}

static char log_text[4096];

static void log_sink(etrt_log_level level, const char *message, void *user) {
  (void)user;
  if (level != ETRT_LOG_INFO || strstr(message, "tuned for") == NULL) return;
  size_t used = strlen(log_text);
  snprintf(log_text + used, sizeof log_text - used, "%s\n", message);
}

static void test_build_records_and_context_uses(void) {
  size_t pte_size, plan_size;
  uint8_t *plan = NULL;
  uint8_t *pte = build("cuda:0", 0, &pte_size, &plan, &plan_size);
  printf("%s", progress_text);
  CHECK_STR_CONTAINS(progress_text, "plan 0: tuned 2 convolutions in");
  etrt_engine_types types;
  CHECK(plan != NULL && etrt_engine_plan_types(plan, plan_size, &types) == 1);
  etrt_device_attributes a;
  CHECK_OK(d->attributes(0, &a));
  CHECK(types.tuned == 1 && types.tuned_convolutions == 2);
  CHECK(strcmp(types.tuned_gpu, a.name) == 0 && types.tuned_major == a.compute_major &&
        types.tuned_minor == a.compute_minor && types.tuned_cudnn > 0);

  /* A context takes both recorded choices and times nothing. */
  etrt_cuda_tuning_counters c = one_context(plan, plan_size);
  CHECK_EQ_INT((int)c.recorded, 2);
  CHECK_EQ_INT((int)c.timed, 0);

  /* It computes what the CPU computes. */
  float *x = malloc(X_COUNT * sizeof *x), *got = calloc(Y_COUNT, sizeof *got),
        *want = calloc(Y_COUNT, sizeof *want);
  for (int i = 0; i < X_COUNT; ++i) x[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  run(pte, pte_size, x, got);
  size_t cpu_size, cpu_plan_size;
  uint8_t *cpu_plan = NULL;
  uint8_t *cpu = build("cpu", 0, &cpu_size, &cpu_plan, &cpu_plan_size);
  CHECK(strstr(progress_text, "tuned") == NULL);
  run(cpu, cpu_size, x, want);
  double largest = 0.0, diff = 0.0;
  for (int i = 0; i < Y_COUNT; ++i) {
    largest = fmax(largest, fabs(want[i]));
    diff = fmax(diff, fabs(got[i] - want[i]));
  }
  CHECK(largest > 0.01);
  CHECK(diff <= 1e-2 * largest);

  /* The same choices tagged with another GPU's name: not used, the convolutions timed,
   * and the mismatch logged at info level. */
  uint8_t *bare = NULL, *edited = NULL;
  size_t bare_size, bare_pte_size, edited_size;
  uint8_t *bare_pte = build("cuda:0", 1, &bare_pte_size, &bare, &bare_size);
  CHECK(strstr(progress_text, "tuned") == NULL);
  CHECK(bare != NULL && etrt_engine_plan_types(bare, bare_size, &types) == 1 && types.tuned == 0);
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  if (engine != NULL && bare != NULL) {
    etrt_plan_tuning t = engine->info.tuning;
    snprintf(t.gpu, sizeof t.gpu, "%s", "Another GPU");
    CHECK_OK(etrt_plan_tuning_attach(bare, bare_size, &t, &edited, &edited_size));
  }
  etrt_engine_destroy(engine);
  log_text[0] = '\0';
  etrt_log_set_level(ETRT_LOG_INFO);
  etrt_log_set_sink(log_sink, NULL);
  if (edited != NULL) {
    c = one_context(edited, edited_size);
    CHECK_EQ_INT((int)c.recorded, 0);
    CHECK_EQ_INT((int)c.timed, 2);
  }
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(ETRT_LOG_WARN);
  CHECK_STR_CONTAINS(log_text, "tuned for Another GPU");
  CHECK_STR_CONTAINS(log_text, a.name);
  /* ETRT_CONV_TUNE=0 as no_tune. */
  setenv("ETRT_CONV_TUNE", "0", 1);
  size_t off_pte_size, off_size;
  uint8_t *off = NULL;
  uint8_t *off_pte = build("cuda:0", 0, &off_pte_size, &off, &off_size);
  unsetenv("ETRT_CONV_TUNE");
  CHECK(strstr(progress_text, "tuned") == NULL);
  CHECK(off != NULL && etrt_engine_plan_types(off, off_size, &types) == 1 && types.tuned == 0);
  free(off);
  free(off_pte);
  free(edited);
  free(bare);
  free(bare_pte);
  free(cpu_plan);
  free(x);
  free(got);
  free(want);
  free(plan);
}

int main(void) {
  d = etrt_device_driver_get();
  if (d == NULL || strcmp(d->name, "cuda") != 0) {
    printf("no GPU: the convolution tuning tests need an NVIDIA GPU; skipped\n");
    return 0;
  }
  RUN_TEST(test_build_records_and_context_uses);
  return TEST_EXIT();
}
