/* pmathf_ref.c — pmathf.h compiled in its C dialect (pmathf_c.h, fused fma: pf_c_fused_fma = 1),
 * the reference tests/cuda/pmathf_test.cpp holds the CUDA dialect to, bit for bit. */
#include "pmathf_c.h"
#include "pmathf_ref.h"

#define PMATHF_REF_DEF_(n) \
  float pmathf_ref_##n(float x) { return pf_##n(x); }
PMATHF_REF_F1(PMATHF_REF_DEF_)
float pmathf_ref_div(float a, float b) { return pf_div(a, b); }
float pmathf_ref_pow(float x, float y) { return pf_pow(x, y); }
float pmathf_ref_mul_d(unsigned hi, unsigned lo, float v) { return pf_mul_d(hi, lo, v); }
