/* gemm_internal.h — private to the gemm engine's per-path files (gemm.h has the contract):
 * gemm_kernels.c (the micro-kernels), gemm_pack.c (operand addressing: packing A and B into
 * micro-panels, loading and storing C tiles) and gemm.c (tasks, split-k, small problems, the
 * entry point). All three are compiled once per instruction-set path (cpu_isa.h), so the names
 * they share carry the path's suffix (CPU_ISA_FN). */
#ifndef PARITY_CPU_GEMM_INTERNAL_H
#define PARITY_CPU_GEMM_INTERNAL_H

#include <stdint.h>

#include "cpu_isa.h"
#include "gemm.h"

#ifndef CPU_ISA
#error "the gemm engine is compiled once per path, with -DCPU_ISA=<path>"
#endif

/* One step of a product chain, s + x*y, as each path computes it: fmaf where the path has FMA;
 * on the portable path the product is rounded before it is added. A portable chain that ends
 * non-finite is computed again with gemm_muladd_exact (the product exact in double, one rounding
 * to float), so that a product past FLT_MAX does not turn into inf before it is added (3e38 * 2 +
 * -inf is -inf, as with fma, not NaN). A finite result never went through inf, so only those are
 * redone: the finite bits, and the speed, stay those of the rounded-product chain. */
#include <math.h>
#if defined(__FMA__)
static inline float gemm_muladd(float x, float y, float s) { return fmaf(x, y, s); }
#else
static inline float gemm_muladd(float x, float y, float s) { return s + x * y; }
#endif
static inline float gemm_muladd_exact(float x, float y, float s) { return (float)((double)x * (double)y + (double)s); }

/* Micro-tile MR x NR per path: the AVX-512 kernel keeps a 12x32 tile in 24 zmm registers, the
 * AVX2 one 6x16 in 12 ymm; the portable one uses the AVX2 shape. */
#if defined(__AVX512F__)
#define GEMM_MR 12
#define GEMM_NR 32
#define GEMM_MC 144
#define GEMM_FLOPS_PER_NS 150.0 /* one thread, nominal (parity-bench: 187 GFLOP/s at 1024^3 here) */
#else
#define GEMM_MR 6
#define GEMM_NR 16
#define GEMM_MC 72
#define GEMM_FLOPS_PER_NS 60.0
#endif
#define GEMM_NC 512
#define GEMM_MAX_CHUNK 8 /* GEMM_MC blocks of rows per task (8: a 1024-row problem packs each B block once) */
#define GEMM_TAB (GEMM_NC > GEMM_KC ? GEMM_NC : GEMM_KC)

/* ---- micro-kernels (gemm_kernels.c): c[r*ldc + j] += sum_p a[p*MR + r] * b[p*NR + j] ------- */
typedef void (*gemm_kernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc);

/* The path's kernel for a full MR-row panel. */
gemm_kernel_fn CPU_ISA_FN(gemm_kernel)(void);
/* The kernel for an edge panel of `rows` rows. */
gemm_kernel_fn CPU_ISA_FN(gemm_kernel_for_rows)(int64_t rows);

/* ---- operand addressing (gemm_pack.c) ------------------------------------------------------ */
/* Offsets (and mask coordinates) of consecutive indices along one axis. */
typedef struct gemm_tab_t {
  int64_t off[GEMM_TAB], h[GEMM_TAB], w[GEMM_TAB];
} gemm_tab_t;

/* A column axis that needs no table: one level, no mask. */
static inline int col_is_linear(const gemm_operand_t *op) {
  return !op->masked && op->col.nd == 1 && op->col.off0 == 0;
}

/* Drop size-1 levels and merge levels that compose, in both axes of an operand. */
void CPU_ISA_FN(gemm_operand_simplify)(gemm_operand_t *op);
/* Pack rows [i0, i0+mc) × cols [p0, p0+kc) of A into MR-tall micro-panels (p-major). */
void CPU_ISA_FN(gemm_pack_a)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                             float *dst, gemm_tab_t *rows_tab, gemm_tab_t *cols);
/* Pack rows [p0, p0+kc) × cols [j0, j0+nc) of B into NR-wide micro-panels (p-major). */
void CPU_ISA_FN(gemm_pack_b)(const gemm_operand_t *op, int64_t bo, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                             float *dst, gemm_tab_t *rows, gemm_tab_t *cols);
/* Load rows [i0, i0+mr) × cols [j0, j0+nc) of an operand into tile (row stride ldt). */
void CPU_ISA_FN(gemm_load_tile)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
                                float *tile, int64_t ldt, gemm_tab_t *rows, gemm_tab_t *cols);
/* Store tile (row stride ldt) into rows [i0, i0+mr) × cols [j0, j0+nc) of an operand, rounded
 * to its dtype. */
void CPU_ISA_FN(gemm_store_tile)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
                                 const float *tile, int64_t ldt, gemm_tab_t *rows, gemm_tab_t *cols);

#endif
