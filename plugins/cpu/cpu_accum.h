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
#define CPU_PARALLEL(cond, nth, ...)        \
  do {                                      \
    if (cond) {                             \
      CPU_OMP(omp parallel num_threads(nth)) \
      { __VA_ARGS__ }                       \
    } else {                                \
      __VA_ARGS__                           \
    }                                       \
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
  *lo = (int64_t)((__int128)n * part / parts);
  *hi = (int64_t)((__int128)n * (part + 1) / parts);
}

/* Cascade: push terms in order; total() gives their pairwise sum. */
#define CPU_CASCADE_DEFINE(SFX, T)                                                   \
  typedef struct cpu_casc_##SFX {                                                    \
    uint64_t n;                                                                      \
    T lv[CPU_CASCADE_LEVELS];                                                        \
  } cpu_casc_##SFX;                                                                  \
  static inline void cpu_casc_##SFX##_push(cpu_casc_##SFX *c, T v) {                 \
    uint64_t n = c->n++;                                                             \
    unsigned i = 0;                                                                  \
    for (; n & 1u; n >>= 1, i++) v = c->lv[i] + v;                                   \
    c->lv[i] = v;                                                                    \
  }                                                                                  \
  static inline T cpu_casc_##SFX##_total(const cpu_casc_##SFX *c) {                  \
    T t = (T)-0.0;                                                                   \
    unsigned i = 0;                                                                  \
    for (uint64_t n = c->n; n; n >>= 1, i++)                                         \
      if (n & 1u) t = c->lv[i] + t;                                                  \
    return t;                                                                        \
  }

CPU_CASCADE_DEFINE(f32, float)
CPU_CASCADE_DEFINE(f64, double)
#undef CPU_CASCADE_DEFINE

/* Combine CPU_LANES lane accumulators pairwise into a[0]. */
#define CPU_LANES_FOLD(a)                                   \
  do {                                                      \
    for (int w_ = CPU_LANES / 2; w_ > 0; w_ >>= 1)          \
      for (int j_ = 0; j_ < w_; j_++) (a)[j_] += (a)[j_ + w_]; \
  } while (0)

#endif
