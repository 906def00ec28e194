/* gemm_kernels.c — the gemm engine's micro-kernels (gemm.h has the contract, gemm.c the
 * blocking): c[r*ldc + j] += sum_p a[p*MR + r] * b[p*NR + j] over one MR x NR tile of packed
 * panels. Compiled once per instruction-set path (cpu_isa.h): the AVX-512 path's 12x32 kernel
 * (with 8- and 4-row variants for edge panels), the AVX2 path's 6x16, the portable loop. */
#include <stdint.h>

#include "gemm_internal.h"

/* One row of the tile at a time (p in order for each element, as in the SIMD kernels, each
 * product rounded before it is added: gemm_muladd): a shape every compiler vectorizes well. An
 * element whose chain ends non-finite is computed again with exact products (gemm_internal.h). */
static __attribute__((unused)) void kernel_generic(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) {
  for (int r = 0; r < GEMM_MR; r++) {
    float acc[GEMM_NR];
    for (int j = 0; j < GEMM_NR; j++) acc[j] = 0.0f;
    for (int64_t p = 0; p < kc; p++) {
      const float ar = a[p * GEMM_MR + r], *bp = b + p * GEMM_NR;
      for (int j = 0; j < GEMM_NR; j++) acc[j] += ar * bp[j];
    }
    for (int j = 0; j < GEMM_NR; j++)
      if (!isfinite(acc[j])) {
        float s = 0.0f;
        for (int64_t p = 0; p < kc; p++) s = gemm_muladd_exact(a[p * GEMM_MR + r], b[p * GEMM_NR + j], s);
        acc[j] = s;
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
#define K5_ADD_(r)                                                                     \
  _mm512_storeu_ps(c + (r)*ldc, _mm512_add_ps(_mm512_loadu_ps(c + (r)*ldc), c##r##0)); \
  _mm512_storeu_ps(c + (r)*ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + (r)*ldc + 16), c##r##1));
#define K5_PF_(r) \
  _mm_prefetch((const char *)(c + (r)*ldc), _MM_HINT_T0), _mm_prefetch((const char *)(c + (r)*ldc + 16), _MM_HINT_T0);
#define K5_ROWS4_(X) X(0) X(1) X(2) X(3)
#define K5_ROWS8_(X) K5_ROWS4_(X) X(4) X(5) X(6) X(7)
#define K5_ROWS12_(X) K5_ROWS8_(X) X(8) X(9) X(10) X(11)
#define K5_KERNEL_(R)                                                                                \
  static void kernel_avx512_##R(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) { \
    K5_ROWS##R##_(K5_PF_) K5_ROWS##R##_(K5_DECL_) for (int64_t p = 0; p < kc; p++) {                 \
      const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);                            \
      __m512 ar;                                                                                     \
      K5_ROWS##R##_(K5_STEP_) a += GEMM_MR;                                                          \
      b += GEMM_NR;                                                                                  \
    }                                                                                                \
    K5_ROWS##R##_(K5_ADD_)                                                                           \
  }
K5_KERNEL_(12)
K5_KERNEL_(8)
K5_KERNEL_(4)
static void kernel_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) {
  kernel_avx512_12(kc, a, b, c, ldc);
}
/* The kernel for an edge panel of `rows` rows. */
gemm_kernel_fn CPU_ISA_FN(gemm_kernel_for_rows)(int64_t rows) {
  return rows <= 4 ? kernel_avx512_4 : rows <= 8 ? kernel_avx512_8 : kernel_avx512_12;
}
#define GEMM_KERNEL kernel_avx512
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

static void kernel_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc) {
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
#define GEMM_ADD_ROW_(r, lo, hi)                                                  \
  _mm256_storeu_ps(c + (r)*ldc, _mm256_add_ps(_mm256_loadu_ps(c + (r)*ldc), lo)); \
  _mm256_storeu_ps(c + (r)*ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + (r)*ldc + 8), hi));
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
gemm_kernel_fn CPU_ISA_FN(gemm_kernel_for_rows)(int64_t rows) {
  (void)rows;
  return GEMM_KERNEL;
}
#endif

gemm_kernel_fn CPU_ISA_FN(gemm_kernel)(void) { return GEMM_KERNEL; }
