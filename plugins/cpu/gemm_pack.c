/* gemm_pack.c — the gemm engine's operand addressing (gemm.h has the contract, gemm.c the
 * blocking): axis tables, packing A into MR-tall and B into NR-wide micro-panels (f32, f16 or
 * bf16 storage to f32; im2col masks resolved here, out-of-bounds taps as 0), and loading and
 * storing C tiles. Compiled once per instruction-set path (cpu_isa.h), with that path's tile
 * shape. */
#include <string.h>

#include "cpu_half.h"
#include "cpu_internal.h"
#include "gemm_internal.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

/* ---- operand addressing ------------------------------------------------------------------ */
static void axis_fill(const gemm_axis_t *ax, int64_t start, int64_t count, int64_t *off, int64_t *h, int64_t *w) {
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

void CPU_ISA_FN(gemm_operand_simplify)(gemm_operand_t *op) {
  axis_simplify(&op->row);
  axis_simplify(&op->col);
}

#define GEMM_LOAD_F32(s, i) (((const float *)(s))[i])
#define GEMM_LOAD_F16(s, i) cpu_f16_to_f32(((const uint16_t *)(s))[i])
#define GEMM_LOAD_BF16(s, i) psup_bf16_to_f32(((const uint16_t *)(s))[i])

/* dst[t*ds] = element at bo + off(t) for t < count, where off(t) = t*lin when off is NULL
 * (a linear axis), else off[t]; masked operands check h0+h[t], w0+w[t] against H, W. */
#define GEMM_PACK_LINE_(LOAD)                                                                          \
  if (!off) {                                                                                          \
    for (int64_t t = 0; t < count; t++) dst[t * ds] = LOAD(op->base, bo + t * lin);                    \
  } else if (!op->masked) {                                                                            \
    for (int64_t t = 0; t < count; t++) dst[t * ds] = LOAD(op->base, bo + off[t]);                     \
  } else {                                                                                             \
    for (int64_t t = 0; t < count; t++) {                                                              \
      uint64_t hh = (uint64_t)(h0 + h[t]), ww = (uint64_t)(w0 + w[t]);                                 \
      dst[t * ds] = hh < (uint64_t)op->H && ww < (uint64_t)op->W ? LOAD(op->base, bo + off[t]) : 0.0f; \
    }                                                                                                  \
  }

static void pack_line(const gemm_operand_t *op, int64_t bo, int64_t lin, const int64_t *off, int64_t h0,
                      const int64_t *h, int64_t w0, const int64_t *w, int64_t count, float *dst, int64_t ds) {
  switch (op->dtype) {
    case PARITY_DTYPE_F16: GEMM_PACK_LINE_(GEMM_LOAD_F16) break;
    case PARITY_DTYPE_BF16: GEMM_PACK_LINE_(GEMM_LOAD_BF16) break;
    default: GEMM_PACK_LINE_(GEMM_LOAD_F32) break;
  }
}
/* Linear fast path of pack_a: rows start at rb[r] (or are padding when r >= rows); element p
 * of a row is at rb[r] + p*lin. p-major order keeps the writes contiguous. */
#define GEMM_PACK_A_LINEAR_(LOAD)  \
  for (int64_t p = 0; p < kc; p++) \
    for (int64_t r = 0; r < GEMM_MR; r++) d[p * GEMM_MR + r] = r < rows ? LOAD(op->base, rb[r] + p * lin) : 0.0f;

/* Pack rows [i0, i0+mc) × cols [p0, p0+kc) of A into MR-tall micro-panels (p-major). */
void CPU_ISA_FN(gemm_pack_a)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
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
      pack_line(op, bo + rows_tab->off[ip + r], lin, cols->off, rows_tab->h[ip + r], cols->h, rows_tab->w[ip + r],
                cols->w, kc, d + r, GEMM_MR);
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

#define GEMM_PACK_B_MASKED_(LOAD)                                                            \
  for (int64_t p = 0; p < kc; p++) {                                                         \
    float *dp = d + p * GEMM_NR;                                                             \
    const int64_t hr = rows->h[p], wr = rows->w[p], ob = bo + rows->off[p];                  \
    for (int r = 0; r < nruns; r++) {                                                        \
      const gemm_run_t *ru = &run[r];                                                        \
      const int64_t t0 = ru->t0, len = ru->len, ws = ru->wstep;                              \
      float *dr = dp + t0;                                                                   \
      int64_t lo = 0, hi = 0;                                                                \
      if ((uint64_t)(hr + h[t0]) < (uint64_t)op->H) {                                        \
        const int64_t first = wr + w[t0]; /* w of tap t0+t: first + t*ws, valid in [0, W) */ \
        lo = first >= 0 ? 0 : (-first + ws - 1) / ws;                                        \
        hi = first < op->W ? (op->W - 1 - first) / ws + 1 : 0;                               \
        if (hi > len) hi = len;                                                              \
        if (lo > hi) lo = hi;                                                                \
      }                                                                                      \
      for (int64_t t = 0; t < lo; t++) dr[t] = 0.0f;                                         \
      const int64_t o0 = ob + off[t0];                                                       \
      if (ru->step == 1) /* short runs: an inline loop, not a call to memcpy */              \
        for (int64_t t = lo; t < hi; t++) dr[t] = LOAD(op->base, o0 + t);                    \
      else                                                                                   \
        for (int64_t t = lo; t < hi; t++) dr[t] = LOAD(op->base, o0 + t * ru->step);         \
      for (int64_t t = hi; t < len; t++) dr[t] = 0.0f;                                       \
    }                                                                                        \
    for (int64_t t = cnt; t < GEMM_NR; t++) dp[t] = 0.0f;                                    \
  }

/* The same panel cut along its rows: runs of rows on one image line, and for each column the
 * in-bounds rows of a run found arithmetically. */
#define GEMM_PACK_B_ROWS_(LOAD)                                                                                      \
  for (int64_t p0 = 0; p0 < kc;) {                                                                                   \
    int64_t len = 1, ws = 1, st = 0;                                                                                 \
    if (p0 + 1 < kc && rows->h[p0 + 1] == rows->h[p0] && rows->w[p0 + 1] > rows->w[p0]) {                            \
      ws = rows->w[p0 + 1] - rows->w[p0], st = rows->off[p0 + 1] - rows->off[p0];                                    \
      while (p0 + len < kc && rows->h[p0 + len] == rows->h[p0] && rows->w[p0 + len] - rows->w[p0 + len - 1] == ws && \
             rows->off[p0 + len] - rows->off[p0 + len - 1] == st)                                                    \
        len++;                                                                                                       \
    }                                                                                                                \
    float *dr = d + p0 * GEMM_NR;                                                                                    \
    for (int64_t t = 0; t < cnt; t++) {                                                                              \
      int64_t lo = 0, hi = 0;                                                                                        \
      if ((uint64_t)(rows->h[p0] + h[t]) < (uint64_t)op->H) {                                                        \
        const int64_t first = rows->w[p0] + w[t];                                                                    \
        lo = first >= 0 ? 0 : (-first + ws - 1) / ws;                                                                \
        hi = first < op->W ? (op->W - 1 - first) / ws + 1 : 0;                                                       \
        if (hi > len) hi = len;                                                                                      \
        if (lo > hi) lo = hi;                                                                                        \
      }                                                                                                              \
      const int64_t o0 = bo + rows->off[p0] + off[t];                                                                \
      for (int64_t q = 0; q < lo; q++) dr[q * GEMM_NR + t] = 0.0f;                                                   \
      for (int64_t q = lo; q < hi; q++) dr[q * GEMM_NR + t] = LOAD(op->base, o0 + q * st);                           \
      for (int64_t q = hi; q < len; q++) dr[q * GEMM_NR + t] = 0.0f;                                                 \
    }                                                                                                                \
    for (int64_t q = 0; q < len; q++)                                                                                \
      for (int64_t t = cnt; t < GEMM_NR; t++) dr[q * GEMM_NR + t] = 0.0f;                                            \
    p0 += len;                                                                                                       \
  }

static void pack_b_masked_by_rows(const gemm_operand_t *op, int64_t bo, int64_t kc, const gemm_tab_t *rows,
                                  const int64_t *off, const int64_t *h, const int64_t *w, int64_t cnt, float *d) {
  switch (op->dtype) {
    case PARITY_DTYPE_F16: GEMM_PACK_B_ROWS_(GEMM_LOAD_F16) break;
    case PARITY_DTYPE_BF16: GEMM_PACK_B_ROWS_(GEMM_LOAD_BF16) break;
    default: GEMM_PACK_B_ROWS_(GEMM_LOAD_F32) break;
  }
}

static void pack_b_masked(const gemm_operand_t *op, int64_t bo, int64_t kc, const gemm_tab_t *rows, const int64_t *off,
                          const int64_t *h, const int64_t *w, int64_t cnt, float *d) {
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

/* d[b * ld + a] = s[a * ls + b] for a, b < 8: eight rows of eight read along them, written across
 * (AVX: the unpack, shuffle and lane-swap transpose) */
static inline void transpose8(const float *s, int64_t ls, float *d, int64_t ld) {
#if defined(__AVX__)
  __m256 r[8], t[8], u[8];
  for (int a = 0; a < 8; a++) r[a] = _mm256_loadu_ps(s + a * ls);
  for (int a = 0; a < 8; a += 2) {
    t[a] = _mm256_unpacklo_ps(r[a], r[a + 1]);
    t[a + 1] = _mm256_unpackhi_ps(r[a], r[a + 1]);
  }
  for (int h = 0; h < 8; h += 4) { /* rows 0-3, then 4-7 */
    u[h] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int b = 0; b < 4; b++) {
    _mm256_storeu_ps(d + b * ld, _mm256_permute2f128_ps(u[b], u[b + 4], 0x20));
    _mm256_storeu_ps(d + (b + 4) * ld, _mm256_permute2f128_ps(u[b], u[b + 4], 0x31));
  }
#else
  for (int b = 0; b < 8; b++)
    for (int a = 0; a < 8; a++) d[b * ld + a] = s[a * ls + b];
#endif
}

/* Pack rows [p0, p0+kc) × cols [j0, j0+nc) of B into NR-wide micro-panels (p-major). */
void CPU_ISA_FN(gemm_pack_b)(const gemm_operand_t *op, int64_t bo, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
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
  if (linear && lin != 1 && op->row.nd == 1 && op->row.stride[0] == 1 && op->dtype == PARITY_DTYPE_F32) {
    /* transposed rows (x w^T, a Linear layer): each column runs along k */
    const float *src = (const float *)op->base + bo + rows->off[0];
    for (int64_t jp = 0; jp < nc; jp += GEMM_NR) {
      float *d = dst + jp * kc;
      int64_t cnt = nc - jp < GEMM_NR ? nc - jp : GEMM_NR, p = 0;
      const float *s = src + jp * lin;
      if (cnt == GEMM_NR)
        for (; p + 8 <= kc; p += 8)
          for (int64_t t = 0; t < GEMM_NR; t += 8) transpose8(s + t * lin + p, lin, d + p * GEMM_NR + t, GEMM_NR);
      for (; p < kc; p++)
        for (int64_t t = 0; t < GEMM_NR; t++) d[p * GEMM_NR + t] = t < cnt ? s[t * lin + p] : 0.0f;
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
        pack_line(op, bo + rows->off[p], 0, cols->off + jp, rows->h[p], cols->h + jp, rows->w[p], cols->w + jp, cnt, dp,
                  1);
      for (int64_t t = cnt; t < GEMM_NR; t++) dp[t] = 0.0f;
    }
  }
}

/* ---- C tiles: load and store -------------------------------------------------------------- */
/* Load rows [i0, i0+mr) × cols [j0, j0+nc) of an operand into tile (row stride ldt). */
void CPU_ISA_FN(gemm_load_tile)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
                                float *tile, int64_t ldt, gemm_tab_t *rows, gemm_tab_t *cols) {
  axis_fill(&op->col, j0, nc, cols->off, NULL, NULL);
  for (int64_t i0b = 0; i0b < mr; i0b += GEMM_TAB) {
    int64_t cnt = mr - i0b < GEMM_TAB ? mr - i0b : GEMM_TAB;
    axis_fill(&op->row, i0 + i0b, cnt, rows->off, NULL, NULL);
    for (int64_t i = 0; i < cnt; i++)
      pack_line(op, bo + rows->off[i], 0, cols->off, 0, NULL, 0, NULL, nc, tile + (i0b + i) * ldt, 1);
  }
}

#define GEMM_STORE_LOOP_(T, CONV)                                        \
  for (int64_t i = 0; i < cnt; i++) {                                    \
    T *dst = (T *)op->base + bo + rows->off[i];                          \
    const float *src = tile + (i0b + i) * ldt;                           \
    if (unit) /* contiguous columns: a loop that vectorizes */           \
      for (int64_t j = 0; j < nc; j++) dst[j0 + j] = CONV(src[j]);       \
    else                                                                 \
      for (int64_t j = 0; j < nc; j++) dst[cols->off[j]] = CONV(src[j]); \
  }
#define GEMM_ID_(x) (x)

void CPU_ISA_FN(gemm_store_tile)(const gemm_operand_t *op, int64_t bo, int64_t i0, int64_t mr, int64_t j0, int64_t nc,
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
