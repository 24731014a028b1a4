/* CPU kernel of Det (det.h). The CPU executor gives kernels no scratch memory:
 * the double copy of one matrix is allocated per run. */
#include <stdlib.h>

#include "engine/op.h"
#include "engine/ops/det.h"
#include "engine/ops/op_check.h"

static etrt_status etrt_cpu_det(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  int64_t n = x->dims[x->rank - 1], count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  double *a = malloc((size_t)(n > 0 ? n * n : 1) * sizeof *a);
  if (a == NULL) return etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (int64_t m = 0; m < count; ++m) {
    for (int64_t e = 0; e < n * n; ++e)
      a[e] = x->dtype == ETRT_DTYPE_FLOAT32 ? ((const float *)x->data)[m * n * n + e]
                                            : ((const double *)x->data)[m * n * n + e];
    double det = etrt_det_lu(a, n);
    if (x->dtype == ETRT_DTYPE_FLOAT32)
      ((float *)outputs[0].data)[m] = (float)det;
    else
      ((double *)outputs[0].data)[m] = det;
  }
  free(a);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_det[] = {
    {"Det", etrt_cpu_det},
    {NULL, NULL},
};
