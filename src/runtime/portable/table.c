/* The portable operators by name: every family's table. */
#include <string.h>

#include "runtime/portable/portable.h"

static const etrt_kernel_def *const *const etrt_portable_families[] = {
    etrt_portable_elementwise, etrt_portable_unary,       etrt_portable_compare,
    etrt_portable_linear,      etrt_portable_reduce,      etrt_portable_softmax,
    etrt_portable_shape,       etrt_portable_conv,        etrt_portable_norm,
    etrt_portable_concat,      etrt_portable_fill,        etrt_portable_prim,
    etrt_portable_pointwise,   etrt_portable_statistics,  etrt_portable_resample,
    etrt_portable_index,       etrt_portable_grid_sample, etrt_portable_distance,
    etrt_portable_resize_aa,   etrt_portable_random,      NULL,
};

const etrt_kernel_def *etrt_portable_find(const char *full) {
  for (const etrt_kernel_def *const *const *f = etrt_portable_families; *f != NULL; ++f) {
    for (const etrt_kernel_def *const *k = *f; *k != NULL; ++k) {
      if (strcmp(full, (*k)->name) == 0) return *k;
    }
  }
  return NULL;
}
