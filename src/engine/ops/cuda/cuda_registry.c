/* The CUDA kernels the engine has, by operator type. */
#include <string.h>

#include "engine/op.h"

#ifdef ETRT_HAVE_CUDA
#include "engine/ops/cuda/cuda_ops.h"
#include "engine/ops/reduce.h"
#include "engine/ops/unary.h"

/* {op type, launcher, supports (NULL: every case), workspace (NULL: none)} */
static const etrt_op_cuda_def etrt_op_cuda_table[] = {
    /* matrix products */
    {"MatMul", etrt_cuda_matmul, etrt_cuda_matmul_supports, etrt_cuda_matmul_workspace},
    {"Gemm", etrt_cuda_gemm, etrt_cuda_matmul_supports, etrt_cuda_matmul_workspace},
    {"Conv", etrt_cuda_conv, etrt_cuda_conv_supports, etrt_cuda_conv_workspace},
    {"ConvTranspose", etrt_cuda_conv_transpose, etrt_cuda_conv_supports, NULL},
    /* broadcast elementwise */
    {"Add", etrt_cuda_add, etrt_cuda_binary_supports, NULL},
    {"Sub", etrt_cuda_sub, etrt_cuda_binary_supports, NULL},
    {"Mul", etrt_cuda_mul, etrt_cuda_binary_supports, NULL},
    {"Div", etrt_cuda_div, etrt_cuda_binary_supports, NULL},
    {"Pow", etrt_cuda_pow, etrt_cuda_pow_supports, NULL},
    {"Mod", etrt_cuda_mod, etrt_cuda_binary_supports, NULL},
    {"PRelu", etrt_cuda_prelu, etrt_cuda_binary_float_supports, NULL},
    {"BitShift", etrt_cuda_bit_shift, etrt_cuda_bit_shift_supports, NULL},
    {"BitwiseAnd", etrt_cuda_bitwise_and, etrt_cuda_binary_integer_supports, NULL},
    {"BitwiseOr", etrt_cuda_bitwise_or, etrt_cuda_binary_integer_supports, NULL},
    {"BitwiseXor", etrt_cuda_bitwise_xor, etrt_cuda_binary_integer_supports, NULL},
    {"And", etrt_cuda_and, etrt_cuda_logical_supports, NULL},
    {"Or", etrt_cuda_or, etrt_cuda_logical_supports, NULL},
    {"Xor", etrt_cuda_xor, etrt_cuda_logical_supports, NULL},
    {"Equal", etrt_cuda_equal, etrt_cuda_binary_supports, NULL},
    {"Less", etrt_cuda_less, etrt_cuda_binary_supports, NULL},
    {"Greater", etrt_cuda_greater, etrt_cuda_binary_supports, NULL},
    {"LessOrEqual", etrt_cuda_less_equal, etrt_cuda_binary_supports, NULL},
    {"GreaterOrEqual", etrt_cuda_greater_equal, etrt_cuda_binary_supports, NULL},
    {"Max", etrt_cuda_max, etrt_cuda_binary_supports, NULL},
    {"Min", etrt_cuda_min, etrt_cuda_binary_supports, NULL},
    {"Sum", etrt_cuda_sum, etrt_cuda_binary_supports, NULL},
    {"Mean", etrt_cuda_mean, etrt_cuda_binary_float_supports, NULL},
    {"Where", etrt_cuda_where, etrt_cuda_where_supports, NULL},
    /* one-input elementwise */
    {"Relu", etrt_cuda_relu, etrt_cuda_relu_supports, NULL},
    {"Clip", etrt_cuda_clip, etrt_cuda_clip_supports, NULL},
#define ETRT_CUDA_UNARY_ROW(kind, name, types, to_bool) \
  {name, etrt_cuda_unary, etrt_cuda_unary_supports, NULL},
    ETRT_UNARY_OPS(ETRT_CUDA_UNARY_ROW)
#undef ETRT_CUDA_UNARY_ROW
    {"Cast", etrt_cuda_cast, NULL, NULL},
    {"CastLike", etrt_cuda_cast, NULL, NULL},
    /* row-wise */
    {"Softmax", etrt_cuda_softmax, etrt_cuda_float_supports, NULL},
    {"LogSoftmax", etrt_cuda_softmax, etrt_cuda_float_supports, NULL},
    {"Hardmax", etrt_cuda_softmax, etrt_cuda_float_supports, NULL},
    {"BatchNormalization", etrt_cuda_batch_norm, etrt_cuda_norm_supports, NULL},
    {"InstanceNormalization", etrt_cuda_instance_norm, etrt_cuda_norm_supports, NULL},
    {"LayerNormalization", etrt_cuda_layer_norm, etrt_cuda_norm_supports, NULL},
    {"GroupNormalization", etrt_cuda_group_norm, etrt_cuda_norm_supports, NULL},
    {"LpNormalization", etrt_cuda_lp_norm, etrt_cuda_norm_supports, NULL},
#define ETRT_CUDA_REDUCE_ROW(kind, name, ints) {name, etrt_cuda_reduce, etrt_cuda_reduce_supports, NULL},
    ETRT_REDUCE_OPS(ETRT_CUDA_REDUCE_ROW)
#undef ETRT_CUDA_REDUCE_ROW
    {"CumSum", etrt_cuda_cumsum, NULL, NULL},
    {"ArgMax", etrt_cuda_arg_extreme, etrt_cuda_selection_supports, NULL},
    {"ArgMin", etrt_cuda_arg_extreme, etrt_cuda_selection_supports, NULL},
    {"TopK", etrt_cuda_top_k, etrt_cuda_selection_supports, NULL},
    {"NegativeLogLikelihoodLoss", etrt_cuda_loss, etrt_cuda_loss_supports, NULL},
    {"SoftmaxCrossEntropyLoss", etrt_cuda_loss, etrt_cuda_loss_supports, NULL},
    /* windows */
    {"MaxPool", etrt_cuda_pool, etrt_cuda_float_supports, NULL},
    {"AveragePool", etrt_cuda_pool, etrt_cuda_float_supports, NULL},
    {"LpPool", etrt_cuda_pool, etrt_cuda_float_supports, NULL},
    {"GlobalMaxPool", etrt_cuda_global_pool, etrt_cuda_float_supports, NULL},
    {"GlobalAveragePool", etrt_cuda_global_pool, etrt_cuda_float_supports, NULL},
    {"GlobalLpPool", etrt_cuda_global_pool, etrt_cuda_float_supports, NULL},
    /* data movement */
    {"Reshape", etrt_cuda_copy, NULL, NULL},
    {"Flatten", etrt_cuda_copy, NULL, NULL},
    {"Squeeze", etrt_cuda_copy, NULL, NULL},
    {"Unsqueeze", etrt_cuda_copy, NULL, NULL},
    {"Transpose", etrt_cuda_transpose, NULL, NULL},
    {"Slice", etrt_cuda_slice, NULL, NULL},
    {"DepthToSpace", etrt_cuda_depth_to_space, NULL, NULL},
    {"SpaceToDepth", etrt_cuda_space_to_depth, NULL, NULL},
    {"Expand", etrt_cuda_expand, NULL, NULL},
    {"Tile", etrt_cuda_tile, NULL, NULL},
    {"Concat", etrt_cuda_concat, NULL, NULL},
    {"Split", etrt_cuda_split, NULL, NULL},
    {"Gather", etrt_cuda_gather, etrt_cuda_gather_supports, NULL},
    {"Shape", etrt_cuda_shape, NULL, NULL},
    {"Size", etrt_cuda_size, NULL, NULL},
    {"ConstantOfShape", etrt_cuda_constant_of_shape, NULL, NULL},
    {"Range", etrt_cuda_range, NULL, NULL},
    {"Pad", etrt_cuda_pad, NULL, etrt_cuda_pad_workspace},
    {"Trilu", etrt_cuda_trilu, NULL, NULL},
    {"GatherElements", etrt_cuda_gather_elements, etrt_cuda_gather_elements_supports, NULL},
    {"GatherND", etrt_cuda_gather_nd, etrt_cuda_gather_elements_supports, NULL},
    {"ScatterElements", etrt_cuda_scatter_elements, etrt_cuda_scatter_elements_supports, NULL},
    {"Scatter", etrt_cuda_scatter_elements, etrt_cuda_scatter_elements_supports, NULL},
    {"OneHot", etrt_cuda_one_hot, etrt_cuda_one_hot_supports, NULL},
    /* resampling */
    {"Resize", etrt_cuda_resize, etrt_cuda_resize_supports, etrt_cuda_resize_workspace},
    {"Upsample", etrt_cuda_resize, etrt_cuda_resize_supports, etrt_cuda_resize_workspace},
    /* tests */
    {"EtrtSmId", etrt_cuda_sm_id, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

const etrt_op_cuda_def *etrt_op_cuda_find(const char *op_type) {
  for (const etrt_op_cuda_def *d = etrt_op_cuda_table; d->op_type != NULL; ++d) {
    if (strcmp(d->op_type, op_type) == 0) return d;
  }
  return NULL;
}
#else
const etrt_op_cuda_def *etrt_op_cuda_find(const char *op_type) {
  (void)op_type;
  return NULL;
}
#endif
