/* Graph passes for inference, each in its own pass_<name>.c, run in order by
 * etrt_passes_run (passes.c). Every pass keeps the node array a topological order
 * (it rewrites nodes in place or marks them dead) and keeps each value's dtype and
 * bounds valid, so no second shape inference is needed. Each returns how many
 * rewrites it made. */
#ifndef ETRT_BUILDER_PASSES_H
#define ETRT_BUILDER_PASSES_H

#include <stddef.h>
#include <stdint.h>

#include "builder/ir.h"

/* Identity nodes (Dropout included: import makes it one) forward their input. */
etrt_status etrt_pass_drop_identity(etrt_ir_graph *graph, uint32_t *removed);

/* If whose condition is known when the plan is built (a constant, or computed on the
 * host from constants, fixed shapes and --shape-values) is replaced by the nodes of the
 * branch it takes, renamed "<if>/<name>", the values it reads from the enclosing graph
 * resolved to theirs; Ifs inside a branch taken are folded as well. Shape inference of
 * the nodes before them is run on the way (pass_if.c). */
etrt_status etrt_pass_fold_if(etrt_ir_graph *graph, uint32_t *folded);

/* Nodes whose inputs are all constants are run once with the engine's CPU kernels
 * and replaced by their results (Shape and Size of fixed-shape values too); a node
 * whose results exceed `limit_bytes` is left alone, as are nodes writing graph
 * outputs and random generators. */
etrt_status etrt_pass_fold_constants(etrt_ir_graph *graph, size_t limit_bytes, uint32_t *folded);

/* BatchNormalization (inference form) right after a Conv or Gemm whose weights are
 * constant, and which nothing else reads, is folded into that node's weights and
 * bias (`folded`); so is a Mul or Add of a scalar or per-channel constant right after
 * such a Conv (`scales_folded`). */
etrt_status etrt_pass_fold_batchnorm(etrt_ir_graph *graph, uint32_t *folded,
                                     uint32_t *scales_folded);

/* MatMul of a 2-D input by a 2-D weight followed by an Add of a constant bias becomes
 * one Gemm (bias fused into the GEMM's epilogue); with a float32 input of rank 3 or
 * more and a bias vector, one EtrtMatMulBias. */
etrt_status etrt_pass_fuse_gemm(etrt_ir_graph *graph, uint32_t *fused);

/* A float32 Conv whose output is read only by an Add of a non-constant residual of
 * the same shape and/or only by an activation becomes one EtrtFusedConv in the place
 * of the last node of the chain. The activations are those every executor of the plan
 * takes: with `any_activation` (a plan wholly on the CPU) Relu, Clip with constant
 * bounds, HardSwish, Sigmoid, or Sigmoid and Mul forming SiLU, and after the activation
 * a Mul and/or an Add of constant scalars (activation_scale, activation_shift);
 * otherwise Relu alone, which cuDNN's fused convolution applies. */
etrt_status etrt_pass_fuse_conv(etrt_ir_graph *graph, bool any_activation, uint32_t *fused);

/* The exact GELU spelt as Div, Erf, Add and two Muls (exports before opset 20), each
 * node read only by the next, becomes one Gelu in the place of the last Mul. */
etrt_status etrt_pass_fuse_gelu(etrt_ir_graph *graph, uint32_t *fused);

/* LayerNormalization (without Mean/InvStdDev outputs) of an Add of two values of the
 * sum's shape, with parameters available where the Add runs, becomes one
 * EtrtAddLayerNorm in the place of the Add; it also writes the sum when anything else
 * reads it (pass_addnorm.c). */
etrt_status etrt_pass_fuse_add_layer_norm(etrt_ir_graph *graph, uint32_t *fused);

/* Scaled dot-product attention spelt as Reshapes, Transposes, two MatMuls, a scale, an
 * optional additive mask and a Softmax becomes one EtrtAttention (pass_attention.c);
 * the build runs it for half-precision GPU plans, where its tensor-core kernel replaces
 * seven to ten launches and the copies of the heads. With `pack_qkv`, three separate
 * projections writing Q, K and V become one (etrt_pass_pack_qkv), counted in `packed`. */
etrt_status etrt_pass_fuse_attention(etrt_ir_graph *graph, bool pack_qkv, uint32_t *fused,
                                     uint32_t *packed);

/* For an attention being fused whose Xq, Xk and Xv (x, each read by readers[i] alone) are
 * written by three MatMuls, or three EtrtMatMulBias, of one input A by constant weights
 * [K, N_i] (and constant biases [N_i]) of one type: the first of them becomes one
 * projection of A by the weights side by side (and the biases end to end), writing a new
 * value [..., Nq + Nk + Nv] (*packed), and the other two are removed; offsets are then the
 * first column of Q, K and V in it. *packed is -1, and the graph unchanged, where they do
 * not qualify (pass_pack_qkv.c). */
etrt_status etrt_pass_pack_qkv(etrt_ir_graph *graph, const int32_t x[3], const int32_t readers[3],
                               int32_t *packed, int64_t offsets[3]);

/* HardSwish spelt as x * Clip(x + 3, 0, 6) / 6 (or * 1/6) or as x * HardSigmoid(x) (alpha
 * 1/6, beta 1/2), each node read only by the next, becomes one HardSwish in the place of
 * the last node. */
etrt_status etrt_pass_fuse_hardswish(etrt_ir_graph *graph, uint32_t *fused);

/* DequantizeLinear -> Conv / MatMul / Gemm -> QuantizeLinear with a constant 8-bit weight
 * (onnxruntime's QDQ format) becomes one QLinearConv / QLinearMatMul: the product runs
 * on the integers (pass_qdq.c says which groups qualify). */
etrt_status etrt_pass_fuse_qdq(etrt_ir_graph *graph, uint32_t *fused);

typedef struct etrt_pass_channels_last_stats {
  uint32_t nodes;      /* nodes given channels_last = 1 */
  uint32_t members;    /* every node of the regions, layout-blind ones included */
  uint32_t regions;    /* regions converted */
  uint32_t transposes; /* layout conversions added */
  uint32_t reshapes;   /* free exits (1x1 spatial values) added */
} etrt_pass_channels_last_stats;

/* For GPU plans, after the convolution fusion: maximal regions of 4-D activations around
 * convolutions stored channels-last (NHWC), converted once where entered and left
 * (pass_channels_last.c says which nodes and when). Adds nodes, placed so that the array
 * stays a topological order. */
etrt_status etrt_pass_channels_last(etrt_ir_graph *graph, etrt_pass_channels_last_stats *stats);

/* Nodes none of whose outputs reach a graph output are removed. */
etrt_status etrt_pass_eliminate_dead(etrt_ir_graph *graph, uint32_t *removed);

/* EtrtMatMulBias followed by a Relu or a tanh-form Gelu that nothing else reads becomes
 * one EtrtMatMulBias with that `activation` in its epilogue; with `approximate_gelu`, an
 * exact (erf) Gelu too, computed in the tanh form (pass_gemm_activation.c). */
etrt_status etrt_pass_fuse_gemm_activation(etrt_ir_graph *graph, bool approximate_gelu,
                                           uint32_t *fused);

typedef struct etrt_pass_stats {
  uint32_t identities, ifs, qdq, folded, batchnorms, scales, gemms, convs, gelus, hardswishes,
      add_norms, attentions, qkv_packs, gemm_activations, dead;
} etrt_pass_stats;

/* All of the above in order: identities, Ifs with known conditions, then shape inference
 * (etrt_lower_infer_shapes), QDQ groups (before folding turns their weights'
 * dequantization into float constants), folding (inside the bodies of Loop, Scan and If
 * too), batch norms and scales, GEMMs, GELUs, HardSwishes, dead code (convolutions are
 * fused by the build, which knows the target). */
etrt_status etrt_passes_run(etrt_ir_graph *graph, size_t fold_limit_bytes, etrt_pass_stats *stats);

#endif
