/* pmathf_c.h -- compile pmathf.h as C11 (host reference and tests).
 *
 * Include this header, not pmathf.h, from C. pf_c_fused_fma selects the exact-product method at
 * run time (1: fmaf, 0: Veltkamp/Dekker splitting, as on devices whose fma is not fused). Define
 * PF_HW_DIV / PF_HW_SQRT / PF_CF before including it to substitute the first approximations or
 * check the constants. Build with -ffp-contract=off (no contraction of a*b+c) and link -lm. */
#ifndef PMATHF_C_H
#define PMATHF_C_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PF_C 1

typedef unsigned int uint; /* GLSL's uint; identical to glibc's <sys/types.h> typedef */

static int pf_c_fused_fma = 1;
#define PF_FUSED_FMA (pf_c_fused_fma != 0)

#define PF_FN static inline
#define PF_PRECISE
static inline uint pf_c_f2u_(float x) {
  uint u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static inline float pf_c_u2f_(uint u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
#define PF_F2U(x) pf_c_f2u_(x)
#define PF_U2F(u) pf_c_u2f_(u)
#define PF_INT(x) ((int)(x))
#define PF_UINT(x) ((uint)(x))
#define PF_FLOAT(x) ((float)(x))
#define PF_FLOORF(x) floorf(x)
#define PF_FMAF(a, b, c) fmaf((a), (b), (c))
#define PF_MSB(u) (31 - __builtin_clz(u))
#ifndef PF_K
#define PF_K(x) ((float)(x))
#endif
typedef struct pf_ff {
  float h;
  float l;
} pf_ff;
typedef struct pf_ffn {
  float h;
  float l;
  int n;
} pf_ffn;
#define PF_FF(h, l) ((pf_ff){(h), (l)})
#define PF_FFN(h, l, n) ((pf_ffn){(h), (l), (n)})
#define PF_UMULHI(a, b) ((uint)(((uint64_t)(uint)(a) * (uint64_t)(uint)(b)) >> 32))
#define PF_TABLE(name, n) static const uint name[n] = {
#define PF_TABLE_END \
  }                  \
  ;
#ifndef PF_HW_DIV
#define PF_HW_DIV(a, b) ((a) / (b))
#endif
#ifndef PF_HW_SQRT
#define PF_HW_SQRT(x) sqrtf(x)
#endif

#include "pmathf.h"

#endif /* PMATHF_C_H */
