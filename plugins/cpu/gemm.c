/* gemm.c — the f32 matrix-multiply engine; see gemm.h for the contract.
 *
 * Blocking (BLIS style): a task owns a chunk of C rows × one GEMM_NC column block. For each
 * GEMM_KC slice of k it packs the B block once into NR-wide micro-panels, then packs each
 * GEMM_MC row block of A into MR-tall micro-panels and runs the MR×NR micro-kernel over the
 * tile, accumulating into an f32 C tile that is stored (and rounded) once at the end. Edge
 * tiles are zero-padded to full micro-tiles (the AVX-512 kernel skips whole padding rows of 4),
 * so every element takes the same arithmetic path. Compiled once per instruction-set path
 * (cpu_isa.h), with that path's micro-kernel and tile shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_half.h"
#include "cpu_internal.h"
#include "cpu_accum.h"
#include "cpu_parallel.h"
#include "gemm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef CPU_ISA
#error "gemm.c is compiled once per path, with -DCPU_ISA=<path>"
#endif

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

/* ---- micro-kernels: c[r*ldc + j] += sum_p a[p*MR + r] * b[p*NR + j] ----------------------- */
typedef void (*gemm_kernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc);

/* One row of the tile at a time (p in order for each element, as in the SIMD kernels, but
 * each product rounded before it is added): a shape every compiler vectorizes well. */
static __attribute__((unused)) void kernel_generic(int64_t kc, const float *a, const float *b, float *c,
                                                   int64_t ldc) {
  for (int r = 0; r < GEMM_MR; r++) {
    float acc[GEMM_NR];
    for (int j = 0; j < GEMM_NR; j++) acc[j] = 0.0f;
    for (int64_t p = 0; p < kc; p++) {
      const float ar = a[p * GEMM_MR + r], *bp = b + p * GEMM_NR;
      for (int j = 0; j < GEMM_NR; j++) acc[j] += ar * bp[j];
    }
    for (int j = 0; j < GEMM_NR; j++) c[r * ldc + j] += acc[j];
  }
}

#if defined(__AVX512F__)
#include <immintrin.h>

/* c[r*ldc + j] += sum_p a[p*12 + r] * b[p*32 + j] for the first R rows (R = 12, 8 or 4; the
 * shorter ones serve edge panels, whose padding rows would otherwise be computed): up to 24
 * zmm accumulators, each element an FMA chain in p order from 0 (bitwise the AVX2 kernel's
 * arithmetic, whatever R). */
#define K5_DECL_(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
#define K5_STEP_(r)                           \
  ar = _mm512_set1_ps(a[r]);                  \
  c##r##0 = _mm512_fmadd_ps(ar, b0, c##r##0); \
  c##r##1 = _mm512_fmadd_ps(ar, b1, c##r##1);
#define K5_ADD_(r)                                                                          \
  _mm512_storeu_ps(c + (r) * ldc, _mm512_add_ps(_mm512_loadu_ps(c + (r) * ldc), c##r##0)); \
  _mm512_storeu_ps(c + (r) * ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + (r) * ldc + 16), c##r##1));
#define K5_PF_(r) _mm_prefetch((const char *)(c + (r) * ldc), _MM_HINT_T0), _mm_prefetch((const char *)(c + (r) * ldc + 16), _MM_HINT_T0);
#define K5_ROWS4_(X) X(0) X(1) X(2) X(3)
#define K5_ROWS8_(X) K5_ROWS4_(X) X(4) X(5) X(6) X(7)
#define K5_ROWS12_(X) K5_ROWS8_(X) X(8) X(9) X(10) X(11)
#define K5_KERNEL_(R)                                                                                   \
  static void kernel_avx512_##R(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) {     \
    K5_ROWS##R##_(K5_PF_)                                                                               \
    K5_ROWS##R##_(K5_DECL_)                                                                             \
    for (int64_t p = 0; p < kc; p++) {                                                                  \
      const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);                               \
      __m512 ar;                                                                                        \
      K5_ROWS##R##_(K5_STEP_)                                                                           \
      a += GEMM_MR;                                                                                     \
      b += GEMM_NR;                                                                                     \
    }                                                                                                   \
    K5_ROWS##R##_(K5_ADD_)                                                                              \
  }
K5_KERNEL_(12)
K5_KERNEL_(8)
K5_KERNEL_(4)
static void kernel_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) {
  kernel_avx512_12(kc, a, b, c, ldc);
}
/* The kernel for an edge panel of `rows` rows. */
static gemm_kernel_fn kernel_for_rows(int64_t rows) {
  return rows <= 4 ? kernel_avx512_4 : rows <= 8 ? kernel_avx512_8 : kernel_avx512_12;
}
#define GEMM_KERNEL kernel_avx512
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

static void kernel_avx2(int64_t kc, const float *a, const float *b,
                                                             float *c, int64_t ldc) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ar;
    ar = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(ar, b0, c00);
    c01 = _mm256_fmadd_ps(ar, b1, c01);
    ar = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(ar, b0, c10);
    c11 = _mm256_fmadd_ps(ar, b1, c11);
    ar = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(ar, b0, c20);
    c21 = _mm256_fmadd_ps(ar, b1, c21);
    ar = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(ar, b0, c30);
    c31 = _mm256_fmadd_ps(ar, b1, c31);
    ar = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(ar, b0, c40);
    c41 = _mm256_fmadd_ps(ar, b1, c41);
    ar = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(ar, b0, c50);
    c51 = _mm256_fmadd_ps(ar, b1, c51);
    a += GEMM_MR;
    b += GEMM_NR;
  }
#define GEMM_ADD_ROW_(r, lo, hi)                                                       \
  _mm256_storeu_ps(c + (r) * ldc, _mm256_add_ps(_mm256_loadu_ps(c + (r) * ldc), lo));  \
  _mm256_storeu_ps(c + (r) * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + (r) * ldc + 8), hi));
  GEMM_ADD_ROW_(0, c00, c01)
  GEMM_ADD_ROW_(1, c10, c11)
  GEMM_ADD_ROW_(2, c20, c21)
  GEMM_ADD_ROW_(3, c30, c31)
  GEMM_ADD_ROW_(4, c40, c41)
  GEMM_ADD_ROW_(5, c50, c51)
#undef GEMM_ADD_ROW_
}
#define GEMM_KERNEL kernel_avx2
#else
#define GEMM_KERNEL kernel_generic
#endif
#if !defined(__AVX512F__)
static gemm_kernel_fn kernel_for_rows(int64_t rows) {
  (void)rows;
  return GEMM_KERNEL;
}
#endif

/* ---- operand addressing ------------------------------------------------------------------ */
static void axis_fill(const gemm_axis_t *ax, int64_t start, int64_t count, int64_t *off, int64_t *h,
                      int64_t *w) {
  int64_t d[3] = {0, 0, 0}, rem = start;
  for (int l = ax->nd - 1; l > 0; l--) {
    d[l] = rem % ax->dim[l];
    rem /= ax->dim[l];
  }
  d[0] = rem;
  for (int64_t i = 0; i < count; i++) {
    int64_t o = ax->off0, hh = ax->hoff, ww = ax->woff;
    for (int l = 0; l < ax->nd; l++) {
      o += d[l] * ax->stride[l];
      hh += d[l] * ax->hmul[l];
      ww += d[l] * ax->wmul[l];
    }
    off[i] = o;
    if (h) {
      h[i] = hh;
      w[i] = ww;
    }
    for (int l = ax->nd - 1; l >= 0; l--) {
      if (++d[l] < ax->dim[l] || l == 0) break;
      d[l] = 0;
    }
  }
}

/* Drop size-1 levels and merge a level into the next inner one when offsets and mask
 * coordinates compose, so contiguous multi-level axes take the linear packing paths. */
static void axis_simplify(gemm_axis_t *ax) {
  if (ax->nd == 1 && ax->dim[0] != 1) return; /* already simple (matmul's operands) */
  gemm_axis_t out = *ax;
  out.nd = 0;
  for (int l = 0; l < ax->nd; l++) {
    if (ax->dim[l] == 0) return; /* empty: nothing is ever addressed */
    if (ax->dim[l] == 1) continue;
    int k = out.nd;
    if (k > 0 && out.stride[k - 1] == ax->stride[l] * ax->dim[l] && out.hmul[k - 1] == ax->hmul[l] * ax->dim[l] &&
        out.wmul[k - 1] == ax->wmul[l] * ax->dim[l]) {
      out.dim[k - 1] *= ax->dim[l];
      out.stride[k - 1] = ax->stride[l], out.hmul[k - 1] = ax->hmul[l], out.wmul[k - 1] = ax->wmul[l];
      continue;
    }
    out.dim[k] = ax->dim[l], out.stride[k] = ax->stride[l], out.hmul[k] = ax->hmul[l], out.wmul[k] = ax->wmul[l];
    out.nd++;
  }
  if (out.nd == 0) { /* a single index */
    out.nd = 1, out.dim[0] = 1, out.stride[0] = 0, out.hmul[0] = 0, out.wmul[0] = 0;
  }
  *ax = out;
}

static void operand_simplify(gemm_operand_t *op) {
  axis_simplify(&op->row);
  axis_simplify(&op->col);
}

/* Offsets (and mask coordinates) of consecutive indices along one axis. */
typedef struct gemm_tab_t {
  int64_t off[GEMM_TAB], h[GEMM_TAB], w[GEMM_TAB];
} gemm_tab_t;

#define GEMM_LOAD_F32(s, i) (((const float *)(s))[i])
#define GEMM_LOAD_F16(s, i) cpu_f16_to_f32(((const uint16_t *)(s))[i])
#define GEMM_LOAD_BF16(s, i) psup_bf16_to_f32(((const uint16_t *)(s))[i])

/* dst[t*ds] = element at bo + off(t) for t < count, where off(t) = t*lin when off is NULL
 * (a linear axis), else off[t]; masked operands check h0+h[t], w0+w[t] against H, W. */
#define GEMM_PACK_LINE_(LOAD)                                                              \
  if (!off) {                                                                              \
    for (int64_t t = 0; t < count; t++) dst[t * ds] = LOAD(op->base, bo + t * lin);        \
  } else if (!op->masked) {                                                                \
    for (int64_t t = 0; t < count; t++) dst[t * ds] = LOAD(op->base, bo + off[t]);         \
  } else {                                                                                 \
    for (int64_t t = 0; t < count; t++) {                                                  \
      uint64_t hh = (uint64_t)(h0 + h[t]), ww = (uint64_t)(w0 + w[t]);                     \
      dst[t * ds] = hh < (uint64_t)op->H && ww < (uint64_t)op->W ? LOAD(op->base, bo + off[t]) \
                                                                 : 0.0f;                   \
    }                                                                                      \
  }

static void pack_line(const gemm_operand_t *op, int64_t bo, int64_t lin, const int64_t *off, int64_t h0,
                      const int64_t *h, int64_t w0, const int64_t *w, int64_t count, float *dst,
                      int64_t ds) {
  switch (op->dtype) {
    case PARITY_DTYPE_F16: GEMM_PACK_LINE_(GEMM_LOAD_F16) break;
    case PARITY_DTYPE_BF16: GEMM_PACK_LINE_(GEMM_LOAD_BF16) break;
    default: GEMM_PACK_LINE_(GEMM_LOAD_F32) break;
  }
}

/* A column axis that needs no table: one level, no mask. */
static int col_is_linear(const gemm_operand_t *op) {
  return !op->masked && op->col.nd == 1 && op->col.off0 == 0;
}

/* Linear fast path of pack_a: rows start at rb[r] (or are padding when r >= rows); element p
 * of a row is at rb[r] + p*lin. p-major order keeps the writes contiguous. */
#define GEMM_PACK_A_LINEAR_(LOAD)                                                       \
  for (int64_t p = 0; p < kc; p++)                                                      \
    for (int64_t r = 0; r < GEMM_MR; r++)                                               \
      d[p * GEMM_MR + r] = r < rows ? LOAD(op->base, rb[r] + p * lin) : 0.0f;

/* Pack rows [i0, i0+mc) × cols [p0, p0+kc) of A into MR-tall micro-panels (p-major). */
static void pack_a(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                   float *dst, gemm_tab_t *rows_tab, gemm_tab_t *cols) {
  axis_fill(&op->row, i0, mc, rows_tab->off, rows_tab->h, rows_tab->w);
  int linear = col_is_linear(op);
  int64_t lin = op->col.stride[0];
  if (linear)
    bo += p0 * lin;
  else
    axis_fill(&op->col, p0, kc, cols->off, cols->h, cols->w);
  for (int64_t ip = 0; ip < mc; ip += GEMM_MR) {
    float *d = dst + ip * kc;
    int64_t rows = mc - ip < GEMM_MR ? mc - ip : GEMM_MR;
    if (linear) {
      int64_t rb[GEMM_MR];
      for (int64_t r = 0; r < GEMM_MR; r++) rb[r] = r < rows ? bo + rows_tab->off[ip + r] : 0;
      switch (op->dtype) {
        case PARITY_DTYPE_F16: GEMM_PACK_A_LINEAR_(GEMM_LOAD_F16) break;
        case PARITY_DTYPE_BF16: GEMM_PACK_A_LINEAR_(GEMM_LOAD_BF16) break;
        default: GEMM_PACK_A_LINEAR_(GEMM_LOAD_F32) break;
      }
      continue;
    }
    for (int64_t r = 0; r < GEMM_MR; r++) {
      if (r >= rows) {
        for (int64_t p = 0; p < kc; p++) d[p * GEMM_MR + r] = 0.0f;
        continue;
      }
      pack_line(op, bo + rows_tab->off[ip + r], lin, cols->off, rows_tab->h[ip + r], cols->h,
                rows_tab->w[ip + r], cols->w, kc, d + r, GEMM_MR);
    }
  }
}

/* One NR-wide panel of a masked B (im2col). The panel's columns are cut once into runs that
 * lie on one line of the image (same h, evenly spaced w and offsets); for each row the
 * in-bounds taps of a run are one interval, found arithmetically, so no tap is tested alone.
 * Unit-stride f32 runs are memcpy. */
typedef struct gemm_run_t {
  int64_t t0, len, wstep, step;
} gemm_run_t;

#define GEMM_PACK_B_MASKED_(LOAD)                                                                 \
  for (int64_t p = 0; p < kc; p++) {                                                              \
    float *dp = d + p * GEMM_NR;                                                                  \
    const int64_t hr = rows->h[p], wr = rows->w[p], ob = bo + rows->off[p];                       \
    for (int r = 0; r < nruns; r++) {                                                             \
      const gemm_run_t *ru = &run[r];                                                             \
      const int64_t t0 = ru->t0, len = ru->len, ws = ru->wstep;                                   \
      float *dr = dp + t0;                                                                        \
      int64_t lo = 0, hi = 0;                                                                     \
      if ((uint64_t)(hr + h[t0]) < (uint64_t)op->H) {                                             \
        const int64_t first = wr + w[t0]; /* w of tap t0+t: first + t*ws, valid in [0, W) */     \
        lo = first >= 0 ? 0 : (-first + ws - 1) / ws;                                             \
        hi = first < op->W ? (op->W - 1 - first) / ws + 1 : 0;                                    \
        if (hi > len) hi = len;                                                                   \
        if (lo > hi) lo = hi;                                                                     \
      }                                                                                           \
      for (int64_t t = 0; t < lo; t++) dr[t] = 0.0f;                                              \
      const int64_t o0 = ob + off[t0];                                                            \
      if (ru->step == 1) /* short runs: an inline loop, not a call to memcpy */                   \
        for (int64_t t = lo; t < hi; t++) dr[t] = LOAD(op->base, o0 + t);                         \
      else                                                                                        \
        for (int64_t t = lo; t < hi; t++) dr[t] = LOAD(op->base, o0 + t * ru->step);              \
      for (int64_t t = hi; t < len; t++) dr[t] = 0.0f;                                            \
    }                                                                                             \
    for (int64_t t = cnt; t < GEMM_NR; t++) dp[t] = 0.0f;                                         \
  }

/* The same panel cut along its rows: runs of rows on one image line, and for each column the
 * in-bounds rows of a run found arithmetically. */
#define GEMM_PACK_B_ROWS_(LOAD)                                                                 \
  for (int64_t p0 = 0; p0 < kc;) {                                                              \
    int64_t len = 1, ws = 1, st = 0;                                                            \
    if (p0 + 1 < kc && rows->h[p0 + 1] == rows->h[p0] && rows->w[p0 + 1] > rows->w[p0]) {       \
      ws = rows->w[p0 + 1] - rows->w[p0], st = rows->off[p0 + 1] - rows->off[p0];               \
      while (p0 + len < kc && rows->h[p0 + len] == rows->h[p0] &&                               \
             rows->w[p0 + len] - rows->w[p0 + len - 1] == ws &&                                 \
             rows->off[p0 + len] - rows->off[p0 + len - 1] == st)                               \
        len++;                                                                                  \
    }                                                                                           \
    float *dr = d + p0 * GEMM_NR;                                                               \
    for (int64_t t = 0; t < cnt; t++) {                                                         \
      int64_t lo = 0, hi = 0;                                                                   \
      if ((uint64_t)(rows->h[p0] + h[t]) < (uint64_t)op->H) {                                   \
        const int64_t first = rows->w[p0] + w[t];                                               \
        lo = first >= 0 ? 0 : (-first + ws - 1) / ws;                                           \
        hi = first < op->W ? (op->W - 1 - first) / ws + 1 : 0;                                  \
        if (hi > len) hi = len;                                                                 \
        if (lo > hi) lo = hi;                                                                   \
      }                                                                                         \
      const int64_t o0 = bo + rows->off[p0] + off[t];                                           \
      for (int64_t q = 0; q < lo; q++) dr[q * GEMM_NR + t] = 0.0f;                              \
      for (int64_t q = lo; q < hi; q++) dr[q * GEMM_NR + t] = LOAD(op->base, o0 + q * st);      \
      for (int64_t q = hi; q < len; q++) dr[q * GEMM_NR + t] = 0.0f;                            \
    }                                                                                           \
    for (int64_t q = 0; q < len; q++)                                                           \
      for (int64_t t = cnt; t < GEMM_NR; t++) dr[q * GEMM_NR + t] = 0.0f;                       \
    p0 += len;                                                                                  \
  }

static void pack_b_masked_by_rows(const gemm_operand_t *op, int64_t bo, int64_t kc, const gemm_tab_t *rows,
                                  const int64_t *off, const int64_t *h, const int64_t *w, int64_t cnt, float *d) {
  switch (op->dtype) {
    case PARITY_DTYPE_F16: GEMM_PACK_B_ROWS_(GEMM_LOAD_F16) break;
    case PARITY_DTYPE_BF16: GEMM_PACK_B_ROWS_(GEMM_LOAD_BF16) break;
    default: GEMM_PACK_B_ROWS_(GEMM_LOAD_F32) break;
  }
}

static void pack_b_masked(const gemm_operand_t *op, int64_t bo, int64_t kc, const gemm_tab_t *rows,
                          const int64_t *off, const int64_t *h, const int64_t *w, int64_t cnt, float *d) {
  gemm_run_t run[GEMM_NR];
  int nruns = 0;
  for (int64_t t = 0; t < cnt;) {
    gemm_run_t ru = {t, 1, 1, 0};
    if (t + 1 < cnt && h[t + 1] == h[t] && w[t + 1] > w[t]) {
      ru.wstep = w[t + 1] - w[t], ru.step = off[t + 1] - off[t];
      while (t + ru.len < cnt && h[t + ru.len] == h[t] && w[t + ru.len] - w[t + ru.len - 1] == ru.wstep &&
             off[t + ru.len] - off[t + ru.len - 1] == ru.step)
        ru.len++;
    }
    run[nruns++] = ru;
    t += ru.len;
  }
  /* When the columns make short runs (conv's weight gradient: the taps of one kernel row) but
   * the rows make long ones (window origins along an output row), cut the rows instead. */
  int64_t nrr = 0;
  for (int64_t p = 0; p < kc && nrr <= nruns * kc / cnt;) {
    int64_t len = 1;
    if (p + 1 < kc && rows->h[p + 1] == rows->h[p] && rows->w[p + 1] > rows->w[p]) {
      const int64_t ws = rows->w[p + 1] - rows->w[p], st = rows->off[p + 1] - rows->off[p];
      while (p + len < kc && rows->h[p + len] == rows->h[p] && rows->w[p + len] - rows->w[p + len - 1] == ws &&
             rows->off[p + len] - rows->off[p + len - 1] == st)
        len++;
    }
    nrr++;
    p += len;
  }
  if (nrr * cnt < nruns * kc) {
    pack_b_masked_by_rows(op, bo, kc, rows, off, h, w, cnt, d);
    return;
  }
  switch (op->dtype) {
    case PARITY_DTYPE_F16: GEMM_PACK_B_MASKED_(GEMM_LOAD_F16) break;
    case PARITY_DTYPE_BF16: GEMM_PACK_B_MASKED_(GEMM_LOAD_BF16) break;
    default: GEMM_PACK_B_MASKED_(GEMM_LOAD_F32) break;
  }
}

/* Pack rows [p0, p0+kc) × cols [j0, j0+nc) of B into NR-wide micro-panels (p-major). */
static void pack_b(const gemm_operand_t *op, int64_t bo, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float *dst, gemm_tab_t *rows, gemm_tab_t *cols) {
  axis_fill(&op->row, p0, kc, rows->off, rows->h, rows->w);
  int linear = col_is_linear(op);
  int64_t lin = op->col.stride[0];
  if (linear)
    bo += j0 * lin;
  else
    axis_fill(&op->col, j0, nc, cols->off, cols->h, cols->w);
  if (linear && lin == 1 && op->dtype == PARITY_DTYPE_F32) {
    /* contiguous rows: read each row once, front to back, scattering into the panels */
    const float *src = (const float *)op->base;
    int64_t full = nc / GEMM_NR * GEMM_NR;
    for (int64_t p = 0; p < kc; p++) {
      const float *s = src + bo + rows->off[p];
      for (int64_t jp = 0; jp < full; jp += GEMM_NR) {
        memcpy(dst + jp * kc + p * GEMM_NR, s + jp, GEMM_NR * sizeof(float));
      }
      if (full < nc) {
        float *d = dst + full * kc + p * GEMM_NR;
        for (int64_t t = 0; t < GEMM_NR; t++) d[t] = full + t < nc ? s[full + t] : 0.0f;
      }
    }
    return;
  }
  for (int64_t jp = 0; jp < nc; jp += GEMM_NR) {
    float *d = dst + jp * kc;
    int64_t cnt = nc - jp < GEMM_NR ? nc - jp : GEMM_NR;
    if (op->masked) {
      pack_b_masked(op, bo, kc, rows, cols->off + jp, cols->h + jp, cols->w + jp, cnt, d);
      continue;
    }
    for (int64_t p = 0; p < kc; p++) {
      float *dp = d + p * GEMM_NR;
      if (linear)
        pack_line(op, bo + rows->off[p] + jp * lin, lin, NULL, 0, NULL, 0, NULL, cnt, dp, 1);
      else
        pack_line(op, bo + rows->off[p], 0, cols->off + jp, rows->h[p], cols->h + jp, rows->w[p],
                  cols->w + jp, cnt, dp, 1);
      for (int64_t t = cnt; t < GEMM_NR; t++) dp[t] = 0.0f;
    }
  }
}

/* ---- C tile: init and store ----------------------------------------------------------- */
static int64_t batch_offset(const gemm_problem_t *p, const gemm_operand_t *op, int64_t b) {
  int64_t off = 0;
  for (int32_t a = p->batch_rank - 1; a >= 0; a--) {
    off += (b % p->batch_shape[a]) * op->batch_stride[a];
    b /= p->batch_shape[a];
  }
  return off;
}

/* Load rows [i0, i0+mr) × cols [j0, j0+nc) of an operand into tile (row stride ldt). */
static void load_tile(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
                      float *tile, int64_t ldt, gemm_tab_t *rows, gemm_tab_t *cols) {
  axis_fill(&op->col, j0, nc, cols->off, NULL, NULL);
  for (int64_t i0b = 0; i0b < mr; i0b += GEMM_TAB) {
    int64_t cnt = mr - i0b < GEMM_TAB ? mr - i0b : GEMM_TAB;
    axis_fill(&op->row, i0 + i0b, cnt, rows->off, NULL, NULL);
    for (int64_t i = 0; i < cnt; i++)
      pack_line(op, bo + rows->off[i], 0, cols->off, 0, NULL, 0, NULL, nc, tile + (i0b + i) * ldt, 1);
  }
}

#define GEMM_STORE_LOOP_(T, CONV)                                                   \
  for (int64_t i = 0; i < cnt; i++) {                                               \
    T *dst = (T *)op->base + bo + rows->off[i];                                     \
    const float *src = tile + (i0b + i) * ldt;                                      \
    if (unit) /* contiguous columns: a loop that vectorizes */                      \
      for (int64_t j = 0; j < nc; j++) dst[j0 + j] = CONV(src[j]);                  \
    else                                                                            \
      for (int64_t j = 0; j < nc; j++) dst[cols->off[j]] = CONV(src[j]);            \
  }
#define GEMM_ID_(x) (x)

static void store_tile(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
                       const float *tile, int64_t ldt, gemm_tab_t *rows, gemm_tab_t *cols) {
  const int unit = col_is_linear(op) && op->col.stride[0] == 1;
  if (!unit) axis_fill(&op->col, j0, nc, cols->off, NULL, NULL);
  for (int64_t i0b = 0; i0b < mr; i0b += GEMM_TAB) {
    int64_t cnt = mr - i0b < GEMM_TAB ? mr - i0b : GEMM_TAB;
    axis_fill(&op->row, i0 + i0b, cnt, rows->off, NULL, NULL);
    switch (op->dtype) {
      case PARITY_DTYPE_F16: GEMM_STORE_LOOP_(uint16_t, cpu_f32_to_f16) break;
      case PARITY_DTYPE_BF16: GEMM_STORE_LOOP_(uint16_t, psup_f32_to_bf16) break;
      default: GEMM_STORE_LOOP_(float, GEMM_ID_) break;
    }
  }
}

/* ---- tasks ------------------------------------------------------------------------------ */
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
    load_tile(&p->c, batch_offset(p, &p->c, b), i0, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
  } else if (p->init == GEMM_INIT_ROW_BIAS) {
    int64_t bbias = batch_offset(p, &p->bias, b);
    gemm_operand_t col = p->bias;
    col.col = gemm_axis_linear(1, 0);
    for (int64_t i = 0; i < mrows; i++) {
      float v;
      load_tile(&col, bbias, i0 + i, 1, 0, 1, &v, 1, ws->rows, ws->cols);
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

static void run_task(const gemm_problem_t *p, const gemm_plan_t *pl, int64_t t, gemm_ws_t *ws,
                     gemm_kernel_fn kernel) {
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
    pack_b(&p->b, bb, pc, kc, j0, nc, ws->pb, ws->rows, ws->cols);
    for (int64_t ic = i_start; ic < i_end; ic += GEMM_MC) {
      int64_t mc = i_end - ic < GEMM_MC ? i_end - ic : GEMM_MC;
      pack_a(&p->a, ba, ic, mc, pc, kc, ws->pa, ws->rows, ws->cols);
      float *ctile = tile + (ic - i_start) * ldc;
      const int64_t full = mc / GEMM_MR * GEMM_MR;
      gemm_kernel_fn edge = kernel_for_rows(mc - full);
      for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
        for (int64_t ir = 0; ir < full; ir += GEMM_MR)
          kernel(kc, ws->pa + ir * kc, ws->pb + jr * kc, ctile + ir * ldc + jr, ldc);
        if (full < mc) edge(kc, ws->pa + full * kc, ws->pb + jr * kc, ctile + full * ldc + jr, ldc);
      }
    }
  }
  if (pl->direct) return;
  if (pl->ksplit == 1) {
    store_tile(&p->c, batch_offset(p, &p->c, b), i_start, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
  } else {
    gemm_operand_t part = partial_operand(p, pl, s, b);
    store_tile(&part, 0, i_start, mrows, j0, nc, tile, ldc, ws->rows, ws->cols);
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
    store_tile(&p->c, batch_offset(p, &p->c, b), i, 1, j0, nc, row, pl->ldc, ws->rows, ws->cols);
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
 * path computes it (init, plus S_0, an FMA chain in k order from +0 on the FMA paths, a
 * rounded-product chain on the portable one), so both give the same bits. Packing a tile for
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
    const float *z = p->init == GEMM_INIT_ROW_BIAS ? (const float *)Z->base + batch_offset(p, Z, bi) + Z->row.off0 : NULL;
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        float *cij = c + i * C->row.stride[0] + j * C->col.stride[0];
        float t = p->init == GEMM_INIT_ACCUMULATE ? *cij : z ? z[i * Z->row.stride[0]] : 0.0f, s = 0.0f;
        for (int64_t q = 0; q < p->k; q++) {
          float x = a[i * A->row.stride[0] + q * A->col.stride[0]], y = b[q * B->row.stride[0] + j * B->col.stride[0]];
#if defined(__FMA__)
          s = fmaf(x, y, s);
#else
          s += x * y;
#endif
        }
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
  operand_simplify(&simple.a), operand_simplify(&simple.b), operand_simplify(&simple.c);
  operand_simplify(&simple.bias);
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
  pl.direct = pl.ksplit == 1 && p->init != GEMM_INIT_ACCUMULATE && p->c.dtype == PARITY_DTYPE_F32 &&
              p->c.base && col_is_linear(&p->c) && p->c.col.stride[0] == 1 && p->c.row.nd == 1 &&
              p->c.row.stride[0] >= p->n && p->m % 4 == 0 && p->n % GEMM_NR == 0;
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
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: %s: cannot allocate %zu bytes of packing buffers", what,
                    total);
  if (pl.ksplit > 1) pl.partial = (float *)(mem + pl.per_thread_bytes * (size_t)threads);
  gemm_kernel_fn kernel = GEMM_KERNEL;
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
