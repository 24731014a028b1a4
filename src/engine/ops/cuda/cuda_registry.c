/* The CUDA kernels the engine has, by operator type. */
#include <string.h>

#include "engine/op.h"

#ifdef ETRT_HAVE_CUDA
static const etrt_op_cuda_def etrt_op_cuda_table[] = {
    {NULL, NULL, NULL},
};

const etrt_op_cuda_def *etrt_op_cuda_find(const char *op_type) {
  for (const etrt_op_cuda_def *d = etrt_op_cuda_table; d->op_type != NULL; ++d) {
    if (strcmp(d->op_type, op_type) == 0) return d;
  }
  return NULL;
}
#else
const etrt_op_cuda_def *etrt_op_cuda_find(const char *op_type) {
  (void)op_type;
  return NULL;
}
#endif
