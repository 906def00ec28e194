/* pmathf_bounds.h -- worst error of each pmathf function in f32 ulps (psup_ulp_distance), as
 * measured by tools/pmathf_sweep.c (see README.md for where: all 2^32 inputs, or samples),
 * rounded up to 2 decimals, plus the margin of the test's perturbed first approximations.
 * tests/gpumath/test_pmathf.c holds every function to these and checks README.md lists them. */
#ifndef PMATHF_BOUNDS_H
#define PMATHF_BOUNDS_H
#define PMATHF_ULP_DIV 0.75
#define PMATHF_ULP_RCP 0.75
#define PMATHF_ULP_SQRT 0.50
#define PMATHF_ULP_RSQRT 1.50
#define PMATHF_ULP_EXP 0.77
#define PMATHF_ULP_LOG 0.53
#define PMATHF_ULP_SIN 0.75
#define PMATHF_ULP_COS 0.75
#define PMATHF_ULP_TANH 0.72
#define PMATHF_ULP_SIGMOID 0.75
#define PMATHF_ULP_POW 3.22
#define PMATHF_ULP_PHI 2.52
#define PMATHF_ULP_EXP_NEG_HALF_SQ 0.74
#define PMATHF_ULP_GELU 2.90
#define PMATHF_ULP_GELU_GRAD 4.32
#endif
