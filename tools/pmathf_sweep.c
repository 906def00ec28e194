/* pmathf_sweep -- sweep plugins/gpumath/pmathf.h (as C) against x86 long double libm.
 *   pmathf_sweep [stride] [fused] [names]   stride 1 = all 2^32 inputs (default 16: every 16th
 *                                   pattern, offset 7), fused 0/1/2 (2 = both, default), names: a
 *                                   comma-separated list of functions (default: all)
 * Unary functions over the bit patterns, div and pow over 2^24 random pairs (log-uniform
 * magnitudes; pow with x near 1 and |y| <= 200 for half of them). Two pthreads. Prints per
 * function: worst ulp (psup_ulp_distance, a result equal to the correctly rounded one counts 0),
 * its argument, and how many results are above 0.5 ulp. Build: tests/gpumath/CMakeLists.txt. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/tolerance.h"
#include "pmathf_c.h"

static long double Phil(long double x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }
static const long double RSQRT2PI = 0.398942280401432677939946059934381868L;

enum {
  F_SQRT,
  F_RCP,
  F_RSQRT,
  F_EXP,
  F_LOG,
  F_SIN,
  F_COS,
  F_TANH,
  F_SIG,
  F_PHI,
  F_ENHS,
  F_GELU,
  F_GG,
  F_DIV,
  F_POW,
  F_N
};
static const char *names[F_N] = {"sqrt",    "rcp", "rsqrt",           "exp",  "log",       "sin", "cos", "tanh",
                                 "sigmoid", "phi", "exp_neg_half_sq", "gelu", "gelu_grad", "div", "pow"};

static float eval(int f, float x, float y, long double *ref) {
  long double X = x;
  switch (f) {
    case F_SQRT: *ref = sqrtl(X); return pf_sqrt(x);
    case F_RCP: *ref = 1.0L / X; return pf_rcp(x);
    case F_RSQRT: *ref = 1.0L / sqrtl(X); return pf_rsqrt(x);
    case F_EXP: *ref = expl(X); return pf_exp(x);
    case F_LOG: *ref = logl(X); return pf_log(x);
    case F_SIN: *ref = sinl(X); return pf_sin(x);
    case F_COS: *ref = cosl(X); return pf_cos(x);
    case F_TANH: *ref = tanhl(X); return pf_tanh(x);
    case F_SIG: *ref = 1.0L / (1.0L + expl(-X)); return pf_sigmoid(x);
    case F_PHI: *ref = Phil(X); return pf_phi(x);
    case F_ENHS: *ref = expl(-X * X / 2); return pf_exp_neg_half_sq(x);
    case F_GELU: *ref = isinf(x) && x < 0 ? NAN : X * Phil(X); return pf_gelu(x);
    case F_GG: *ref = isinf(x) ? NAN : Phil(X) + X * expl(-X * X / 2) * RSQRT2PI; return pf_gelu_grad(x);
    case F_DIV: *ref = X / (long double)y; return pf_div(x, y);
    default: *ref = powl(X, (long double)y); return pf_pow(x, y);
  }
}

static double ulp_err(float got, long double ref) {
  if ((float)ref == got || (isnan(got) && isnan((float)ref))) return 0;
  return psup_ulp_distance((double)got, (double)ref, PARITY_DTYPE_F32);
}

typedef struct {
  int f, part;
  uint64_t stride;
  double worst;
  float wx, wy;
  long over;
} job_t;

static uint64_t rng(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}
static float rnd_float(uint64_t *s) { /* log-uniform magnitude, random sign, incl. subnormals */
  uint32_t u = (uint32_t)(rng(s) >> 32) % 0xFF000000u;
  u = (u % 0x7F000000u) | (uint32_t)(rng(s) >> 63 << 31);
  float x;
  memcpy(&x, &u, 4);
  return x;
}

static void consider(job_t *j, float x, float y) {
  long double ref;
  float got = eval(j->f, x, y, &ref);
  double e = ulp_err(got, ref);
  if (e > 0.5) j->over++;
  if (e > j->worst) j->worst = e, j->wx = x, j->wy = y;
}

static void *run(void *arg) {
  job_t *j = arg;
  if (j->f == F_DIV || j->f == F_POW) {
    uint64_t s = 0x9E3779B97F4A7C15ULL + (uint64_t)j->part * 77 + (uint64_t)j->f;
    for (long i = 0; i < (1L << 23); i++) {
      float x = rnd_float(&s), y = rnd_float(&s);
      if (j->f == F_POW && (i & 1)) {
        x = 1.0f + (float)((double)(int64_t)rng(&s) * 0x1p-63 * ((i & 2) ? 0x1p-6 : 0.5));
        y = (float)((double)(int64_t)rng(&s) * 0x1p-63 * 200.0);
      } else if (j->f == F_POW) {
        x = fabsf(x);
        y = (float)((double)(int64_t)rng(&s) * 0x1p-63 * 64.0);
      }
      consider(j, x, y);
    }
    return NULL;
  }
  for (uint64_t i = (j->stride > 1 ? 7 : 0) + (uint64_t)j->part * j->stride; i < (1ULL << 32); i += 2 * j->stride) {
    uint32_t u = (uint32_t)i;
    float x;
    memcpy(&x, &u, 4);
    consider(j, x, 0);
  }
  return NULL;
}

int main(int argc, char **argv) {
  uint64_t stride = argc > 1 ? strtoull(argv[1], NULL, 0) : 16;
  int fused = argc > 2 ? atoi(argv[2]) : 2;
  const char *only = argc > 3 ? argv[3] : NULL;
  for (int fu = 0; fu <= 1; fu++) {
    if (fused != 2 && fu != fused) continue;
    pf_c_fused_fma = fu;
    for (int f = 0; f < F_N; f++) {
      if (only) { /* whole names in the comma-separated list */
        size_t n = strlen(names[f]);
        const char *p = only;
        int hit = 0;
        while (!hit && (p = strstr(p, names[f])) != NULL) {
          hit = (p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ',');
          p += n;
        }
        if (!hit) continue;
      }
      job_t j[2] = {{f, 0, stride, 0, 0, 0, 0}, {f, 1, stride, 0, 0, 0, 0}};
      pthread_t t;
      pthread_create(&t, NULL, run, &j[1]);
      run(&j[0]);
      pthread_join(t, NULL);
      int w = j[1].worst > j[0].worst;
      printf("%-16s fused=%d worst %.3f ulp at x=%a y=%a  (>0.5 ulp: %ld)\n", names[f], fu, j[w].worst, (double)j[w].wx,
             (double)j[w].wy, j[0].over + j[1].over);
      fflush(stdout);
    }
  }
  return 0;
}
