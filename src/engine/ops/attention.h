/* EtrtAttention: scaled dot-product attention of a transformer block in one node,
 *
 *   out[b, i, h*D + d] = sum_j softmax_j(scale * q(b,h,i) . k(b,h,j) + mask[b,h,i,j]) v(b,h,j)[d]
 *
 * where q(b,h,i) is Q[b, i, q_offset + h*D .. + D) and likewise for K and V: the heads are
 * read where the projections wrote them ([B, S, H*D], or column ranges of one packed
 * [B, S, 3*H*D] tensor given as Q, K and V alike), so the Reshapes and Transposes around an
 * exported attention and the Split of a packed projection disappear
 * (builder/pass_attention.c). Inputs Q [B, Sq, *], K and V [B, Sk, *], optional additive
 * mask broadcastable to [B, H, Sq, Sk]; attributes num_heads, head_size, scale and
 * offsets (three ints, default 0). Output [B, Sq, H*D] of Q's type. The softmax and the
 * sums are float32 for every type. One geometry for every executor (cpu/attention.c,
 * cuda/attention.cu). */
#ifndef ETRT_ENGINE_OPS_ATTENTION_H
#define ETRT_ENGINE_OPS_ATTENTION_H

#include <stdint.h>

#include "engine/op.h"

/* Largest head the kernels take (the CUDA warp kernel keeps a row of it per lane). */
#define ETRT_ATTENTION_MAX_HEAD 256
/* Heads the CUDA tensor-core kernel takes (float16, bfloat16): multiples of 16 up to
 * this; the builder fuses only those (pass_attention.c). */
#define ETRT_ATTENTION_TC_MAX_HEAD 128

typedef struct etrt_attention_params {
  int64_t heads, head_size;
  float scale;
  int64_t offsets[3]; /* first column of the heads in Q, K and V */
} etrt_attention_params;

/* Where every element lives, for a node's inputs: element (b, h, i, d) of Q is at
 * q + b * q_batch + i * q_row + h * D + d (q already past its offset), likewise K and V;
 * the mask element (b, h, i, j) at b * mask_stride[0] + h * mask_stride[1] +
 * i * mask_stride[2] + j * mask_stride[3] (0 along broadcast axes). */
typedef struct etrt_attention_geometry {
  int64_t batch, heads, head_size, q_len, kv_len;
  int64_t q_batch, q_row, k_batch, k_row, v_batch, v_row;
  int64_t offsets[3];
  int has_mask;
  int64_t mask_stride[4];
  float scale;
} etrt_attention_geometry;

etrt_status etrt_attention_geometry_of(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_attention_geometry *g);

#endif
