/* Operations that exist for tests. EtrtSmId records which streaming multiprocessor
 * ran each block of a kernel, so that the GPU tests can see green-context
 * confinement from inside the engine's own kernels: output[b] is the SM id of block
 * b (int32, `blocks` of them, attribute "blocks"). Its one input is ignored; it only
 * orders the node after the input's producer. On the CPU every "SM id" is 0. */
#include "engine/op.h"
#include "engine/ops/op_check.h"

#define ETRT_SM_ID_MAX_BLOCKS ((int64_t)1 << 20)

static etrt_status etrt_sm_id_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  if (node->num_inputs != 1 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 input and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  if (!etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 is required");
  int64_t blocks = etrt_node_attribute_int(node, "blocks", 0);
  if (blocks < 1 || blocks > ETRT_SM_ID_MAX_BLOCKS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute 'blocks' is %lld, must be in [1, %lld]", (long long)blocks,
                         (long long)ETRT_SM_ID_MAX_BLOCKS);
  outputs[0].dtype = ETRT_DTYPE_INT32;
  outputs[0].rank = 1;
  outputs[0].dims[0] = blocks;
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_sm_id = {
    .op_type = "EtrtSmId", .infer = etrt_sm_id_infer, .cuda_supports = etrt_op_supports_all};

const etrt_op_def *const etrt_ops_testing[] = {&etrt_op_def_sm_id, NULL};
