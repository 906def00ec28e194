/* blas_ref.c — the OpenBLAS sgemm reference (blas_ref.h). */
#define _POSIX_C_SOURCE 200809L
#include "blas_ref.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

static char config[200];

struct blas_gemm {
  sgemm_fn fn;
  int m, n, k;
  float *a, *b, *c;
};

static int call(void *p) {
  blas_gemm *g = p;
  g->fn(ROW_MAJOR, NO_TRANS, NO_TRANS, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c, g->n);
  return 1;
}

blas_gemm *blas_gemm_create(int m, int n, int k, int threads, char *why, size_t whylen) {
  static void *lib;
  const char *name = getenv("PARITY_BENCH_OPENBLAS");
  if (name && !strcmp(name, "none")) {
    snprintf(why, whylen, "turned off (PARITY_BENCH_OPENBLAS=none)");
    return NULL;
  }
  /* OpenBLAS's idle workers spin for 2^28 cycles after each call, which would take a core from
   * parity's repetition timed right after; 2^4 makes them sleep at once (read when it loads). */
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  if (!lib) lib = dlopen(name && *name ? name : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "%s not found (Debian: libopenblas0; sh tools/install-deps.sh bench)",
             name && *name ? name : "libopenblas.so.0");
    return NULL;
  }
  sgemm_fn fn = (sgemm_fn)(void (*)(void))dlsym(lib, "cblas_sgemm");
  void (*set_threads)(int) = (void (*)(int))(void (*)(void))dlsym(lib, "openblas_set_num_threads");
  int (*get_threads)(void) = (int (*)(void))(void (*)(void))dlsym(lib, "openblas_get_num_threads");
  char *(*get_config)(void) = (char *(*)(void))(void (*)(void))dlsym(lib, "openblas_get_config");
  if (!fn) {
    snprintf(why, whylen, "the library has no cblas_sgemm");
    return NULL;
  }
  if (set_threads) set_threads(threads);
  snprintf(config, sizeof config, "%s (%d threads)", get_config ? get_config() : "OpenBLAS",
           get_threads ? get_threads() : threads);
  blas_gemm *g = calloc(1, sizeof *g);
  if (g) {
    *g = (blas_gemm){fn,
                     m,
                     n,
                     k,
                     malloc(sizeof(float) * (size_t)m * (size_t)k),
                     malloc(sizeof(float) * (size_t)k * (size_t)n),
                     malloc(sizeof(float) * (size_t)m * (size_t)n)};
  }
  if (!g || !g->a || !g->b || !g->c) {
    snprintf(why, whylen, "out of memory");
    blas_gemm_destroy(g);
    return NULL;
  }
  for (size_t i = 0; i < (size_t)m * (size_t)k; i++) g->a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (size_t i = 0; i < (size_t)k * (size_t)n; i++) g->b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  return g;
}

bench_job blas_gemm_job(blas_gemm *g) { return (bench_job){call, NULL, g, -1, 0, NULL}; }

void blas_gemm_destroy(blas_gemm *g) {
  if (!g) return;
  free(g->a);
  free(g->b);
  free(g->c);
  free(g);
}

const char *blas_config(void) { return config; }
