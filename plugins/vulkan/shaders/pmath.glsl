/* pmath.glsl -- software double-precision math for the parity Vulkan plugin.
 *
 * One source, two languages: GLSL 4.50 (with doubles) and C11.  In C, include
 * pmath_c.h (which defines PM_C and the C dialect macros, then includes this
 * file).  In GLSL, include this file directly (GL_GOOGLE_include_directive).
 *
 * Public functions (double -> double unless noted):
 *   pm_div(a, b), pm_sqrt(x)           correctly rounded (RN), all inputs
 *   pm_exp, pm_expm1, pm_log, pm_log1p  <= 1 ulp
 *   pm_sin, pm_cos                      <= 2 ulp, any finite argument
 *   pm_tanh, pm_erfc                    <= 2 ulp
 *   pm_pow(x, y)                        <= 2 ulp, C99 Annex F special cases
 *
 * The hardware quotient and square root are only used as first approximations
 * (PM_HW_DIV, PM_HW_SQRT) and are corrected with exact fma residuals, so they
 * may be a few ulp off.  Constants are either float-exact values written with
 * PM_D() or exact bit patterns (PM_MK / PM_TAB), so no decimal-to-double
 * conversion by the shader compiler is trusted; every rounding-sensitive
 * temporary is PM_PRECISE (GLSL `precise`: no contraction), and fused
 * operations are explicit PM_FMA calls.
 * Exponent scaling is done with bit-built powers of two (never ldexp on
 * subnormal results).
 *
 * Device requirements: fma() on doubles must be fused (exact product, one
 * rounding) -- check once with pm_fma_is_fused(1.0 loaded from memory) -- and
 * f64 denormals must not be flushed (subnormal inputs are normalized by
 * multiplying with 2^54, subnormal results are produced by one rounding).  All algorithms and coefficients are original to this
 * file (Taylor series, double-double arithmetic, and fits generated with
 * mpmath); no third-party code.
 */
#ifndef PMATH_GLSL
#define PMATH_GLSL

#ifndef PM_C
/* ---- GLSL dialect ---- */
#define PM_FN
#define PM_PRECISE precise
/* A polynomial's Horner loop kept a loop: unrolled, with its table loads and (on llvmpipe) the
 * emulated fma of every term, it made the f64 gelu pipeline take seconds to compile. */
#define PM_LOOP [[dont_unroll]]
/* glslang cannot paste `lf` onto a number, so PM_D() is only used for
 * constants exactly representable as float (0.5, 2.0, 710.0, ...); every
 * other constant is built from its bit pattern with PM_MK / PM_TAB. */
#define PM_D(x) double(x)
#define PM_DD_T pm_dd
#define PM_DD(h, l) pm_dd(h, l)
#define PMI_RED_T pmi_red
#define PMI_RED(h, l, n) pmi_red(h, l, n)
#define PM_DBL(x) double(x)
#define PM_INT(x) int(x)
#define PM_UINT(x) uint(x)
#define PM_HI(d) (unpackDouble2x32(d).y)
#define PM_LO(d) (unpackDouble2x32(d).x)
#define PM_MK(hi, lo) packDouble2x32(uvec2((lo), (hi)))
#define PM_ABS(x) abs(x)
#define PM_FLOOR(x) floor(x)
/* Specialization constant 3: the device's double fma is fused (probed at device open, see
 * vk_probe.c). Where it is not (llvmpipe lowers ffma64 to a multiply and an add), every PM_FMA
 * goes through pmi_fma_emul: Dekker's exact product plus a two-sum, exact wherever a fused fma
 * is exact (the error-free transformations this library is built on). */
layout(constant_id = 3) const bool PM_FUSED_FMA = true;
#define PM_FMA(a, b, c) (PM_FUSED_FMA ? fma((a), (b), (c)) : pmi_fma_emul((a), (b), (c)))
#define PM_ISNAN(x) isnan(x)
#define PM_ISINF(x) isinf(x)
#define PM_UMULEXT(a, b, hi, lo) umulExtended((a), (b), hi, lo)
#define PM_FREXP(x, e) frexp((x), e)
#define PM_LDEXP(x, e) ldexp((x), (e))
#define PM_TABLE_BEGIN(T, name, n) const T name[n] = T[n](
#define PM_TABLE_END );
#ifndef PM_HW_DIV
#define PM_HW_DIV(a, b) ((a) / (b))
#endif
#ifndef PM_HW_SQRT
#define PM_HW_SQRT(x) sqrt(x)
#endif
#endif

/* The tables, as uint words, in one fixed order. In C they are arrays; in GLSL they live in a
 * storage buffer at binding 8 that the plugin fills from the C arrays (vk_mathtab.c), because
 * drivers compile a dynamically indexed constant array into long select chains (lavapipe took
 * minutes per pipeline). Offsets in words; vk_mathtab.c checks them against the arrays. */
#define PM_TABLES(X) X(pmi_exp_c, 28) X(pmi_log1p_c, 20) X(pmi_logtab, 384) X(pmi_sin_c, 18) \
  X(pmi_cos_c, 18) X(pmi_2opi, 40) X(pmi_erf_c, 28) X(pmi_erfc_tab, 324)
#define pmi_exp_c_OFF 0
#define pmi_log1p_c_OFF 28
#define pmi_logtab_OFF 48
#define pmi_sin_c_OFF 432
#define pmi_cos_c_OFF 450
#define pmi_2opi_OFF 468
#define pmi_erf_c_OFF 508
#define pmi_erfc_tab_OFF 536
#define PM_TABLE_WORDS 860
#define PM_TABLE_BINDING 8

#ifdef PM_C
#define PM_TABW(T, i) (T[(i)])
#else
layout(std430, set = 0, binding = PM_TABLE_BINDING) readonly buffer PmTables { uint pm_tab_words[]; };
#define PM_TABW(T, i) (pm_tab_words[T##_OFF + (i)])
#endif
/* Table entry i of a uint table holding doubles as (hi, lo) word pairs. */
#define PM_TAB(T, i) PM_MK(PM_TABW(T, 2 * (i)), PM_TABW(T, 2 * (i) + 1))

#include "pmath_core.glsl"
#include "pmath_exp_log.glsl"
#include "pmath_trig.glsl"
#include "pmath_erf.glsl"
#include "pmath_pow.glsl"

#endif /* PMATH_GLSL */
