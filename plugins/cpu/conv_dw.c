/* conv_dw.c — conv2d's weight gradient on the AVX-512 micro-kernel without packing the im2col
 * operand (compiled once per path; the avx512 copy does the work, the others decline).
 *
 * dw[g]ᵀ (taps × og) = im2col(x[:,g]) (taps × N·OH·OW) · dy[:,g]ᵀ (N·OH·OW × og). The input is
 * copied once into a zero-padded f32 image, so every tap row of im2col is, along one output
 * row, a contiguous run of that image (column stride 1 needs sw == 1): the micro-kernel
 * broadcasts its 12 tap rows straight from the image, run by run, and only dyᵀ (og wide, the
 * small operand, reused by every tap) is packed, once per k block.
 *
 * Numerics: each dw element is bitwise what the gemm engine computes for the same problem
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
#error "conv_dw.c is compiled once per path, with -DCPU_ISA=<path>"
#endif

#if defined(__AVX512F__)
#include <immintrin.h>

#define DW_MR 12
#define DW_NR 32
#define DW_MAX_IMAGE_FLOATS ((int64_t)64 << 20) /* padded copy of x: at most 256 MB */

/* c[r*ldc + j] += sum over the runs, p in order, of a[r][off[s] + p] * b[p*32 + j]. */
#define DW_DECL_(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
#define DW_PTR_(r) const float *a##r = a[r] + o;
#define DW_STEP_(r)                           \
  ar = _mm512_set1_ps(a##r[p]);               \
  c##r##0 = _mm512_fmadd_ps(ar, b0, c##r##0); \
  c##r##1 = _mm512_fmadd_ps(ar, b1, c##r##1);
#define DW_ADD_(r)                                                                          \
  _mm512_storeu_ps(c + (r) * ldc, _mm512_add_ps(_mm512_loadu_ps(c + (r) * ldc), c##r##0)); \
  _mm512_storeu_ps(c + (r) * ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + (r) * ldc + 16), c##r##1));
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

static inline void dw_store(unsigned char *base, int32_t dtype, int64_t off, float v) {
  switch (dtype) {
    case PARITY_DTYPE_F16: ((uint16_t *)base)[off] = cpu_f32_to_f16(v); break;
    case PARITY_DTYPE_BF16: ((uint16_t *)base)[off] = psup_f32_to_bf16(v); break;
    default: ((float *)base)[off] = v; break;
  }
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
      for (int64_t jp = 0; jp < ldc; jp += DW_NR) {
        float *d = bp + jp * kc + p * DW_NR;
        for (int64_t j = 0; j < DW_NR; j++) {
          const int64_t o = jp + j;
          if (o >= og) {
            for (int64_t q = 0; q < len; q++) d[q * DW_NR + j] = 0.0f;
            continue;
          }
          const int64_t yo = ybase + (gi * og + o) * cx->sy[1];
          if (cx->dyt == PARITY_DTYPE_F32 && cx->sy[3] == 1) {
            const float *src = (const float *)cx->dyb + yo;
            for (int64_t q = 0; q < len; q++) d[q * DW_NR + j] = src[q];
          } else {
            for (int64_t q = 0; q < len; q++) d[q * DW_NR + j] = dw_load(cx->dyb, cx->dyt, yo + q * cx->sy[3]);
          }
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

int32_t CPU_ISA_FN(cpu_conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x,
                                    const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dw) {
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
  /* tap chunks: whole 12-row blocks, enough tasks for the threads */
  int64_t tblocks = (cx.taps + DW_MR - 1) / DW_MR, base_tasks = cx.ksplit * g->groups;
  int64_t chunks = base_tasks >= 4 * threads ? 1 : (4 * threads + base_tasks - 1) / base_tasks;
  if (chunks > tblocks) chunks = tblocks;
  int64_t per = (tblocks + chunks - 1) / chunks;
  chunks = (tblocks + per - 1) / per;
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
  /* the zero-padded f32 copy of x */
  {
    const unsigned char *xb = dense_base(x);
    const int64_t *sx = x->strides;
    const int64_t planes = g->n * g->c;
    int par = imgf >= CPU_PARALLEL_MIN_ELEMENTS && threads > 1;
    (void)par;
    CPU_OMP(omp parallel for schedule(static) num_threads(threads) if (par))
    for (int64_t pl = 0; pl < planes; pl++) {
      const int64_t n = pl / g->c, c = pl % g->c;
      float *dst = img + pl * hp * wp;
      memset(dst, 0, sizeof(float) * (size_t)(g->pt * wp));
      for (int64_t ih = 0; ih < g->h; ih++) {
        float *row = dst + (g->pt + ih) * wp;
        for (int64_t q = 0; q < g->pl; q++) row[q] = 0.0f;
        const int64_t so = n * sx[0] + c * sx[1] + ih * sx[2];
        if (x->dtype == PARITY_DTYPE_F32 && sx[3] == 1)
          memcpy(row + g->pl, (const float *)xb + so, sizeof(float) * (size_t)g->w);
        else
          for (int64_t iw = 0; iw < g->w; iw++) row[g->pl + iw] = dw_load(xb, x->dtype, so + iw * sx[3]);
        for (int64_t q = g->pl + g->w; q < wp; q++) row[q] = 0.0f;
      }
      memset(dst + (g->pt + g->h) * wp, 0, sizeof(float) * (size_t)(g->pb * wp));
    }
  }
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

#else /* the avx2 and portable paths leave the weight gradient to the gemm engine */
int32_t CPU_ISA_FN(cpu_conv_dw_f32)(const conv_geom_t *g, const parity_tensor_desc_t *x,
                                    const parity_tensor_desc_t *dy, const parity_tensor_desc_t *dw) {
  (void)g, (void)x, (void)dy, (void)dw;
  return CPU_CONV_DW_DECLINED;
}
#endif
