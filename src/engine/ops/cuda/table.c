/* The CUDA executor's table: every family's CUDA rows (each ops/cuda/<family>.cu
 * ends with its NULL-terminated etrt_cuda_rows_<family>); add a family here once.
 * Without CUDA compiled in the table is empty, so the CPU build never references a
 * CUDA symbol. */
#include <stddef.h>
#include <string.h>

#include "engine/op.h"

#ifdef ETRT_HAVE_CUDA
#include <pthread.h>

extern const etrt_op_cuda_row etrt_cuda_rows_binary[];
extern const etrt_op_cuda_row etrt_cuda_rows_conv[];
extern const etrt_op_cuda_row etrt_cuda_rows_cumsum[];
extern const etrt_op_cuda_row etrt_cuda_rows_gather[];
extern const etrt_op_cuda_row etrt_cuda_rows_layout[];
extern const etrt_op_cuda_row etrt_cuda_rows_loss[];
extern const etrt_op_cuda_row etrt_cuda_rows_matmul[];
extern const etrt_op_cuda_row etrt_cuda_rows_normalization[];
extern const etrt_op_cuda_row etrt_cuda_rows_pool[];
extern const etrt_op_cuda_row etrt_cuda_rows_reduce[];
extern const etrt_op_cuda_row etrt_cuda_rows_resize[];
extern const etrt_op_cuda_row etrt_cuda_rows_selection[];
extern const etrt_op_cuda_row etrt_cuda_rows_softmax[];
extern const etrt_op_cuda_row etrt_cuda_rows_testing[];
extern const etrt_op_cuda_row etrt_cuda_rows_unary[];
extern const etrt_op_cuda_row etrt_cuda_rows_recurrent[];
extern const etrt_op_cuda_row etrt_cuda_rows_einsum[];
extern const etrt_op_cuda_row etrt_cuda_rows_det[];
extern const etrt_op_cuda_row etrt_cuda_rows_compress[];
extern const etrt_op_cuda_row etrt_cuda_rows_unpool[];
extern const etrt_op_cuda_row etrt_cuda_rows_crop[];
extern const etrt_op_cuda_row etrt_cuda_rows_col2im[];
extern const etrt_op_cuda_row etrt_cuda_rows_vision[];
extern const etrt_op_cuda_row etrt_cuda_rows_text[];
extern const etrt_op_cuda_row etrt_cuda_rows_signal[];
extern const etrt_op_cuda_row etrt_cuda_rows_random[];
extern const etrt_op_cuda_row etrt_cuda_rows_quantize[];
extern const etrt_op_cuda_row etrt_cuda_rows_qlinear[];
extern const etrt_op_cuda_row etrt_cuda_rows_attention[];

static const etrt_op_cuda_row *const etrt_cuda_families[] = {
    etrt_cuda_rows_binary,    etrt_cuda_rows_conv,          etrt_cuda_rows_cumsum,
    etrt_cuda_rows_gather,    etrt_cuda_rows_layout,        etrt_cuda_rows_loss,
    etrt_cuda_rows_matmul,    etrt_cuda_rows_normalization, etrt_cuda_rows_pool,
    etrt_cuda_rows_reduce,    etrt_cuda_rows_resize,        etrt_cuda_rows_selection,
    etrt_cuda_rows_softmax,   etrt_cuda_rows_testing,       etrt_cuda_rows_unary,
    etrt_cuda_rows_recurrent, etrt_cuda_rows_einsum,        etrt_cuda_rows_det,
    etrt_cuda_rows_compress,  etrt_cuda_rows_unpool,        etrt_cuda_rows_crop,
    etrt_cuda_rows_col2im,    etrt_cuda_rows_vision,        etrt_cuda_rows_text,
    etrt_cuda_rows_signal,    etrt_cuda_rows_random,        etrt_cuda_rows_quantize,
    etrt_cuda_rows_attention, etrt_cuda_rows_qlinear,
};

#define ETRT_CUDA_FAMILY_COUNT (sizeof etrt_cuda_families / sizeof etrt_cuda_families[0])
#define ETRT_CUDA_CAPACITY 512

static const etrt_op_cuda_row *etrt_cuda_table[ETRT_CUDA_CAPACITY];
static size_t etrt_cuda_table_count;
static pthread_once_t etrt_cuda_table_once = PTHREAD_ONCE_INIT;

static void etrt_cuda_table_fill(void) {
  for (size_t f = 0; f < ETRT_CUDA_FAMILY_COUNT; ++f) {
    for (const etrt_op_cuda_row *r = etrt_cuda_families[f]; r->op_type != NULL; ++r) {
      if (etrt_cuda_table_count < ETRT_CUDA_CAPACITY) etrt_cuda_table[etrt_cuda_table_count++] = r;
    }
  }
}

const etrt_op_cuda_row *const *etrt_op_cuda_all(size_t *count) {
  pthread_once(&etrt_cuda_table_once, etrt_cuda_table_fill);
  *count = etrt_cuda_table_count;
  return etrt_cuda_table;
}

/* The few operators with per-context state (op.h). */
extern const etrt_op_cuda_setup_row etrt_cuda_setups_conv[];
extern const etrt_op_cuda_setup_row etrt_cuda_setups_attention[];
extern const etrt_op_cuda_setup_row etrt_cuda_setups_quantize[];
extern const etrt_op_cuda_setup_row etrt_cuda_setups_qlinear[];

static const etrt_op_cuda_setup_row *const etrt_cuda_setup_families[] = {
    etrt_cuda_setups_conv, etrt_cuda_setups_attention, etrt_cuda_setups_quantize,
    etrt_cuda_setups_qlinear};

const etrt_op_cuda_setup_row *etrt_op_cuda_setup_find(const char *op_type) {
  for (size_t f = 0; f < sizeof etrt_cuda_setup_families / sizeof etrt_cuda_setup_families[0];
       ++f) {
    for (const etrt_op_cuda_setup_row *r = etrt_cuda_setup_families[f]; r->op_type != NULL; ++r)
      if (strcmp(r->op_type, op_type) == 0) return r;
  }
  return NULL;
}
#else
const etrt_op_cuda_setup_row *etrt_op_cuda_setup_find(const char *op_type) {
  (void)op_type;
  return NULL;
}

const etrt_op_cuda_row *const *etrt_op_cuda_all(size_t *count) {
  static const etrt_op_cuda_row *const none[1] = {NULL};
  *count = 0;
  return none;
}
#endif

const etrt_op_cuda_row *etrt_op_cuda_find(const char *op_type) {
  size_t count;
  const etrt_op_cuda_row *const *all = etrt_op_cuda_all(&count);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(all[i]->op_type, op_type) == 0) return all[i];
  }
  return NULL;
}
