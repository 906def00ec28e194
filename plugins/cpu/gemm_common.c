/* gemm_common.c — the parts of the gemm engine (gemm.h) that are not compiled per path: the
 * operand-axis helper, the thread count, and the call into the active path's engine. */
#include <string.h>

#include "cpu_kernels.h"
#include "gemm.h"

gemm_axis_t gemm_axis_linear(int64_t dim, int64_t stride) {
  gemm_axis_t ax;
  memset(&ax, 0, sizeof ax);
  ax.nd = 1;
  ax.dim[0] = dim;
  ax.stride[0] = stride;
  return ax;
}

int32_t cpu_gemm_f32(const gemm_problem_t *p, const char *what) { return cpu_kernels()->gemm_f32(p, what); }
