/* conv_internal.h — shared by the CPU plugin's conv2d files (conv.c: validation, dispatch and
 * the f32/f16/bf16 path on the gemm engine; conv_f64.c: the f64 reference loops; pool.c:
 * max/avg pooling, which belongs to the same CONV2D family entry points). */
#ifndef PARITY_CPU_CONV_INTERNAL_H
#define PARITY_CPU_CONV_INTERNAL_H

#include <stdint.h>

#include "parity_plugin.h"

/* Geometry of one conv2d or pool2d op, NCHW. For pooling, o == c, groups == c and the
 * kernel comes from params.conv2d.kernel. */
typedef struct conv_geom_t {
  int64_t n, c, h, w;     /* input */
  int64_t o, kh, kw;      /* output channels, window */
  int64_t oh, ow;         /* output spatial size */
  int64_t groups, cg, og; /* groups, channels per group in and out */
  int64_t sh, sw, pt, pb, pl, pr, dh, dw;
} conv_geom_t;

/* f64 reference kernels (conv_f64.c). Operands as in parity_plugin.h; NULL = absent.
 * OK, or OUT_OF_MEMORY (reported) when the per-thread plane scratch cannot be allocated. */
int32_t conv_f64_forward(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                         const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y);
int32_t conv_f64_backward(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                          const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dx,
                          const parity_tensor_desc_t *dw, const parity_tensor_desc_t *dbias);

/* The weight gradient dw of a conv on the active path's dedicated kernel (conv_dw.c), bitwise
 * what the gemm engine gives: OK, OUT_OF_MEMORY (reported), or CPU_CONV_DW_DECLINED when the
 * path or the geometry has none (then the caller uses the gemm engine). f32, f16 or bf16. */
#define CPU_CONV_DW_DECLINED (-1)
int32_t cpu_conv_dw_f32(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                        const parity_tensor_desc_t *dw);
/* conv2d forward (dy, dx NULL; bias may be NULL) or, stride 1 only, the input gradient (x, y,
 * bias NULL) on the active path's direct kernel (conv_direct.c), bitwise what the gemm engine
 * gives; CPU_CONV_DW_DECLINED where the path or the geometry has none. */
int32_t cpu_conv_direct_f32(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w,
                            const parity_tensor_desc_t *bias, const parity_tensor_desc_t *y,
                            const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dx);
#ifdef CPU_ISA
#include "cpu_isa.h"
int32_t CPU_ISA_FN(cpu_conv_direct_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x,
                                        const parity_tensor_desc_t *w, const parity_tensor_desc_t *bias,
                                        const parity_tensor_desc_t *y, const parity_tensor_desc_t *dy,
                                        const parity_tensor_desc_t *dx);
int32_t CPU_ISA_FN(cpu_conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                                    const parity_tensor_desc_t *dw);
#endif

/* Pooling (pool.c); descriptors have passed supports() (the operand contract). */
int32_t cpu_pool2d_forward(const parity_op_desc_t *d);
int32_t cpu_pool2d_backward(const parity_op_desc_t *d);

#endif
