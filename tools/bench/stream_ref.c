/* stream_ref.c — the C reference loops (stream_ref.h). */
#include "stream_ref.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef float v16 __attribute__((vector_size(64)));
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define PAR_MIN ((size_t)1 << 16)

CLONES static float read_chunk(const float *a, size_t n) {
  v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    v16 x0, x1, x2, x3; /* unaligned loads */
    memcpy(&x0, a + i, sizeof x0);
    memcpy(&x1, a + i + 16, sizeof x1);
    memcpy(&x2, a + i + 32, sizeof x2);
    memcpy(&x3, a + i + 48, sizeof x3);
    s0 += x0;
    s1 += x1;
    s2 += x2;
    s3 += x3;
  }
  v16 s = (s0 + s1) + (s2 + s3);
  float r = 0;
  for (int k = 0; k < 16; k++) r += s[k];
  for (; i < n; i++) r += a[i];
  return r;
}

CLONES static void add_chunk(float *restrict c, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}

CLONES static void triad_chunk(float *restrict a, const float *restrict b, const float *restrict c, float s, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

int ref_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

const char *ref_isa(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "baseline";
}

/* Split [0, n) into equal 64-element-aligned chunks, one per thread. */
#define CHUNK(n, t, nt, lo, len)                                            \
  size_t per_ = (((n) + (size_t)(nt)-1) / (size_t)(nt) + 63) & ~(size_t)63; \
  size_t lo = per_ * (size_t)(t) < (n) ? per_ * (size_t)(t) : (n);          \
  size_t len = (n)-lo < per_ ? (n)-lo : per_

float ref_read(const float *a, size_t n) {
#ifdef _OPENMP
  int nt = ref_threads();
  if (n >= PAR_MIN && nt > 1) {
    float parts[256] = {0};
    if (nt > 256) nt = 256;
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), have = omp_get_num_threads();
      CHUNK(n, t, have, lo, len);
      parts[t] = read_chunk(a + lo, len);
    }
    float r = 0;
    for (int t = 0; t < nt; t++) r += parts[t];
    return r;
  }
#endif
  return read_chunk(a, n);
}

void ref_add(float *c, const float *a, const float *b, size_t n) {
#ifdef _OPENMP
  int nt = ref_threads();
  if (n >= PAR_MIN && nt > 1) {
#pragma omp parallel num_threads(nt)
    {
      CHUNK(n, omp_get_thread_num(), omp_get_num_threads(), lo, len);
      add_chunk(c + lo, a + lo, b + lo, len);
    }
    return;
  }
#endif
  add_chunk(c, a, b, n);
}

void ref_triad(float *a, const float *b, const float *c, float s, size_t n) {
#ifdef _OPENMP
  int nt = ref_threads();
  if (n >= PAR_MIN && nt > 1) {
#pragma omp parallel num_threads(nt)
    {
      CHUNK(n, omp_get_thread_num(), omp_get_num_threads(), lo, len);
      triad_chunk(a + lo, b + lo, c + lo, s, len);
    }
    return;
  }
#endif
  triad_chunk(a, b, c, s, n);
}
