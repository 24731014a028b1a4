/* Matrix products: mm, bmm, addmm, linear, all on the engine's one GEMM. linear
 * multiplies by its weight transposed once (at prepare for a constant weight), so it
 * takes the same contiguous-row path as addmm. */
#include "runtime/portable/portable.h"

#define E ETRT_PORTABLE_ENGINE

static const etrt_portable_spec mm = E("aten::mm.out", 4, "MatMul", 0, 1, -1, -1, 2, -1, -1, 0);
static const etrt_portable_spec bmm = E("aten::bmm.out", 4, "MatMul", 0, 1, -1, -1, 2, -1, -1, 0);
/* addmm.out(self, mat1, mat2, *, beta, alpha, out): Gemm(A=mat1, B=mat2, C=self). */
static const etrt_portable_spec addmm = E("aten::addmm.out", 7, "Gemm", 1, 2, 0, -1, 5, 4, 3, 0);
/* linear.out(input, weight, bias?, *, out): Gemm(input, weight^T, bias). */
static const etrt_portable_spec linear =
    E("aten::linear.out", 5, "Gemm", 0, 1, 2, 2, 3, -1, -1, ETRT_PORTABLE_LINEAR);

const etrt_kernel_def *const etrt_portable_linear[] = {
    &mm.def, &bmm.def, &addmm.def, &linear.def, NULL,
};
