#include "engine/op.h"
const etrt_op_def *const etrt_ops_matmul[] = {NULL};
