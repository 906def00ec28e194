/* cpu_accum.h — deterministic, accurate summation shared by the reduce and softmax kernels.
 *
 * Every floating sum of k terms is formed by one fixed tree that depends on k alone, never on
 * the thread count, so results are bitwise reproducible:
 *   - leaves of up to CPU_LEAF consecutive terms, each summed in CPU_LANES interleaved lanes
 *     (lane j takes terms j, j+64, ...; at most 32 terms per lane) combined pairwise;
 *   - a cascade (binary-counter pairwise summation) over the leaves of a group of CPU_GROUP
 *     leaves, and a second cascade over the group results in order.
 * Threads compute whole groups; the combination over groups is always serial and in order.
 * 64 lanes are 4 independent zmm (8 ymm) accumulators, enough to sum at cache speed; the tree
 * is the same on every instruction-set path, so every path gives the same bits.
 * Worst-case error: (min(k/64, 32) + 6 + log2(k/2048 + 1)) u sum|x|, inside the conformance
 * rule's c(k) = 4 ceil(sqrt k) + 4 for every k.
 *
 * Accumulators start at -0.0, the additive identity that keeps the sign of an all -0 sum. */
#ifndef PARITY_CPU_ACCUM_H
#define PARITY_CPU_ACCUM_H

#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"

#ifdef _OPENMP
#include <omp.h>
#define CPU_OMP(x) _Pragma(#x)
static inline int cpu_max_threads(void) { return omp_get_max_threads(); }
static inline int cpu_thread_id(void) { return omp_get_thread_num(); }
static inline int cpu_thread_count(void) { return omp_get_num_threads(); }
#else
#define CPU_OMP(x)
static inline int cpu_max_threads(void) { return 1; }
static inline int cpu_thread_id(void) { return 0; }
static inline int cpu_thread_count(void) { return 1; }
#endif

/* Run the block on nth OpenMP threads when cond holds, else inline on the calling thread (an
 * OpenMP region costs a fraction of a microsecond even under if(0), as much as a small
 * reduction). The block splits its work with cpu_thread_id() and cpu_thread_count(). */
/* Large blocks belong in a CPU_NOINLINE function the block calls, or they are compiled twice. */
#if defined(__GNUC__) || defined(__clang__)
#define CPU_NOINLINE __attribute__((noinline))
#else
#define CPU_NOINLINE
#endif
#define CPU_PARALLEL(cond, nth, ...)                         \
  do {                                                       \
    if (cond) {                                              \
      CPU_OMP(omp parallel num_threads(nth)) { __VA_ARGS__ } \
    } else {                                                 \
      __VA_ARGS__                                            \
    }                                                        \
  } while (0)

#define CPU_LANES 64
#define CPU_LEAF 2048  /* terms per leaf */
#define CPU_GROUP 32   /* leaves per group (65536 terms): the unit of work a thread takes */
#define CPU_BATCH 1024 /* group partials held at once (stack) when one sum is split */
#define CPU_CASCADE_LEVELS 64

/* Threads for a job touching `elements` elements: all of them past the parallel threshold. */
static inline int cpu_threads_for(int64_t elements) {
  return elements >= CPU_PARALLEL_MIN_ELEMENTS ? cpu_max_threads() : 1;
}

/* [*lo, *hi) = part `part` of `parts` equal contiguous shares of [0, n). */
static inline void cpu_share(int64_t n, int part, int parts, int64_t *lo, int64_t *hi) {
  if (parts == 1) { /* the common case, without a division */
    *lo = 0, *hi = n;
  } else if (n < (INT64_C(1) << 48) && parts <= 1 << 14) { /* n * parts < 2^62: 64-bit is exact */
    *lo = n * part / parts;
    *hi = n * (part + 1) / parts;
  } else {
    *lo = (int64_t)((__int128)n * part / parts);
    *hi = (int64_t)((__int128)n * (part + 1) / parts);
  }
}

/* Cascade: push terms in order; total() gives their pairwise sum. */
#define CPU_CASCADE_DEFINE(SFX, T)                                   \
  typedef struct cpu_casc_##SFX {                                    \
    uint64_t n;                                                      \
    T lv[CPU_CASCADE_LEVELS];                                        \
  } cpu_casc_##SFX;                                                  \
  static inline void cpu_casc_##SFX##_push(cpu_casc_##SFX *c, T v) { \
    uint64_t n = c->n++;                                             \
    unsigned i = 0;                                                  \
    for (; n & 1u; n >>= 1, i++) v = c->lv[i] + v;                   \
    c->lv[i] = v;                                                    \
  }                                                                  \
  static inline T cpu_casc_##SFX##_total(const cpu_casc_##SFX *c) {  \
    T t = (T)-0.0;                                                   \
    unsigned i = 0;                                                  \
    for (uint64_t n = c->n; n; n >>= 1, i++)                         \
      if (n & 1u) t = c->lv[i] + t;                                  \
    return t;                                                        \
  }

CPU_CASCADE_DEFINE(f32, float)
CPU_CASCADE_DEFINE(f64, double)
#undef CPU_CASCADE_DEFINE

/* Combine CPU_LANES lane accumulators pairwise into a[0]: for w = 32, 16, ..., 1, lane j < w
 * gets a[j] + a[j + w] (the other lanes are left as they were). Written with whole vectors per
 * step, which are those additions exactly, so the fold stays in registers: the scalar loop GCC
 * made of the narrow steps went through memory and cost a fifth of a cache-resident sum. */
typedef float cpu_v16f __attribute__((vector_size(64)));
typedef float cpu_v8f __attribute__((vector_size(32)));
typedef float cpu_v4f __attribute__((vector_size(16)));
typedef double cpu_v8d __attribute__((vector_size(64)));
typedef double cpu_v4d __attribute__((vector_size(32)));
typedef double cpu_v2d __attribute__((vector_size(16)));

/* The folds of 64 lanes held in whole vectors (v[0] lanes 0..W-1, v[1] the next W, ...). The
 * halves are taken with shuffles, not through memory: a narrow load of a wide store's upper half
 * is not forwarded and stalled every leaf. */
static inline float cpu_fold_v16f(const cpu_v16f *v) {
  cpu_v16f x0 = v[0] + v[2], x1 = v[1] + v[3]; /* w = 32 */
  x0 += x1;                                    /* w = 16 */
  cpu_v8f l8 = __builtin_shufflevector(x0, x0, 0, 1, 2, 3, 4, 5, 6, 7);
  l8 += __builtin_shufflevector(x0, x0, 8, 9, 10, 11, 12, 13, 14, 15); /* w = 8 */
  cpu_v4f l4 = __builtin_shufflevector(l8, l8, 0, 1, 2, 3);
  l4 += __builtin_shufflevector(l8, l8, 4, 5, 6, 7);  /* w = 4 */
  const float r0 = l4[0] + l4[2], r1 = l4[1] + l4[3]; /* w = 2 */
  return r0 + r1;                                     /* w = 1 */
}

static inline double cpu_fold_v8d(const cpu_v8d *v) {
  cpu_v8d x0 = v[0] + v[4], x1 = v[1] + v[5], x2 = v[2] + v[6], x3 = v[3] + v[7]; /* w = 32 */
  x0 += x2, x1 += x3;                                                             /* w = 16 */
  x0 += x1;                                                                       /* w = 8 */
  cpu_v4d l4 = __builtin_shufflevector(x0, x0, 0, 1, 2, 3);
  l4 += __builtin_shufflevector(x0, x0, 4, 5, 6, 7); /* w = 4 */
  cpu_v2d l2 = __builtin_shufflevector(l4, l4, 0, 1);
  l2 += __builtin_shufflevector(l4, l4, 2, 3); /* w = 2 */
  return l2[0] + l2[1];                        /* w = 1 */
}

static inline void cpu_lanes_fold_f32(float *a) {
  _Static_assert(CPU_LANES == 64, "the fold is written for 64 lanes");
  cpu_v16f x[4];
  memcpy(x, a, sizeof x);
  a[0] = cpu_fold_v16f(x);
}

static inline void cpu_lanes_fold_f64(double *a) {
  _Static_assert(CPU_LANES == 64, "the fold is written for 64 lanes");
  cpu_v8d x[8];
  memcpy(x, a, sizeof x);
  a[0] = cpu_fold_v8d(x);
}

/* One leaf of n <= CPU_LEAF unit-stride terms, exactly as the lane loop sums it (lane j takes
 * terms j, j + 64, ... from -0, then the fold), with the lanes held in whole vectors: GCC's
 * vectorisation of the lane-array loop ran a cache-resident sum at 0.7 of a plain read. */
#define CPU_LEAF_DEFINE(SFX, T, VT, FOLD)                                \
  static inline T cpu_leaf_##SFX(const T *x, int64_t n) {                \
    enum { W = (int)(sizeof(VT) / sizeof(T)), NV = CPU_LANES / W };      \
    VT v[NV];                                                            \
    for (int k = 0; k < NV; k++) v[k] = -(VT){0}; /* -0 in every lane */ \
    int64_t i = 0;                                                       \
    const int64_t full = n / CPU_LANES * CPU_LANES; /* n >= 0 */         \
    for (; i < full; i += CPU_LANES)                                     \
      for (int k = 0; k < NV; k++) {                                     \
        VT y;                                                            \
        memcpy(&y, x + i + W * k, sizeof y);                             \
        v[k] += y;                                                       \
      }                                                                  \
    if (i < n) { /* a short tail: lane j takes term i + j */             \
      T a[CPU_LANES];                                                    \
      memcpy(a, v, sizeof a);                                            \
      for (int j = 0; i < n; i++, j++) a[j] += x[i];                     \
      memcpy(v, a, sizeof a);                                            \
    }                                                                    \
    return FOLD(v);                                                      \
  }
CPU_LEAF_DEFINE(f32, float, cpu_v16f, cpu_fold_v16f)
CPU_LEAF_DEFINE(f64, double, cpu_v8d, cpu_fold_v8d)
#undef CPU_LEAF_DEFINE

#define CPU_LANES_FOLD(a) _Generic((a)[0], float : cpu_lanes_fold_f32, double : cpu_lanes_fold_f64)(a)

#endif
