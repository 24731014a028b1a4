#include "engine/ops/layout_shape.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

/* Largest size or amount accepted from attributes and value inputs (2^40): sums and
 * small products of them stay far from overflow. */
#define ETRT_LAYOUT_MAX_DIM ((int64_t)1 << 40)

static void etrt_layout_view_identity(const etrt_tensor *input, etrt_layout_view *view) {
  view->rank = input->rank;
  memcpy(view->dims, input->dims, sizeof view->dims);
  etrt_shape_strides(input->rank, input->dims, view->strides);
  view->offset = 0;
}

/* A list of up to ETRT_MAX_RANK ints from value input `index` when the node has it,
 * else from attribute `attribute`; *given is 0 when neither exists. */
static etrt_status etrt_layout_ints(const etrt_node *node, const etrt_tensor *inputs,
                                    uint32_t index, const char *attribute, int64_t *out,
                                    int64_t *count, int *given) {
  *given = 1;
  if (etrt_op_has_input(node, inputs, index))
    return etrt_op_input_ints(node, inputs, index, attribute, out, ETRT_MAX_RANK, count);
  if (etrt_node_attribute(node, attribute) != NULL)
    return etrt_op_attribute_ints(node, attribute, out, ETRT_MAX_RANK, count);
  *given = 0;
  *count = 0;
  return ETRT_OK;
}

etrt_status etrt_slice_view(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_layout_view *view) {
  const etrt_tensor *x = &inputs[0];
  int64_t starts[ETRT_MAX_RANK], ends[ETRT_MAX_RANK], axes[ETRT_MAX_RANK], steps[ETRT_MAX_RANK];
  int64_t n_starts, n_ends, n_axes, n_steps;
  int given;
  ETRT_RETURN_IF_ERROR(etrt_layout_ints(node, inputs, 1, "starts", starts, &n_starts, &given));
  if (!given)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "starts and ends are required");
  ETRT_RETURN_IF_ERROR(etrt_layout_ints(node, inputs, 2, "ends", ends, &n_ends, &given));
  ETRT_RETURN_IF_ERROR(etrt_layout_ints(node, inputs, 3, "axes", axes, &n_axes, &given));
  if (!given) {
    n_axes = n_starts;
    for (int64_t i = 0; i < n_axes; ++i) axes[i] = i;
  }
  ETRT_RETURN_IF_ERROR(etrt_layout_ints(node, inputs, 4, "steps", steps, &n_steps, &given));
  if (!given) {
    n_steps = n_starts;
    for (int64_t i = 0; i < n_steps; ++i) steps[i] = 1;
  }
  if (n_ends != n_starts || n_axes != n_starts || n_steps != n_starts)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "starts, ends, axes and steps have %lld, %lld, %lld and %lld values; "
                         "they must agree",
                         (long long)n_starts, (long long)n_ends, (long long)n_axes,
                         (long long)n_steps);
  etrt_layout_view_identity(x, view);
  uint8_t seen[ETRT_MAX_RANK] = {0};
  for (int64_t i = 0; i < n_starts; ++i) {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axes value", axes[i], x->rank, &axis));
    if (seen[axis]++)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d is sliced twice", (int)axis);
    int64_t dim = x->dims[axis], step = steps[i], start = starts[i], end = ends[i];
    if (step == 0 || step == INT64_MIN)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "steps[%lld] is %lld", (long long)i,
                           (long long)step);
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count;
    if (step > 0) {
      start = start < 0 ? 0 : start > dim ? dim : start;
      end = end < 0 ? 0 : end > dim ? dim : end;
      count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
      end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
      count = start > end ? (start - end - 1) / -step + 1 : 0;
    }
    if (count > 0) view->offset += start * view->strides[axis];
    view->dims[axis] = count;
    /* with two or more elements |step| < dim, so the product cannot overflow */
    if (count > 1) view->strides[axis] *= step;
  }
  return ETRT_OK;
}

etrt_status etrt_transpose_perm(const etrt_node *node, int32_t rank, int32_t *perm) {
  int64_t values[ETRT_MAX_RANK], count;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "perm", values, ETRT_MAX_RANK, &count));
  if (etrt_node_attribute(node, "perm") == NULL) {
    for (int32_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    return ETRT_OK;
  }
  if (count != rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "perm has %lld values, the input has rank %d", (long long)count,
                         (int)rank);
  uint8_t seen[ETRT_MAX_RANK] = {0};
  for (int32_t i = 0; i < rank; ++i) {
    if (values[i] < 0 || values[i] >= rank || seen[values[i]]++)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "perm is not a permutation of 0..%d",
                           (int)rank - 1);
    perm[i] = (int32_t)values[i];
  }
  return ETRT_OK;
}

void etrt_transpose_view(const etrt_tensor *input, const int32_t *perm, etrt_layout_view *view) {
  int64_t strides[ETRT_MAX_RANK];
  etrt_shape_strides(input->rank, input->dims, strides);
  view->rank = input->rank;
  view->offset = 0;
  for (int32_t i = 0; i < input->rank; ++i) {
    view->dims[i] = input->dims[perm[i]];
    view->strides[i] = strides[perm[i]];
  }
}

etrt_status etrt_depth_space_view(const etrt_node *node, const etrt_tensor *input,
                                  int depth_to_space, etrt_layout_view *view, int64_t *out_dims) {
  int64_t b = etrt_node_attribute_int(node, "blocksize", 0);
  if (b < 1 || b > ((int64_t)1 << 20))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "blocksize %lld is out of range",
                         (long long)b);
  if (input->rank != 4)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must have rank 4, has %d",
                         (int)input->rank);
  int64_t n = input->dims[0], c = input->dims[1], h = input->dims[2], w = input->dims[3];
  view->rank = 6;
  view->offset = 0;
  if (depth_to_space) {
    const char *mode = etrt_node_attribute_string(node, "mode", "DCR");
    int crd = strcmp(mode, "CRD") == 0;
    if (!crd && strcmp(mode, "DCR") != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "mode must be DCR or CRD, is '%s'",
                           mode);
    if (c % (b * b) != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "%lld channels are not divisible by blocksize^2 (%lld)", (long long)c,
                           (long long)(b * b));
    int64_t cc = c / (b * b);
    int64_t dims[6] = {n, cc, h, b, w, b};
    /* DCR reads the input as [N, b, b, C', H, W], CRD as [N, C', b, b, H, W]. */
    int64_t s_c = crd ? b * b * h * w : h * w;
    int64_t s_b1 = crd ? b * h * w : b * cc * h * w;
    int64_t s_b2 = crd ? h * w : cc * h * w;
    int64_t strides[6] = {c * h * w, s_c, w, s_b1, 1, s_b2};
    memcpy(view->dims, dims, sizeof dims);
    memcpy(view->strides, strides, sizeof strides);
    out_dims[0] = n, out_dims[1] = cc, out_dims[2] = h * b, out_dims[3] = w * b;
  } else {
    if (h % b != 0 || w % b != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "height %lld and width %lld must be divisible by blocksize %lld",
                           (long long)h, (long long)w, (long long)b);
    int64_t dims[6] = {n, b, b, c, h / b, w / b};
    int64_t strides[6] = {c * h * w, w, 1, h * w, b * w, b};
    memcpy(view->dims, dims, sizeof dims);
    memcpy(view->strides, strides, sizeof strides);
    out_dims[0] = n, out_dims[1] = c * b * b, out_dims[2] = h / b, out_dims[3] = w / b;
  }
  return ETRT_OK;
}

etrt_status etrt_pad_mode_parse(const etrt_node *node, etrt_pad_mode *mode) {
  const char *m = etrt_node_attribute_string(node, "mode", "constant");
  if (strcmp(m, "constant") == 0)
    *mode = ETRT_PAD_CONSTANT;
  else if (strcmp(m, "reflect") == 0)
    *mode = ETRT_PAD_REFLECT;
  else if (strcmp(m, "edge") == 0)
    *mode = ETRT_PAD_EDGE;
  else if (strcmp(m, "wrap") == 0)
    *mode = ETRT_PAD_WRAP;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "unknown mode '%s'", m);
  return ETRT_OK;
}

int64_t etrt_pad_source(etrt_pad_mode mode, int64_t c, int64_t n) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case ETRT_PAD_EDGE:
      return c < 0 ? 0 : n - 1;
    case ETRT_PAD_REFLECT: {
      if (n == 1) return 0;
      int64_t period = 2 * (n - 1);
      int64_t m = ((c % period) + period) % period;
      return m < n ? m : period - m;
    }
    case ETRT_PAD_WRAP:
      return ((c % n) + n) % n;
    default:
      return -1;
  }
}

etrt_status etrt_pad_amounts(const etrt_node *node, const etrt_tensor *inputs, int64_t *begin,
                             int64_t *end) {
  const etrt_tensor *x = &inputs[0];
  int64_t pads[2 * ETRT_MAX_RANK], count, axes[ETRT_MAX_RANK], n_axes;
  if (etrt_op_has_input(node, inputs, 1)) {
    ETRT_RETURN_IF_ERROR(
        etrt_op_input_ints(node, inputs, 1, "pads", pads, 2 * ETRT_MAX_RANK, &count));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "pads", pads, 2 * ETRT_MAX_RANK, &count));
    if (etrt_node_attribute(node, "pads") == NULL)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "pads are required");
  }
  if (etrt_op_has_input(node, inputs, 3)) {
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 3, "axes", axes, ETRT_MAX_RANK, &n_axes));
  } else {
    n_axes = x->rank;
    for (int32_t i = 0; i < x->rank; ++i) axes[i] = i;
  }
  if (count != 2 * n_axes)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "pads has %lld values, need %lld (two per padded axis)", (long long)count,
                         (long long)(2 * n_axes));
  for (int32_t i = 0; i < x->rank; ++i) begin[i] = end[i] = 0;
  for (int64_t i = 0; i < n_axes; ++i) {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axes value", axes[i], x->rank, &axis));
    begin[axis] = pads[i];
    end[axis] = pads[i + n_axes];
    if (begin[axis] < -ETRT_LAYOUT_MAX_DIM || begin[axis] > ETRT_LAYOUT_MAX_DIM ||
        end[axis] < -ETRT_LAYOUT_MAX_DIM || end[axis] > ETRT_LAYOUT_MAX_DIM)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d: pads out of range",
                           (int)axis);
    if (x->dims[axis] + begin[axis] + end[axis] < 0 || x->dims[axis] + begin[axis] < 0 ||
        x->dims[axis] + end[axis] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %d: pads %lld and %lld crop more than its %lld elements",
                           (int)axis, (long long)begin[axis], (long long)end[axis],
                           (long long)x->dims[axis]);
  }
  return ETRT_OK;
}

etrt_status etrt_split_sizes(const etrt_node *node, const etrt_tensor *inputs, int32_t *axis,
                             int64_t *sizes) {
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, axis));
  int64_t dim = x->dims[*axis], parts = node->num_outputs, count = 0;
  if (etrt_op_has_input(node, inputs, 1)) {
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "split", sizes, parts, &count));
  } else if (etrt_node_attribute(node, "split") != NULL) {
    ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "split", sizes, parts, &count));
  } else {
    int64_t num_outputs = etrt_node_attribute_int(node, "num_outputs", 0);
    if (num_outputs != 0 && num_outputs != parts)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "num_outputs is %lld, the node has %lld outputs", (long long)num_outputs,
                           (long long)parts);
    /* Opset 18's num_outputs allows a smaller last part; before it parts are equal. */
    int64_t each = (dim + parts - 1) / parts;
    if (num_outputs == 0 && dim % parts != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %d of size %lld does not split into %lld equal parts", (int)*axis,
                           (long long)dim, (long long)parts);
    for (int64_t i = 0; i < parts; ++i) {
      int64_t left = dim - i * each;
      sizes[i] = left < 0 ? 0 : left < each ? left : each;
    }
    return ETRT_OK;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (sizes[i] < 0 || sizes[i] > dim)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "split[%lld] is %lld, outside [0, %lld]", (long long)i,
                           (long long)sizes[i], (long long)dim);
    total += sizes[i];
  }
  if (count != parts || total != dim)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "split has %lld sizes summing to %lld; need %lld summing to %lld",
                         (long long)count, (long long)total, (long long)parts, (long long)dim);
  return ETRT_OK;
}

etrt_status etrt_squeeze_axes(const etrt_node *node, const etrt_tensor *inputs, int32_t rank,
                              uint8_t *marks, int32_t *count) {
  int64_t axes[ETRT_MAX_RANK], n;
  int given;
  memset(marks, 0, ETRT_MAX_RANK);
  ETRT_RETURN_IF_ERROR(etrt_layout_ints(node, inputs, 1, "axes", axes, &n, &given));
  for (int64_t i = 0; i < n; ++i) {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axes value", axes[i], rank, &axis));
    if (marks[axis]++)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d is given twice", (int)axis);
  }
  *count = (int32_t)n;
  return ETRT_OK;
}
