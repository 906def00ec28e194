/* reduce_internal.h — the reduce family's plan, shared by reduce.c (validation, planning,
 * dispatch) and the per-dtype kernel files generated from reduce_tmpl.h.
 *
 * A plan splits x's axes into kept axes (one output element per index) and reduced axes, both
 * without size-1 axes; adjacent reduced axes that are contiguous in x (and dx) are merged. The
 * reduced elements of one output are numbered row-major over the reduced axes; that number is
 * argmax/argmin's result and the order every kernel visits them in.
 *
 * Row mode walks each output's reduced set with its innermost reduced axis in the inner loop.
 * Column mode is chosen when a kept axis has a smaller x stride than the innermost reduced
 * axis (e.g. summing over rows of a row-major matrix): it keeps tiles of outputs along that
 * axis (RD_TILE_BYTES of input per reduced element) and streams the reduced set once per tile.
 * Every output's arithmetic is the same whatever tile or thread handles it. */
#ifndef PARITY_CPU_REDUCE_INTERNAL_H
#define PARITY_CPU_REDUCE_INTERNAL_H

#include <string.h>

#include "cpu_internal.h"

/* Column mode reads a tile of RD_TILE_BYTES of adjacent outputs from each reduced row. A
 * reduction of at least RD_WIDE_MIN bytes whose kept row is dense reads RD_WIDE_BYTES (a page)
 * instead when that still leaves a tile per thread: from memory, 1 KB out of every row ran at
 * 16-20 GB/s beside 28 for a plain sum (the prefetcher stops at each page and had little to go
 * on); a page per row runs at 24-28. In cache the narrow tile is faster (its loops have a fixed
 * trip count). The width changes which outputs a tile holds, not the arithmetic of any one. A
 * wide sum keeps its cascade levels on the stack, so a reduction taller than RD_WIDE_STACK allows
 * stays narrow (a replay allocates nothing). */
#define RD_TILE_BYTES 1024
#define RD_WIDE_BYTES 4096
#define RD_WIDE_MIN (INT64_C(4) << 20)
#define RD_WIDE_STACK (INT64_C(64) << 10) /* the wide sum's cascade levels (16 for f32: up to 2^20 - 16 rows) */
#define RD_COLUMN_LEAF 16                 /* reduced elements summed sequentially per column-mode leaf */

/* Which tensors a plan's strides describe (psup_iter slots). */
enum { RD_X = 0, RD_Y = 1, RD_DY = 2, RD_DX = 3, RD_NT = 4 };

typedef struct rd_plan {
  /* what every launch reads, first and together (one cache line; the shapes and strides below
   * span sixteen more, and a launch after a cache-sized reduction finds none of them in L1) */
  int32_t op;          /* parity_op_t */
  uint32_t nk, nr, nb; /* kept, reduced and size > 1 axes (below) */
  int column;          /* column mode over kept axis vk */
  uint32_t vk;
  int threads;          /* threads allowed (1 = serial) */
  int64_t M;            /* output elements */
  int64_t K;            /* reduced elements per output */
  int64_t L;            /* innermost reduced extent (1 when nothing is reduced) */
  int64_t inner[RD_NT]; /* stride of each tensor along the innermost reduced axis (0: none) */
  /* kept axes, x axis order; strides of x, y, dy, dx on each */
  int64_t kshape[PARITY_MAX_RANK];
  int64_t ks[RD_NT][PARITY_MAX_RANK];
  /* reduced axes, x axis order; strides of x and dx (y and dy have size 1 there) */
  int64_t rshape[PARITY_MAX_RANK];
  int64_t rs[RD_NT][PARITY_MAX_RANK];
  /* every axis of size > 1, x axis order, with y/dy strides 0 on reduced axes (backward
   * broadcast of sum and mean) */
  int64_t bshape[PARITY_MAX_RANK];
  int64_t bs[RD_NT][PARITY_MAX_RANK];
} rd_plan;

/* Kernels of one dtype. forward writes y (or the i64 index for argmax/argmin); backward
 * writes dx. Pointers are element 0 of each view. Return a parity_status_t. */
typedef int32_t (*rd_forward_fn)(const rd_plan *p, const void *x, void *y);
typedef int32_t (*rd_backward_fn)(const rd_plan *p, const void *x, const void *y, const void *dy, void *dx);
typedef struct rd_kernels {
  rd_forward_fn forward;
  rd_backward_fn backward;
} rd_kernels;

/* Integer keys that order floats numerically with -0 < +0 (NaNs are handled apart); the map
 * is its own inverse. */
static inline int32_t rd_key_f32(float v) {
  int32_t b;
  memcpy(&b, &v, sizeof b);
  return b ^ (int32_t)((uint32_t)(b >> 31) >> 1);
}
static inline float rd_unkey_f32(int32_t k) {
  int32_t b = k ^ (int32_t)((uint32_t)(k >> 31) >> 1);
  float v;
  memcpy(&v, &b, sizeof v);
  return v;
}
static inline int64_t rd_key_f64(double v) {
  int64_t b;
  memcpy(&b, &v, sizeof b);
  return b ^ (int64_t)((uint64_t)(b >> 63) >> 1);
}
static inline double rd_unkey_f64(int64_t k) {
  int64_t b = k ^ (int64_t)((uint64_t)(k >> 63) >> 1);
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* Iterator over the rows of one output's reduced set (every reduced axis but the innermost),
 * positioned at row `row`; off[RD_X] and off[RD_DX] are the row starts relative to the output. */
static inline void rd_rows_iter(psup_iter_t *it, const rd_plan *p, int64_t row) {
  const int64_t *s[RD_NT] = {p->rs[0], p->rs[1], p->rs[2], p->rs[3]};
  psup_iter_init(it, p->nr ? p->nr - 1 : 0, p->rshape, RD_NT, s);
  psup_iter_seek(it, row);
}

/* The start of row `row` of one output's reduced set in x, relative to the output. */
static inline int64_t rd_row_offset(const rd_plan *p, int64_t row) {
  psup_iter_t it;
  rd_rows_iter(&it, p, row);
  return it.off[RD_X];
}

/* Row mode over rows of row_bytes (0: rows not dense) that follow one another in memory, as
 * when the last axis of a contiguous tensor is reduced: fetch what the row RD_ROW_AHEAD bytes on
 * will read. The hardware prefetcher stops at each 4 KB page and a row's end ends the loop that
 * ran ahead of it, so rows of 1 KB read from memory at a fifth of a full sum's speed, rows of
 * 16 KB at 0.86 (with it: 0.8-1.0). Other layouts waste a few prefetches per row; inputs below
 * RD_ROW_PREFETCH_MIN take none (a prefetch 4 KB past a small tensor can cost a page walk). */
#define RD_ROW_AHEAD 4096
#define RD_ROW_PREFETCH_MIN (INT64_C(1) << 20) /* bytes: smaller inputs are in cache (or soon are) */
/* Rows of this many bytes or more take none: the hardware prefetcher follows them well enough
 * (Intel: 16 KB rows at 0.86 of a full sum without, 0.8-1.0 with), and on AMD Zen 5 the burst of
 * 64 prefetches at each row's start cost 8 KB rows a fifth of their speed. */
#define RD_ROW_PREFETCH_MAX 8192
/* always_inline: GCC split an ordinary inline copy into a function whose only effect is a
 * prefetch, judged it free of side effects and deleted every call. */
static inline __attribute__((always_inline)) void rd_prefetch_rows(const void *row, int64_t row_bytes) {
  if (!row_bytes) return;
  const char *from = (const char *)row + (row_bytes > RD_ROW_AHEAD ? row_bytes : RD_ROW_AHEAD);
  const int64_t n = row_bytes < RD_ROW_AHEAD ? row_bytes : RD_ROW_AHEAD;
  for (int64_t b = 0; b < n; b += 64) __builtin_prefetch(from + b);
}

/* Stride of tensor slot t along the innermost reduced axis. */
static inline int64_t rd_inner(const rd_plan *p, int t) { return p->inner[t]; }

/* The innermost kept axis: its extent (1 when none) and the x and y strides along it. */
static inline int64_t rd_kept_inner(const rd_plan *p, int64_t *sx, int64_t *sy) {
  const uint32_t nk = p->nk;
  *sx = nk ? p->ks[RD_X][nk - 1] : 0;
  *sy = nk ? p->ks[RD_Y][nk - 1] : 0;
  return nk ? p->kshape[nk - 1] : 1;
}

/* Iterator over the kept axes but the innermost (rows of outputs along it), at row `row`. */
static inline void rd_outer_iter(psup_iter_t *it, const rd_plan *p, int64_t row) {
  const int64_t *s[RD_NT] = {p->ks[0], p->ks[1], p->ks[2], p->ks[3]};
  psup_iter_init(it, p->nk ? p->nk - 1 : 0, p->kshape, RD_NT, s);
  psup_iter_seek(it, row);
}

/* Iterator over the outputs (kept axes; without the column axis when skip_v), positioned at
 * output `pos` of that space. */
static inline void rd_kept_iter(psup_iter_t *it, const rd_plan *p, int skip_v, int64_t pos) {
  int64_t shape[PARITY_MAX_RANK], st[RD_NT][PARITY_MAX_RANK];
  uint32_t n = 0;
  for (uint32_t a = 0; a < p->nk; a++) {
    if (skip_v && a == p->vk) continue;
    shape[n] = p->kshape[a];
    for (int t = 0; t < RD_NT; t++) st[t][n] = p->ks[t][a];
    n++;
  }
  const int64_t *s[RD_NT] = {st[0], st[1], st[2], st[3]};
  psup_iter_init(it, n, shape, RD_NT, s);
  psup_iter_seek(it, pos);
}

/* One path's tables (reduce_float.c, reduce_int.c; see cpu_isa.h); b8: bool in and out;
 * b8_count: bool in, i64 out (sum only). reduce.c reaches them through cpu_kernels(). */
#ifdef CPU_ISA
#include "cpu_isa.h"
extern const rd_kernels CPU_ISA_FN(rd_kernels_f64), CPU_ISA_FN(rd_kernels_f32), CPU_ISA_FN(rd_kernels_f16),
    CPU_ISA_FN(rd_kernels_bf16);
extern const rd_kernels CPU_ISA_FN(rd_kernels_i32), CPU_ISA_FN(rd_kernels_i64), CPU_ISA_FN(rd_kernels_b8),
    CPU_ISA_FN(rd_kernels_b8_count);
#endif

#endif
