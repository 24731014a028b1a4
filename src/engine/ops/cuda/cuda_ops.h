/* The CUDA kernel launchers, defined in the .cu files of this folder and listed in
 * cuda_registry.c. Each has the etrt_op_cuda_fn signature (op.h). */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_OPS_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_OPS_H

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ETRT_CUDA_RUN(fn)                                                               \
  etrt_status fn(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs, \
                 const etrt_cuda_launch *launch)
#define ETRT_CUDA_SUPPORTS(fn) int fn(const etrt_node *node, const etrt_tensor *inputs)
#define ETRT_CUDA_WORKSPACE(fn) \
  size_t fn(const etrt_node *node, const etrt_tensor *inputs, const etrt_tensor *outputs)

/* conv.cu */
ETRT_CUDA_RUN(etrt_cuda_conv);
ETRT_CUDA_SUPPORTS(etrt_cuda_conv_supports);
ETRT_CUDA_WORKSPACE(etrt_cuda_conv_workspace);
ETRT_CUDA_RUN(etrt_cuda_conv_transpose);

/* layout.cu */
ETRT_CUDA_RUN(etrt_cuda_copy);
ETRT_CUDA_RUN(etrt_cuda_transpose);
ETRT_CUDA_RUN(etrt_cuda_slice);
ETRT_CUDA_RUN(etrt_cuda_depth_to_space);
ETRT_CUDA_RUN(etrt_cuda_space_to_depth);
ETRT_CUDA_RUN(etrt_cuda_expand);
ETRT_CUDA_RUN(etrt_cuda_tile);
ETRT_CUDA_RUN(etrt_cuda_concat);
ETRT_CUDA_RUN(etrt_cuda_split);
ETRT_CUDA_RUN(etrt_cuda_gather);
ETRT_CUDA_RUN(etrt_cuda_cast);
ETRT_CUDA_RUN(etrt_cuda_shape);
ETRT_CUDA_RUN(etrt_cuda_size);
ETRT_CUDA_RUN(etrt_cuda_constant_of_shape);
ETRT_CUDA_RUN(etrt_cuda_range);
ETRT_CUDA_RUN(etrt_cuda_pad);
ETRT_CUDA_WORKSPACE(etrt_cuda_pad_workspace);
ETRT_CUDA_RUN(etrt_cuda_trilu);
ETRT_CUDA_SUPPORTS(etrt_cuda_gather_supports);

/* gather.cu */
ETRT_CUDA_RUN(etrt_cuda_gather_elements);
ETRT_CUDA_RUN(etrt_cuda_gather_nd);
ETRT_CUDA_RUN(etrt_cuda_scatter_elements);
ETRT_CUDA_RUN(etrt_cuda_one_hot);
/* int32/int64 indices (GatherND too) */
ETRT_CUDA_SUPPORTS(etrt_cuda_gather_elements_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_scatter_elements_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_one_hot_supports);

/* resize.cu */
ETRT_CUDA_RUN(etrt_cuda_resize);
ETRT_CUDA_SUPPORTS(etrt_cuda_resize_supports);
ETRT_CUDA_WORKSPACE(etrt_cuda_resize_workspace);

/* selection.cu */
ETRT_CUDA_RUN(etrt_cuda_arg_extreme);
ETRT_CUDA_RUN(etrt_cuda_top_k);
ETRT_CUDA_SUPPORTS(etrt_cuda_selection_supports);

/* cumsum.cu */
ETRT_CUDA_RUN(etrt_cuda_cumsum);

/* loss.cu */
ETRT_CUDA_RUN(etrt_cuda_loss);
ETRT_CUDA_SUPPORTS(etrt_cuda_loss_supports);

/* gemm.cu: the cuBLASLt handle of an execution context (etrt_cuda_launch.cublaslt). */
etrt_status etrt_cuda_blas_create(void **handle);
void etrt_cuda_blas_destroy(void *handle);

/* matmul.cu */
ETRT_CUDA_RUN(etrt_cuda_matmul);
ETRT_CUDA_RUN(etrt_cuda_gemm);
ETRT_CUDA_SUPPORTS(etrt_cuda_matmul_supports);
ETRT_CUDA_WORKSPACE(etrt_cuda_matmul_workspace);

/* binary.cu */
ETRT_CUDA_RUN(etrt_cuda_add);
ETRT_CUDA_RUN(etrt_cuda_sub);
ETRT_CUDA_RUN(etrt_cuda_mul);
ETRT_CUDA_RUN(etrt_cuda_div);
ETRT_CUDA_RUN(etrt_cuda_pow);
ETRT_CUDA_RUN(etrt_cuda_mod);
ETRT_CUDA_RUN(etrt_cuda_prelu);
ETRT_CUDA_RUN(etrt_cuda_bitwise_and);
ETRT_CUDA_RUN(etrt_cuda_bitwise_or);
ETRT_CUDA_RUN(etrt_cuda_bitwise_xor);
ETRT_CUDA_RUN(etrt_cuda_and);
ETRT_CUDA_RUN(etrt_cuda_or);
ETRT_CUDA_RUN(etrt_cuda_xor);
ETRT_CUDA_RUN(etrt_cuda_equal);
ETRT_CUDA_RUN(etrt_cuda_less);
ETRT_CUDA_RUN(etrt_cuda_greater);
ETRT_CUDA_RUN(etrt_cuda_less_equal);
ETRT_CUDA_RUN(etrt_cuda_greater_equal);
ETRT_CUDA_RUN(etrt_cuda_max);
ETRT_CUDA_RUN(etrt_cuda_min);
ETRT_CUDA_RUN(etrt_cuda_sum);
ETRT_CUDA_RUN(etrt_cuda_mean);
ETRT_CUDA_RUN(etrt_cuda_where);
ETRT_CUDA_RUN(etrt_cuda_bit_shift);
ETRT_CUDA_SUPPORTS(etrt_cuda_pow_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_bit_shift_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_binary_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_binary_float_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_binary_integer_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_logical_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_where_supports);

/* normalization.cu */
ETRT_CUDA_RUN(etrt_cuda_batch_norm);
ETRT_CUDA_RUN(etrt_cuda_instance_norm);
ETRT_CUDA_RUN(etrt_cuda_layer_norm);
ETRT_CUDA_RUN(etrt_cuda_group_norm);
ETRT_CUDA_RUN(etrt_cuda_lp_norm);
ETRT_CUDA_SUPPORTS(etrt_cuda_norm_supports);

/* pool.cu */
ETRT_CUDA_RUN(etrt_cuda_pool);
ETRT_CUDA_RUN(etrt_cuda_global_pool);

/* reduce.cu */
ETRT_CUDA_RUN(etrt_cuda_reduce);
ETRT_CUDA_SUPPORTS(etrt_cuda_reduce_supports);

/* softmax.cu */
ETRT_CUDA_RUN(etrt_cuda_softmax);
/* Input 0 is float16, bfloat16, float32 or float64. */
ETRT_CUDA_SUPPORTS(etrt_cuda_float_supports);

/* unary.cu */
ETRT_CUDA_RUN(etrt_cuda_unary);
ETRT_CUDA_RUN(etrt_cuda_relu);
ETRT_CUDA_RUN(etrt_cuda_clip);
ETRT_CUDA_SUPPORTS(etrt_cuda_unary_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_relu_supports);
ETRT_CUDA_SUPPORTS(etrt_cuda_clip_supports);

/* testing.cu */
ETRT_CUDA_RUN(etrt_cuda_sm_id);

#ifdef __cplusplus
}
#endif
#endif
