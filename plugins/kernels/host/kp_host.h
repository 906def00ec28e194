/* kp_host.h — the host side the OpenCL and CUDA plugins share for their one kernel source: for each
 * family, which kernel runs, over which operands, and the parameter struct it takes
 * (kernel_params.h), packed from the geometry parity_support plans (geom_*.h). The plugins keep
 * what really differs: the driver calls, OpenCL's layouts (vector kernels on CPU devices,
 * local-memory tiles on GPUs) and tier hints, CUDA's block geometry and argument order.
 *
 * Plain C11 with no driver: built once (the static library parity_kernels_host) and linked by
 * both plugins. Kernel ids are KP_K_* (kp_kernels.h), the plugins' OCL_K_* and CU_K_*. */
#ifndef PARITY_KERNELS_KP_HOST_H
#define PARITY_KERNELS_KP_HOST_H

#include <stdint.h>

#include "kernel_params.h"
#include "kp_kernels.h"
#include "parity_plugin.h"
#include "parity_support/geom_reduce.h"

_Static_assert(KP_MAX_RANK == PARITY_MAX_RANK, "kernel_params.h: KP_MAX_RANK must be PARITY_MAX_RANK");

/* Compute classes: the kernels are built once per class (kernel_common.k.h); the plugins'
 * OCL_CLASS_* and CU_CLASS_* are these numbers. */
enum { KP_CLASS_F = 0, KP_CLASS_D, KP_CLASS_I, KP_CLASS_L, KP_CLASS_COUNT };
/* The class that computes `dtype` (F for f32/f16/bf16, I for i32/bool, ...). */
int kp_class_of(int32_t dtype);
/* "f32", "f64", "i32", "i64" (kp_names.c) */
const char *kp_class_name(int cls);
/* A kernel's name in both dialects ("ew_binary"), "?" past the list (kp_names.c). */
const char *kp_kernel_name(int kid);

/* ---- strided iteration (kp_iter.c) --------------------------------------------------------------
 * The kernels' iteration over `shape` with one stride list per operand (NULL strides: absent,
 * stride 0), or over tensor descriptors sharing the first present one's shape (NULL: absent):
 * parity_support/layout.h's layout, zero past rank and operands. Only for kernels whose elements
 * are independent. OpenCL swaps a short innermost axis with the longest; CUDA keeps the order. */
void kp_iter_cl_build(kp_iter_cl_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases);
void kp_iter_cl_from_tensors(kp_iter_cl_t *it, uint32_t nops, const parity_tensor_desc_t *const *t);
void kp_iter_cu_build(kp_iter_cu_t *it, uint32_t rank, const int64_t *shape, uint32_t nops,
                      const int64_t *const *strides, const int64_t *bases);
void kp_iter_cu_from_tensors(kp_iter_cu_t *it, uint32_t nops, const parity_tensor_desc_t *const *t);

/* ---- elementwise (kp_elementwise.c) ------------------------------------------------------------
 * One launch of unary, binary, compare, select or cast, forward or backward. The operands are
 * the iteration's and the kernel's pointer arguments, in the same order; op, dt and dt2 are what
 * the OpenCL iteration carries (kp_iter_cl_t) and CUDA passes as int arguments (kp_ew_ints). */
typedef struct kp_ew_t {
  int kid;     /* KP_K_ew_* */
  int cls;     /* KP_CLASS_* */
  int alpha;   /* the kernel takes the scalar alpha (leaky_relu's slope) after the ints */
  int32_t op;  /* the op; select: the element size; cast: 0 */
  int32_t dt;  /* the dtype; cast: the source dtype; select: 0 */
  int32_t dt2; /* cast: the destination dtype; else 0 */
  int64_t n;   /* items */
  uint32_t nops;
  const parity_tensor_desc_t *t[KP_MAX_OPS]; /* NULL: an absent gradient (pointer 0) */
} kp_ew_t;
/* The launch of d forward or backward; 0 when there is nothing to run. */
int kp_ew_plan(kp_ew_t *e, const parity_op_desc_t *d, int backward);
/* The int parameters after the iteration (dialect.h's ITER_PARAMS1/2): op, dt; cast: dt, dt2;
 * select: the element size. Returns their count. */
uint32_t kp_ew_ints(const kp_ew_t *e, int32_t out[2]);

/* ---- reductions (kp_reduce.c) ------------------------------------------------------------------- */
#define KP_RED_COUNT_TIES (-1) /* red_pass's op for max/min backward: ties per output into i64 */
/* Bytes of one partial value of a reduction over dtype dt (the class's accumulator). */
uint64_t kp_red_value_bytes(int32_t dt);
/* red_pass / red_final's struct from the plan (partials interleaved or in chunks), and the byte
 * offsets of the partials' values and indices when they start at byte part_off. */
void kp_red_pack(kp_red_t *r, int64_t off[2], const psup_reduce_plan_t *p, int32_t op, int32_t dt, int32_t odt,
                 int interleave, uint64_t part_off);

/* Backward: sum/mean broadcast dy back (red_bwd_sum over dy, dx); max/min count each output's
 * ties first (red_pass with KP_RED_COUNT_TIES over `ties` into i64 counts at the scratch's start,
 * partials after count_bytes) and share dy (red_bwd_extreme over x, y, dy, counts, dx). */
typedef struct kp_red_bwd_t {
  int kid;         /* KP_K_red_bwd_sum or KP_K_red_bwd_extreme */
  int64_t n;       /* items: x's elements */
  int64_t divisor; /* mean: the terms per output; sum: 0 */
  uint32_t nops;   /* the iteration's operands, over x's shape: */
  const int64_t *strides[5];
  int64_t bases[5];
  psup_reduce_plan_t ties; /* max/min: the tie count's plan (before its partials are cut) */
  uint64_t count_bytes;    /* max/min: scratch bytes of the counts */
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
} kp_red_bwd_t;
/* 0 when there is nothing to run. */
int kp_red_bwd_plan(kp_red_bwd_t *b, const parity_op_desc_t *d);

/* ---- softmax (kp_softmax.c) ------------------------------------------------------------------- */
/* Rows of softmax forward (operands x, y) or backward (y, dy, dx) into s and t; returns the
 * operand count, 0 when there is nothing to run. Kernel: smx_fwd or smx_bwd. */
uint32_t kp_smx_pack(kp_smx_t *s, const parity_tensor_desc_t *t[3], const parity_op_desc_t *d, int backward);

/* ---- matmul (kp_matmul.c) ---------------------------------------------------------------------- */
/* One product C = A B per batch (forward: c; backward: da = dc b^T, then db = a^T dc), with its
 * operands a, b, c; `launch` is called for each product that has outputs. */
typedef int32_t (*kp_mm_launch_t)(parity_plugin_device_t *dev, const kp_mm_t *p, const parity_tensor_desc_t *const *t);
int32_t kp_mm_run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward, kp_mm_launch_t launch);
/* Tiles of edge x edge outputs over every batch. */
uint64_t kp_mm_tiles(const kp_mm_t *p, int64_t edge);

/* ---- conv2d (kp_conv.c) -------------------------------------------------------------------------
 * conv2d and pooling take one window geometry, kp_cv_t (kernel_params.h). */
/* The geometry of d (parity_support/geom_conv.h), its op and dtype, every stride and base 0. */
void kp_cv_init(kp_cv_t *c, const parity_op_desc_t *d);
/* Forward: geometry and the strides of x, w, bias, y; returns y's elements (conv_fwd's items), 0
 * when there is nothing to run. */
int64_t kp_cv_pack_forward(kp_cv_t *c, const parity_op_desc_t *d);
/* Backward: geometry and every present operand's strides, and the items of conv_bwd_data,
 * conv_bwd_weight and conv_bwd_bias (items[0..2]; 0: it does not run). */
void kp_cv_pack_backward(kp_cv_t *c, int64_t items[3], const parity_op_desc_t *d);

/* ---- pooling (kp_pool.c) ------------------------------------------------------------------------ */
/* One launch of max/avg pooling: forward (pool_fwd over x, y, an item per output) or backward
 * (pool_bwd over x, y, dy, dx, an item per input element). */
typedef struct kp_pool_t {
  kp_cv_t c; /* the geometry and every operand's strides */
  int kid;   /* KP_K_pool_fwd or KP_K_pool_bwd */
  int64_t n; /* items */
  uint32_t nops;
  const parity_tensor_desc_t *t[4]; /* the kernel's pointer operands, in order */
} kp_pool_t;
/* 0 when there is nothing to run. */
int kp_pool_pack(kp_pool_t *p, const parity_op_desc_t *d, int backward);

#endif
