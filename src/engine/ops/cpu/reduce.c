/* CPU kernels of the reductions. The input's axes are split into kept and reduced
 * ones (adjacent axes of one kind merged, size-1 axes dropped); each output element
 * walks its reduced elements with the innermost reduced axis as the tight loop.
 * Floats accumulate in double, signed integers in int64 and unsigned ones in uint64
 * (sums and products wrap, as they do in the input type). */
#include <math.h>
#include <string.h>

#include "base/thread_pool.h"

#include "base/half.h"
#include "engine/ops/op_check.h"
#include "engine/ops/reduce.h"

typedef struct etrt_reduce_walk {
  int32_t kept_rank, reduced_rank;
  int64_t kept_dims[ETRT_MAX_RANK], kept_strides[ETRT_MAX_RANK];
  int64_t reduced_dims[ETRT_MAX_RANK], reduced_strides[ETRT_MAX_RANK];
  int64_t out_numel, reduced_numel;
} etrt_reduce_walk;

static void etrt_reduce_reverse(int32_t rank, int64_t *dims, int64_t *strides) {
  for (int32_t i = 0, j = rank - 1; i < j; ++i, --j) {
    int64_t t = dims[i];
    dims[i] = dims[j];
    dims[j] = t;
    t = strides[i];
    strides[i] = strides[j];
    strides[j] = t;
  }
}

static void etrt_reduce_walk_init(etrt_reduce_walk *w, const etrt_tensor *in, uint32_t reduced) {
  memset(w, 0, sizeof *w);
  int64_t stride = 1;
  int32_t last_kind = -1; /* 0 kept, 1 reduced */
  w->out_numel = 1;
  w->reduced_numel = 1;
  for (int32_t a = in->rank - 1; a >= 0; --a) {
    int64_t size = in->dims[a];
    int32_t kind = (reduced >> a) & 1u;
    if (kind)
      w->reduced_numel *= size;
    else
      w->out_numel *= size;
    if (size != 1) {
      /* merged with the axis after it when of the same kind (contiguous input) */
      int32_t *rank = kind ? &w->reduced_rank : &w->kept_rank;
      int64_t *dims = kind ? w->reduced_dims : w->kept_dims;
      int64_t *strides = kind ? w->reduced_strides : w->kept_strides;
      if (last_kind == kind && *rank > 0 && strides[*rank - 1] * dims[*rank - 1] == stride) {
        dims[*rank - 1] *= size;
      } else {
        dims[*rank] = size;
        strides[*rank] = stride;
        ++*rank;
      }
      last_kind = kind;
    }
    stride *= size;
  }
  /* collected innermost first: reverse to outermost first */
  etrt_reduce_reverse(w->kept_rank, w->kept_dims, w->kept_strides);
  etrt_reduce_reverse(w->reduced_rank, w->reduced_dims, w->reduced_strides);
  if (w->reduced_rank == 0) { /* one element per output: a loop of 1 */
    w->reduced_dims[0] = 1;
    w->reduced_strides[0] = 1;
    w->reduced_rank = 1;
  }
}

/* The counter over the kept axes at output element `o`, and its element offset. */
static int64_t etrt_reduce_seek(const etrt_reduce_walk *w, int64_t o, int64_t *kept_index) {
  int64_t base = 0;
  for (int32_t a = w->kept_rank - 1; a >= 0; --a) {
    kept_index[a] = o % w->kept_dims[a];
    o /= w->kept_dims[a];
    base += kept_index[a] * w->kept_strides[a];
  }
  return base;
}

/* Steps to the next position of a counter over (rank, dims, strides), updating the
 * element offset. */
static inline void etrt_reduce_step(int32_t rank, const int64_t *dims, const int64_t *strides,
                                    int64_t *index, int64_t *offset) {
  for (int32_t a = rank - 1; a >= 0; --a) {
    if (++index[a] < dims[a]) {
      *offset += strides[a];
      return;
    }
    *offset -= strides[a] * (dims[a] - 1);
    index[a] = 0;
  }
}

/* Runs BODY for each reduced element `v` (ACC_T, read with LOAD) of the output element
 * at `base`. */
#define ETRT_REDUCE_EACH(LOAD, BODY)                                                    \
  do {                                                                                  \
    if (w->reduced_numel == 0) break;                                                   \
    int32_t last_ = w->reduced_rank - 1;                                                \
    int64_t inner_ = w->reduced_dims[last_], inner_stride_ = w->reduced_strides[last_]; \
    int64_t rows_ = w->reduced_numel / inner_;                                          \
    int64_t index_[ETRT_MAX_RANK] = {0};                                                \
    int64_t offset_ = base;                                                             \
    for (int64_t r_ = 0; r_ < rows_; ++r_) {                                            \
      const SRC_T *row_ = x + offset_;                                                  \
      for (int64_t j_ = 0; j_ < inner_; ++j_) {                                         \
        ACC_T v = LOAD(row_[j_ * inner_stride_]);                                       \
        BODY;                                                                           \
      }                                                                                 \
      etrt_reduce_step(last_, w->reduced_dims, w->reduced_strides, index_, &offset_);   \
    }                                                                                   \
  } while (0)

#define ETRT_LOAD_SAME(x) (x)
#define ETRT_LOAD_HALF(x) ((double)etrt_half_to_float(x))
#define ETRT_LOAD_BF16(x) ((double)etrt_bfloat16_to_float(x))
#define ETRT_STORE_SAME(x) (x)

/* A float kernel: accumulates in double. */
#define ETRT_REDUCE_FLOAT_FN(NAME, SRC, LOADER, STORER)                                        \
  static void NAME(const etrt_reduce_walk *w, etrt_reduce_kind kind, const void *x_, void *y_, \
                   int64_t o_begin, int64_t o_end) {                                           \
    const SRC *x = x_;                                                                         \
    SRC *y = y_;                                                                               \
    typedef SRC SRC_T;                                                                         \
    typedef double ACC_T;                                                                      \
    int64_t kept_index[ETRT_MAX_RANK];                                                         \
    int64_t base = etrt_reduce_seek(w, o_begin, kept_index);                                   \
    for (int64_t o = o_begin; o < o_end; ++o) {                                                \
      double a = 0;                                                                            \
      switch (kind) {                                                                          \
        case ETRT_REDUCE_SUM:                                                                  \
        case ETRT_REDUCE_MEAN:                                                                 \
        case ETRT_REDUCE_LOG_SUM:                                                              \
          ETRT_REDUCE_EACH(LOADER, a += v);                                                    \
          if (kind == ETRT_REDUCE_MEAN) a /= (double)w->reduced_numel;                         \
          if (kind == ETRT_REDUCE_LOG_SUM) a = log(a);                                         \
          break;                                                                               \
        case ETRT_REDUCE_SUM_SQUARE:                                                           \
        case ETRT_REDUCE_L2:                                                                   \
          ETRT_REDUCE_EACH(LOADER, a += v * v);                                                \
          if (kind == ETRT_REDUCE_L2) a = sqrt(a);                                             \
          break;                                                                               \
        case ETRT_REDUCE_L1:                                                                   \
          ETRT_REDUCE_EACH(LOADER, a += fabs(v));                                              \
          break;                                                                               \
        case ETRT_REDUCE_PROD:                                                                 \
          a = 1;                                                                               \
          ETRT_REDUCE_EACH(LOADER, a *= v);                                                    \
          break;                                                                               \
        case ETRT_REDUCE_MAX: /* NaN propagates, as in numpy */                                \
          a = -INFINITY;                                                                       \
          ETRT_REDUCE_EACH(LOADER, if (v > a || v != v) a = v);                                \
          break;                                                                               \
        case ETRT_REDUCE_MIN:                                                                  \
          a = INFINITY;                                                                        \
          ETRT_REDUCE_EACH(LOADER, if (v < a || v != v) a = v);                                \
          break;                                                                               \
        case ETRT_REDUCE_LOG_SUM_EXP: {                                                        \
          double m = -INFINITY;                                                                \
          ETRT_REDUCE_EACH(LOADER, if (v > m || v != v) m = v);                                \
          if (isinf(m) || m != m) {                                                            \
            a = m;                                                                             \
          } else {                                                                             \
            ETRT_REDUCE_EACH(LOADER, a += exp(v - m));                                         \
            a = m + log(a);                                                                    \
          }                                                                                    \
          break;                                                                               \
        }                                                                                      \
        default:                                                                               \
          break;                                                                               \
      }                                                                                        \
      y[o] = STORER(a);                                                                        \
      etrt_reduce_step(w->kept_rank, w->kept_dims, w->kept_strides, kept_index, &base);        \
    }                                                                                          \
  }

ETRT_REDUCE_FLOAT_FN(etrt_reduce_f32, float, ETRT_LOAD_SAME, (float))
ETRT_REDUCE_FLOAT_FN(etrt_reduce_f64, double, ETRT_LOAD_SAME, ETRT_STORE_SAME)
ETRT_REDUCE_FLOAT_FN(etrt_reduce_f16, uint16_t, ETRT_LOAD_HALF, etrt_double_to_half)
ETRT_REDUCE_FLOAT_FN(etrt_reduce_bf16, uint16_t, ETRT_LOAD_BF16, etrt_double_to_bfloat16)

/* An integer kernel: ACC is int64_t or uint64_t; sums and products go through
 * uint64_t so that they wrap instead of overflowing. */
#define ETRT_REDUCE_INT_FN(NAME, SRC, ACC, LOWEST, HIGHEST)                                     \
  static void NAME(const etrt_reduce_walk *w, etrt_reduce_kind kind, const void *x_, void *y_,  \
                   int64_t o_begin, int64_t o_end) {                                            \
    const SRC *x = x_;                                                                          \
    SRC *y = y_;                                                                                \
    typedef SRC SRC_T;                                                                          \
    typedef ACC ACC_T;                                                                          \
    int64_t kept_index[ETRT_MAX_RANK];                                                          \
    int64_t base = etrt_reduce_seek(w, o_begin, kept_index);                                    \
    for (int64_t o = o_begin; o < o_end; ++o) {                                                 \
      ACC a = 0;                                                                                \
      switch (kind) {                                                                           \
        case ETRT_REDUCE_SUM:                                                                   \
        case ETRT_REDUCE_MEAN:                                                                  \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME, a = (ACC)((uint64_t)a + (uint64_t)v));               \
          if (kind == ETRT_REDUCE_MEAN && w->reduced_numel > 0) a /= (ACC)w->reduced_numel;     \
          break;                                                                                \
        case ETRT_REDUCE_SUM_SQUARE:                                                            \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME, a = (ACC)((uint64_t)a + (uint64_t)v * (uint64_t)v)); \
          break;                                                                                \
        case ETRT_REDUCE_L1:                                                                    \
          /* v < 1 rather than v < 0: also right for unsigned, without a warning */             \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME,                                                      \
                           a = (ACC)((uint64_t)a + (v < 1 ? 0 - (uint64_t)v : (uint64_t)v)));   \
          break;                                                                                \
        case ETRT_REDUCE_PROD:                                                                  \
          a = 1;                                                                                \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME, a = (ACC)((uint64_t)a * (uint64_t)v));               \
          break;                                                                                \
        case ETRT_REDUCE_MAX:                                                                   \
          a = (ACC)(LOWEST);                                                                    \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME, if (v > a) a = v);                                   \
          break;                                                                                \
        case ETRT_REDUCE_MIN:                                                                   \
          a = (ACC)(HIGHEST);                                                                   \
          ETRT_REDUCE_EACH(ETRT_LOAD_SAME, if (v < a) a = v);                                   \
          break;                                                                                \
        default:                                                                                \
          break;                                                                                \
      }                                                                                         \
      y[o] = (SRC)a;                                                                            \
      etrt_reduce_step(w->kept_rank, w->kept_dims, w->kept_strides, kept_index, &base);         \
    }                                                                                           \
  }

ETRT_REDUCE_INT_FN(etrt_reduce_i8, int8_t, int64_t, INT8_MIN, INT8_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_i16, int16_t, int64_t, INT16_MIN, INT16_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_i32, int32_t, int64_t, INT32_MIN, INT32_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_i64, int64_t, int64_t, INT64_MIN, INT64_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_u8, uint8_t, uint64_t, 0, UINT8_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_u16, uint16_t, uint64_t, 0, UINT16_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_u32, uint32_t, uint64_t, 0, UINT32_MAX)
ETRT_REDUCE_INT_FN(etrt_reduce_u64, uint64_t, uint64_t, 0, UINT64_MAX)

typedef void (*etrt_reduce_fn)(const etrt_reduce_walk *, etrt_reduce_kind, const void *, void *,
                               int64_t, int64_t);

static etrt_reduce_fn etrt_reduce_kernel(etrt_dtype dtype) {
#define ETRT_REDUCE_KERNEL_CASE(DT, FN) \
  case DT:                              \
    return FN;
  switch (dtype) {
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_FLOAT32, etrt_reduce_f32)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_FLOAT64, etrt_reduce_f64)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_FLOAT16, etrt_reduce_f16)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_BFLOAT16, etrt_reduce_bf16)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_INT8, etrt_reduce_i8)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_INT16, etrt_reduce_i16)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_INT32, etrt_reduce_i32)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_INT64, etrt_reduce_i64)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_UINT8, etrt_reduce_u8)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_UINT16, etrt_reduce_u16)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_UINT32, etrt_reduce_u32)
    ETRT_REDUCE_KERNEL_CASE(ETRT_DTYPE_UINT64, etrt_reduce_u64)
    default:
      return NULL;
  }
#undef ETRT_REDUCE_KERNEL_CASE
}

typedef struct etrt_reduce_job {
  etrt_reduce_fn fn;
  const etrt_reduce_walk *w;
  etrt_reduce_kind kind;
  const void *x;
  void *y;
} etrt_reduce_job;

static void etrt_reduce_outputs(void *ctx, int64_t begin, int64_t end) {
  const etrt_reduce_job *j = ctx;
  j->fn(j->w, j->kind, j->x, j->y, begin, end);
}

etrt_status etrt_cpu_reduce(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  const etrt_reduce_state *s = node->state;
  uint32_t reduced;
  ETRT_RETURN_IF_ERROR(etrt_reduce_axes(node, s, inputs, &reduced));
  etrt_reduce_walk w;
  etrt_reduce_walk_init(&w, &inputs[0], reduced);
  etrt_reduce_fn fn = etrt_reduce_kernel(inputs[0].dtype);
  if (fn == NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for input type %s",
                         etrt_dtype_name(inputs[0].dtype));
  /* Split by output elements: each is reduced alone, in the same order. */
  etrt_reduce_job job = {fn, &w, s->kind, inputs[0].data, outputs[0].data};
  etrt_parallel_for(w.out_numel, 1 + 16384 / (w.reduced_numel + 1), etrt_reduce_outputs, &job);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_reduce[] = {
#define ETRT_CPU_REDUCE_ROW(kind, name, ints) {name, etrt_cpu_reduce},
    ETRT_REDUCE_OPS(ETRT_CPU_REDUCE_ROW)
#undef ETRT_CPU_REDUCE_ROW
        {NULL, NULL},
};
