/* Shape logic shared by every operation: written once, used by the shape inference of
 * the op definitions, by the CPU kernels and (through the strides it computes) by the
 * CUDA kernels.
 *
 * Conventions: shapes are (rank, dims) pairs, row-major, rank 0..ETRT_MAX_RANK; a
 * scalar has rank 0 and one element. Broadcasting follows ONNX ("multidirectional",
 * the NumPy rule): shapes are aligned on the right, and along each axis the sizes are
 * equal or one of them is 1; a missing leading axis counts as 1. A size-0 axis
 * broadcasts with 1 (to 0) and with 0, never with another size.
 *
 * Typical use in an op's infer:
 *   ETRT_RETURN_IF_ERROR(etrt_shape_broadcast(node, 2, inputs, &out->rank, out->dims));
 * and in a CPU kernel:
 *   etrt_broadcast_iter it;
 *   etrt_broadcast_iter_init(&it, &outputs[0], 2, (const etrt_tensor *[]){&inputs[0], &inputs[1]});
 *   then for each row (it.numel / it.dims[it.rank-1] of them) an inner loop of
 *   it.dims[it.rank-1] elements with operand strides it.strides[k][it.rank-1],
 *   advancing with etrt_broadcast_cursor_next_row. */
#ifndef ETRT_ENGINE_OPS_SHAPE_UTIL_H
#define ETRT_ENGINE_OPS_SHAPE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/op.h"

/* Elements of a shape (1 for rank 0); -1 for a negative size, a bad rank or overflow. */
int64_t etrt_shape_numel(int32_t rank, const int64_t *dims);

/* True when both shapes have the same rank and sizes. */
int etrt_shape_equal(int32_t rank_a, const int64_t *a, int32_t rank_b, const int64_t *b);

/* An ONNX axis (negative counts from the end) in [-rank, rank) mapped into [0, rank);
 * refused naming the op and `what` ("axis", "axes[2]") otherwise. Ops that insert an
 * axis (Unsqueeze, Concat of new axes) pass the output rank. */
etrt_status etrt_shape_axis(const etrt_node *node, const char *what, int64_t axis, int32_t rank,
                            int32_t *out);
/* The same for the op's "axis" attribute, `fallback` where the node has none. */
etrt_status etrt_shape_axis_attribute(const etrt_node *node, int64_t fallback, int32_t rank,
                                      int32_t *out);

/* Multidirectional broadcast of `count` tensors' shapes (omitted optional inputs,
 * rank -1, are skipped) into (*rank, dims). Refuses incompatible sizes naming the op,
 * the inputs and the axis. */
etrt_status etrt_shape_broadcast(const etrt_node *node, uint32_t count, const etrt_tensor *tensors,
                                 int32_t *rank, int64_t *dims);

/* Unidirectional broadcast: true when `from` broadcasts to exactly `to` (Gemm's C). */
int etrt_shape_broadcastable_to(int32_t rank_from, const int64_t *from, int32_t rank_to,
                                const int64_t *to);

/* Row-major element strides of a contiguous tensor. */
void etrt_shape_strides(int32_t rank, const int64_t *dims, int64_t *strides);

/* Element strides of a contiguous tensor (rank, dims) read as if it had the output's
 * shape (out_rank >= rank, right-aligned): 0 along the axes where it broadcasts
 * (size 1, or missing), so output element (i_0 .. i_n) reads input element
 * sum(i_k * strides[k]). strides has out_rank entries. */
void etrt_shape_broadcast_strides(int32_t rank, const int64_t *dims, int32_t out_rank,
                                  const int64_t *out_dims, int64_t *strides);

/* An iteration plan for broadcast elementwise work: the output's dims with adjacent
 * axes merged wherever every operand stays contiguous across them (a same-shape Add
 * becomes one axis of numel elements, a bias Add two axes), and each operand's
 * element strides on those dims. The output is contiguous. CUDA kernels take dims and
 * strides as they are. */
#define ETRT_BROADCAST_MAX_OPERANDS 4
typedef struct etrt_broadcast_iter {
  int32_t rank; /* >= 1: a scalar output is one axis of size 1 */
  int64_t dims[ETRT_MAX_RANK];
  uint32_t count;
  int64_t strides[ETRT_BROADCAST_MAX_OPERANDS][ETRT_MAX_RANK];
  int64_t numel; /* output elements */
} etrt_broadcast_iter;

/* Refuses (internal error) more than ETRT_BROADCAST_MAX_OPERANDS operands or an
 * operand that does not broadcast to the output. */
etrt_status etrt_broadcast_iter_init(etrt_broadcast_iter *it, const etrt_tensor *output,
                                     uint32_t count, const etrt_tensor *const *operands);

/* How a GPU kernel may walk a plan. A thread can take `width` consecutive output
 * elements with one index computation and one wide access per operand when the
 * innermost axis is a multiple of `width` and each operand is either contiguous along
 * it (its base aligned to `width` of its elements, its other strides multiples of
 * `width`) or constant along it, and the output is aligned likewise. elem_sizes[k] is
 * operand k's element size. */
int etrt_broadcast_iter_runs_of(const etrt_broadcast_iter *it, int64_t width,
                                const void *const *bases, const size_t *elem_sizes,
                                const void *output, size_t output_elem_size);

/* True when the index arithmetic of a GPU kernel can be 32-bit (a 64-bit division
 * costs several times a 32-bit one): at most 2^30 output elements (a grid-stride loop
 * then cannot step past INT32_MAX) and every operand's farthest offset, either way
 * from its base, within INT32_MAX. */
int etrt_broadcast_iter_fits_int32(const etrt_broadcast_iter *it);

/* The plan of `count` operands read with element strides[k] over an output of (rank,
 * dims), size-1 axes dropped and contiguous neighbours merged: what
 * etrt_broadcast_iter_init ends with, also for strided views (a Transpose's input). */
void etrt_broadcast_iter_compact(etrt_broadcast_iter *it, int32_t rank, const int64_t *dims,
                                 uint32_t count, const int64_t (*strides)[ETRT_MAX_RANK]);

/* Walking the rows of an iteration plan (a row is the innermost axis). */
typedef struct etrt_broadcast_cursor {
  int64_t index[ETRT_MAX_RANK];
  int64_t offset[ETRT_BROADCAST_MAX_OPERANDS]; /* element offsets of the row's start */
} etrt_broadcast_cursor;

static inline void etrt_broadcast_cursor_init(etrt_broadcast_cursor *c) {
  for (int i = 0; i < ETRT_MAX_RANK; ++i) c->index[i] = 0;
  for (int i = 0; i < ETRT_BROADCAST_MAX_OPERANDS; ++i) c->offset[i] = 0;
}

static inline void etrt_broadcast_cursor_next_row(const etrt_broadcast_iter *it,
                                                  etrt_broadcast_cursor *c) {
  for (int32_t a = it->rank - 2; a >= 0; --a) {
    if (++c->index[a] < it->dims[a]) {
      for (uint32_t k = 0; k < it->count; ++k) c->offset[k] += it->strides[k][a];
      return;
    }
    for (uint32_t k = 0; k < it->count; ++k) c->offset[k] -= it->strides[k][a] * (it->dims[a] - 1);
    c->index[a] = 0;
  }
}

#endif
