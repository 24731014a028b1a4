#include "test_programs.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/log.h"

static float etrt_test_random(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return ((float)(*state >> 8) / 16777216.0f - 0.5f);
}

static float *etrt_test_fill(size_t n, uint32_t *state) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; p != NULL && i < n; ++i) p[i] = etrt_test_random(state);
  return p;
}

etrt_status etrt_test_mlp_plan(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                               int64_t min_batch, int64_t max_batch, uint32_t seed,
                               etrt_device device, const char *name, uint8_t **plan,
                               size_t *plan_size) {
  memset(mlp, 0, sizeof *mlp);
  mlp->in = in;
  mlp->hidden = hidden;
  mlp->out = out;
  uint32_t state = seed;
  mlp->w1 = etrt_test_fill((size_t)(in * hidden), &state);
  mlp->b1 = etrt_test_fill((size_t)hidden, &state);
  mlp->w2 = etrt_test_fill((size_t)(hidden * out), &state);
  mlp->b2 = etrt_test_fill((size_t)out, &state);
  if (!mlp->w1 || !mlp->b1 || !mlp->w2 || !mlp->b2) return ETRT_ERROR_OUT_OF_MEMORY;
  etrt_network *net;
  etrt_status s = etrt_network_create(&net);
  if (s != ETRT_OK) return s;
  int32_t x, w1, b1, w2, b2, h, r, y;
  s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){min_batch, in},
                             (int64_t[]){max_batch, in}, &x);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "w1", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){in, hidden},
                                  mlp->w1, &w1);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "b1", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){hidden}, mlp->b1,
                                  &b1);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "w2", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){hidden, out},
                                  mlp->w2, &w2);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "b2", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){out}, mlp->b2, &b2);
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Gemm", "fc1", 3, (int32_t[]){x, w1, b1}, 1, &h, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_add_op(net, "Relu", "relu", 1, &h, 1, &r, 0, NULL);
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Gemm", "fc2", 3, (int32_t[]){r, w2, b2}, 1, &y, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, y, "y");
  etrt_plan_options options = {.device = device, .name = name};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, plan, plan_size);
  etrt_network_destroy(net);
  return s;
}

etrt_status etrt_test_mlp_program(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                                  int64_t min_batch, int64_t max_batch, uint32_t seed,
                                  etrt_device device, const char *name, uint8_t **pte,
                                  size_t *pte_size) {
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_status s = etrt_test_mlp_plan(mlp, in, hidden, out, min_batch, max_batch, seed, device, name,
                                     &plan, &plan_size);
  if (s == ETRT_OK) s = etrt_plan_to_program(plan, plan_size, pte, pte_size);
  free(plan);
  return s;
}

void etrt_test_mlp_reference(const etrt_test_mlp *mlp, const float *x, int64_t batch, float *y) {
  float *h = malloc((size_t)mlp->hidden * sizeof *h);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < mlp->hidden; ++j) {
      double acc = mlp->b1[j];
      for (int64_t k = 0; k < mlp->in; ++k)
        acc += (double)x[b * mlp->in + k] * mlp->w1[k * mlp->hidden + j];
      h[j] = acc > 0 ? (float)acc : 0.0f;
    }
    for (int64_t j = 0; j < mlp->out; ++j) {
      double acc = mlp->b2[j];
      for (int64_t k = 0; k < mlp->hidden; ++k) acc += (double)h[k] * mlp->w2[k * mlp->out + j];
      y[b * mlp->out + j] = (float)acc;
    }
  }
  free(h);
}

void etrt_test_mlp_free(etrt_test_mlp *mlp) {
  free(mlp->w1);
  free(mlp->b1);
  free(mlp->w2);
  free(mlp->b2);
  memset(mlp, 0, sizeof *mlp);
}

double etrt_test_max_diff(const float *a, const float *b, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > worst || d != d) worst = d;
  }
  return worst;
}

int etrt_test_mlp_fixture_open(etrt_test_mlp_fixture *f, int64_t in, int64_t hidden, int64_t out,
                               int64_t max_batch, etrt_device device, const char *name,
                               uint32_t seed) {
  memset(f, 0, sizeof *f);
  etrt_status s = etrt_test_mlp_program(&f->mlp, in, hidden, out, 0, max_batch, seed, device, name,
                                        &f->pte, &f->size);
  if (s == ETRT_OK) s = etrt_program_load_memory(f->pte, f->size, NULL, &f->program);
  if (s == ETRT_OK) s = etrt_method_create(f->program, "forward", &f->method);
  if (s != ETRT_OK) fprintf(stderr, "fixture: %s\n", etrt_last_error());
  return s == ETRT_OK;
}

void etrt_test_mlp_fixture_close(etrt_test_mlp_fixture *f) {
  etrt_method_destroy(f->method);
  etrt_program_destroy(f->program);
  free(f->pte);
  etrt_test_mlp_free(&f->mlp);
}

typedef struct etrt_test_race_job {
  etrt_test_mlp_fixture *f;
  const float *want;
  int runs;
  double tolerance;
  int mismatches;
} etrt_test_race_job;

static void *etrt_test_race_thread(void *arg) {
  etrt_test_race_job *job = arg;
  for (int i = 0; i < job->runs; ++i) {
    etrt_tensor_view out;
    if (etrt_method_execute(job->f->method) != ETRT_OK ||
        etrt_method_get_output(job->f->method, 0, &out) != ETRT_OK ||
        etrt_test_max_diff(out.data, job->want, (size_t)(2 * job->f->mlp.out)) > job->tolerance)
      ++job->mismatches;
  }
  return NULL;
}

int etrt_test_mlp_fixture_race(etrt_test_mlp_fixture *f, int runs, double tolerance) {
  float *x = malloc((size_t)(2 * f->mlp.in) * sizeof *x);
  float *want = malloc((size_t)(2 * f->mlp.out) * sizeof *want);
  int mismatches = -1;
  if (x == NULL || want == NULL) goto done;
  etrt_test_mlp_fill_input(x, 2, f->mlp.in, 6);
  etrt_test_mlp_reference(&f->mlp, x, 2, want);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {2, f->mlp.in}};
  if (etrt_method_set_input(f->method, 0, &vx) != ETRT_OK) goto done;
  etrt_test_race_job jobs[2] = {{f, want, runs, tolerance, 0}, {f, want, runs, tolerance, 0}};
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, etrt_test_race_thread, &jobs[t]);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  mismatches = jobs[0].mismatches + jobs[1].mismatches;
done:
  free(x);
  free(want);
  return mismatches;
}

void etrt_test_mlp_fill_input(float *x, int64_t batch, int64_t in, int salt) {
  for (int64_t i = 0; i < batch * in; ++i) x[i] = (float)((i * 29 + salt * 7) % 31) / 15.0f - 1.0f;
}

static int etrt_test_staging_lines;
static char etrt_test_staging_last_line[512];

static void etrt_test_staging_sink(etrt_log_level level, const char *message, void *user) {
  (void)user;
  if (level == ETRT_LOG_INFO && strstr(message, "staging") != NULL) {
    ++etrt_test_staging_lines;
    snprintf(etrt_test_staging_last_line, sizeof etrt_test_staging_last_line, "%s", message);
  }
}

void etrt_test_staging_log_start(void) {
  etrt_test_staging_lines = 0;
  etrt_test_staging_last_line[0] = '\0';
  etrt_log_set_level(ETRT_LOG_INFO);
  etrt_log_set_sink(etrt_test_staging_sink, NULL);
}

void etrt_test_staging_log_stop(void) {
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(ETRT_LOG_WARN);
}

int etrt_test_staging_log_count(void) { return etrt_test_staging_lines; }

const char *etrt_test_staging_log_last(void) { return etrt_test_staging_last_line; }
