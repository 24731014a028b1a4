#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "conformance.h"

/* Cases whose expected outputs were computed at a precision the operation cannot
 * promise in float32, with the tolerance that they need. Kept short: each entry
 * says why. Everything else uses ONNX's defaults (rtol 1e-3, atol 1e-7). */
static const struct {
  const char *case_name;
  etrt_conf_tolerance tol;
} etrt_conf_tolerance_overrides[] = {
    /* The data of ONNX 1.12 (Debian's libonnx-testdata) truncates float32 to
     * bfloat16; the operator rounds to nearest even, as the specification says and
     * later ONNX releases' regenerated data do. They differ by at most one unit
     * in bfloat16's last place: 2^-7 relative. */
    {"test_cast_FLOAT_to_BFLOAT16", {1.0 / 128, 0, 0, 0}},
    {"test_castlike_FLOAT_to_BFLOAT16", {1.0 / 128, 0, 0, 0}},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", {1.0 / 128, 0, 0, 0}},
    /* numpy.random drew the expected outputs; etrt's generators draw other streams
     * (src/engine/ops/random.h), so only the values' kind can agree. */
    {"test_bernoulli", {0, 0, 1, 0}},
    {"test_bernoulli_double", {0, 0, 1, 0}},
    {"test_bernoulli_seed", {0, 0, 1, 0}},
    {"test_bernoulli_expanded", {0, 0, 1, 0}},
    {"test_bernoulli_double_expanded", {0, 0, 1, 0}},
    {"test_bernoulli_seed_expanded", {0, 0, 1, 0}},
    /* Training Dropout with a ratio above 0: numpy.random drew which elements stay. */
    {"test_training_dropout", {1e-3, 1e-7, 1, 1}},
    {"test_training_dropout_default", {1e-3, 1e-7, 1, 1}},
    {"test_training_dropout_default_mask", {1e-3, 1e-7, 1, 1}},
    {"test_training_dropout_mask", {1e-3, 1e-7, 1, 1}},
    {NULL, {0, 0, 0, 0}},
};

etrt_conf_tolerance etrt_conf_tolerance_for(const char *case_name, etrt_dtype dtype) {
  etrt_conf_tolerance tol = {1e-3, 1e-7, 0, 0};
  for (size_t i = 0; etrt_conf_tolerance_overrides[i].case_name != NULL; ++i)
    if (strcmp(etrt_conf_tolerance_overrides[i].case_name, case_name) == 0)
      return etrt_conf_tolerance_overrides[i].tol;
  (void)dtype;
  return tol;
}

static int etrt_conf_is_float(etrt_dtype d) {
  return d == ETRT_DTYPE_FLOAT16 || d == ETRT_DTYPE_FLOAT32 || d == ETRT_DTYPE_FLOAT64 ||
         d == ETRT_DTYPE_BFLOAT16;
}

static double etrt_conf_float_at(const void *data, etrt_dtype d, size_t i) {
  switch (d) {
    case ETRT_DTYPE_FLOAT16:
      return etrt_half_to_float(((const uint16_t *)data)[i]);
    case ETRT_DTYPE_BFLOAT16:
      return etrt_bfloat16_to_float(((const uint16_t *)data)[i]);
    case ETRT_DTYPE_FLOAT32:
      return ((const float *)data)[i];
    default:
      return ((const double *)data)[i];
  }
}

/* Integers compare as they are; unsigned 64-bit values are kept apart from signed
 * ones by comparing the bits, since both sides have the same type. */
static int64_t etrt_conf_int_at(const void *data, etrt_dtype d, size_t i) {
  switch (d) {
    case ETRT_DTYPE_UINT8:
      return ((const uint8_t *)data)[i];
    case ETRT_DTYPE_INT8:
      return ((const int8_t *)data)[i];
    case ETRT_DTYPE_INT16:
      return ((const int16_t *)data)[i];
    case ETRT_DTYPE_UINT16:
      return ((const uint16_t *)data)[i];
    case ETRT_DTYPE_INT32:
      return ((const int32_t *)data)[i];
    case ETRT_DTYPE_UINT32:
      return ((const uint32_t *)data)[i];
    case ETRT_DTYPE_BOOL:
      return ((const uint8_t *)data)[i] != 0;
    default: {
      int64_t v;
      memcpy(&v, (const uint8_t *)data + i * 8, sizeof v);
      return v;
    }
  }
}

static void etrt_conf_format_index(const etrt_tensor_view *v, size_t flat, char *buf, size_t size) {
  size_t used = 0;
  int64_t idx[ETRT_MAX_RANK];
  for (int32_t a = v->rank - 1; a >= 0; --a) {
    int64_t n = v->sizes[a] > 0 ? v->sizes[a] : 1;
    idx[a] = (int64_t)(flat % (size_t)n);
    flat /= (size_t)n;
  }
  used += (size_t)snprintf(buf, size, "[");
  for (int32_t a = 0; a < v->rank && used < size; ++a)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, a ? "," : "", idx[a]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

static void etrt_conf_format_shape(const etrt_tensor_view *v, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "(");
  for (int32_t a = 0; a < v->rank && used < size; ++a)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, a ? "," : "", v->sizes[a]);
  if (used < size) snprintf(buf + used, size - used, ")");
}

/* The dtype, shape and presence of data that every comparison needs first; sets
 * *count to the elements. */
static int etrt_conf_same_kind(const etrt_tensor_view *actual, const etrt_tensor_view *expected,
                               int64_t *count, char *detail, size_t size) {
  if (actual->dtype != expected->dtype) {
    snprintf(detail, size, "dtype %s, expected %s", etrt_dtype_name(actual->dtype),
             etrt_dtype_name(expected->dtype));
    return 0;
  }
  int same_shape = actual->rank == expected->rank;
  for (int32_t a = 0; same_shape && a < actual->rank; ++a)
    same_shape = actual->sizes[a] == expected->sizes[a];
  if (!same_shape) {
    char got[160], want[160];
    etrt_conf_format_shape(actual, got, sizeof got);
    etrt_conf_format_shape(expected, want, sizeof want);
    snprintf(detail, size, "shape %s, expected %s", got, want);
    return 0;
  }
  *count = etrt_tensor_view_numel(expected);
  if (*count < 0) {
    snprintf(detail, size, "expected tensor has a bad shape");
    return 0;
  }
  if (*count > 0 && (actual->data == NULL || expected->data == NULL)) {
    snprintf(detail, size, "no data");
    return 0;
  }
  return 1;
}

int etrt_conf_compare_dropout(const etrt_tensor_view *actual, const etrt_tensor_view *expected,
                              const etrt_tensor_view *data, const etrt_tensor_view *ratio,
                              char *detail, size_t size) {
  int64_t count = 0;
  if (!etrt_conf_same_kind(actual, expected, &count, detail, size)) return 0;
  if (!etrt_conf_is_float(actual->dtype) || data->dtype != actual->dtype ||
      etrt_tensor_view_numel(data) != count || !etrt_conf_is_float(ratio->dtype) ||
      etrt_tensor_view_numel(ratio) != 1) {
    snprintf(detail, size, "not a Dropout's output, data and ratio");
    return 0;
  }
  double scale = 1.0 / (1.0 - etrt_conf_float_at(ratio->data, ratio->dtype, 0));
  for (size_t i = 0; i < (size_t)count; ++i) {
    double a = etrt_conf_float_at(actual->data, actual->dtype, i);
    double kept = etrt_conf_float_at(data->data, data->dtype, i) * scale;
    if (a == 0.0 || fabs(a - kept) <= 1e-7 + 1e-3 * fabs(kept)) continue;
    char index[160];
    etrt_conf_format_index(expected, i, index, sizeof index);
    snprintf(detail, size, "value %.9g at %s is neither 0 nor the kept value %.9g", a, index, kept);
    return 0;
  }
  return 1;
}

int etrt_conf_compare(const etrt_tensor_view *actual, const etrt_tensor_view *expected_in,
                      etrt_conf_tolerance tol, char *detail, size_t size) {
  etrt_tensor_view expected = *expected_in;
  /* The test data stores bfloat16 (and some float16) tensors as uint16 bits. */
  if (expected.dtype == ETRT_DTYPE_UINT16 &&
      (actual->dtype == ETRT_DTYPE_BFLOAT16 || actual->dtype == ETRT_DTYPE_FLOAT16))
    expected.dtype = actual->dtype;
  int64_t count = 0;
  if (!etrt_conf_same_kind(actual, &expected, &count, detail, size)) return 0;
  int is_float = etrt_conf_is_float(expected.dtype);
  if (tol.drawn) {
    for (size_t i = 0; i < (size_t)count; ++i) {
      double a = is_float ? etrt_conf_float_at(actual->data, actual->dtype, i)
                          : (double)etrt_conf_int_at(actual->data, actual->dtype, i);
      int found = 0;
      for (size_t j = 0; j < (size_t)count && !found; ++j)
        found = a == (is_float ? etrt_conf_float_at(expected.data, expected.dtype, j)
                               : (double)etrt_conf_int_at(expected.data, expected.dtype, j));
      if (!found) {
        char index[160];
        etrt_conf_format_index(&expected, i, index, sizeof index);
        snprintf(detail, size, "drawn value %.9g at %s is none of the expected values", a, index);
        return 0;
      }
    }
    return 1;
  }
  size_t off = 0, worst = 0;
  double worst_excess = -1.0;
  for (size_t i = 0; i < (size_t)count; ++i) {
    double excess;
    if (is_float) {
      double a = etrt_conf_float_at(actual->data, actual->dtype, i);
      double e = etrt_conf_float_at(expected.data, expected.dtype, i);
      if (isnan(e) || isnan(a)) {
        if (isnan(e) && isnan(a)) continue;
        excess = INFINITY;
      } else if (isinf(e) || isinf(a)) {
        if (a == e) continue;
        excess = INFINITY;
      } else {
        excess = fabs(a - e) - (tol.atol + tol.rtol * fabs(e));
        if (excess <= 0) continue;
      }
    } else {
      int64_t a = etrt_conf_int_at(actual->data, actual->dtype, i);
      int64_t e = etrt_conf_int_at(expected.data, expected.dtype, i);
      if (a == e) continue;
      excess = 1.0;
    }
    ++off;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (off == 0) return 1;
  char index[160];
  etrt_conf_format_index(&expected, worst, index, sizeof index);
  if (is_float) {
    double a = etrt_conf_float_at(actual->data, actual->dtype, worst);
    double e = etrt_conf_float_at(expected.data, expected.dtype, worst);
    snprintf(detail, size,
             "%zu of %" PRId64
             " elements off; worst at %s: got %.9g, expected %.9g "
             "(rtol %g, atol %g)",
             off, count, index, a, e, tol.rtol, tol.atol);
  } else {
    snprintf(detail, size,
             "%zu of %" PRId64 " elements off; first worst at %s: got %" PRId64
             ", expected %" PRId64,
             off, count, index, etrt_conf_int_at(actual->data, actual->dtype, worst),
             etrt_conf_int_at(expected.data, expected.dtype, worst));
  }
  return 0;
}
