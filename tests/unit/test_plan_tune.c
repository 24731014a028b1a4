/* Build-time tuning of cuDNN convolutions (engine/plan_tune.h) where no GPU is needed:
 * when a record is used (GPU name, compute capability, cuDNN major version), finding a
 * node's choice, that builds for a simulated GPU or a GPU that is not here write no
 * record and say nothing of tuning, that a plan carrying a record for another GPU still
 * runs, that the tuning itself refuses anything but a real GPU, and the command line's
 * --no-tune. The timing, and a context using a record, are tests/gpu/test_conv_tuning.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "built_program_testing.h"
#include "device/sim.h"
#include "engine/engine.h"
#include "engine/plan_format.h"
#include "engine/plan_tune.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static const etrt_plan_conv_choice choices[3] = {{1, 1, 1, 4096}, {4, 6, 2, 0}, {7, 0, 0, 16}};

static etrt_plan_tuning h200_record(void) {
  etrt_plan_tuning t = {.present = 1,
                        .gpu = "NVIDIA H200",
                        .compute_major = 9,
                        .compute_minor = 0,
                        .cudnn_version = 90100,
                        .count = 3,
                        .choices = choices};
  return t;
}

static void test_cudnn_major(void) {
  CHECK_EQ_INT(etrt_plan_tuning_cudnn_major(90100), 9);
  CHECK_EQ_INT(etrt_plan_tuning_cudnn_major(91301), 9);
  CHECK_EQ_INT(etrt_plan_tuning_cudnn_major(100000), 10);
  CHECK_EQ_INT(etrt_plan_tuning_cudnn_major(8907), 8);
}

/* Used only on the GPU, compute capability and cuDNN major version it was timed on. */
static void test_record_matches(void) {
  etrt_plan_tuning t = h200_record();
  CHECK(etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 90100));
  CHECK(etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 91000)); /* another minor version */
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H100 80GB HBM3", 9, 0, 90100));
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 8, 9, 90100));
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 1, 90100));
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 8907));   /* cuDNN 8 */
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 100000)); /* cuDNN 10 */
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 0));      /* cuDNN did not load */
  CHECK(!etrt_plan_tuning_matches(&t, NULL, 9, 0, 90100));
  CHECK(!etrt_plan_tuning_matches(NULL, "NVIDIA H200", 9, 0, 90100));
  t.present = 0;
  CHECK(!etrt_plan_tuning_matches(&t, "NVIDIA H200", 9, 0, 90100));
}

static void test_find_choice(void) {
  etrt_plan_tuning t = h200_record();
  const etrt_plan_conv_choice *c = etrt_plan_tuning_find(&t, 4);
  CHECK(c != NULL && c->algorithm == 6 && c->math == 2);
  CHECK(etrt_plan_tuning_find(&t, 1) == &choices[0]);
  CHECK(etrt_plan_tuning_find(&t, 7) == &choices[2]);
  CHECK(etrt_plan_tuning_find(&t, 0) == NULL);
  CHECK(etrt_plan_tuning_find(&t, 5) == NULL);
  CHECK(etrt_plan_tuning_find(&t, 8) == NULL);
  CHECK(etrt_plan_tuning_find(NULL, 4) == NULL);
  t.present = 0;
  CHECK(etrt_plan_tuning_find(&t, 4) == NULL);
}

/* x[2,3,8,8] -> Conv 3x3 (pads 1) -> Relu -> Conv 1x1 -> y [2,4,8,8]. */
static uint8_t *two_conv_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"2", "3", "8", "8"};
  tm_input(&m, "x", 4, dims);
  float w1[8 * 3 * 3 * 3], w2[4 * 8];
  for (size_t i = 0; i < sizeof w1 / sizeof w1[0]; ++i) w1[i] = (float)((i * 7) % 11) / 11 - 0.5f;
  for (size_t i = 0; i < sizeof w2 / sizeof w2[0]; ++i) w2[i] = (float)((i * 5) % 13) / 13 - 0.5f;
  tm_initializer_f32(&m, "w1", 4, (int64_t[]){8, 3, 3, 3}, w1);
  tm_initializer_f32(&m, "w2", 4, (int64_t[]){4, 8, 1, 1}, w2);
  static const int64_t pads[4] = {1, 1, 1, 1};
  tm_node(&m, "Conv", "conv1", "x,w1", "c1", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu1", "c1", "r1", 0);
  tm_node(&m, "Conv", "conv2", "r1,w2", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 17, size);
}

static char progress_text[8192];

static void progress(const char *line, void *user) {
  (void)user;
  size_t used = strlen(progress_text);
  snprintf(progress_text + used, sizeof progress_text - used, "%s\n", line);
}

/* Builds the two-conv model for cuda:0 and returns its plan (malloc'd copy). */
static uint8_t *build_plan(size_t *plan_size) {
  size_t size;
  uint8_t *onnx = two_conv_onnx(&size);
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = "cuda:0";
  o.progress = progress;
  progress_text[0] = '\0';
  bp_built b = {0};
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &b.bytes, &b.size));
  free(onnx);
  bp_parse(&b);
  uint8_t *plan = bp_delegate_copy(&b, plan_size);
  bp_drop(&b);
  return plan;
}

/* A build for a simulated GPU, or for a GPU that is not here, times nothing and records
 * nothing: its contexts time the convolutions as before. */
static void test_build_without_gpu_writes_no_record(void) {
  for (int sim = 0; sim < 2; ++sim) {
    CHECK_OK(etrt_device_select_sim(sim));
    size_t size = 0;
    uint8_t *plan = build_plan(&size);
    etrt_engine_types types;
    CHECK(plan != NULL && etrt_engine_plan_types(plan, size, &types) == 1 && types.tuned == 0);
    CHECK(plan != NULL && (etrt_plan_load_u32(plan + 36) & ETRT_PLAN_FLAG_TUNED) == 0);
    CHECK(strstr(progress_text, "tuned") == NULL);
    CHECK_STR_CONTAINS(progress_text, "plan 0 cuda:0");
    free(plan);
  }
  CHECK_OK(etrt_device_select_sim(0));
}

/* A record timed on another GPU does not stop a context: the simulated GPU, which has
 * no cuDNN, runs the plan as it runs one without a record. */
static void test_foreign_record_still_runs(void) {
  CHECK_OK(etrt_device_select_sim(1));
  size_t size = 0;
  uint8_t *plan = build_plan(&size);
  etrt_plan_tuning t = h200_record();
  t.count = 1; /* one choice, for node 1 */
  snprintf(t.gpu, sizeof t.gpu, "%s", "Some Other GPU");
  uint8_t *tuned = NULL;
  size_t tuned_size = 0;
  if (plan != NULL) CHECK_OK(etrt_plan_tuning_attach(plan, size, &t, &tuned, &tuned_size));
  etrt_engine *engine = NULL;
  if (tuned != NULL) CHECK_OK(etrt_engine_deserialize(tuned, tuned_size, &engine));
  etrt_exec_context *context = NULL;
  if (engine != NULL) {
    CHECK_OK(etrt_exec_context_create(engine, etrt_device_driver_get(), &context));
    CHECK(context != NULL && etrt_exec_context_executor(context) == ETRT_EXECUTOR_CPU_ON_SIM);
  }
  etrt_exec_context_destroy(context);
  etrt_engine_destroy(engine);
  free(tuned);
  free(plan);
  CHECK_OK(etrt_device_select_sim(0));
}

/* The tuning is for a real GPU only. */
static void test_tune_refuses_sim_and_cpu(void) {
  CHECK_OK(etrt_device_select_sim(1));
  size_t size = 0;
  uint8_t *plan = build_plan(&size);
  uint8_t *out = (uint8_t *)"x";
  size_t out_size = 1;
  uint32_t count = 9;
#ifdef ETRT_HAVE_CUDA
  CHECK_FAILS(etrt_plan_tune(plan, size, etrt_device_driver_get(), &out, &out_size, &count),
              ETRT_ERROR_INVALID_ARGUMENT, "timed on a real GPU");
  CHECK_FAILS(etrt_plan_tune(plan, size, NULL, &out, &out_size, &count),
              ETRT_ERROR_INVALID_ARGUMENT, "timed on a real GPU");
#else
  CHECK_FAILS(etrt_plan_tune(plan, size, etrt_device_driver_get(), &out, &out_size, &count),
              ETRT_ERROR_UNSUPPORTED, "this build has no CUDA");
#endif
  CHECK(out == NULL && out_size == 0 && count == 0);
  free(plan);
  CHECK_OK(etrt_device_select_sim(0));
}

/* `etrt build --no-tune` is taken (and said in the help); on a simulated GPU no build
 * prints a tuning line, with or without it. */
static void test_cli_no_tune(void) {
  char *output = NULL;
  char command[4096];
  snprintf(command, sizeof command, "'%s' build --help", etrt_test_tool());
  CHECK_EQ_INT(etrt_test_run(command, 1, &output), 0);
  CHECK_STR_CONTAINS(output, "--no-tune");
  CHECK_STR_CONTAINS(output, "ETRT_CONV_TUNE=0");
  free(output);
  size_t size;
  uint8_t *onnx = two_conv_onnx(&size);
  char model[1024], pte[1024];
  snprintf(model, sizeof model, "%s/two_conv.onnx", etrt_test_tmpdir());
  snprintf(pte, sizeof pte, "%s/two_conv.pte", etrt_test_tmpdir());
  CHECK_OK(etrt_file_write_atomic(model, onnx, size));
  free(onnx);
  for (int flag = 0; flag < 2; ++flag) {
    output = NULL;
    snprintf(command, sizeof command,
             "ETRT_DEVICE=sim:1 '%s' build %s --device cuda:0 '%s' -o '%s'", etrt_test_tool(),
             flag ? "--no-tune" : "", model, pte);
    int rc = etrt_test_run(command, 1, &output);
    CHECK_EQ_INT(rc, 0);
    CHECK_STR_CONTAINS(output, "writing");
    CHECK(output != NULL && strstr(output, "tuned") == NULL);
    if (rc != 0 && output) fprintf(stderr, "%s\n", output);
    free(output);
  }
}

int main(void) {
  RUN_TEST(test_cudnn_major);
  RUN_TEST(test_record_matches);
  RUN_TEST(test_find_choice);
  RUN_TEST(test_build_without_gpu_writes_no_record);
  RUN_TEST(test_foreign_record_still_runs);
  RUN_TEST(test_tune_refuses_sim_and_cpu);
  RUN_TEST(test_cli_no_tune);
  return TEST_EXIT();
}
