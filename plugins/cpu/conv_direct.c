/* conv_direct.c — conv2d's forward, input gradient (stride 1) and weight gradient on the
 * AVX-512 micro-kernel without packing the im2col operand (compiled once per path; the avx512
 * copy does the work, the others decline and conv.c uses the gemm engine).
 *
 * Forward and input gradient: yᵀ (window origins × output channels) = im2col(image)ᵀ · wᵀ, where
 * the image (x, or dy for the input gradient) is copied band by band (the padded rows a band of
 * output rows reads, at most CD_BAND_BYTES) into a zero-padded f32 buffer and wᵀ (taps ×
 * channels, the small operand) is packed once per call. Threads take whole bands, each into its
 * own buffer, when there are at least as many bands as threads. The micro-kernel's 12 rows
 * are 12 window origins, each broadcasting its taps straight from the padded image through one
 * table of tap offsets. The input gradient is the transposed conv: taps (o, kh, kw) read dy at
 * rows ih + (KH-1-kh)·dh of an image padded by (KH-1)·dh - pt on top (likewise columns).
 *
 * Weight gradient: *
 * dw[g]ᵀ (taps × og) = im2col(x[:,g]) (taps × N·OH·OW) · dy[:,g]ᵀ (N·OH·OW × og). The input is
 * copied once into a zero-padded f32 image, so every tap row of im2col is, along one output
 * row, a contiguous run of that image (column stride 1 needs sw == 1): the micro-kernel
 * broadcasts its 12 tap rows straight from the image, run by run, and only dyᵀ (og wide, the
 * small operand, reused by every tap) is packed, once per k block.
 *
 * Numerics: each output element is bitwise what the gemm engine computes for the same problem
 * (gemm.h): a fused multiply-add chain from 0 in k order over each block of GEMM_KC k, the
 * blocks added in order to a tile from +0, and the same split of k (gemm_split_k) with the
 * partial sums added in chunk order. Threads only take independent (chunk, group, tap block)
 * tasks, so results do not depend on the thread count. */
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "cpu_accum.h"
#include "cpu_half.h"
#include "cpu_internal.h"
#include "dense_common.h"
#include "gemm.h"

#ifndef CPU_ISA
#error "conv_direct.c is compiled once per path, with -DCPU_ISA=<path>"
#endif

#if defined(__AVX512F__)
#include <immintrin.h>

#define DW_MR 12
#define DW_NR 32
#define DW_MAX_IMAGE_FLOATS ((int64_t)64 << 20) /* padded copy of x: at most 256 MB */
#define DW_MAX_CHUNKS 16                        /* tap chunks per k chunk */
#define DW_PACK_COST 0.03                       /* packing a k chunk's dyᵀ, as a share of its work for all taps */

/* c[r*ldc + j] += sum over the runs, p in order, of a[r][off[s] + p] * b[p*32 + j]. */
#define DW_DECL_(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
#define DW_PTR_(r) const float *a##r = a[r] + o;
#define DW_STEP_(r)                           \
  ar = _mm512_set1_ps(a##r[p]);               \
  c##r##0 = _mm512_fmadd_ps(ar, b0, c##r##0); \
  c##r##1 = _mm512_fmadd_ps(ar, b1, c##r##1);
#define DW_ADD_(r)                                                                     \
  _mm512_storeu_ps(c + (r)*ldc, _mm512_add_ps(_mm512_loadu_ps(c + (r)*ldc), c##r##0)); \
  _mm512_storeu_ps(c + (r)*ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + (r)*ldc + 16), c##r##1));
#define DW_ROWS12_(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

static void dw_kernel(int nruns, const int64_t *off, const int64_t *len, const float *const *a, const float *b,
                      float *c, int64_t ldc) {
  DW_ROWS12_(DW_DECL_)
  for (int s = 0; s < nruns; s++) {
    const int64_t o = off[s], n = len[s];
    DW_ROWS12_(DW_PTR_)
    for (int64_t p = 0; p < n; p++) {
      const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
      __m512 ar;
      DW_ROWS12_(DW_STEP_)
      b += DW_NR;
    }
  }
  DW_ROWS12_(DW_ADD_)
}

static inline float dw_load(const unsigned char *base, int32_t dtype, int64_t off) {
  switch (dtype) {
    case PARITY_DTYPE_F16: return cpu_f16_to_f32(((const uint16_t *)base)[off]);
    case PARITY_DTYPE_BF16: return psup_bf16_to_f32(((const uint16_t *)base)[off]);
    default: return ((const float *)base)[off];
  }
}

/* y[c * yc + j] = t[j * ldt + c] for j, c < 16: a 16 x 16 block stored transposed through
 * registers (the forward's tile of origins x channels into y, each channel's 16 origins as one
 * vector; the weight gradient's dy rows into its dyᵀ block). */
static void store_t16(const float *t, int64_t ldt, float *y, int64_t yc) {
  __m512 r[16], u[16];
  for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(t + j * ldt);
  for (int j = 0; j < 16; j += 2) { /* per 128-bit lane: (r_j, r_j+1) interleaved */
    u[j] = _mm512_unpacklo_ps(r[j], r[j + 1]);
    u[j + 1] = _mm512_unpackhi_ps(r[j], r[j + 1]);
  }
  for (int j = 0; j < 16; j += 4) { /* per lane k, r[4k + m] of rows j .. j+3: in r[j + m] */
    r[j] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u[j]), _mm512_castps_pd(u[j + 2])));
    r[j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u[j]), _mm512_castps_pd(u[j + 2])));
    r[j + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u[j + 1]), _mm512_castps_pd(u[j + 3])));
    r[j + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u[j + 1]), _mm512_castps_pd(u[j + 3])));
  }
  for (int m = 0; m < 4; m++) { /* gather lane k of the four row groups: channel 4k + m */
    const __m512 v0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88), w0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
    const __m512 v1 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88),
                 w1 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
    _mm512_storeu_ps(y + (0 + m) * yc, _mm512_shuffle_f32x4(v0, v1, 0x88));
    _mm512_storeu_ps(y + (4 + m) * yc, _mm512_shuffle_f32x4(w0, w1, 0x88));
    _mm512_storeu_ps(y + (8 + m) * yc, _mm512_shuffle_f32x4(v0, v1, 0xDD));
    _mm512_storeu_ps(y + (12 + m) * yc, _mm512_shuffle_f32x4(w0, w1, 0xDD));
  }
}

static inline void dw_store(unsigned char *base, int32_t dtype, int64_t off, float v) {
  switch (dtype) {
    case PARITY_DTYPE_F16: ((uint16_t *)base)[off] = cpu_f32_to_f16(v); break;
    case PARITY_DTYPE_BF16: ((uint16_t *)base)[off] = psup_f32_to_bf16(v); break;
    default: ((float *)base)[off] = v; break;
  }
}

/* Rows [r0, r1) of the padded f32 images of images [n0, n0 + n) of a [N][c][h][w] tensor, each
 * plane held as prow rows of wp floats from row r0 on: source row r is padded row r + pt (rows
 * and columns falling outside the padded image are dropped: a negative pad crops). */
static void pad_rows(const parity_tensor_desc_t *t, int64_t n0, int64_t n, int64_t c, int64_t h, int64_t w, int64_t pt,
                     int64_t pl, int64_t r0, int64_t r1, int64_t prow, int64_t wp, float *img, int threads) {
  const unsigned char *b = dense_base(t);
  const int64_t *st = t->strides, planes = n * c;
  int par = planes * (r1 - r0) * wp >= CPU_PARALLEL_MIN_ELEMENTS && threads > 1;
  (void)par;
  CPU_OMP(omp parallel for schedule(static) num_threads(threads) if (par))
  for (int64_t pl_ = 0; pl_ < planes; pl_++) {
    const int64_t nn = n0 + pl_ / c, cc = pl_ % c;
    float *dst = img + pl_ * prow * wp;
    const int64_t c0 = pl < 0 ? -pl : 0, c1 = w < wp - pl ? w : wp - pl; /* source columns kept */
    for (int64_t rr = r0; rr < r1; rr++) { /* each element written once: the pad zeroed, the rest copied */
      const int64_t r = rr - pt;
      float *row = dst + (rr - r0) * wp;
      if (r < 0 || r >= h || c0 >= c1) {
        memset(row, 0, sizeof(float) * (size_t)wp);
        continue;
      }
      memset(row, 0, sizeof(float) * (size_t)(pl + c0)); /* pl + c0 >= 0; pl + c1 <= wp */
      memset(row + pl + c1, 0, sizeof(float) * (size_t)(wp - pl - c1));
      row += pl;
      const int64_t so = nn * st[0] + cc * st[1] + r * st[2];
      if (t->dtype == PARITY_DTYPE_F32 && st[3] == 1)
        memcpy(row + c0, (const float *)b + so + c0, sizeof(float) * (size_t)(c1 - c0));
      else
        for (int64_t q = c0; q < c1; q++) row[q] = dw_load(b, t->dtype, so + q * st[3]);
    }
  }
}

/* The whole padded images (hp rows each) of images [n0, n0 + n). */
static void pad_image(const parity_tensor_desc_t *t, int64_t n0, int64_t n, int64_t c, int64_t h, int64_t w, int64_t pt,
                      int64_t pl, int64_t hp, int64_t wp, float *img, int threads) {
  pad_rows(t, n0, n, c, h, w, pt, pl, 0, hp, hp, wp, img, threads);
}

typedef struct dw_ctx_t {
  const conv_geom_t *g;
  const float *img; /* [N][C][Hp][Wp] */
  int64_t hp, wp, plane;
  const unsigned char *dyb;
  int32_t dyt;
  const int64_t *sy;
  int64_t taps, k, ksplit, kchunk, tblocks, tchunk, ldc;
  float *partial; /* ksplit × groups × taps × ldc */
  unsigned char *dwb;
  int32_t dwt;
  const int64_t *sw;
} dw_ctx_t;

/* Offset in the padded image of tap t's element for the window origin 0 of image 0. */
static int64_t tap_off(const dw_ctx_t *cx, int64_t t) {
  const conv_geom_t *g = cx->g;
  int64_t kw = t % g->kw, kh = (t / g->kw) % g->kh, cc = t / (g->kw * g->kh);
  return cc * cx->plane + kh * g->dh * cx->wp + kw * g->dw;
}

/* One task: chunk s of k, group gi, taps [t0, t1). */
static void dw_task(const dw_ctx_t *cx, int64_t s, int64_t gi, int64_t t0, int64_t t1, float *bp, float *tile,
                    int64_t *roff, int64_t *rlen) {
  const conv_geom_t *g = cx->g;
  const int64_t og = g->og, ldc = cx->ldc, l = g->oh * g->ow;
  const int64_t k0 = s * cx->kchunk, k1 = k0 + cx->kchunk < cx->k ? k0 + cx->kchunk : cx->k;
  const int64_t rows = t1 - t0, prow = (rows + DW_MR - 1) / DW_MR * DW_MR;
  memset(tile, 0, sizeof(float) * (size_t)(prow * ldc));
  const float *gimg = cx->img + gi * g->cg * cx->plane;
  for (int64_t pc = k0; pc < k1; pc += GEMM_KC) {
    const int64_t kc = k1 - pc < GEMM_KC ? k1 - pc : GEMM_KC;
    /* dyᵀ block: bp[(jp*kc + p)*32 + j] = dy[n, gi*og + jp*32 + j, oh, ow] for k = pc + p */
    int nruns = 0;
    for (int64_t p = 0; p < kc;) {
      const int64_t kk = pc + p, n = kk / l, rem = kk % l, oh = rem / g->ow, ow = rem % g->ow;
      int64_t len = g->ow - ow < kc - p ? g->ow - ow : kc - p;
      roff[nruns] = n * g->c * cx->plane + oh * g->sh * cx->wp + ow;
      rlen[nruns++] = len;
      const int64_t ybase = n * cx->sy[0] + oh * cx->sy[2] + ow * cx->sy[3];
      if (cx->dyt == PARITY_DTYPE_F32 && cx->sy[3] == 1) { /* 16 channels x 16 k at a time, transposed */
        const int64_t s1 = cx->sy[1], qv = len / 16 * 16;
        const float *src = (const float *)cx->dyb + ybase + gi * og * s1;
        for (int64_t jp = 0; jp < ldc; jp += DW_NR) {
          float *d = bp + jp * kc + p * DW_NR;
          const int64_t full = og - jp >= DW_NR ? DW_NR : og > jp ? (og - jp) / 16 * 16 : 0;
          for (int64_t h = 0; h < full; h += 16)
            for (int64_t q = 0; q < qv; q += 16) store_t16(src + (jp + h) * s1 + q, s1, d + q * DW_NR + h, DW_NR);
          for (int64_t j = 0; j < DW_NR; j++) { /* the k tail, channels past the last 16, zeros past og */
            const int64_t o = jp + j;
            for (int64_t q = j < full ? qv : 0; q < len; q++) d[q * DW_NR + j] = o < og ? src[o * s1 + q] : 0.0f;
          }
        }
        p += len;
        continue;
      }
      for (int64_t jp = 0; jp < ldc; jp += DW_NR) {
        float *d = bp + jp * kc + p * DW_NR;
        for (int64_t j = 0; j < DW_NR; j++) {
          const int64_t o = jp + j;
          if (o >= og) {
            for (int64_t q = 0; q < len; q++) d[q * DW_NR + j] = 0.0f;
            continue;
          }
          const int64_t yo = ybase + (gi * og + o) * cx->sy[1];
          for (int64_t q = 0; q < len; q++) d[q * DW_NR + j] = dw_load(cx->dyb, cx->dyt, yo + q * cx->sy[3]);
        }
      }
      p += len;
    }
    for (int64_t ib = 0; ib < rows; ib += DW_MR) {
      const float *a[DW_MR];
      for (int r = 0; r < DW_MR; r++) /* padding rows repeat the block's first row; never stored */
        a[r] = gimg + tap_off(cx, t0 + ib + (ib + r < rows ? r : 0));
      for (int64_t jp = 0; jp < ldc; jp += DW_NR)
        dw_kernel(nruns, roff, rlen, a, bp + jp * kc, tile + ib * ldc + jp, ldc);
    }
  }
  if (cx->ksplit > 1) {
    float *dst = cx->partial + ((s * g->groups + gi) * cx->taps + t0) * ldc;
    memcpy(dst, tile, sizeof(float) * (size_t)(rows * ldc));
    return;
  }
  for (int64_t t = t0; t < t1; t++) {
    const int64_t kw = t % g->kw, kh = (t / g->kw) % g->kh, cc = t / (g->kw * g->kh);
    const int64_t base = cc * cx->sw[1] + kh * cx->sw[2] + kw * cx->sw[3];
    for (int64_t o = 0; o < og; o++)
      dw_store(cx->dwb, cx->dwt, base + (gi * og + o) * cx->sw[0], tile[(t - t0) * ldc + o]);
  }
}

int32_t CPU_ISA_FN(cpu_conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                                    const parity_tensor_desc_t *dw) {
  if (g->sw != 1) return CPU_CONV_DW_DECLINED;
  const int64_t hp = g->h + g->pt + g->pb, wp = g->w + g->pl + g->pr;
  const int64_t imgf = g->n * g->c * hp * wp;
  if (imgf > DW_MAX_IMAGE_FLOATS || g->og < 1 || g->cg < 1) return CPU_CONV_DW_DECLINED;
  dw_ctx_t cx;
  memset(&cx, 0, sizeof cx);
  cx.g = g, cx.hp = hp, cx.wp = wp, cx.plane = hp * wp;
  cx.dyb = dense_base(dy), cx.dyt = dy->dtype, cx.sy = dy->strides;
  cx.dwb = dense_base(dw), cx.dwt = dw->dtype, cx.sw = dw->strides;
  cx.taps = g->cg * g->kh * g->kw;
  cx.k = g->n * g->oh * g->ow;
  cx.ldc = (g->og + DW_NR - 1) / DW_NR * DW_NR;
  /* the gemm engine's split of k for this problem (m = og, n = taps): the same bits */
  CPU_ISA_FN(gemm_split_k)(g->groups, g->og, cx.taps, cx.k, &cx.ksplit, &cx.kchunk);
  int threads = cpu_max_threads();
  double flops = 2.0 * (double)g->groups * (double)g->og * (double)cx.taps * (double)cx.k;
  if (flops < (double)(1 << 21)) threads = 1;
  /* tap chunks of whole 12-row blocks. Each task packs its k chunk's dyᵀ again, so a task of
   * `per` blocks costs about per / tblocks + DW_PACK_COST of its k chunk's work. Take the chunking
   * (1 .. DW_MAX_CHUNKS chunks) whose busiest thread, ceil(tasks / threads) such tasks, has the
   * least: 11 k chunks on 2 threads left one thread a whole chunk more (dw at 1.76x one thread);
   * in 2 tap chunks each, 22 tasks split evenly. */
  const int64_t tblocks = (cx.taps + DW_MR - 1) / DW_MR, base_tasks = cx.ksplit * g->groups;
  int64_t per = tblocks, chunks = 1;
  double best = 0.0;
  for (int64_t c = 1; c <= DW_MAX_CHUNKS && c <= tblocks; c++) {
    const int64_t pc = (tblocks + c - 1) / c, cc = (tblocks + pc - 1) / pc, n = base_tasks * cc;
    const double span = (double)((n + threads - 1) / threads) * ((double)pc / (double)tblocks + DW_PACK_COST);
    if (c == 1 || span < best * 0.999) best = span, per = pc, chunks = cc;
  }
  cx.tchunk = per * DW_MR;
  const int64_t tasks = base_tasks * chunks;
  if (tasks < threads) threads = (int)tasks;
  /* buffers: padded image, partials, and per thread a dyᵀ block, a tile and the run tables */
  const size_t bp_f = (size_t)(GEMM_KC * cx.ldc), tile_f = (size_t)(cx.tchunk * cx.ldc);
  const size_t runs = GEMM_KC + 1;
  const size_t per_thread = (bp_f + tile_f) * sizeof(float) + 2 * runs * sizeof(int64_t) + 128;
  const size_t part_f = cx.ksplit > 1 ? (size_t)(cx.ksplit * g->groups * cx.taps * cx.ldc) : 0;
  const size_t total = ((size_t)imgf + part_f) * sizeof(float) + per_thread * (size_t)threads + 64;
  unsigned char *mem = gemm_ws_take(total);
  if (!mem)
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: conv2d backward (dw): cannot allocate %zu bytes of scratch",
                    total);
  float *img = (float *)mem;
  cx.img = img;
  cx.partial = img + imgf;
  unsigned char *thr = (unsigned char *)(cx.partial + part_f);
  thr = (unsigned char *)(((uintptr_t)thr + 63) & ~(uintptr_t)63);
  pad_image(x, 0, g->n, g->c, g->h, g->w, g->pt, g->pl, hp, wp, img, threads); /* the zero-padded f32 x */
  const int64_t nchunks = chunks;
  CPU_PARALLEL(threads > 1, threads, {
    unsigned char *mine = thr + per_thread * (size_t)cpu_thread_id();
    float *bp = (float *)mine, *tile = bp + bp_f;
    int64_t *roff = (int64_t *)(tile + tile_f), *rlen = roff + runs;
    CPU_OMP(omp for schedule(dynamic, 1))
    for (int64_t t = 0; t < tasks; t++) {
      const int64_t q = t % nchunks, rest = t / nchunks, gi = rest % g->groups, s = rest / g->groups;
      const int64_t t0 = q * cx.tchunk, t1 = t0 + cx.tchunk < cx.taps ? t0 + cx.tchunk : cx.taps;
      if (t0 < t1) dw_task(&cx, s, gi, t0, t1, bp, tile, roff, rlen);
    }
  });
  if (cx.ksplit > 1) { /* dw = 0 + P_0 + P_1 + ... in chunk order */
    const int64_t rowsall = g->groups * cx.taps;
    int par = threads > 1 && rowsall * g->og >= 4096;
    (void)par;
    CPU_OMP(omp parallel for schedule(static) num_threads(threads) if (par))
    for (int64_t rr = 0; rr < rowsall; rr++) {
      const int64_t gi = rr / cx.taps, t = rr % cx.taps;
      const int64_t kw = t % g->kw, kh = (t / g->kw) % g->kh, cc = t / (g->kw * g->kh);
      const int64_t base = cc * cx.sw[1] + kh * cx.sw[2] + kw * cx.sw[3];
      for (int64_t o = 0; o < g->og; o++) {
        float v = 0.0f;
        for (int64_t s = 0; s < cx.ksplit; s++) v += cx.partial[((s * g->groups + gi) * cx.taps + t) * cx.ldc + o];
        dw_store(cx.dwb, cx.dwt, base + (gi * g->og + o) * cx.sw[0], v);
      }
    }
  }
  gemm_ws_give(mem);
  return PARITY_STATUS_OK;
}

/* ---- forward and input gradient ------------------------------------------------------------ */
/* c[r*ldc + j] += sum_p a[r][off[p]] * b[p*32 + j] for 12 window origins r. */
#define DX_PTR_(r) const float *a##r = a[r];
#define DX_STEP_(r)                           \
  ar = _mm512_set1_ps(a##r[o]);               \
  c##r##0 = _mm512_fmadd_ps(ar, b0, c##r##0); \
  c##r##1 = _mm512_fmadd_ps(ar, b1, c##r##1);
/* The same for 12 consecutive origins of one output row (column step 1): one base pointer. */
#define DC_STEP_(r)                           \
  ar = _mm512_set1_ps(a[o + (r)]);            \
  c##r##0 = _mm512_fmadd_ps(ar, b0, c##r##0); \
  c##r##1 = _mm512_fmadd_ps(ar, b1, c##r##1);
static void dc_kernel(int64_t kc, const int64_t *off, const float *a, const float *b, float *c, int64_t ldc) {
  DW_ROWS12_(DW_DECL_)
  for (int64_t p = 0; p < kc; p++) {
    const int64_t o = off[p];
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    __m512 ar;
    DW_ROWS12_(DC_STEP_)
    b += DW_NR;
  }
  DW_ROWS12_(DW_ADD_)
}

static void dx_kernel(int64_t kc, const int64_t *off, const float *const *a, const float *b, float *c, int64_t ldc) {
  DW_ROWS12_(DW_DECL_)
  DW_ROWS12_(DX_PTR_)
  for (int64_t p = 0; p < kc; p++) {
    const int64_t o = off[p];
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    __m512 ar;
    DW_ROWS12_(DX_STEP_)
    b += DW_NR;
  }
  DW_ROWS12_(DW_ADD_)
}

/* out[n, gi*cog + co, i, j] = init + sum over taps k = (ci, kh, kw) of
 *   wt(k, co) * img[n, gi*cgi + ci, i*sh + khb + kh*khs, j*sw + kwb + kw*kws]   (img padded) */
typedef struct cd_t {
  const float *img;                        /* padded rows [row0, row0 + plane / wp) of one image */
  int64_t plane, wp, row0;                 /* image plane, row length, first row held */
  int64_t m0, m1;                          /* the image's origins to compute: [m0, m1) */
  int64_t cgi, kh, kw, khb, khs, kwb, kws; /* taps */
  const unsigned char *wb;
  int32_t wt;
  int64_t wco, wci, wkh, wkw, wgroup; /* weight element of (co, ci, kh, kw), group step */
  int64_t groups, cog, oh, ow, sh, sw;
  unsigned char *yb;
  int32_t yt;
  int64_t yc, yh, yw;      /* output strides of a channel, row, column */
  const unsigned char *bb; /* bias or NULL */
  int32_t bt;
  int64_t bs;
  /* derived */
  int64_t k, ldc;
  float *wpk;   /* groups × k × ldc: wᵀ packed, 32-wide panels per k block */
  int64_t *tap; /* k tap offsets */
  float *tiles; /* per thread: CD_MC (rounded up to DW_MR) × ldc */
} cd_t;

#define CD_MC 144                         /* window origins per task */
#define CD_BAND_BYTES ((size_t)256 << 10) /* padded rows per band, all channels */

/* 12 origins at consecutive image addresses */
static int contig_from(const float *const *org) {
  for (int r = 1; r < DW_MR; r++)
    if (org[r] != org[0] + r) return 0;
  return 1;
}

static void cd_task(const cd_t *d, int64_t gi, int64_t i0, float *tile) {
  const int64_t i1 = i0 + CD_MC < d->m1 ? i0 + CD_MC : d->m1, rows = i1 - i0, ldc = d->ldc;
  const int64_t prow = (rows + DW_MR - 1) / DW_MR * DW_MR;
  /* origin pointers into the padded image (group gi's channels) and output offsets, stepped
   * along the origins (a division per origin had cost several percent of the forward pass) */
  const float *org[CD_MC];
  int64_t yo[CD_MC];
  {
    const float *gimg = d->img + gi * d->cgi * d->plane;
    const int64_t ygi = gi * d->cog * d->yc;
    int64_t oh = i0 / d->ow, ow = i0 % d->ow;
    for (int64_t i = 0; i < rows; i++) {
      org[i] = gimg + (oh * d->sh - d->row0) * d->wp + ow * d->sw;
      yo[i] = oh * d->yh + ow * d->yw + ygi;
      if (++ow == d->ow) ow = 0, oh++;
    }
    for (int64_t i = rows; i < prow; i++) org[i] = org[0]; /* padding rows: computed, never stored */
  }
  /* the tile starts at each channel's bias (or +0): one row, copied to the others */
  if (d->bb) {
    for (int64_t co = 0; co < ldc; co++)
      tile[co] = co < d->cog ? dw_load(d->bb, d->bt, (gi * d->cog + co) * d->bs) : 0.0f;
    for (int64_t i = 1; i < rows; i++) memcpy(tile + i * ldc, tile, sizeof(float) * (size_t)ldc);
  } else {
    memset(tile, 0, sizeof(float) * (size_t)(rows * ldc));
  }
  if (prow > rows) memset(tile + rows * ldc, 0, sizeof(float) * (size_t)((prow - rows) * ldc));
  const float *wg = d->wpk + gi * d->k * ldc;
  for (int64_t pc = 0; pc < d->k; pc += GEMM_KC) {
    const int64_t kc = d->k - pc < GEMM_KC ? d->k - pc : GEMM_KC;
    for (int64_t ib = 0; ib < prow; ib += DW_MR) {
      const int contig = org[ib + DW_MR - 1] == org[ib] + (DW_MR - 1) && contig_from(org + ib);
      for (int64_t jp = 0; jp < ldc; jp += DW_NR) {
        if (contig)
          dc_kernel(kc, d->tap + pc, org[ib], wg + pc * ldc + jp * kc, tile + ib * ldc + jp, ldc);
        else
          dx_kernel(kc, d->tap + pc, org + ib, wg + pc * ldc + jp * kc, tile + ib * ldc + jp, ldc);
      }
    }
  }
  /* channel by channel, so that consecutive origins store to consecutive elements */
  if (d->yt != PARITY_DTYPE_F32) {
    for (int64_t co = 0; co < d->cog; co++)
      for (int64_t i = 0; i < rows; i++) dw_store(d->yb, d->yt, yo[i] + co * d->yc, tile[i * ldc + co]);
    return;
  }
  /* f32: 16 origins at consecutive elements of y (one image, y dense along them) × 16 channels
   * at a time through a register transpose; the rest element by element */
  float *yb = (float *)d->yb;
  const int64_t cv = d->cog / 16 * 16;
  int64_t i = 0;
  while (i < rows) {
    int run = i + 16 <= rows;
    for (int j = 1; run && j < 16; j++) run = yo[i + j] == yo[i] + j;
    if (!run) {
      for (int64_t co = 0; co < d->cog; co++) yb[yo[i] + co * d->yc] = tile[i * ldc + co];
      i++;
      continue;
    }
    for (int64_t co = 0; co < cv; co += 16) store_t16(tile + i * ldc + co, ldc, yb + yo[i] + co * d->yc, d->yc);
    for (int64_t co = cv; co < d->cog; co++)
      for (int j = 0; j < 16; j++) yb[yo[i] + j + co * d->yc] = tile[(i + j) * ldc + co];
    i += 16;
  }
}

/* The tap table and wᵀ, packed into scratch once per call; d->tiles: the threads' tiles. */
static void cd_pack(cd_t *d, unsigned char *scratch) {
  d->k = d->cgi * d->kh * d->kw;
  d->ldc = (d->cog + DW_NR - 1) / DW_NR * DW_NR;
  d->wpk = (float *)scratch;
  d->tap = (int64_t *)(d->wpk + d->groups * d->k * d->ldc);
  d->tiles = (float *)(((uintptr_t)(d->tap + d->k + 8) + 63) & ~(uintptr_t)63);
  for (int64_t t = 0; t < d->k; t++) {
    const int64_t kw = t % d->kw, kh = (t / d->kw) % d->kh, ci = t / (d->kw * d->kh);
    d->tap[t] = ci * d->plane + (d->khb + kh * d->khs) * d->wp + d->kwb + kw * d->kws;
  }
  /* wᵀ: per group, per k block of kc, 32-wide panels [jp][p][32] */
  for (int64_t gi = 0; gi < d->groups; gi++)
    for (int64_t pc = 0; pc < d->k; pc += GEMM_KC) {
      const int64_t kc = d->k - pc < GEMM_KC ? d->k - pc : GEMM_KC;
      float *blk = d->wpk + (gi * d->k + pc) * d->ldc;
      for (int64_t p = 0; p < kc; p++) {
        const int64_t t = pc + p, kw = t % d->kw, kh = (t / d->kw) % d->kh, ci = t / (d->kw * d->kh);
        const int64_t wo = gi * d->wgroup + ci * d->wci + kh * d->wkh + kw * d->wkw;
        for (int64_t co = 0; co < d->ldc; co++)
          blk[(co / DW_NR) * DW_NR * kc + p * DW_NR + co % DW_NR] =
              co < d->cog ? dw_load(d->wb, d->wt, wo + co * d->wco) : 0.0f;
      }
    }
}

/* Origins per tile, rounded up to the micro-kernel's rows; a tile holds that many × ldc floats. */
static size_t cd_tile_floats(void) { return (size_t)((CD_MC + DW_MR - 1) / DW_MR * DW_MR); }

/* The tasks of one band (d->img padded, already filled) on this thread alone, with its tile. */
static void cd_run_one(const cd_t *d, float *tile) {
  const int64_t chunks = (d->m1 - d->m0 + CD_MC - 1) / CD_MC, tasks = d->groups * chunks;
  for (int64_t t = 0; t < tasks; t++) cd_task(d, t / chunks, d->m0 + (t % chunks) * CD_MC, tile);
}

/* The tasks of one band (d->img padded, already filled), shared by the threads. */
static void cd_run(const cd_t *d, int threads) {
  const int64_t chunks = (d->m1 - d->m0 + CD_MC - 1) / CD_MC, tasks = d->groups * chunks;
  if (tasks < threads) threads = (int)tasks;
  const size_t tile_f = cd_tile_floats() * (size_t)d->ldc;
  CPU_PARALLEL(threads > 1, threads, {
    float *tile = d->tiles + tile_f * (size_t)cpu_thread_id();
    CPU_OMP(omp for schedule(dynamic, 1))
    for (int64_t t = 0; t < tasks; t++) cd_task(d, t / chunks, d->m0 + (t % chunks) * CD_MC, tile);
  });
}

/* One band of one image: what it pads, and where its outputs go. */
typedef struct cd_band_t {
  const parity_tensor_desc_t *src;
  int64_t c, h, w, pt, pl;         /* the source image, its padding */
  int64_t bh, brows, halo, nbands; /* output rows per band, padded rows held, rows one output row needs */
  unsigned char *yb0;
  int64_t ystep; /* bytes per output image */
} cd_band_t;

/* Band u (image u / nbands) into d->img, then its outputs: on this thread with tile, or (tile
 * NULL) shared by the threads. */
static void cd_band(cd_t *d, const cd_band_t *b, int64_t u, float *tile, int threads) {
  const int64_t i = u / b->nbands, oh0 = u % b->nbands * b->bh, oh1 = oh0 + b->bh < d->oh ? oh0 + b->bh : d->oh;
  d->yb = b->yb0 + i * b->ystep;
  d->row0 = oh0 * d->sh, d->m0 = oh0 * d->ow, d->m1 = oh1 * d->ow;
  pad_rows(b->src, i, 1, b->c, b->h, b->w, b->pt, b->pl, d->row0, (oh1 - 1) * d->sh + b->halo, b->brows, d->wp,
           (float *)d->img, tile ? 1 : threads);
  if (tile)
    cd_run_one(d, tile);
  else
    cd_run(d, threads);
}

static size_t cd_scratch(const cd_t *d, int threads) {
  const int64_t k = d->cgi * d->kh * d->kw, ldc = (d->cog + DW_NR - 1) / DW_NR * DW_NR;
  return sizeof(float) * (size_t)(d->groups * k * ldc) + sizeof(int64_t) * (size_t)(k + 8) + 64 +
         sizeof(float) * cd_tile_floats() * (size_t)ldc * (size_t)threads;
}

/* forward (dx == NULL: y = conv(x, w) + bias) or, with stride 1, the input gradient dx of dy. */
int32_t CPU_ISA_FN(cpu_conv_direct_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x,
                                        const parity_tensor_desc_t *w, const parity_tensor_desc_t *bias,
                                        const parity_tensor_desc_t *y, const parity_tensor_desc_t *dy,
                                        const parity_tensor_desc_t *dx) {
  const int fwd = dx == NULL;
  const int64_t *sw = w->strides;
  cd_t d;
  memset(&d, 0, sizeof d);
  int64_t ksplit, kchunk, wp, pt, pl, srcn, srcc, srch, srcw;
  const parity_tensor_desc_t *src, *out;
  if (fwd) {
    CPU_ISA_FN(gemm_split_k)(g->n * g->groups, g->og, g->oh * g->ow, g->cg * g->kh * g->kw, &ksplit, &kchunk);
    src = x, out = y;
    srcn = g->n, srcc = g->c, srch = g->h, srcw = g->w;
    pt = g->pt, pl = g->pl, wp = g->w + g->pl + g->pr;
    d.cgi = g->cg, d.khb = 0, d.khs = g->dh, d.kwb = 0, d.kws = g->dw;
    d.wco = sw[0], d.wci = sw[1], d.wgroup = g->og * sw[0];
    d.cog = g->og, d.oh = g->oh, d.ow = g->ow, d.sh = g->sh, d.sw = g->sw;
    if (bias) d.bb = dense_base(bias), d.bt = bias->dtype, d.bs = bias->strides[0];
  } else {
    if (g->sh != 1 || g->sw != 1) return CPU_CONV_DW_DECLINED;
    CPU_ISA_FN(gemm_split_k)(g->n * g->groups, g->cg, g->h * g->w, g->og * g->kh * g->kw, &ksplit, &kchunk);
    src = dy, out = dx;
    srcn = g->n, srcc = g->o, srch = g->oh, srcw = g->ow;
    pt = (g->kh - 1) * g->dh - g->pt, pl = (g->kw - 1) * g->dw - g->pl;
    wp = g->w + (g->kw - 1) * g->dw;
    d.cgi = g->og, d.khb = (g->kh - 1) * g->dh, d.khs = -g->dh, d.kwb = (g->kw - 1) * g->dw, d.kws = -g->dw;
    d.wco = sw[1], d.wci = sw[0], d.wgroup = g->og * sw[0];
    d.cog = g->cg, d.oh = g->h, d.ow = g->w, d.sh = 1, d.sw = 1;
  }
  /* A band of bh output rows needs padded rows [oh0·sh, (oh0 + bh − 1)·sh + (kh − 1)·dh] of all
   * channels; bands are as tall as fit in CD_BAND_BYTES, so that a band stays in L2 beside wᵀ
   * (a whole padded image, 862 KB for 64 × 56 × 56, did not on a 1 MB L2). */
  const int64_t halo = (g->kh - 1) * g->dh + 1, rowf = srcc * wp;
  int64_t bh = ((int64_t)(CD_BAND_BYTES / sizeof(float)) / (rowf > 0 ? rowf : 1) - halo) / d.sh + 1;
  if (bh < 1) bh = 1;
  if (bh > d.oh) bh = d.oh;
  const int64_t brows = (bh - 1) * d.sh + halo, imgf = rowf * brows; /* one band's padded rows */
  if (ksplit > 1 || imgf > DW_MAX_IMAGE_FLOATS || d.cog < 1) return CPU_CONV_DW_DECLINED;
  d.wkh = sw[2], d.wkw = sw[3];
  d.plane = brows * wp, d.wp = wp;
  d.kh = g->kh, d.kw = g->kw, d.groups = g->groups;
  d.wb = dense_base(w), d.wt = w->dtype;
  d.yb = dense_base(out), d.yt = out->dtype;
  d.yc = out->strides[1], d.yh = out->strides[2], d.yw = out->strides[3];
  int threads = cpu_max_threads();
  double flops = 2.0 * (double)g->n * (double)g->groups * (double)d.cog * (double)d.oh * (double)d.ow *
                 (double)(d.cgi * g->kh * g->kw);
  if (flops < (double)(1 << 21)) threads = 1;
  /* With at least as many bands (of all images) as threads, the threads take bands as they come,
   * each padding and computing its band in its own buffer: an image shared by the threads moved
   * between the cores' caches twice per image (two threads ran at 1.4x one), and whole images
   * per thread left one core idle while the other finished its last. Fewer bands than threads:
   * the threads share each band. */
  const int64_t nbands = (d.oh + bh - 1) / bh, units = srcn * nbands;
  const int own = threads > 1 && units >= threads && imgf * threads <= DW_MAX_IMAGE_FLOATS;
  const int64_t imgs = own ? threads : 1, imgstep = (imgf + 15) / 16 * 16; /* 64-byte aligned */
  const size_t total = sizeof(float) * (size_t)(imgstep * imgs) + 64 + cd_scratch(&d, threads);
  unsigned char *mem = gemm_ws_take(total);
  if (!mem)
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: conv2d %s: cannot allocate %zu bytes of scratch",
                    fwd ? "forward" : "backward (dx)", total);
  float *img = (float *)mem;
  d.img = img;
  cd_pack(&d, (unsigned char *)(((uintptr_t)(img + imgstep * imgs) + 63) & ~(uintptr_t)63));
  unsigned char *yb0 = d.yb;
  const int64_t ystep = out->strides[0] * (int64_t)psup_dtype_size(out->dtype);
  const cd_band_t b = {src, srcc, srch, srcw, pt, pl, bh, brows, halo, nbands, yb0, ystep};
  if (own) {
    CPU_PARALLEL(1, threads, {
      const int id = cpu_thread_id();
      cd_t mine = d;
      mine.img = img + imgstep * id;
      float *tile = d.tiles + cd_tile_floats() * (size_t)d.ldc * (size_t)id;
      CPU_OMP(omp for schedule(dynamic, 1))
      for (int64_t u = 0; u < units; u++) cd_band(&mine, &b, u, tile, 1);
    });
  } else {
    for (int64_t u = 0; u < units; u++) cd_band(&d, &b, u, NULL, threads);
  }
  gemm_ws_give(mem);
  return PARITY_STATUS_OK;
}

#else /* the avx2 and portable paths leave conv2d to the gemm engine */
int32_t CPU_ISA_FN(cpu_conv_direct_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x,
                                        const parity_tensor_desc_t *w, const parity_tensor_desc_t *bias,
                                        const parity_tensor_desc_t *y, const parity_tensor_desc_t *dy,
                                        const parity_tensor_desc_t *dx) {
  (void)g, (void)x, (void)w, (void)bias, (void)y, (void)dy, (void)dx;
  return CPU_CONV_DW_DECLINED;
}
int32_t CPU_ISA_FN(cpu_conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x, const parity_tensor_desc_t *dy,
                                    const parity_tensor_desc_t *dw) {
  (void)g, (void)x, (void)dy, (void)dw;
  return CPU_CONV_DW_DECLINED;
}
#endif
