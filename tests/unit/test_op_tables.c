/* The definitions and the executors' tables agree: every definition but control flow
 * (If, Loop, Scan, which the CPU executor runs itself) has a CPU row
 * and every CPU row a definition; in a CUDA build every definition with a CUDA
 * predicate has a CUDA row and every CUDA row a definition with a predicate (so the
 * partitioner, which decides by the predicate in every build, never places a node
 * on a GPU that lacks its kernel). No table names an op twice. The checker also runs
 * on made-up tables, to show that it catches each kind of disagreement. */
#include <stdio.h>
#include <string.h>

#include "engine/op.h"
#include "test_util.h"

typedef struct tables {
  const etrt_op_def *const *defs;
  size_t def_count;
  const char *const *cpu;
  size_t cpu_count;
  const char *const *cuda;
  size_t cuda_count;
  int cuda_built; /* the CUDA table is meant to be complete */
} tables;

static const etrt_op_def *def_named(const tables *t, const char *op) {
  for (size_t i = 0; i < t->def_count; ++i)
    if (strcmp(t->defs[i]->op_type, op) == 0) return t->defs[i];
  return NULL;
}

static int listed(const char *const *names, size_t count, const char *op) {
  int n = 0;
  for (size_t i = 0; i < count; ++i) n += strcmp(names[i], op) == 0;
  return n;
}

/* The disagreements, each printed; 0 when the tables agree. */
static int disagreements(const tables *t, int print) {
  int bad = 0;
  for (size_t i = 0; i < t->def_count; ++i) {
    const etrt_op_def *d = t->defs[i];
    int defs = 0;
    for (size_t k = 0; k < t->def_count; ++k) defs += strcmp(t->defs[k]->op_type, d->op_type) == 0;
    if (defs != 1 && print) fprintf(stderr, "%s: %d definitions\n", d->op_type, defs);
    bad += defs != 1;
    /* Control flow has no row: the CPU executor runs its bodies (engine/control.h). */
    int want_cpu = d->control ? 0 : 1;
    int cpu = listed(t->cpu, t->cpu_count, d->op_type);
    if (cpu != want_cpu && print) fprintf(stderr, "%s: %d CPU rows\n", d->op_type, cpu);
    bad += cpu != want_cpu;
    if (t->cuda_built) {
      int want = d->cuda_supports != NULL;
      int cuda = listed(t->cuda, t->cuda_count, d->op_type);
      if (cuda != want && print)
        fprintf(stderr, "%s: %d CUDA rows, its definition %s a CUDA predicate\n", d->op_type, cuda,
                want ? "has" : "has no");
      bad += cuda != want;
    }
  }
  for (size_t i = 0; i < t->cpu_count; ++i) {
    if (def_named(t, t->cpu[i]) == NULL) {
      if (print) fprintf(stderr, "CPU row %s has no definition\n", t->cpu[i]);
      ++bad;
    }
  }
  for (size_t i = 0; i < t->cuda_count; ++i) {
    const etrt_op_def *d = def_named(t, t->cuda[i]);
    if (d == NULL || d->cuda_supports == NULL) {
      if (print)
        fprintf(stderr, "CUDA row %s has %s\n", t->cuda[i],
                d == NULL ? "no definition" : "a definition without a CUDA predicate");
      ++bad;
    }
    if (listed(t->cuda, t->cuda_count, t->cuda[i]) != 1) {
      if (print) fprintf(stderr, "CUDA row %s is listed more than once\n", t->cuda[i]);
      ++bad;
    }
  }
  return bad;
}

#define MAX_ROWS 512
static const char *cpu_names[MAX_ROWS];
static const char *cuda_names[MAX_ROWS];

static tables engine_tables(void) {
  tables t = {0};
  t.defs = etrt_op_all(&t.def_count);
  size_t count = 0;
  const etrt_op_cpu_row *const *cpu = etrt_op_cpu_all(&count);
  for (size_t i = 0; i < count && i < MAX_ROWS; ++i) cpu_names[t.cpu_count++] = cpu[i]->op_type;
  const etrt_op_cuda_row *const *cuda = etrt_op_cuda_all(&count);
  for (size_t i = 0; i < count && i < MAX_ROWS; ++i) {
    cuda_names[t.cuda_count++] = cuda[i]->op_type;
    CHECK(cuda[i]->run != NULL);
  }
  t.cpu = cpu_names;
  t.cuda = cuda_names;
#ifdef ETRT_HAVE_CUDA
  t.cuda_built = 1;
#endif
  return t;
}

static void test_engine_tables_agree(void) {
  tables t = engine_tables();
  CHECK(t.def_count > 100);
  size_t control = 0;
  for (size_t i = 0; i < t.def_count; ++i) control += t.defs[i]->control != 0;
  CHECK_EQ_INT(control, 3); /* If, Loop, Scan */
  CHECK_EQ_INT(t.cpu_count, t.def_count - control);
  CHECK_EQ_INT(disagreements(&t, 1), 0);
#ifndef ETRT_HAVE_CUDA
  CHECK_EQ_INT(t.cuda_count, 0);
#endif
  /* Every CPU row resolves to its kernel, and a node resolves both at once. */
  for (size_t i = 0; i < t.cpu_count; ++i) CHECK(etrt_op_cpu_find(t.cpu[i]) != NULL);
  etrt_node node = {.op_type = "Relu"};
  etrt_op_resolve(&node);
  CHECK(node.def == etrt_op_find("Relu") && node.run_cpu == etrt_op_cpu_find("Relu"));
  etrt_node unknown = {.op_type = "NoSuchOp"};
  etrt_op_resolve(&unknown);
  CHECK(unknown.def == NULL && unknown.run_cpu == NULL);
}

static const etrt_op_def def_a = {.op_type = "A", .cuda_supports = etrt_op_supports_all};
static const etrt_op_def def_b = {.op_type = "B"};

/* Made-up tables: each disagreement is caught. */
static void test_checker_catches(void) {
  const etrt_op_def *const defs[] = {&def_a, &def_b};
  const char *cpu_ab[] = {"A", "B"};
  const char *cuda_a[] = {"A"};
  tables good = {defs, 2, cpu_ab, 2, cuda_a, 1, 1};
  CHECK_EQ_INT(disagreements(&good, 0), 0);

  const char *cuda_none[] = {"A"};
  tables missing_row = {defs, 2, cpu_ab, 2, cuda_none, 0, 1};
  CHECK(disagreements(&missing_row, 0) > 0); /* A's predicate can say yes, no row */

  const char *cuda_ab[] = {"A", "B"};
  tables row_without_predicate = {defs, 2, cpu_ab, 2, cuda_ab, 2, 1};
  CHECK(disagreements(&row_without_predicate, 0) > 0);

  const char *cuda_ac[] = {"A", "C"};
  tables row_without_def = {defs, 2, cpu_ab, 2, cuda_ac, 2, 1};
  CHECK(disagreements(&row_without_def, 0) > 0);

  const char *cpu_a[] = {"A"};
  tables missing_cpu = {defs, 2, cpu_a, 1, cuda_a, 1, 1};
  CHECK(disagreements(&missing_cpu, 0) > 0);

  const char *cpu_abc[] = {"A", "B", "C"};
  tables cpu_without_def = {defs, 2, cpu_abc, 3, cuda_a, 1, 1};
  CHECK(disagreements(&cpu_without_def, 0) > 0);

  const char *cuda_aa[] = {"A", "A"};
  tables twice = {defs, 2, cpu_ab, 2, cuda_aa, 2, 1};
  CHECK(disagreements(&twice, 0) > 0);
}

int main(void) {
  RUN_TEST(test_engine_tables_agree);
  RUN_TEST(test_checker_catches);
  return TEST_EXIT();
}
