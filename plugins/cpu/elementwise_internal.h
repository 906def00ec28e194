/* elementwise_internal.h — private to the CPU elementwise family (elementwise*.c).
 *
 * The family is split along its operand layouts: elementwise.c validates descriptors and walks
 * strided operands (in parallel for large tensors); elementwise_unary.c, elementwise_binary.c
 * and elementwise_logic.c (compare, where, cast) provide row kernels, one per (op, dtype),
 * chosen by a switch once per call. A row kernel processes one run of elements along the
 * innermost (collapsed) axis, so there is no per-element dispatch.
 *
 * Contract of every row kernel: p[k] is the address of the run's first element of operand k
 * (NULL for an absent backward output), s[k] its stride in elements. An output may alias an
 * input exactly (in place) but must not overlap it partially. */
#ifndef PARITY_CPU_ELEMENTWISE_INTERNAL_H
#define PARITY_CPU_ELEMENTWISE_INTERNAL_H

#include <stdint.h>

#include "cpu_half.h"
#include "cpu_internal.h"

/* Binary backward has the most operands: a, b, c, dc, da, db. */
#define EW_MAX_OPERANDS 6

typedef struct ew_args_t {
  double alpha; /* leaky_relu slope */
} ew_args_t;

typedef void (*ew_row_fn)(int64_t n, unsigned char *const *p, const int64_t *s, const ew_args_t *args);

/* Apply `row` to every element of `count` operands that share one shape (NULL operands are
 * skipped and get p[k] == NULL). Zero elements: returns without calling `row`. Tensors of at
 * least CPU_PARALLEL_MIN_ELEMENTS are split into fixed blocks run by OpenMP threads; each
 * element is computed by the same code whatever the split, so results never depend on the
 * thread count. */
void ew_run(const parity_tensor_desc_t *const *operands, uint32_t count, ew_row_fn row, const ew_args_t *args);

/* Row kernels of one path (cpu_isa.h); NULL when the (op, dtype) combination is not
 * provided. elementwise.c reaches them through cpu_kernels(). */
#ifdef CPU_ISA
#include "cpu_isa.h"
ew_row_fn CPU_ISA_FN(ew_unary_forward_row)(int32_t op, int32_t dtype);
ew_row_fn CPU_ISA_FN(ew_unary_backward_row)(int32_t op, int32_t dtype); /* x, y, dy, dx */
ew_row_fn CPU_ISA_FN(ew_binary_forward_row)(int32_t op, int32_t dtype);
ew_row_fn CPU_ISA_FN(ew_binary_backward_row)(int32_t op, int32_t dtype); /* a, b, c, dc, da|NULL, db|NULL */
ew_row_fn CPU_ISA_FN(ew_compare_row)(int32_t op, int32_t dtype);         /* a, b, bool c */
ew_row_fn CPU_ISA_FN(ew_where_forward_row)(int32_t dtype);               /* cond, a, b, c */
ew_row_fn CPU_ISA_FN(ew_where_backward_row)(int32_t dtype);              /* cond, dc, da|NULL, db|NULL */
ew_row_fn CPU_ISA_FN(ew_cast_row)(int32_t src_dtype, int32_t dst_dtype);
#endif

/* ---- storage formats ---------------------------------------------------------------------
 * For a dtype tag D: EW_ST_D is the storage type, EW_CT_D the type arithmetic runs in,
 * EW_LD_D(v) widens a stored value (exactly), EW_SV_D(v) rounds a computed value once for
 * storage, and EW_FN_D(name) names the scalar function of that precision (elementwise_math.h).
 * f16 and bf16 are storage formats computed in f32. */
#define EW_ST_F64 double
#define EW_CT_F64 double
#define EW_LD_F64(v) (v)
#define EW_SV_F64(v) (v)
#define EW_FN_F64(name) ew_##name##_d

#define EW_ST_F32 float
#define EW_CT_F32 float
#define EW_LD_F32(v) (v)
#define EW_SV_F32(v) (v)
#define EW_FN_F32(name) ew_##name##_f

#define EW_ST_F16 uint16_t
#define EW_CT_F16 float
#define EW_LD_F16(v) cpu_f16_to_f32(v)
#define EW_SV_F16(v) cpu_f32_to_f16(v)
#define EW_FN_F16(name) ew_##name##_f

#define EW_ST_BF16 uint16_t
#define EW_CT_BF16 float
#define EW_LD_BF16(v) psup_bf16_to_f32(v)
#define EW_SV_BF16(v) psup_f32_to_bf16(v)
#define EW_FN_BF16(name) ew_##name##_f

/* Integers compute in their own type; wraparound goes through the unsigned type EW_UT_D. */
#define EW_ST_I32 int32_t
#define EW_CT_I32 int32_t
#define EW_UT_I32 uint32_t
#define EW_LD_I32(v) (v)
#define EW_SV_I32(v) (v)

#define EW_ST_I64 int64_t
#define EW_CT_I64 int64_t
#define EW_UT_I64 uint64_t
#define EW_LD_I64(v) (v)
#define EW_SV_I64(v) (v)

/* bool: any non-zero byte reads as true; stores 0 or 1. */
#define EW_ST_BOOL uint8_t
#define EW_CT_BOOL int32_t
#define EW_LD_BOOL(v) ((v) != 0)
#define EW_SV_BOOL(v) ((uint8_t)((v) != 0))

/* Marks a contiguous loop whose iterations are independent, so it vectorizes even at -O2
 * (an exact in-place alias is fine; that is the only overlap the contract allows). */
#if defined(_OPENMP)
#define EW_SIMD _Pragma("omp simd")
#else
#define EW_SIMD
#endif

#endif
