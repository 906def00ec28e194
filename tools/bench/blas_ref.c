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

typedef struct gemm_call {
  sgemm_fn fn;
  int m, n, k;
  float *a, *b, *c;
} gemm_call;

static int call(void *p) {
  gemm_call *g = p;
  g->fn(ROW_MAJOR, NO_TRANS, NO_TRANS, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c, g->n);
  return 1;
}

double blas_sgemm_seconds(int m, int n, int k, int threads, const bench_timing *t, char *why, size_t whylen) {
  static void *lib;
  const char *name = getenv("PARITY_BENCH_OPENBLAS");
  if (name && !strcmp(name, "none")) {
    snprintf(why, whylen, "turned off (PARITY_BENCH_OPENBLAS=none)");
    return -1;
  }
  if (!lib) lib = dlopen(name && *name ? name : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "%s not found (Debian: libopenblas0; sh tools/install-deps.sh bench)",
             name && *name ? name : "libopenblas.so.0");
    return -1;
  }
  gemm_call g = {(sgemm_fn)(void (*)(void))dlsym(lib, "cblas_sgemm"), m, n, k, NULL, NULL, NULL};
  void (*set_threads)(int) = (void (*)(int))(void (*)(void))dlsym(lib, "openblas_set_num_threads");
  int (*get_threads)(void) = (int (*)(void))(void (*)(void))dlsym(lib, "openblas_get_num_threads");
  char *(*get_config)(void) = (char *(*)(void))(void (*)(void))dlsym(lib, "openblas_get_config");
  if (!g.fn) {
    snprintf(why, whylen, "the library has no cblas_sgemm");
    return -1;
  }
  if (set_threads) set_threads(threads);
  g.a = malloc(sizeof(float) * (size_t)m * (size_t)k);
  g.b = malloc(sizeof(float) * (size_t)k * (size_t)n);
  g.c = malloc(sizeof(float) * (size_t)m * (size_t)n);
  double s = -1;
  if (g.a && g.b && g.c) {
    for (size_t i = 0; i < (size_t)m * (size_t)k; i++) g.a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (size_t i = 0; i < (size_t)k * (size_t)n; i++) g.b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    s = bench_time(call, NULL, &g, t);
    snprintf(config, sizeof config, "%s (%d threads)", get_config ? get_config() : "OpenBLAS",
             get_threads ? get_threads() : threads);
  } else {
    snprintf(why, whylen, "out of memory");
  }
  free(g.a);
  free(g.b);
  free(g.c);
  return s;
}

const char *blas_config(void) { return config; }
