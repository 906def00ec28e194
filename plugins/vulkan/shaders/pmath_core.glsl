/* pmath_core.glsl -- bit helpers, double-double arithmetic, correctly rounded
 * division and square root.  Part of pmath.glsl (GLSL 4.50 + C11). */
#ifndef PMATH_CORE_GLSL
#define PMATH_CORE_GLSL

struct pm_dd {
  double hi;
  double lo;
};

/* 2^k for -1022 <= k <= 1023, built from bits. */
PM_FN double pmi_pow2(int k) { return PM_MK(PM_UINT(k + 1023) << 20, 0u); }

PM_FN double pmi_inf() { return PM_MK(0x7ff00000u, 0u); }
PM_FN double pmi_nan() { return PM_MK(0x7ff80000u, 0u); }
PM_FN bool pmi_signbit(double x) { return (PM_HI(x) & 0x80000000u) != 0u; }
PM_FN double pmi_negif(double x, bool neg) { return neg ? -x : x; }

/* Unbiased exponent of a finite nonzero x (subnormals included). */
PM_FN int pmi_expo(double x) {
  uint h = PM_HI(x) & 0x7fffffffu;
  if (h < 0x00100000u) {
    PM_PRECISE double y = PM_ABS(x) * pmi_pow2(54);
    return PM_INT(PM_HI(y) >> 20) - 1023 - 54;
  }
  return PM_INT(h >> 20) - 1023;
}

/* |x| scaled into [1, 2) (x finite, nonzero). */
PM_FN double pmi_mant(double x) {
  PM_PRECISE double y = PM_ABS(x);
  if ((PM_HI(y) & 0x7ff00000u) == 0u) y = y * pmi_pow2(54);
  return PM_MK((PM_HI(y) & 0x000fffffu) | 0x3ff00000u, PM_LO(y));
}

/* x * 2^k with a single rounding, for x in [2^-3, 2^3) and |k| <= 1200.  The
 * first product is always exact, so only the last one rounds (overflow to inf,
 * underflow to a subnormal). */
PM_FN double pmi_ldexp(double x, int k) {
  if (k > 1000) {
    PM_PRECISE double y = x * pmi_pow2(1000);
    PM_PRECISE double z = y * pmi_pow2(k - 1000);
    return z;
  }
  if (k < -1000) {
    PM_PRECISE double y = x * pmi_pow2(-1000);
    PM_PRECISE double z = y * pmi_pow2(k + 1000);
    return z;
  }
  PM_PRECISE double z = x * pmi_pow2(k);
  return z;
}

/* RN((hi + lo) * 2^e) with one rounding, hi > 0 in [2^-3, 2^3), |lo| <= ulp(hi)/2
 * (lo only breaks ties when the result is subnormal). */
PM_FN double pmi_scale(double hi, double lo, int e) {
  if (e > 1100) return pmi_inf();
  if (e < -1140) return PM_D(0.0);
  if (e >= -1018) return pmi_ldexp(hi, e);
  PM_PRECISE double u = hi * pmi_pow2(e + 1074); /* exact: units of 2^-1074 */
  if (u >= pmi_pow2(53)) return pmi_ldexp(hi, e);
  PM_PRECISE double n = PM_FLOOR(u);
  PM_PRECISE double f = u - n;
  PM_PRECISE double hn = n * PM_D(0.5);
  bool odd = PM_FLOOR(hn) != hn;
  if (f > PM_D(0.5) || (f == PM_D(0.5) && (lo > PM_D(0.0) || (lo == PM_D(0.0) && odd)))) n = n + PM_D(1.0);
  if (n == PM_D(0.0)) return PM_D(0.0);
  PM_PRECISE double r = n * pmi_pow2(-1000);
  PM_PRECISE double res = r * pmi_pow2(-74);
  return res;
}

/* ---- fma without a fused instruction (GLSL only; C uses the C library's fma) ----
 * a*b = p + e exactly by Veltkamp splitting (no intermediate overflow for |a|, |b| < 2^995 and
 * products above 2^-969; outside that the result is within an ulp). Then p + c + e with one
 * two-sum: exact whenever the true a*b + c is representable, which is how the library uses it. */
#ifndef PM_C
PM_FN double pmi_fma_emul(double a, double b, double c) {
  PM_PRECISE double p = a * b;
  if (p == 0.0 || PM_ISINF(p) || PM_ISNAN(p) || PM_ISINF(c) || PM_ISNAN(c)) return p + c;
  double split = PM_MK(0x41a00000u, 0x02000000u); /* 2^27 + 1 */
  PM_PRECISE double ta = split * a, tb = split * b;
  PM_PRECISE double ah = ta - (ta - a), bh = tb - (tb - b);
  PM_PRECISE double al = a - ah, bl = b - bh;
  PM_PRECISE double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  PM_PRECISE double s = p + c;
  PM_PRECISE double bb = s - p;
  PM_PRECISE double t = (p - (s - bb)) + (c - bb);
  return s + (t + e);
}
#endif

/* ---- double-double ---- */
PM_FN PM_DD_T pmi_two_sum(double a, double b) {
  PM_PRECISE double s = a + b;
  PM_PRECISE double bb = s - a;
  PM_PRECISE double e = (a - (s - bb)) + (b - bb);
  return PM_DD(s, e);
}
PM_FN PM_DD_T pmi_fast_two_sum(double a, double b) { /* |a| >= |b| or a == 0 */
  PM_PRECISE double s = a + b;
  PM_PRECISE double e = b - (s - a);
  return PM_DD(s, e);
}
PM_FN PM_DD_T pmi_two_prod(double a, double b) {
  PM_PRECISE double p = a * b;
  PM_PRECISE double e = PM_FMA(a, b, -p);
  return PM_DD(p, e);
}
PM_FN PM_DD_T pmi_dd_add(PM_DD_T x, PM_DD_T y) {
  PM_DD_T s = pmi_two_sum(x.hi, y.hi);
  PM_DD_T t = pmi_two_sum(x.lo, y.lo);
  PM_PRECISE double l1 = s.lo + t.hi;
  PM_DD_T u = pmi_fast_two_sum(s.hi, l1);
  PM_PRECISE double l2 = u.lo + t.lo;
  return pmi_fast_two_sum(u.hi, l2);
}
PM_FN PM_DD_T pmi_dd_add_d(PM_DD_T x, double y) {
  PM_DD_T s = pmi_two_sum(x.hi, y);
  PM_PRECISE double l = s.lo + x.lo;
  return pmi_fast_two_sum(s.hi, l);
}
PM_FN PM_DD_T pmi_dd_mul(PM_DD_T x, PM_DD_T y) {
  PM_DD_T p = pmi_two_prod(x.hi, y.hi);
  PM_PRECISE double l = p.lo + (x.hi * y.lo + x.lo * y.hi);
  return pmi_fast_two_sum(p.hi, l);
}
PM_FN PM_DD_T pmi_dd_mul_d(PM_DD_T x, double y) {
  PM_DD_T p = pmi_two_prod(x.hi, y);
  PM_PRECISE double l = p.lo + x.lo * y;
  return pmi_fast_two_sum(p.hi, l);
}

/* Probe for the device: true when fma() on doubles is fused (exact product,
 * one rounding), which every double-double step of this library relies on.
 * Pass one = 1.0 from memory so the compiler cannot fold it. */
PM_FN bool pm_fma_is_fused(double one) {
  PM_PRECISE double a = one + pmi_pow2(-30);
  PM_PRECISE double p = a * a; /* 1 + 2^-29 (the 2^-60 term rounds away) */
  return PM_FMA(a, a, -p) == pmi_pow2(-60);
}

/* ---- correctly rounded division ---- */
PM_FN double pm_div(double a, double b) {
  bool neg = pmi_signbit(a) != pmi_signbit(b);
  if (PM_ISNAN(a) || PM_ISNAN(b)) return a + b;
  PM_PRECISE double aa = PM_ABS(a);
  PM_PRECISE double ab = PM_ABS(b);
  if (PM_ISINF(aa)) return PM_ISINF(ab) ? pmi_nan() : pmi_negif(pmi_inf(), neg);
  if (PM_ISINF(ab)) return pmi_negif(PM_D(0.0), neg);
  if (ab == PM_D(0.0)) return aa == PM_D(0.0) ? pmi_nan() : pmi_negif(pmi_inf(), neg);
  if (aa == PM_D(0.0)) return pmi_negif(PM_D(0.0), neg);
  int e = pmi_expo(aa) - pmi_expo(ab);
  PM_PRECISE double ma = pmi_mant(aa);
  PM_PRECISE double mb = pmi_mant(ab);
  /* Approximate quotient, one Newton correction -> within ~0.5 ulp, so the
   * residual ma - q*mb is exactly representable and fma gives it exactly. */
  PM_PRECISE double q0 = PM_HW_DIV(ma, mb);
  PM_PRECISE double r0 = PM_FMA(-q0, mb, ma);
  PM_PRECISE double q = q0 + PM_HW_DIV(r0, mb);
  PM_PRECISE double r = PM_FMA(-q, mb, ma);
  for (int i = 0; i < 2; i++) {
    PM_PRECISE double up = q >= PM_D(1.0) ? pmi_pow2(-52) : pmi_pow2(-53);
    PM_PRECISE double dn = q > PM_D(1.0) ? pmi_pow2(-52)
                         : (q > PM_D(0.5) ? pmi_pow2(-53) : pmi_pow2(-54));
    PM_PRECISE double hu = PM_D(0.5) * up * mb;
    PM_PRECISE double hd = PM_D(0.5) * dn * mb;
    if (r > hu) {
      q = q + up;
    } else if (r < -hd) {
      q = q - dn;
    }
    r = PM_FMA(-q, mb, ma);
  }
  /* r (exact) has the sign of the true quotient minus q; only the sign is used */
  return pmi_negif(pmi_scale(q, r, e), neg);
}

/* ---- correctly rounded square root ---- */
PM_FN double pm_sqrt(double x) {
  if (PM_ISNAN(x) || x == PM_D(0.0)) return x;
  if (x < PM_D(0.0)) return pmi_nan();
  if (PM_ISINF(x)) return x;
  int e = pmi_expo(x);
  PM_PRECISE double m = pmi_mant(x);
  if ((e & 1) != 0) {
    m = m * PM_D(2.0);
    e = e - 1;
  }
  /* m in [1, 4), result y in [1, 2], ulp(y) = 2^-52 (y = 1 never steps down). */
  PM_PRECISE double y0 = PM_HW_SQRT(m);
  PM_PRECISE double r0 = PM_FMA(-y0, y0, m);
  PM_PRECISE double y = y0 + r0 * PM_HW_DIV(PM_D(0.5), y0);
  PM_PRECISE double u = pmi_pow2(-52);
  for (int i = 0; i < 2; i++) {
    /* Tuckerman: y is RN(sqrt(m)) iff y(y-u) < m <= y(y+u); the products are
     * multiples of 2^-104 and fma gives the sign of the exact difference. */
    PM_PRECISE double ym = y - u;
    PM_PRECISE double yp = y + u;
    if (PM_FMA(-y, ym, m) <= PM_D(0.0)) {
      y = ym;
    } else if (PM_FMA(-y, yp, m) > PM_D(0.0)) {
      y = yp;
    }
  }
  return pmi_ldexp(y, e / 2);
}

#endif /* PMATH_CORE_GLSL */
