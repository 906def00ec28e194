/* gemm.h — the CPU plugin's f32 matrix-multiply engine, shared by matmul and conv2d.
 *
 * C[b] = init + A[b] · B[b] for every batch index b, with A m×k, B k×n, C m×n. Operands are
 * described, not copied: every matrix index maps to an element offset through a gemm_axis_t,
 * which also expresses im2col (a conv input read as a matrix, with out-of-bounds taps reading
 * as 0), so conv2d lowers to this engine without a column buffer.
 *
 * Numerics (the contract the conv and matmul files rely on):
 *  - A and B load from f32, f16 or bf16 storage to f32; products accumulate in f32; C is stored
 *    once, rounded to its dtype (f16/bf16 round to nearest even).
 *  - Each C element is init + S_0 + S_1 + ..., where S_j is the sum over the j-th block of
 *    GEMM_KC consecutive k, accumulated from 0 in k order. Nothing else in the arithmetic
 *    depends on tiling, tasking or the number of threads, so results are bitwise identical
 *    run to run and for any thread count.
 *  - The engine is compiled once per instruction-set path (cpu_isa.h). On the avx512 and avx2
 *    paths each S_j is a chain of fused multiply-adds, so those two paths give the same bits;
 *    the portable path rounds each product before adding it, so its bits differ (both meet
 *    the tolerance rule).
 *
 * Threads: OpenMP over (batch, column block, row chunk) tasks; every task owns its C tile. */
#ifndef PARITY_CPU_GEMM_H
#define PARITY_CPU_GEMM_H

#include <stdint.h>

#define GEMM_MAX_BATCH 6
#define GEMM_KC 256 /* k block; part of the numerics above, keep it fixed */

/* Maps a matrix index i to an element offset. i is split into up to three digits
 * (d0, d1, d2) of sizes dim[0..nd) (d0 slowest); offset = off0 + sum d_l*stride[l].
 * For masked operands the same digits also give h = hoff + sum d_l*hmul[l] and
 * w = woff + sum d_l*wmul[l]; the element reads as 0 unless 0 <= h_row+h_col < H and
 * 0 <= w_row+w_col < W. */
typedef struct gemm_axis_t {
  int32_t nd;
  int64_t dim[3];
  int64_t stride[3];
  int64_t off0;
  int64_t hmul[3], wmul[3];
  int64_t hoff, woff;
} gemm_axis_t;

typedef struct gemm_operand_t {
  unsigned char *base; /* element offset 0 of batch 0 */
  int32_t dtype;       /* PARITY_DTYPE_F32, F16 or BF16 */
  gemm_axis_t row, col;
  int64_t batch_stride[GEMM_MAX_BATCH]; /* elements per step of each batch axis */
  int32_t masked;
  int64_t H, W;
} gemm_operand_t;

typedef enum gemm_init_t {
  GEMM_INIT_ZERO = 0,       /* C = A·B */
  GEMM_INIT_ACCUMULATE = 1, /* C = C + A·B (C read once, converted to f32) */
  GEMM_INIT_ROW_BIAS = 2,   /* C = bias[row] + A·B; `bias` uses its row axis and batch strides */
} gemm_init_t;

typedef struct gemm_problem_t {
  int64_t m, n, k;
  int32_t batch_rank;
  int64_t batch_shape[GEMM_MAX_BATCH];
  gemm_operand_t a, b, c, bias;
  int32_t init; /* gemm_init_t */
} gemm_problem_t;

/* A one-level axis: offset = i * stride. */
gemm_axis_t gemm_axis_linear(int64_t dim, int64_t stride);

/* Run the problem on the active path's engine (gemm_common.c). Returns PARITY_STATUS_OK, or
 * OUT_OF_MEMORY (reported through cpu_fail, with `what` naming the op) when the packing
 * buffers cannot be allocated. */
int32_t cpu_gemm_f32(const gemm_problem_t *p, const char *what);
/* Packing buffers (64-byte aligned): gemm_ws_take returns a block of at least `bytes` (NULL
 * when out of memory), the one kept from the last call when big enough; gemm_ws_give keeps it
 * for the next call (or frees it when large); gemm_ws_release frees the kept one (shutdown). */
#include <stddef.h>
unsigned char *gemm_ws_take(size_t bytes);
void gemm_ws_give(unsigned char *p);
void gemm_ws_release(void);

#ifdef CPU_ISA
#include "cpu_isa.h"
int32_t CPU_ISA_FN(cpu_gemm_f32)(const gemm_problem_t *p, const char *what); /* one path's engine (gemm.c) */
/* The engine's split of a long k into *ksplit chunks of *kchunk (a multiple of GEMM_KC; see
 * gemm.c): a function of the shape and of this path's blocking only. */
void CPU_ISA_FN(gemm_split_k)(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t *ksplit, int64_t *kchunk);
#endif

#endif
