/* pmathf_ref.h — pmathf.h's C dialect (pmathf_ref.c, fused fma), for tests/cuda/pmathf_test.cpp to
 * compare the CUDA dialect with bit for bit. */
#ifndef PARITY_PMATHF_REF_H
#define PARITY_PMATHF_REF_H
/* every one-argument function */
// clang-format off
#define PMATHF_REF_F1(X) \
  X(rcp) X(sqrt) X(rsqrt) X(exp) X(log) X(sin) X(cos) X(tanh) X(sigmoid) X(phi) X(exp_neg_half_sq) X(gelu) X(gelu_grad)
// clang-format on
#ifdef __cplusplus
extern "C" {
#endif
#define PMATHF_REF_DECL_(n) float pmathf_ref_##n(float x);
PMATHF_REF_F1(PMATHF_REF_DECL_)
#undef PMATHF_REF_DECL_
float pmathf_ref_div(float a, float b);
float pmathf_ref_pow(float x, float y);
float pmathf_ref_mul_d(unsigned hi, unsigned lo, float v);
#ifdef __cplusplus
}
#endif
#endif
