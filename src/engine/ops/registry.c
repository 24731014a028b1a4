/* Every operation the engine knows. Each family file defines a NULL-terminated list
 * etrt_ops_<family>; add a family here once. */
#include <string.h>

#include "engine/op.h"

extern const etrt_op_def *const etrt_ops_elementwise[];
extern const etrt_op_def *const etrt_ops_matmul[];
extern const etrt_op_def *const etrt_ops_unary[];
extern const etrt_op_def *const etrt_ops_cast[];
extern const etrt_op_def *const etrt_ops_reduce[];
extern const etrt_op_def *const etrt_ops_softmax[];
extern const etrt_op_def *const etrt_ops_cumsum[];
extern const etrt_op_def *const etrt_ops_where[];
extern const etrt_op_def *const etrt_ops_loss[];
extern const etrt_op_def *const etrt_ops_variadic[];
extern const etrt_op_def *const etrt_ops_testing[];
extern const etrt_op_def *const etrt_ops_conv[];
extern const etrt_op_def *const etrt_ops_pool[];
extern const etrt_op_def *const etrt_ops_normalization[];
extern const etrt_op_def *const etrt_ops_reshape[];
extern const etrt_op_def *const etrt_ops_layout[];
extern const etrt_op_def *const etrt_ops_shape[];
extern const etrt_op_def *const etrt_ops_gather[];
extern const etrt_op_def *const etrt_ops_selection[];
extern const etrt_op_def *const etrt_ops_resize[];
extern const etrt_op_def *const etrt_ops_recurrent[];
extern const etrt_op_def *const etrt_ops_einsum[];
extern const etrt_op_def *const etrt_ops_det[];
extern const etrt_op_def *const etrt_ops_compress[];
extern const etrt_op_def *const etrt_ops_unpool[];
extern const etrt_op_def *const etrt_ops_crop[];
extern const etrt_op_def *const etrt_ops_col2im[];
extern const etrt_op_def *const etrt_ops_vision[];
extern const etrt_op_def *const etrt_ops_text[];
extern const etrt_op_def *const etrt_ops_nms[];
extern const etrt_op_def *const etrt_ops_signal[];
extern const etrt_op_def *const etrt_ops_random[];
extern const etrt_op_def *const etrt_ops_control[];
extern const etrt_op_def *const etrt_ops_quantize[];
extern const etrt_op_def *const etrt_ops_qlinear[];
extern const etrt_op_def *const etrt_ops_attention[];

static const etrt_op_def *const *const etrt_op_families[] = {
    etrt_ops_elementwise, etrt_ops_matmul,        etrt_ops_unary,     etrt_ops_cast,
    etrt_ops_reduce,      etrt_ops_softmax,       etrt_ops_cumsum,    etrt_ops_where,
    etrt_ops_loss,        etrt_ops_variadic,      etrt_ops_testing,   etrt_ops_conv,
    etrt_ops_pool,        etrt_ops_normalization, etrt_ops_reshape,   etrt_ops_layout,
    etrt_ops_shape,       etrt_ops_gather,        etrt_ops_selection, etrt_ops_resize,
    etrt_ops_recurrent,   etrt_ops_einsum,        etrt_ops_det,       etrt_ops_compress,
    etrt_ops_unpool,      etrt_ops_crop,          etrt_ops_col2im,    etrt_ops_vision,
    etrt_ops_text,        etrt_ops_nms,           etrt_ops_signal,    etrt_ops_random,
    etrt_ops_control,     etrt_ops_quantize,      etrt_ops_attention, etrt_ops_qlinear,
};

#define ETRT_OP_FAMILY_COUNT (sizeof etrt_op_families / sizeof etrt_op_families[0])
#define ETRT_OP_CAPACITY 512

static const etrt_op_def *etrt_op_table[ETRT_OP_CAPACITY];
static size_t etrt_op_table_count;

static void etrt_op_table_fill(void) {
  for (size_t f = 0; f < ETRT_OP_FAMILY_COUNT; ++f) {
    for (const etrt_op_def *const *d = etrt_op_families[f]; *d != NULL; ++d) {
      if (etrt_op_table_count < ETRT_OP_CAPACITY) etrt_op_table[etrt_op_table_count++] = *d;
    }
  }
}

#include <pthread.h>
static pthread_once_t etrt_op_table_once = PTHREAD_ONCE_INIT;

const etrt_op_def *const *etrt_op_all(size_t *count) {
  pthread_once(&etrt_op_table_once, etrt_op_table_fill);
  *count = etrt_op_table_count;
  return etrt_op_table;
}

const etrt_op_def *etrt_op_find(const char *op_type) {
  size_t count;
  const etrt_op_def *const *all = etrt_op_all(&count);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(all[i]->op_type, op_type) == 0) return all[i];
  }
  return NULL;
}

int etrt_op_supports_all(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  (void)inputs;
  return 1;
}

int etrt_op_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  return node->def != NULL && node->def->cuda_supports != NULL &&
         node->def->cuda_supports(node, inputs) != 0;
}

etrt_status etrt_op_check_layout(const etrt_node *node) {
  const etrt_attribute *a = etrt_node_attribute(node, "channels_last");
  if (a == NULL) return ETRT_OK;
  if (a->kind != ETRT_ATTRIBUTE_INT || (a->i != 0 && a->i != 1))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s node '%s': attribute channels_last must be the int 0 or 1", node->op_type,
                      node->name);
  if (a->i == 1 && (node->def == NULL || !node->def->channels_last))
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s node '%s': attribute channels_last: %s has no channels-last kernels",
                      node->op_type, node->name, node->op_type);
  return ETRT_OK;
}

void etrt_op_resolve(etrt_node *node) {
  node->def = etrt_op_find(node->op_type);
  node->run_cpu = node->def != NULL ? etrt_op_cpu_find(node->op_type) : NULL;
}
