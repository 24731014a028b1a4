/* p-norm distances between rows: _cdist_forward.out(x1, x2, float p, int? compute_mode,
 * *, out) gives out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p with the batch
 * dims broadcast; _pdist_forward.out(self, float p, *, out) gives the distances of
 * every pair i < j of rows of self [N, M], in row-major order of the pairs. p = 0
 * counts the differing elements, p = inf takes the largest difference. Computed in
 * double from every float dtype at the positions the strides give (any dim order),
 * directly for every compute_mode (ATen may use a matrix product for p = 2, which
 * differs only by rounding). */
#include <math.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

static int etrt_portable_is_cdist(const etrt_kernel_call *call) { return call->def->num_args == 6; }

static etrt_status etrt_portable_distance_prepare(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const int cdist = etrt_portable_is_cdist(call);
  const etrt_runtime_tensor *a = NULL, *b = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &a));
  b = a;
  if (cdist) ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &b));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, cdist ? 4 : 2, &out));
  if (!etrt_portable_dtype_is_float(a->dtype) || b->dtype != a->dtype || out->dtype != a->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the inputs (%s, %s) and the out tensor (%s) must share one floating-point "
                      "dtype",
                      etrt_dtype_name(a->dtype), etrt_dtype_name(b->dtype),
                      etrt_dtype_name(out->dtype));
  if (cdist ? (a->rank < 2 || b->rank < 2) : a->rank != 2)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      cdist ? "x1 (rank %d) and x2 (rank %d) must have rank 2 or more"
                            : "self must have rank 2, not %d",
                      a->rank, b->rank);
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, cdist ? 2 : 1, &call->scalars[0]));
  if (!(call->scalars[0] >= 0))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %d (p) is %g; p >= 0 is needed",
                      cdist ? 2 : 1, call->scalars[0]);
  return ETRT_OK;
}

/* ||a_row - b_row||_p over m elements at strides sa and sb. */
static double etrt_portable_pnorm(const etrt_runtime_tensor *t, int64_t a, int64_t sa, int64_t b,
                                  int64_t sb, int64_t m, double p, const etrt_runtime_tensor *u) {
  const size_t ti = etrt_dtype_size(t->dtype), ui = etrt_dtype_size(u->dtype);
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    double d = fabs(
        etrt_portable_scalar_load(t->dtype, (const uint8_t *)t->data + (size_t)(a + k * sa) * ti) -
        etrt_portable_scalar_load(u->dtype, (const uint8_t *)u->data + (size_t)(b + k * sb) * ui));
    if (p == 0)
      acc += d != 0;
    else if (isinf(p))
      acc = d > acc || isnan(d) ? d : acc;
    else if (p == 1)
      acc += d;
    else if (p == 2)
      acc += d * d;
    else
      acc += pow(d, p);
  }
  if (p == 0 || p == 1 || isinf(p)) return acc;
  return p == 2 ? sqrt(acc) : pow(acc, 1 / p);
}

static etrt_status etrt_portable_distance_run(etrt_kernel_call *call, etrt_value *values,
                                              etrt_run_context *context) {
  (void)context;
  const int cdist = etrt_portable_is_cdist(call);
  const etrt_runtime_tensor *a = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *b = cdist ? &values[call->args[1]].u.tensor : a;
  etrt_runtime_tensor *out = &values[call->args[cdist ? 4 : 2]].u.tensor;
  const double p = call->scalars[0];
  const int64_t m = a->sizes[a->rank - 1];
  int64_t as[ETRT_MAX_RANK], bs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK];
  etrt_portable_strides(a, as);
  etrt_portable_strides(b, bs);
  const size_t yi = etrt_dtype_size(out->dtype);
  if (!cdist) {
    const int64_t n = a->sizes[0], pairs = n * (n - 1) / 2;
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, 1, &pairs));
    etrt_portable_strides(out, ys);
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j, ++at)
        etrt_portable_scalar_store(
            etrt_portable_pnorm(a, i * as[0], as[1], j * as[0], as[1], m, p, a), out->dtype,
            (uint8_t *)out->data + (size_t)(at * ys[0]) * yi);
    return ETRT_OK;
  }
  if (b->sizes[b->rank - 1] != m)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): x1 rows have %lld elements, x2 rows %lld",
                      call->def->name, call->instruction, (long long)m,
                      (long long)b->sizes[b->rank - 1]);
  /* The broadcast batch dims, aligned on the last; their strides per input (0 where
   * an input has size 1 or lacks the dim). */
  const int32_t batch = (a->rank > b->rank ? a->rank : b->rank) - 2;
  int64_t dims[ETRT_MAX_RANK], sa[ETRT_MAX_RANK] = {0}, sb[ETRT_MAX_RANK] = {0};
  for (int32_t d = 0; d < batch; ++d) {
    const int32_t da = d - (batch - (a->rank - 2)), db = d - (batch - (b->rank - 2));
    const int64_t na = da >= 0 ? a->sizes[da] : 1, nb = db >= 0 ? b->sizes[db] : 1;
    if (na != nb && na != 1 && nb != 1)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): batch dim %d (%lld and %lld) does not broadcast",
                        call->def->name, call->instruction, d, (long long)na, (long long)nb);
    dims[d] = na > nb ? na : nb;
    sa[d] = na == 1 ? 0 : as[da];
    sb[d] = nb == 1 ? 0 : bs[db];
  }
  const int64_t rows = a->sizes[a->rank - 2], cols = b->sizes[b->rank - 2];
  dims[batch] = rows;
  dims[batch + 1] = cols;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, batch + 2, dims));
  etrt_portable_strides(out, ys);
  int64_t index[ETRT_MAX_RANK] = {0}, count = 1;
  for (int32_t d = 0; d < batch; ++d) count *= dims[d];
  for (int64_t e = 0; e < count; ++e) {
    int64_t oa = 0, ob = 0, oy = 0;
    for (int32_t d = 0; d < batch; ++d) {
      oa += index[d] * sa[d];
      ob += index[d] * sb[d];
      oy += index[d] * ys[d];
    }
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        etrt_portable_scalar_store(
            etrt_portable_pnorm(a, oa + i * as[a->rank - 2], as[a->rank - 1],
                                ob + j * bs[b->rank - 2], bs[b->rank - 1], m, p, b),
            out->dtype,
            (uint8_t *)out->data + (size_t)(oy + i * ys[batch] + j * ys[batch + 1]) * yi);
    for (int32_t d = batch - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def cdist = {"aten::_cdist_forward.out", 6, etrt_portable_distance_prepare,
                                      etrt_portable_distance_run};
static const etrt_kernel_def pdist = {"aten::_pdist_forward.out", 4, etrt_portable_distance_prepare,
                                      etrt_portable_distance_run};

const etrt_kernel_def *const etrt_portable_distance[] = {&cdist, &pdist, NULL};
