/* kernel_params.h — the parameter structs the OpenCL and CUDA plugins pass to their kernels, defined
 * once for the host C code of both plugins and both kernel dialects (dialect.h).
 *
 * Every field is a 64-bit or a 32-bit integer (KP_I64, KP_I32: int64_t and int32_t on the host,
 * long and int in OpenCL C and in CUDA, where long is 64-bit: LP64, checked in dialect.h), 64-bit
 * fields first, so no compiler inserts padding; the offset of every field and the size are checked
 * below in each compile that sees this header: the host's (C11), CUDA's (nvcc and the emulation's
 * host C++) and OpenCL's (where the driver's compiler is clang, which has __builtin_offsetof and
 * _Static_assert: PoCL, and most others; another compiler skips the checks).
 *
 * The one difference between the plugins is the strided iteration: the OpenCL kernels read their
 * item count, items per work-item, op and dtypes from it (kp_iter_cl_t, 528 bytes, one kernel
 * argument), the CUDA kernels take the count, op and dtypes as arguments of their own after it
 * (kp_iter_cu_t, 512 bytes: the same first 496 bytes, then rank). dialect.h's ITER_PARAMS* spell
 * both parameter lists from one. Plain structs, passed by value. */
#ifndef PARITY_KERNELS_KERNEL_PARAMS_H
#define PARITY_KERNELS_KERNEL_PARAMS_H

#if defined(KD_OPENCL) || defined(KD_CUDA) /* a kernel compile: dialect.h came first */
#define KP_I64 long
#define KP_I32 int
#if KD_OPENCL && !defined(__clang__)
#define KP_CHECKS 0
#else
#define KP_CHECKS 1
#define KP_OFFSETOF(t, f) __builtin_offsetof(t, f)
#endif
#if KD_CUDA
#define KP_ASSERT(c, m) static_assert(c, m)
#else
#define KP_ASSERT(c, m) _Static_assert(c, m)
#endif
#else /* the host */
#include <stddef.h>
#include <stdint.h>
#define KP_I64 int64_t
#define KP_I32 int32_t
#define KP_CHECKS 1
#define KP_OFFSETOF(t, f) offsetof(t, f)
#ifdef __cplusplus
#define KP_ASSERT(c, m) static_assert(c, m)
#else
#define KP_ASSERT(c, m) _Static_assert(c, m)
#endif
#endif

#define KP_MAX_RANK 8 /* PARITY_MAX_RANK (checked by the plugins' host code) */
#define KP_MAX_OPS 6  /* operands of one strided iteration */

/* ---- fixed work-group shapes (KERNEL_WG kernels): one value for the kernels and the hosts' launches */
#define KP_MM_TILE 16   /* mm_fwd: work-groups of KP_MM_TILE x KP_MM_TILE (matmul.k.h's MM_TILE) */
#define KP_MM_RB_CL 2   /* mm_fwd's register block, outputs per work-item along each axis: OpenCL 2 x 2, */
#define KP_MM_RB_CU 1   /* CUDA 1 (a work-group owns KP_MM_TILE * MM_RB outputs along each axis) */
#define KP_SMX_WG 64    /* smx_row_fwd, smx_row_bwd (OpenCL): work-groups of KP_SMX_WG (softmax.k.h's SMX_WG) */
#define KP_CONV_TILE 16 /* conv_tile_* (OpenCL): work-groups of KP_CONV_TILE x KP_CONV_TILE (conv_tiled.k.h's CT) */

/* ---- strided iteration (elementwise, the reductions' backward) ------------------------------
 * A shared iteration shape and one stride list per operand (elements), from the host's layout
 * (parity_support/layout.h): axes of size 1 dropped, mergeable axes merged; rank >= 1. */
#define KP_ITER_HEAD                       \
  KP_I64 shape[KP_MAX_RANK];               \
  KP_I64 strides[KP_MAX_OPS][KP_MAX_RANK]; \
  KP_I64 base[KP_MAX_OPS];

/* OpenCL: the launch's own values inside */
typedef struct kp_iter_cl_t {
  KP_ITER_HEAD
  KP_I64 n, per; /* items, and items per work-item (FOR_RUNS), chosen by the launch */
  KP_I32 rank;
  KP_I32 op, dt, dt2; /* the kernel's op and dtypes (ew_cast: source and destination; ew_select: element size in op) */
} kp_iter_cl_t;

/* CUDA: count, op and dtypes are kernel arguments of their own */
typedef struct kp_iter_cu_t {
  KP_ITER_HEAD
  KP_I32 rank;
  KP_I32 pad[3];
} kp_iter_cu_t;

/* ---- reductions (red_pass, red_final) --------------------------------------------------------- */
typedef struct kp_red_t {
  KP_I64 oshape[KP_MAX_RANK];     /* kept axes */
  KP_I64 ostride[3][KP_MAX_RANK]; /* x, y and the reference tensor on the kept axes */
  KP_I64 kshape[KP_MAX_RANK];     /* reduced axes */
  KP_I64 kstride[KP_MAX_RANK];    /* x on the reduced axes */
  KP_I64 base[3];                 /* x, y, reference (elements) */
  KP_I64 M, K, chunk, parts;
  KP_I32 orank, krank, op, dt;
  KP_I32 interleave; /* 1: partial c takes k = c, c + parts, ...; 0: a contiguous chunk (CUDA: always 1) */
  KP_I32 odt;        /* output dtype (bool sums may count into i64) */
} kp_red_t;

/* ---- softmax ------------------------------------------------------------------------------------ */
typedef struct kp_smx_t {
  KP_I64 oshape[KP_MAX_RANK];     /* every axis but the softmax axis */
  KP_I64 ostride[3][KP_MAX_RANK]; /* forward: x, y; backward: y, dy, dx */
  KP_I64 base[3];
  KP_I64 rstride[3]; /* strides along the softmax axis */
  KP_I64 M, R;
  KP_I32 orank, op, dt, pad;
} kp_smx_t;

/* ---- matmul ------------------------------------------------------------------------------------- */
typedef struct kp_mm_t {
  KP_I64 bshape[KP_MAX_RANK];     /* batch axes */
  KP_I64 bstride[3][KP_MAX_RANK]; /* a, b, c on the batch axes */
  KP_I64 base[3];
  KP_I64 M, N, K, batch;
  KP_I64 am, ak, bk, bn, cm, cn;
  KP_I32 brank, dt, pad[2];
} kp_mm_t;

/* ---- conv2d and pooling: one window geometry ---------------------------------------------------
 * conv.k.h's and pool.k.h's kernels take the same struct, packed from the same plan
 * (parity_support/geom_conv.h; kp_cv_init): pooling leaves w's, dw's and the bias's fields 0,
 * conv2d dy's own (gys, gyb) and include_pad. */
typedef struct kp_cv_t {
  KP_I64 xs[4], ws[4], ys[4];    /* x [N,C,H,W], w [O,C/g,KH,KW], y or dy [N,O,OH,OW] */
  KP_I64 gxs[4], gws[4], gys[4]; /* dx, dw, and dy for pooling backward (y holds the output) */
  KP_I64 bs, gbs;                /* bias, dbias */
  KP_I64 xb, wb, yb, bb, gxb, gwb, gbb, gyb;
  KP_I64 N, C, H, W, O, KH, KW, OH, OW;
  KP_I32 sh, sw, pt, pl, dh, dw, groups, dt;
  KP_I32 include_pad, op, pad[2];
} kp_cv_t;

/* ---- the layout, field by field ------------------------------------------------------------------ */
#if KP_CHECKS
#define KP_AT(t, f, off) KP_ASSERT(KP_OFFSETOF(t, f) == (off), #t "." #f " must be at byte " #off);
#define KP_SIZE(t, n) KP_ASSERT(sizeof(t) == (n), #t " must be " #n " bytes");
#define KP_ITER_HEAD_AT(t) KP_AT(t, shape, 0) KP_AT(t, strides, 64) KP_AT(t, base, 448)
// clang-format off
KP_ITER_HEAD_AT(kp_iter_cl_t)
KP_AT(kp_iter_cl_t, n, 496) KP_AT(kp_iter_cl_t, per, 504) KP_AT(kp_iter_cl_t, rank, 512)
KP_AT(kp_iter_cl_t, op, 516) KP_AT(kp_iter_cl_t, dt, 520) KP_AT(kp_iter_cl_t, dt2, 524)
KP_SIZE(kp_iter_cl_t, 528)
KP_ITER_HEAD_AT(kp_iter_cu_t)
KP_AT(kp_iter_cu_t, rank, 496) KP_AT(kp_iter_cu_t, pad, 500)
KP_SIZE(kp_iter_cu_t, 512)

KP_AT(kp_red_t, oshape, 0) KP_AT(kp_red_t, ostride, 64) KP_AT(kp_red_t, kshape, 256)
KP_AT(kp_red_t, kstride, 320) KP_AT(kp_red_t, base, 384) KP_AT(kp_red_t, M, 408) KP_AT(kp_red_t, K, 416)
KP_AT(kp_red_t, chunk, 424) KP_AT(kp_red_t, parts, 432) KP_AT(kp_red_t, orank, 440)
KP_AT(kp_red_t, krank, 444) KP_AT(kp_red_t, op, 448) KP_AT(kp_red_t, dt, 452)
KP_AT(kp_red_t, interleave, 456) KP_AT(kp_red_t, odt, 460)
KP_SIZE(kp_red_t, 464)

KP_AT(kp_smx_t, oshape, 0) KP_AT(kp_smx_t, ostride, 64) KP_AT(kp_smx_t, base, 256)
KP_AT(kp_smx_t, rstride, 280) KP_AT(kp_smx_t, M, 304) KP_AT(kp_smx_t, R, 312) KP_AT(kp_smx_t, orank, 320)
KP_AT(kp_smx_t, op, 324) KP_AT(kp_smx_t, dt, 328) KP_AT(kp_smx_t, pad, 332)
KP_SIZE(kp_smx_t, 336)

KP_AT(kp_mm_t, bshape, 0) KP_AT(kp_mm_t, bstride, 64) KP_AT(kp_mm_t, base, 256) KP_AT(kp_mm_t, M, 280)
KP_AT(kp_mm_t, N, 288) KP_AT(kp_mm_t, K, 296) KP_AT(kp_mm_t, batch, 304) KP_AT(kp_mm_t, am, 312)
KP_AT(kp_mm_t, ak, 320) KP_AT(kp_mm_t, bk, 328) KP_AT(kp_mm_t, bn, 336) KP_AT(kp_mm_t, cm, 344)
KP_AT(kp_mm_t, cn, 352) KP_AT(kp_mm_t, brank, 360) KP_AT(kp_mm_t, dt, 364) KP_AT(kp_mm_t, pad, 368)
KP_SIZE(kp_mm_t, 376)

KP_AT(kp_cv_t, xs, 0) KP_AT(kp_cv_t, ws, 32) KP_AT(kp_cv_t, ys, 64) KP_AT(kp_cv_t, gxs, 96)
KP_AT(kp_cv_t, gws, 128) KP_AT(kp_cv_t, gys, 160) KP_AT(kp_cv_t, bs, 192) KP_AT(kp_cv_t, gbs, 200)
KP_AT(kp_cv_t, xb, 208) KP_AT(kp_cv_t, wb, 216) KP_AT(kp_cv_t, yb, 224) KP_AT(kp_cv_t, bb, 232)
KP_AT(kp_cv_t, gxb, 240) KP_AT(kp_cv_t, gwb, 248) KP_AT(kp_cv_t, gbb, 256) KP_AT(kp_cv_t, gyb, 264)
KP_AT(kp_cv_t, N, 272) KP_AT(kp_cv_t, C, 280) KP_AT(kp_cv_t, H, 288) KP_AT(kp_cv_t, W, 296)
KP_AT(kp_cv_t, O, 304) KP_AT(kp_cv_t, KH, 312) KP_AT(kp_cv_t, KW, 320) KP_AT(kp_cv_t, OH, 328)
KP_AT(kp_cv_t, OW, 336) KP_AT(kp_cv_t, sh, 344) KP_AT(kp_cv_t, sw, 348) KP_AT(kp_cv_t, pt, 352)
KP_AT(kp_cv_t, pl, 356) KP_AT(kp_cv_t, dh, 360) KP_AT(kp_cv_t, dw, 364) KP_AT(kp_cv_t, groups, 368)
KP_AT(kp_cv_t, dt, 372) KP_AT(kp_cv_t, include_pad, 376) KP_AT(kp_cv_t, op, 380) KP_AT(kp_cv_t, pad, 384)
KP_SIZE(kp_cv_t, 392)
// clang-format on
#undef KP_ITER_HEAD_AT
#undef KP_SIZE
#undef KP_AT
#endif

#endif
