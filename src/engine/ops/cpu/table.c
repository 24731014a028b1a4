/* The CPU executor's table: every family's CPU rows (each ops/cpu/<family>.c ends
 * with its NULL-terminated etrt_cpu_rows_<family>); add a family here once. */
#include <pthread.h>
#include <string.h>

#include "engine/op.h"

extern const etrt_op_cpu_row etrt_cpu_rows_cast[];
extern const etrt_op_cpu_row etrt_cpu_rows_conv[];
extern const etrt_op_cpu_row etrt_cpu_rows_cumsum[];
extern const etrt_op_cpu_row etrt_cpu_rows_elementwise[];
extern const etrt_op_cpu_row etrt_cpu_rows_gather[];
extern const etrt_op_cpu_row etrt_cpu_rows_layout[];
extern const etrt_op_cpu_row etrt_cpu_rows_loss[];
extern const etrt_op_cpu_row etrt_cpu_rows_matmul[];
extern const etrt_op_cpu_row etrt_cpu_rows_normalization[];
extern const etrt_op_cpu_row etrt_cpu_rows_pool[];
extern const etrt_op_cpu_row etrt_cpu_rows_reshape[];
extern const etrt_op_cpu_row etrt_cpu_rows_resize[];
extern const etrt_op_cpu_row etrt_cpu_rows_selection[];
extern const etrt_op_cpu_row etrt_cpu_rows_shape[];
extern const etrt_op_cpu_row etrt_cpu_rows_softmax[];
extern const etrt_op_cpu_row etrt_cpu_rows_variadic[];
extern const etrt_op_cpu_row etrt_cpu_rows_where[];
extern const etrt_op_cpu_row etrt_cpu_rows_unary[];
extern const etrt_op_cpu_row etrt_cpu_rows_reduce[];
extern const etrt_op_cpu_row etrt_cpu_rows_testing[];
extern const etrt_op_cpu_row etrt_cpu_rows_recurrent[];
extern const etrt_op_cpu_row etrt_cpu_rows_einsum[];
extern const etrt_op_cpu_row etrt_cpu_rows_det[];
extern const etrt_op_cpu_row etrt_cpu_rows_compress[];
extern const etrt_op_cpu_row etrt_cpu_rows_unpool[];
extern const etrt_op_cpu_row etrt_cpu_rows_crop[];
extern const etrt_op_cpu_row etrt_cpu_rows_col2im[];
extern const etrt_op_cpu_row etrt_cpu_rows_vision[];
extern const etrt_op_cpu_row etrt_cpu_rows_text[];
extern const etrt_op_cpu_row etrt_cpu_rows_nms[];
extern const etrt_op_cpu_row etrt_cpu_rows_signal[];
extern const etrt_op_cpu_row etrt_cpu_rows_random[];
extern const etrt_op_cpu_row etrt_cpu_rows_quantize[];
extern const etrt_op_cpu_row etrt_cpu_rows_qlinear[];
extern const etrt_op_cpu_row etrt_cpu_rows_control[];
extern const etrt_op_cpu_row etrt_cpu_rows_attention[];

static const etrt_op_cpu_row *const etrt_cpu_families[] = {
    etrt_cpu_rows_cast,        etrt_cpu_rows_conv,    etrt_cpu_rows_cumsum,
    etrt_cpu_rows_elementwise, etrt_cpu_rows_gather,  etrt_cpu_rows_layout,
    etrt_cpu_rows_loss,        etrt_cpu_rows_matmul,  etrt_cpu_rows_normalization,
    etrt_cpu_rows_pool,        etrt_cpu_rows_reshape, etrt_cpu_rows_resize,
    etrt_cpu_rows_selection,   etrt_cpu_rows_shape,   etrt_cpu_rows_softmax,
    etrt_cpu_rows_variadic,    etrt_cpu_rows_where,   etrt_cpu_rows_unary,
    etrt_cpu_rows_reduce,      etrt_cpu_rows_testing, etrt_cpu_rows_recurrent,
    etrt_cpu_rows_einsum,      etrt_cpu_rows_det,     etrt_cpu_rows_compress,
    etrt_cpu_rows_unpool,      etrt_cpu_rows_crop,    etrt_cpu_rows_col2im,
    etrt_cpu_rows_vision,      etrt_cpu_rows_text,    etrt_cpu_rows_nms,
    etrt_cpu_rows_signal,      etrt_cpu_rows_random,  etrt_cpu_rows_quantize,
    etrt_cpu_rows_qlinear,     etrt_cpu_rows_control, etrt_cpu_rows_attention,
};

#define ETRT_CPU_FAMILY_COUNT (sizeof etrt_cpu_families / sizeof etrt_cpu_families[0])
#define ETRT_CPU_CAPACITY 512

static const etrt_op_cpu_row *etrt_cpu_table[ETRT_CPU_CAPACITY];
static size_t etrt_cpu_table_count;
static pthread_once_t etrt_cpu_table_once = PTHREAD_ONCE_INIT;

static void etrt_cpu_table_fill(void) {
  for (size_t f = 0; f < ETRT_CPU_FAMILY_COUNT; ++f) {
    for (const etrt_op_cpu_row *r = etrt_cpu_families[f]; r->op_type != NULL; ++r) {
      if (etrt_cpu_table_count < ETRT_CPU_CAPACITY) etrt_cpu_table[etrt_cpu_table_count++] = r;
    }
  }
}

const etrt_op_cpu_row *const *etrt_op_cpu_all(size_t *count) {
  pthread_once(&etrt_cpu_table_once, etrt_cpu_table_fill);
  *count = etrt_cpu_table_count;
  return etrt_cpu_table;
}

etrt_op_cpu_fn etrt_op_cpu_find(const char *op_type) {
  size_t count;
  const etrt_op_cpu_row *const *all = etrt_op_cpu_all(&count);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(all[i]->op_type, op_type) == 0) return all[i]->run;
  }
  return NULL;
}
