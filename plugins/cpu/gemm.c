/* gemm.c — the f32 matrix-multiply engine; see gemm.h for the contract.
 *
 * Blocking (BLIS style): a task owns a chunk of C rows × one GEMM_NC column block. For each
 * GEMM_KC slice of k it packs the B block once into NR-wide micro-panels, then packs each
 * GEMM_MC row block of A into MR-tall micro-panels and runs the MR×NR micro-kernel over the
 * tile, accumulating into an f32 C tile that is stored (and rounded) once at the end. Edge
 * tiles are zero-padded to full micro-tiles (the AVX-512 kernel skips whole padding rows of 4),
 * so every element takes the same arithmetic path. Compiled once per instruction-set path
 * (cpu_isa.h), with that path's micro-kernel and tile shape.
 *
 * This file holds the tasks, the split of a long k, the small-problem path and the entry point;
 * the micro-kernels are in gemm_kernels.c, the packing and the C tiles' loads and stores in
 * gemm_pack.c (shared declarations: gemm_internal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_half.h"
#include "cpu_internal.h"
#include "cpu_accum.h"
#include "cpu_parallel.h"
#include "gemm.h"
#include "gemm_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef CPU_ISA
#error "gemm.c is compiled once per path, with -DCPU_ISA=<path>"
#endif

/* ---- tasks ------------------------------------------------------------------------------ */
static int64_t batch_offset(const gemm_problem_t *p, const gemm_operand_t *op, int64_t b) {
  int64_t off = 0;
  for (int32_t a = p->batch_rank - 1; a >= 0; a--) {
    off += (b % p->batch_shape[a]) * op->batch_stride[a];
    b /= p->batch_shape[a];
  }
  return off;
}

/* Split-k: when a problem has few output tiles but a long k (conv2d's weight gradient sums
 * over N·OH·OW), k is cut into ksplit chunks of kchunk (a multiple of GEMM_KC) computed as
 * separate tasks into f32 partial sums, then C = init + P_0 + P_1 + ... in chunk order. The
 * split depends on the shape only, never on the thread count. */
#define GEMM_SPLIT_MIN_K 2048
#define GEMM_SPLIT_MAX 16
#define GEMM_SPLIT_MAX_FLOATS ((int64_t)16 << 20)

typedef struct gemm_plan_t {
  int64_t batch, mt, nt, chunks_per_col, chunk_blocks, ldc, tile_rows, tasks;
  int64_t ksplit, kchunk;
  /* 1: the micro-kernels accumulate straight into C (f32, unit column stride, one row level,
   * rows a multiple of 4 and columns of GEMM_NR, so that edge kernels write only real rows and
   * columns; zero or bias start, no split): the same arithmetic without the tile's copy */
  int direct;
  float *partial; /* ksplit × batch × m × n when ksplit > 1 */
  size_t pa_floats, pb_floats, tile_floats, per_thread_bytes;
} gemm_plan_t;

typedef struct gemm_ws_t {
  float *pa, *pb, *tile;
  gemm_tab_t *rows, *cols;
} gemm_ws_t;

/* Start rows [i0, i0+mrows) × cols [j0, j0+nc) of C's accumulator per p->init. */
static void init_tile(const gemm_problem_t *p, int64_t b, int64_t i0, int64_t mrows, int64_t j0, int64_t nc,
                      float *tile, int64_t ldc, gemm_ws_t *ws) {
  if (p->init == GEMM_INIT_ACCUMULATE) {
    CPU_ISA_FN(gemm_load_tile)(&p->c, batch_offset(p, &p->c, b), i0, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
  } else if (p->init == GEMM_INIT_ROW_BIAS) {
    int64_t bbias = batch_offset(p, &p->bias, b);
    gemm_operand_t col = p->bias;
    col.col = gemm_axis_linear(1, 0);
    for (int64_t i = 0; i < mrows; i++) {
      float v;
      CPU_ISA_FN(gemm_load_tile)(&col, bbias, i0 + i, 1, 0, 1, &v, 1, ws->rows, ws->cols);
      for (int64_t j = 0; j < nc; j++) tile[i * ldc + j] = v;
    }
  }
}

static gemm_operand_t partial_operand(const gemm_problem_t *p, const gemm_plan_t *pl, int64_t s, int64_t b) {
  gemm_operand_t op;
  memset(&op, 0, sizeof op);
  op.base = (unsigned char *)(pl->partial + ((s * pl->batch + b) * p->m) * p->n);
  op.dtype = PARITY_DTYPE_F32;
  op.row = gemm_axis_linear(p->m, p->n);
  op.col = gemm_axis_linear(p->n, 1);
  return op;
}

static void run_task(const gemm_problem_t *p, const gemm_plan_t *pl, int64_t t, gemm_ws_t *ws, gemm_kernel_fn kernel) {
  int64_t q = t % pl->chunks_per_col, rest = t / pl->chunks_per_col;
  int64_t jb = rest % pl->nt;
  rest /= pl->nt;
  int64_t b = rest % pl->batch, s = rest / pl->batch;
  int64_t i_start = q * pl->chunk_blocks * GEMM_MC;
  int64_t i_end = i_start + pl->chunk_blocks * GEMM_MC < p->m ? i_start + pl->chunk_blocks * GEMM_MC : p->m;
  if (i_start >= i_end) return;
  int64_t j0 = jb * GEMM_NC, nc = p->n - j0 < GEMM_NC ? p->n - j0 : GEMM_NC;
  int64_t k0 = s * pl->kchunk, k1 = k0 + pl->kchunk < p->k ? k0 + pl->kchunk : p->k;
  int64_t mrows = i_end - i_start, ldc = pl->ldc;
  int64_t ba = batch_offset(p, &p->a, b), bb = batch_offset(p, &p->b, b);
  float *tile = ws->tile;
  if (pl->direct) { /* accumulate in C itself (see gemm_plan_t.direct) */
    ldc = p->c.row.stride[0];
    tile = (float *)p->c.base + batch_offset(p, &p->c, b) + p->c.row.off0 + i_start * ldc + j0;
    for (int64_t i = 0; i < mrows; i++) memset(tile + i * ldc, 0, (size_t)nc * sizeof(float));
    init_tile(p, b, i_start, mrows, j0, nc, tile, ldc, ws);
  } else {
    int64_t padded_rows = (mrows + GEMM_MR - 1) / GEMM_MR * GEMM_MR;
    memset(tile, 0, (size_t)(padded_rows * ldc) * sizeof(float));
    if (pl->ksplit == 1) init_tile(p, b, i_start, mrows, j0, nc, tile, ldc, ws);
  }
  for (int64_t pc = k0; pc < k1; pc += GEMM_KC) {
    int64_t kc = k1 - pc < GEMM_KC ? k1 - pc : GEMM_KC;
    CPU_ISA_FN(gemm_pack_b)(&p->b, bb, pc, kc, j0, nc, ws->pb, ws->rows, ws->cols);
    for (int64_t ic = i_start; ic < i_end; ic += GEMM_MC) {
      int64_t mc = i_end - ic < GEMM_MC ? i_end - ic : GEMM_MC;
      CPU_ISA_FN(gemm_pack_a)(&p->a, ba, ic, mc, pc, kc, ws->pa, ws->rows, ws->cols);
      float *ctile = tile + (ic - i_start) * ldc;
      const int64_t full = mc / GEMM_MR * GEMM_MR;
      gemm_kernel_fn edge = CPU_ISA_FN(gemm_kernel_for_rows)(mc - full);
      for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
        for (int64_t ir = 0; ir < full; ir += GEMM_MR)
          kernel(kc, ws->pa + ir * kc, ws->pb + jr * kc, ctile + ir * ldc + jr, ldc);
        if (full < mc) edge(kc, ws->pa + full * kc, ws->pb + jr * kc, ctile + full * ldc + jr, ldc);
      }
    }
  }
  if (pl->direct) return;
  if (pl->ksplit == 1) {
    CPU_ISA_FN(gemm_store_tile)
    (&p->c, batch_offset(p, &p->c, b), i_start, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
  } else {
    gemm_operand_t part = partial_operand(p, pl, s, b);
    CPU_ISA_FN(gemm_store_tile)(&part, 0, i_start, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
  }
}

/* Split-k epilogue for row `r` (batch-major) of C: init + partials in chunk order, stored. */
static void reduce_row(const gemm_problem_t *p, const gemm_plan_t *pl, int64_t r, gemm_ws_t *ws) {
  int64_t b = r / p->m, i = r % p->m;
  float *row = ws->tile;
  for (int64_t j0 = 0; j0 < p->n; j0 += GEMM_NC) {
    int64_t nc = p->n - j0 < GEMM_NC ? p->n - j0 : GEMM_NC;
    memset(row, 0, sizeof(float) * (size_t)nc);
    init_tile(p, b, i, 1, j0, nc, row, pl->ldc, ws);
    for (int64_t s = 0; s < pl->ksplit; s++) {
      const float *part = pl->partial + ((s * pl->batch + b) * p->m + i) * p->n + j0;
      for (int64_t j = 0; j < nc; j++) row[j] += part[j];
    }
    CPU_ISA_FN(gemm_store_tile)(&p->c, batch_offset(p, &p->c, b), i, 1, j0, nc, row, pl->ldc, ws->rows, ws->cols);
  }
}

static size_t align64(size_t n) { return (n + 63u) & ~(size_t)63u; }

void CPU_ISA_FN(gemm_split_k)(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t *ksplit, int64_t *kchunk) {
  /* tiles counted with the avx512 path's row block on every path, so that every path splits
   * alike (the split is part of the numerics: avx2 and avx512 give the same bits) */
  const int64_t mt = (m + 143) / 144, nt = (n + GEMM_NC - 1) / GEMM_NC;
  *ksplit = 1;
  *kchunk = k > 0 ? k : 1;
  if (batch * mt * nt < 8 && k >= 2 * GEMM_SPLIT_MIN_K) {
    int64_t s = k / GEMM_SPLIT_MIN_K < GEMM_SPLIT_MAX ? k / GEMM_SPLIT_MIN_K : GEMM_SPLIT_MAX;
    int64_t chunk = ((k + s - 1) / s + GEMM_KC - 1) / GEMM_KC * GEMM_KC;
    s = (k + chunk - 1) / chunk;
    if (s > 1 && s * batch * m * n <= GEMM_SPLIT_MAX_FLOATS) *ksplit = s, *kchunk = chunk;
  }
}

/* Thread tid's packing buffers and tables inside the workspace block. */
static void thread_ws(const gemm_plan_t *pl, unsigned char *mem, int tid, gemm_ws_t *ws) {
  unsigned char *base = mem + (size_t)tid * pl->per_thread_bytes;
  ws->pa = (float *)base;
  base += align64(pl->pa_floats * sizeof(float));
  ws->pb = (float *)base;
  base += align64(pl->pb_floats * sizeof(float));
  ws->tile = (float *)base;
  base += align64(pl->tile_floats * sizeof(float));
  ws->rows = (gemm_tab_t *)base;
  ws->cols = (gemm_tab_t *)(base + align64(sizeof(gemm_tab_t)));
}

/* ---- small problems ----------------------------------------------------------------------- */
/* Problems of at most GEMM_SMALL_MACS multiply-adds with k <= GEMM_KC on plain (unmasked,
 * one-level) f32 operands skip packing and tiling: each C element is computed as the blocked
 * path computes it (init, plus S_0, a chain of gemm_muladd in k order from +0, redone exactly
 * on the portable path where it ends non-finite), so both give the same bits. Packing a tile for
 * a 2x2 product cost more than the product. */
#define GEMM_SMALL_MACS 4096

static int small_operand(const gemm_operand_t *op) {
  return op->dtype == PARITY_DTYPE_F32 && !op->masked && op->row.nd == 1 && op->col.nd == 1;
}

static int small_problem(const gemm_problem_t *p, int64_t batch) {
  if (p->k > GEMM_KC || (double)batch * (double)p->m * (double)p->n * (double)p->k > GEMM_SMALL_MACS) return 0;
  if (!small_operand(&p->a) || !small_operand(&p->b) || !small_operand(&p->c)) return 0;
  return p->init != GEMM_INIT_ROW_BIAS || small_operand(&p->bias);
}

static void gemm_small(const gemm_problem_t *p, int64_t batch) {
  const gemm_operand_t *A = &p->a, *B = &p->b, *C = &p->c, *Z = &p->bias;
  for (int64_t bi = 0; bi < batch; bi++) {
    const float *a = (const float *)A->base + batch_offset(p, A, bi) + A->row.off0 + A->col.off0;
    const float *b = (const float *)B->base + batch_offset(p, B, bi) + B->row.off0 + B->col.off0;
    float *c = (float *)C->base + batch_offset(p, C, bi) + C->row.off0 + C->col.off0;
    const float *z =
        p->init == GEMM_INIT_ROW_BIAS ? (const float *)Z->base + batch_offset(p, Z, bi) + Z->row.off0 : NULL;
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        float *cij = c + i * C->row.stride[0] + j * C->col.stride[0];
        float t = p->init == GEMM_INIT_ACCUMULATE ? *cij : z ? z[i * Z->row.stride[0]] : 0.0f, s = 0.0f;
        for (int64_t q = 0; q < p->k; q++) {
          float x = a[i * A->row.stride[0] + q * A->col.stride[0]], y = b[q * B->row.stride[0] + j * B->col.stride[0]];
          s = gemm_muladd(x, y, s);
        }
#if !defined(__FMA__)
        if (!isfinite(s)) { /* as the portable micro-kernel does: the chain again, products exact */
          s = 0.0f;
          for (int64_t q = 0; q < p->k; q++)
            s = gemm_muladd_exact(a[i * A->row.stride[0] + q * A->col.stride[0]],
                                  b[q * B->row.stride[0] + j * B->col.stride[0]], s);
        }
#endif
        *cij = p->k ? t + s : t; /* k = 0: the blocked path stores init untouched (-0 stays) */
      }
  }
}

int32_t CPU_ISA_FN(cpu_gemm_f32)(const gemm_problem_t *problem, const char *what) {
  int64_t batch = 1;
  for (int32_t a = 0; a < problem->batch_rank; a++) batch *= problem->batch_shape[a];
  if (batch > 0 && problem->m > 0 && problem->n > 0 && small_problem(problem, batch)) {
    gemm_small(problem, batch); /* one-level axes need no simplifying */
    return PARITY_STATUS_OK;
  }
  gemm_problem_t simple = *problem;
  const gemm_problem_t *p = &simple;
  CPU_ISA_FN(gemm_operand_simplify)(&simple.a), CPU_ISA_FN(gemm_operand_simplify)(&simple.b);
  CPU_ISA_FN(gemm_operand_simplify)(&simple.c), CPU_ISA_FN(gemm_operand_simplify)(&simple.bias);
  gemm_plan_t pl;
  memset(&pl, 0, sizeof pl);
  pl.batch = 1;
  for (int32_t a = 0; a < p->batch_rank; a++) pl.batch *= p->batch_shape[a];
  if (pl.batch == 0 || p->m == 0 || p->n == 0) return PARITY_STATUS_OK;
  /* split only when the time saved beats the team's wake-up (cpu_parallel.h): a gemm is
   * weighed at GEMM_FLOPS_PER_NS on one thread, and two threads ran one 1.5x faster here */
  double flops = 2.0 * (double)pl.batch * (double)p->m * (double)p->n * (double)(p->k > 0 ? p->k : 1);
  int threads = flops < (double)(1 << 21) ? 1 : cpu_split_threads(flops / GEMM_FLOPS_PER_NS, 0.5);
  pl.mt = (p->m + GEMM_MC - 1) / GEMM_MC;
  pl.nt = (p->n + GEMM_NC - 1) / GEMM_NC;
  CPU_ISA_FN(gemm_split_k)(pl.batch, p->m, p->n, p->k, &pl.ksplit, &pl.kchunk);
  /* Split the rows into enough chunks to keep every thread busy, but no more: each chunk
   * repacks its B blocks. Chunking never changes the arithmetic of an element. */
  int64_t cols = pl.ksplit * pl.batch * pl.nt, want = 4 * (int64_t)threads;
  int64_t chunks = threads > 1 && cols < want ? (want + cols - 1) / cols : 1;
  if (chunks > pl.mt) chunks = pl.mt;
  pl.chunk_blocks = (pl.mt + chunks - 1) / chunks;
  if (pl.chunk_blocks > GEMM_MAX_CHUNK) pl.chunk_blocks = GEMM_MAX_CHUNK;
  pl.chunks_per_col = (pl.mt + pl.chunk_blocks - 1) / pl.chunk_blocks;
  pl.tasks = pl.ksplit * pl.batch * pl.nt * pl.chunks_per_col;
#if defined(__AVX512F__)
  pl.direct = pl.ksplit == 1 && p->init != GEMM_INIT_ACCUMULATE && p->c.dtype == PARITY_DTYPE_F32 && p->c.base &&
              col_is_linear(&p->c) && p->c.col.stride[0] == 1 && p->c.row.nd == 1 && p->c.row.stride[0] >= p->n &&
              p->m % 4 == 0 && p->n % GEMM_NR == 0;
#endif
  int64_t ncmax = p->n < GEMM_NC ? p->n : GEMM_NC;
  pl.ldc = (ncmax + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
  int64_t rows = pl.chunk_blocks * GEMM_MC < p->m ? pl.chunk_blocks * GEMM_MC : p->m;
  pl.tile_rows = (rows + GEMM_MR - 1) / GEMM_MR * GEMM_MR;
  /* buffers sized to the problem, so small calls stay small */
  int64_t kc_max = p->k < GEMM_KC ? (p->k > 0 ? p->k : 1) : GEMM_KC;
  int64_t mc_max = p->m < GEMM_MC ? (p->m + GEMM_MR - 1) / GEMM_MR * GEMM_MR : GEMM_MC;
  pl.pa_floats = (size_t)(mc_max * kc_max);
  pl.pb_floats = (size_t)(kc_max * pl.ldc);
  pl.tile_floats = (size_t)(pl.tile_rows * pl.ldc);
  pl.per_thread_bytes = align64(pl.pa_floats * sizeof(float)) + align64(pl.pb_floats * sizeof(float)) +
                        align64(pl.tile_floats * sizeof(float)) + 2 * align64(sizeof(gemm_tab_t));
  if (pl.tasks < threads) threads = (int)pl.tasks;
  size_t partial_bytes = pl.ksplit > 1 ? sizeof(float) * (size_t)(pl.ksplit * pl.batch * p->m * p->n) : 0;
  size_t total = pl.per_thread_bytes * (size_t)threads + align64(partial_bytes);
  unsigned char *mem = gemm_ws_take(total);
  if (!mem)
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: %s: cannot allocate %zu bytes of packing buffers", what, total);
  if (pl.ksplit > 1) pl.partial = (float *)(mem + pl.per_thread_bytes * (size_t)threads);
  gemm_kernel_fn kernel = CPU_ISA_FN(gemm_kernel)();
  if (threads == 1) { /* no parallel region: libgomp allocates a team for every 1-thread region */
    gemm_ws_t ws;
    thread_ws(&pl, mem, 0, &ws);
    for (int64_t t = 0; t < pl.tasks; t++) run_task(p, &pl, t, &ws, kernel);
    if (pl.ksplit > 1)
      for (int64_t r = 0; r < pl.batch * p->m; r++) reduce_row(p, &pl, r, &ws);
    gemm_ws_give(mem);
    return PARITY_STATUS_OK;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
  {
#ifdef _OPENMP
    int tid = omp_get_thread_num();
#else
    int tid = 0;
#endif
    gemm_ws_t ws;
    thread_ws(&pl, mem, tid, &ws);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (int64_t t = 0; t < pl.tasks; t++) run_task(p, &pl, t, &ws, kernel);
    if (pl.ksplit > 1) { /* the loop above ends with a barrier: every partial is written */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (int64_t r = 0; r < pl.batch * p->m; r++) reduce_row(p, &pl, r, &ws);
    }
  }
  gemm_ws_give(mem);
  return PARITY_STATUS_OK;
}
