/* CPU kernel of Softmax, LogSoftmax and Hardmax: per group, the maximum, then the
 * sum of exp(x - max) accumulated in double, then the outputs; float32 Softmax and
 * LogSoftmax take the vectorised loops of vector_math.c instead, over rows for the last
 * axis and over blocks of columns for another (a detector's box distributions). */
#include <tgmath.h>

#include "base/half.h"
#include "base/thread_pool.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/op_check.h"
#include "engine/ops/softmax.h"

#define ETRT_LOAD_SAME(x) (x)

#define ETRT_SOFTMAX_FN(NAME, SRC, CT, LOAD, STORE)                                           \
  static void NAME(etrt_softmax_kind kind, int64_t o_begin, int64_t o_end, int64_t n,         \
                   int64_t inner, const void *x_, void *y_) {                                 \
    const SRC *x = x_;                                                                        \
    SRC *y = y_;                                                                              \
    if (n == 0) return;                                                                       \
    for (int64_t o = o_begin; o < o_end; ++o) {                                               \
      for (int64_t i = 0; i < inner; ++i) {                                                   \
        const SRC *xg = x + o * n * inner + i;                                                \
        SRC *yg = y + o * n * inner + i;                                                      \
        CT m = LOAD(xg[0]);                                                                   \
        int64_t arg = 0; /* the first maximum, as Hardmax specifies */                        \
        for (int64_t k = 1; k < n; ++k) {                                                     \
          CT v = LOAD(xg[k * inner]);                                                         \
          if (v > m) {                                                                        \
            m = v;                                                                            \
            arg = k;                                                                          \
          }                                                                                   \
        }                                                                                     \
        if (kind == ETRT_SOFTMAX_HARD) {                                                      \
          for (int64_t k = 0; k < n; ++k) yg[k * inner] = STORE((CT)(k == arg));              \
          continue;                                                                           \
        }                                                                                     \
        double sum = 0;                                                                       \
        for (int64_t k = 0; k < n; ++k) sum += (double)exp(LOAD(xg[k * inner]) - m);          \
        if (kind == ETRT_SOFTMAX_LOG) {                                                       \
          CT shift = m + (CT)log(sum);                                                        \
          for (int64_t k = 0; k < n; ++k) yg[k * inner] = STORE(LOAD(xg[k * inner]) - shift); \
        } else {                                                                              \
          CT scale = (CT)(1.0 / sum);                                                         \
          for (int64_t k = 0; k < n; ++k)                                                     \
            yg[k * inner] = STORE(exp(LOAD(xg[k * inner]) - m) * scale);                      \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

ETRT_SOFTMAX_FN(etrt_softmax_f32, float, float, ETRT_LOAD_SAME, (float))
ETRT_SOFTMAX_FN(etrt_softmax_f64, double, double, ETRT_LOAD_SAME, (double))
ETRT_SOFTMAX_FN(etrt_softmax_f16, uint16_t, float, etrt_half_to_float, etrt_float_to_half)
ETRT_SOFTMAX_FN(etrt_softmax_bf16, uint16_t, float, etrt_bfloat16_to_float, etrt_float_to_bfloat16)

static void etrt_softmax_f32_rows(etrt_softmax_kind kind, int64_t o_begin, int64_t o_end, int64_t n,
                                  int64_t inner, const void *x, void *y) {
  if (n == 0) return;
  etrt_cpu_softmax_f32((const float *)x + o_begin * n, (float *)y + o_begin * n, o_end - o_begin, n,
                       kind == ETRT_SOFTMAX_LOG);
}

/* Columns of one group that a job item takes, over another axis than the last. */
#define ETRT_SOFTMAX_COLUMNS 256

static int64_t etrt_softmax_column_blocks(int64_t inner) {
  return (inner + ETRT_SOFTMAX_COLUMNS - 1) / ETRT_SOFTMAX_COLUMNS;
}

/* Items [begin, end) are (group, block of columns) pairs, the blocks of a group in a row. */
static void etrt_softmax_f32_columns(etrt_softmax_kind kind, int64_t begin, int64_t end, int64_t n,
                                     int64_t inner, const void *x, void *y) {
  if (n == 0) return;
  int64_t blocks = etrt_softmax_column_blocks(inner);
  for (int64_t item = begin; item < end; ++item) {
    int64_t group = item / blocks, first = (item % blocks) * ETRT_SOFTMAX_COLUMNS;
    int64_t last = first + ETRT_SOFTMAX_COLUMNS < inner ? first + ETRT_SOFTMAX_COLUMNS : inner;
    etrt_cpu_softmax_columns_f32((const float *)x + group * n * inner,
                                 (float *)y + group * n * inner, n, inner, first, last,
                                 kind == ETRT_SOFTMAX_LOG);
  }
}

typedef struct etrt_softmax_job {
  void (*fn)(etrt_softmax_kind, int64_t, int64_t, int64_t, int64_t, const void *, void *);
  etrt_softmax_kind kind;
  int64_t n, inner;
  const void *x;
  void *y;
} etrt_softmax_job;

static void etrt_softmax_groups(void *ctx, int64_t begin, int64_t end) {
  const etrt_softmax_job *j = ctx;
  j->fn(j->kind, begin, end, j->n, j->inner, j->x, j->y);
}

etrt_status etrt_cpu_softmax(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs) {
  const etrt_softmax_state *s = node->state;
  int64_t outer, n, inner;
  ETRT_RETURN_IF_ERROR(etrt_softmax_layout(node, s, &inputs[0], &outer, &n, &inner));
  etrt_softmax_job job = {NULL, s->kind, n, inner, inputs[0].data, outputs[0].data};
  int64_t items = outer, item_size = n * inner;
  switch (inputs[0].dtype) {
    case ETRT_DTYPE_FLOAT32:
      job.fn = s->kind == ETRT_SOFTMAX_HARD ? etrt_softmax_f32
               : inner == 1                 ? etrt_softmax_f32_rows
                                            : etrt_softmax_f32_columns;
      if (job.fn == etrt_softmax_f32_columns) {
        items = outer * etrt_softmax_column_blocks(inner);
        item_size = n * (inner < ETRT_SOFTMAX_COLUMNS ? inner : ETRT_SOFTMAX_COLUMNS);
      }
      break;
    case ETRT_DTYPE_FLOAT64:
      job.fn = etrt_softmax_f64;
      break;
    case ETRT_DTYPE_FLOAT16:
      job.fn = etrt_softmax_f16;
      break;
    case ETRT_DTYPE_BFLOAT16:
      job.fn = etrt_softmax_bf16;
      break;
    default:
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for input type %s",
                           etrt_dtype_name(inputs[0].dtype));
  }
  /* Split by groups (outer index), or blocks of columns: each softmax is computed alone,
   * in the same order, whatever the split. */
  etrt_parallel_for(items, 1 + 16384 / (item_size + 1), etrt_softmax_groups, &job);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_softmax[] = {
    {"Softmax", etrt_cpu_softmax},
    {"LogSoftmax", etrt_cpu_softmax},
    {"Hardmax", etrt_cpu_softmax},
    {NULL, NULL},
};
