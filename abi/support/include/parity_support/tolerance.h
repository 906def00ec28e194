/* tolerance.h — the conformance rule, shared by unit tests and parity-conform so that both hold
 * plugins to the same numbers. docs/semantics.md and docs/conformance.md state them in prose.
 *
 *  - Exact classes: bit-for-bit equal to the f64 oracle rounded to the output dtype
 *    (psup_op_is_exact).
 *  - Rounded elementwise ops (transcendentals, division, ...): |got - exact| <= B ulps of the
 *    output dtype, B = psup_ulp_bound(op, dtype).
 *  - Accumulating ops (reductions, matmul, conv, pooling, softmax) and every backward:
 *      |got - ref| <= atol + rtol*|ref| + c(k)*u_acc*S
 *    ref = the f64 oracle, S = the same op on absolute values, k = terms accumulated per
 *    output, u_acc = unit roundoff of the accumulation type (2^-53 for f64, 2^-24 otherwise:
 *    f16/bf16 accumulate in f32), c(k) = 4*ceil(sqrt(k)) + 4 (any summation order of a correct
 *    kernel passes; sequential f32 sums that stagnate, or f16 accumulation, do not),
 *    rtol = 2*u_out (output rounding, u_out = unit roundoff of the stored dtype), and
 *    atol = the smallest normal of the output dtype (covers flushed/denormal noise). */
#ifndef PARITY_SUPPORT_TOLERANCE_H
#define PARITY_SUPPORT_TOLERANCE_H

#include <stdint.h>

#include "parity_plugin.h"

/* 2^-53 f64, 2^-24 f32, 2^-11 f16, 2^-8 bf16, 0 for integer and bool dtypes. */
double psup_unit_roundoff(int32_t dtype);
/* Unit roundoff of the type a kernel accumulates `dtype` in. */
double psup_accum_roundoff(int32_t dtype);
/* 1 when the forward op must match the oracle bit for bit in this dtype. */
int psup_op_is_exact(int32_t op, int32_t dtype);
/* Allowed error in ulps of the output dtype for a rounded elementwise forward op. */
double psup_ulp_bound(int32_t op, int32_t dtype);
/* Allowed |got - ref| for one element of an accumulating op or a backward. */
double psup_accum_bound(int32_t dtype, double ref, double abs_ref, int64_t k);
/* Distance between a and b in ulps of dtype at the larger magnitude (0 when both are NaN or
 * equal, +inf when only one is NaN/inf). */
double psup_ulp_distance(double a, double b, int32_t dtype);

/* Which rule judges an output of this op, dtype and direction (docs/conformance.md). */
typedef enum psup_rule_t { PSUP_RULE_EXACT = 1, PSUP_RULE_ULP = 2, PSUP_RULE_ACCUM = 3 } psup_rule_t;
int32_t psup_rule_for(int32_t op, int32_t dtype, int32_t direction);

/* k, the terms accumulated per element of output `slot` of the op `d` describes (only shapes,
 * dtypes and params are read): reduced elements, K (matmul forward), N for da and M for db,
 * C/g*KH*KW (+1 with bias) for conv forward, O/g*KH*KW for dx and N*OH*OW for dw and dbias,
 * KH*KW for pooling, the axis length for softmax; 1 for elementwise. */
int64_t psup_accum_terms(const parity_op_desc_t *d, int slot);

#endif
