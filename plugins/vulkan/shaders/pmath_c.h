/* pmath_c.h -- compile pmath.glsl as C11 (host-side reference and tests).
 *
 * Include this header (not pmath.glsl) from C.  Define PM_HW_DIV(a, b) and/or
 * PM_HW_SQRT(x) before including it to substitute the "hardware" first
 * approximations (the library corrects them to correct rounding).
 * Build with -ffp-contract=off and link with -lm.
 */
#ifndef PMATH_C_H
#define PMATH_C_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PM_C 1

typedef unsigned int uint; /* GLSL's uint; identical to glibc's <sys/types.h> typedef */

#define PM_FN static inline
#define PM_PRECISE
#define PM_LOOP
#ifndef PM_D
#define PM_D(x) x
#endif
#define PM_DD_T struct pm_dd
#define PM_DD(h, l) ((struct pm_dd){(h), (l)})
#define PMI_RED_T struct pmi_red
#define PMI_RED(h, l, n) ((struct pmi_red){(h), (l), (n)})
#define PM_DBL(x) ((double)(x))
#define PM_INT(x) ((int)(x))
#define PM_UINT(x) ((uint)(x))
#define PM_ABS(x) fabs(x)
#define PM_FLOOR(x) floor(x)
#define PM_FMA(a, b, c) fma((a), (b), (c))
#define PM_ISNAN(x) isnan(x)
#define PM_ISINF(x) isinf(x)
#define PM_FREXP(x, e) frexp((x), &(e))
#define PM_LDEXP(x, e) ldexp((x), (e))
#define PM_UMULEXT(a, b, hi, lo)                         \
  do {                                                   \
    uint64_t pm_umul_t_ = (uint64_t)(a) * (uint64_t)(b); \
    (hi) = (uint)(pm_umul_t_ >> 32);                     \
    (lo) = (uint)pm_umul_t_;                             \
  } while (0)
#define PM_TABLE_BEGIN(T, name, n) static const T name[n] = {
#define PM_TABLE_END \
  }                  \
  ;
#ifndef PM_HW_DIV
#define PM_HW_DIV(a, b) ((a) / (b))
#endif
#ifndef PM_HW_SQRT
#define PM_HW_SQRT(x) sqrt(x)
#endif

static inline uint pm_c_hi_(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (uint)(u >> 32);
}
static inline uint pm_c_lo_(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (uint)u;
}
static inline double pm_c_mk_(uint hi, uint lo) {
  uint64_t u = ((uint64_t)hi << 32) | lo;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}
#define PM_HI(d) pm_c_hi_(d)
#define PM_LO(d) pm_c_lo_(d)
#define PM_MK(hi, lo) pm_c_mk_((hi), (lo))

#include "pmath.glsl"

#endif /* PMATH_C_H */
