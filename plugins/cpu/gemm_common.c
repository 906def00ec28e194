/* gemm_common.c — the parts of the gemm engine (gemm.h) that are not compiled per path: the
 * operand-axis helper, the packing-buffer cache, and the call into the active path's engine. */
#include <stdatomic.h>
#include <stdlib.h>
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

int32_t cpu_conv_dw_f32(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                        const parity_tensor_desc_t *dw) {
  return cpu_kernels()->conv_dw_f32(g, x, dy, dw);
}

/* One block kept between calls, at most GEMM_KEEP_BYTES; its first 64 bytes hold its usable
 * size. A fresh allocation of megabytes is fresh pages the OS zeroes on every call (a fifth of
 * a 1024^3 matmul's time). */
#define GEMM_KEEP_BYTES ((size_t)32 << 20)
static _Atomic(unsigned char *) ws_kept;

static size_t align64(size_t n) { return (n + 63u) & ~(size_t)63u; }

unsigned char *gemm_ws_take(size_t bytes) {
  unsigned char *m = atomic_exchange(&ws_kept, NULL);
  if (m && *(size_t *)m >= bytes) return m + 64;
  free(m);
  m = aligned_alloc(64, 64 + align64(bytes));
  if (!m) return NULL;
  *(size_t *)m = align64(bytes);
  return m + 64;
}

void gemm_ws_give(unsigned char *p) {
  unsigned char *m = p - 64;
  if (*(size_t *)m > GEMM_KEEP_BYTES) {
    free(m);
    return;
  }
  free(atomic_exchange(&ws_kept, m));
}

void gemm_ws_release(void) { free(atomic_exchange(&ws_kept, NULL)); }

int32_t cpu_conv_direct_f32(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                            const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y,
                            const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dx) {
  return cpu_kernels()->conv_direct_f32(g, x, w, bias, y, dy, dx);
}
