/* pmath_pow.glsl -- pow(x, y) = exp(y log|x|) with log|x| and the product in
 * double-double and one final rounding; C99 Annex F special cases.
 * Part of pmath.glsl (GLSL 4.50 + C11). */
#ifndef PMATH_POW_GLSL
#define PMATH_POW_GLSL

/* y is a finite integer that is odd */
PM_FN bool pmi_is_odd_int(double y) {
  if (PM_FLOOR(y) != y || PM_ABS(y) >= pmi_pow2(53)) return false;
  PM_PRECISE double h = y * PM_D(0.5);
  return PM_FLOOR(h) != h;
}

PM_FN double pm_pow(double x, double y) {
  if (y == PM_D(0.0) || x == PM_D(1.0)) return PM_D(1.0);
  if (PM_ISNAN(x) || PM_ISNAN(y)) return x + y;
  PM_PRECISE double ax = PM_ABS(x);
  if (PM_ISINF(y)) {
    if (ax == PM_D(1.0)) return PM_D(1.0);
    return ((ax < PM_D(1.0)) == (y > PM_D(0.0))) ? PM_D(0.0) : pmi_inf();
  }
  bool yodd = pmi_is_odd_int(y);
  if (ax == PM_D(0.0) || PM_ISINF(ax)) {
    bool neg = pmi_signbit(x) && yodd;
    bool big = (ax == PM_D(0.0)) == (y < PM_D(0.0));
    return pmi_negif(big ? pmi_inf() : PM_D(0.0), neg);
  }
  bool neg = false;
  if (x < PM_D(0.0)) {
    if (PM_FLOOR(y) != y) return pmi_nan();
    neg = yodd;
  }
  PM_DD_T l = pmi_log_dd(ax);
  PM_DD_T t = pmi_two_prod(y, l.hi);
  if (t.hi > PM_D(710.0)) return pmi_negif(pmi_inf(), neg);
  if (t.hi < PM_D(-746.0)) return pmi_negif(PM_D(0.0), neg);
  PM_PRECISE double tl = t.lo + y * l.lo;
  return pmi_negif(pmi_exp_mul(pmi_fast_two_sum(t.hi, tl), PM_DD(PM_D(1.0), PM_D(0.0))), neg);
}

#endif /* PMATH_POW_GLSL */
