/* etrt_bundled_compare (etrt/bundled.h): an output against a case's expected value,
 * floating point within a tolerance scaled by the expected values, integers exactly. */
#include <math.h>
#include <string.h>

#include "base/status.h"
#include "engine/ops/cpu/scalar.h"
#include "etrt/bundled.h"

static int etrt_bundled_is_float(etrt_dtype t) {
  return t == ETRT_DTYPE_FLOAT32 || t == ETRT_DTYPE_FLOAT64 || t == ETRT_DTYPE_FLOAT16 ||
         t == ETRT_DTYPE_BFLOAT16;
}

etrt_status etrt_bundled_compare(const etrt_bundled_value *expected, const etrt_tensor_view *actual,
                                 double rtol, double atol, double *worst, int *passed) {
  *worst = INFINITY;
  *passed = 0;
  if (expected->kind != ETRT_BUNDLED_TENSOR) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "comparing outputs: %s expected output is not supported (tensors are)",
                      expected->kind == ETRT_BUNDLED_INT    ? "an int"
                      : expected->kind == ETRT_BUNDLED_BOOL ? "a bool"
                                                            : "a double");
  }
  const etrt_tensor_view *e = &expected->tensor;
  if (actual->dtype != e->dtype || actual->rank != e->rank) return ETRT_OK;
  for (int32_t d = 0; d < e->rank; ++d) {
    if (actual->sizes[d] != e->sizes[d]) return ETRT_OK;
  }
  int64_t n = etrt_tensor_view_numel(e);
  int is_float = etrt_bundled_is_float(e->dtype);
  size_t elem = etrt_dtype_size(e->dtype);
  double scale = 0.0;
  for (int64_t i = 0; is_float && i < n; ++i) {
    double x = fabs(etrt_scalar_load(e->data, e->dtype, i));
    if (x > scale && isfinite(x)) scale = x;
  }
  double tolerance = atol + rtol * scale, largest = 0.0;
  int ok = 1;
  for (int64_t i = 0; i < n; ++i) {
    double x = etrt_scalar_load(e->data, e->dtype, i),
           y = etrt_scalar_load(actual->data, e->dtype, i);
    double diff;
    if (is_float) {
      if (isnan(x) || isnan(y)) {
        diff = isnan(x) && isnan(y) ? 0.0 : INFINITY;
      } else {
        diff = x == y ? 0.0 : fabs(x - y); /* equal infinities differ by 0, not NaN */
      }
      if (diff > tolerance) ok = 0;
    } else {
      const uint8_t *p = (const uint8_t *)e->data + (size_t)i * elem;
      const uint8_t *q = (const uint8_t *)actual->data + (size_t)i * elem;
      diff = fabs(x - y);
      if (memcmp(p, q, elem) != 0) {
        ok = 0;
        if (diff == 0.0) diff = 1.0; /* beyond double precision, still different */
      }
    }
    if (diff > largest) largest = diff;
  }
  *worst = largest;
  *passed = ok;
  return ETRT_OK;
}
