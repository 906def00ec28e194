/* pmath_trig.glsl -- sin, cos with full-range argument reduction (4-part
 * Cody-Waite below 2^20, Payne-Hanek with 32-bit integer arithmetic above).
 * Part of pmath.glsl (GLSL 4.50 + C11). */
#ifndef PMATH_TRIG_GLSL
#define PMATH_TRIG_GLSL

/* pi/2 = P1 + P2 + P3 + P4; P1..P3 have 33 significant bits, so n * Pi is exact
 * for n < 2^20. */
#define PMI_PIO2_1 PM_MK(0x3FF921FBu, 0x54400000u)
#define PMI_PIO2_2 PM_MK(0x3DD0B461u, 0x1A600000u)
#define PMI_PIO2_3 PM_MK(0x3BA3198Au, 0x2E000000u)
#define PMI_PIO2_4 PM_MK(0x397B839Au, 0x252049C1u)
#define PMI_PIO2_HI PM_MK(0x3FF921FBu, 0x54442D18u) /* pi/2 as a double-double */
#define PMI_PIO2_LO PM_MK(0x3C91A626u, 0x33145C07u)
#define PMI_TWO_OPI PM_MK(0x3FE45F30u, 0x6DC9C883u)
#define PMI_PIO4 PM_MK(0x3FE921FBu, 0x54442D18u)

/* sin Taylor coefficients (-1)^k/(2k+1)!, k = 1..9 */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_sin_c, 18)
  0xBFC55555u, 0x55555555u, /* -0.16666666666666666 */
  0x3F811111u, 0x11111111u, /* 0.0083333333333333332 */
  0xBF2A01A0u, 0x1A01A01Au, /* -0.00019841269841269841 */
  0x3EC71DE3u, 0xA556C734u, /* 2.7557319223985893e-06 */
  0xBE5AE645u, 0x67F544E4u, /* -2.505210838544172e-08 */
  0x3DE61246u, 0x13A86D09u, /* 1.6059043836821613e-10 */
  0xBD6AE7F3u, 0xE733B81Fu, /* -7.6471637318198164e-13 */
  0x3CE952C7u, 0x7030AD4Au, /* 2.8114572543455206e-15 */
  0xBC62F49Bu, 0x46814157u  /* -8.2206352466243295e-18 */
PM_TABLE_END
#endif

/* cos Taylor coefficients (-1)^k/(2k)!, k = 2..10 */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_cos_c, 18)
  0x3FA55555u, 0x55555555u, /* 0.041666666666666664 */
  0xBF56C16Cu, 0x16C16C17u, /* -0.0013888888888888889 */
  0x3EFA01A0u, 0x1A01A01Au, /* 2.4801587301587302e-05 */
  0xBE927E4Fu, 0xB7789F5Cu, /* -2.7557319223985888e-07 */
  0x3E21EED8u, 0xEFF8D898u, /* 2.08767569878681e-09 */
  0xBDA93974u, 0xA8C07C9Du, /* -1.1470745597729725e-11 */
  0x3D2AE7F3u, 0xE733B81Fu, /* 4.7794773323873853e-14 */
  0xBCA68278u, 0x63B97D97u, /* -1.5619206968586225e-16 */
  0x3C1E542Bu, 0xA4020225u  /* 4.1103176233121648e-19 */
PM_TABLE_END
#endif

/* 2/pi = 0.b1 b2 b3 ... in binary; word i holds bits b(32i+1) .. b(32i+32). */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_2opi, 40)
  0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u,
  0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u,
  0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
  0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu,
  0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du
PM_TABLE_END
#endif

struct pmi_red {
  double hi;
  double lo;
  int n;
};

/* sin(r) for a double-double |r| <= ~pi/4. */
PM_FN double pmi_sin_k(PM_DD_T r) {
  PM_PRECISE double x = r.hi;
  PM_PRECISE double z = x * x;
  PM_PRECISE double p = PM_TAB(pmi_sin_c, 8);
  PM_LOOP for (int j = 7; j >= 0; j--) p = PM_TAB(pmi_sin_c, j) + z * p;
  PM_PRECISE double s = (x * z) * p;
  PM_PRECISE double c = r.lo * (PM_D(1.0) - PM_D(0.5) * z);
  PM_PRECISE double l = s + c;
  PM_PRECISE double res = x + l;
  return res;
}

/* cos(r) for a double-double |r| <= ~pi/4; 1 - r^2/2 is formed exactly. */
PM_FN double pmi_cos_k(PM_DD_T r) {
  PM_PRECISE double x = r.hi;
  PM_DD_T z2 = pmi_two_prod(x, x);
  PM_PRECISE double z = z2.hi;
  PM_PRECISE double p = PM_TAB(pmi_cos_c, 8);
  PM_LOOP for (int j = 7; j >= 0; j--) p = PM_TAB(pmi_cos_c, j) + z * p;
  PM_PRECISE double q = (z * z) * p;
  PM_PRECISE double hz = PM_D(0.5) * z2.hi;
  PM_PRECISE double hzl = PM_D(0.5) * z2.lo;
  PM_DD_T w = pmi_two_sum(PM_D(1.0), -hz);
  PM_PRECISE double l = w.lo + ((q - hzl) - x * r.lo);
  PM_PRECISE double res = w.hi + l;
  return res;
}

/* 32 bits of 2/pi starting at bit b(k) (bits before b1 are 0). */
PM_FN uint pmi_2opi_bits(int k) {
  if (k < 1) {
    int s = 1 - k;
    return s >= 32 ? 0u : (PM_TABW(pmi_2opi, 0) >> PM_UINT(s));
  }
  int q = (k - 1) / 32;
  int sh = (k - 1) - 32 * q;
  uint w0 = PM_TABW(pmi_2opi, q < 39 ? q : 39);
  uint w1 = PM_TABW(pmi_2opi, q < 38 ? q + 1 : 39);
  if (sh == 0) return w0;
  return (w0 << PM_UINT(sh)) | (w1 >> PM_UINT(32 - sh));
}

/* Payne-Hanek: a = X 2^e (X a 53-bit integer, a >= 2^20).  With a 192-bit
 * window M of 2/pi starting at bit e-1 (the bits before it only contribute
 * multiples of 4), a*2/pi mod 4 = (X*M mod 2^192) * 2^-190 up to 2^-137. */
PM_FN PMI_RED_T pmi_payne_hanek(double a) {
  uint hx = PM_HI(a);
  uint xl = PM_LO(a);
  uint xh = (hx & 0x000fffffu) | 0x00100000u;
  int e = PM_INT(hx >> 20) - 1075;
  uint m[6];
  uint p[6];
  for (int j = 0; j < 6; j++) {
    m[5 - j] = pmi_2opi_bits(e - 1 + 32 * j);
    p[j] = 0u;
  }
  for (int i = 0; i < 6; i++) {
    for (int h = 0; h < 2; h++) {
      int pos = i + h;
      if (pos < 6) {
        uint hi;
        uint lo;
        PM_UMULEXT(h == 0 ? xl : xh, m[i], hi, lo);
        uint s = p[pos] + lo;
        uint v = hi + (s < lo ? 1u : 0u);
        p[pos] = s;
        for (int t = pos + 1; t < 6; t++) {
          uint s2 = p[t] + v;
          v = s2 < v ? 1u : 0u;
          p[t] = s2;
        }
      }
    }
  }
  int n = PM_INT(p[5] >> 30);
  bool neg = (p[5] & 0x20000000u) != 0u;
  if (neg) { /* fraction >= 1/2: use fraction - 1 */
    n = n + 1;
    uint c = 1u;
    for (int j = 0; j < 6; j++) {
      uint s = ~p[j] + c;
      c = (c == 1u && s == 0u) ? 1u : 0u;
      p[j] = s;
    }
  }
  p[5] = p[5] & 0x3fffffffu;
  PM_DD_T f = PM_DD(PM_D(0.0), PM_D(0.0));
  for (int j = 0; j < 6; j++) {
    PM_PRECISE double t = PM_DBL(p[j]) * pmi_pow2(32 * j - 190); /* exact */
    f = pmi_dd_add_d(f, t);
  }
  PM_DD_T r = pmi_dd_mul(f, PM_DD(PMI_PIO2_HI, PMI_PIO2_LO));
  if (neg) r = PM_DD(-r.hi, -r.lo);
  return PMI_RED(r.hi, r.lo, n & 3);
}

/* x = n pi/2 + r, |r| <= ~pi/4, r as a double-double (x finite). */
PM_FN PMI_RED_T pmi_rem_pio2(double x) {
  PM_PRECISE double a = PM_ABS(x);
  PMI_RED_T red;
  if (a <= PMI_PIO4) return PMI_RED(x, PM_D(0.0), 0);
  if (a < PM_D(1048576.0)) {
    PM_PRECISE double t = a * PMI_TWO_OPI + PM_D(0.5);
    PM_PRECISE double nd = PM_FLOOR(t);
    PM_PRECISE double t1 = a - nd * PMI_PIO2_1;
    PM_DD_T s = pmi_two_sum(t1, -(nd * PMI_PIO2_2));
    PM_DD_T s2 = pmi_two_sum(s.hi, -(nd * PMI_PIO2_3));
    PM_DD_T c = pmi_two_prod(nd, PMI_PIO2_4);
    PM_DD_T s3 = pmi_two_sum(s2.hi, -c.hi);
    PM_PRECISE double lo = ((s.lo + s2.lo) + s3.lo) - c.lo;
    PM_DD_T r = pmi_fast_two_sum(s3.hi, lo);
    red = PMI_RED(r.hi, r.lo, PM_INT(nd) & 3);
  } else {
    red = pmi_payne_hanek(a);
  }
  if (x < PM_D(0.0)) red = PMI_RED(-red.hi, -red.lo, (4 - red.n) & 3);
  return red;
}

PM_FN double pm_sin(double x) {
  if (PM_ISNAN(x) || PM_ISINF(x)) return pmi_nan();
  if (PM_ABS(x) < pmi_pow2(-27)) return x; /* sin x = x (1 - x^2/6), keeps -0 */
  PMI_RED_T red = pmi_rem_pio2(x);
  PM_DD_T r = PM_DD(red.hi, red.lo);
  if (red.n == 0) return pmi_sin_k(r);
  if (red.n == 1) return pmi_cos_k(r);
  if (red.n == 2) return -pmi_sin_k(r);
  return -pmi_cos_k(r);
}

PM_FN double pm_cos(double x) {
  if (PM_ISNAN(x) || PM_ISINF(x)) return pmi_nan();
  if (PM_ABS(x) < pmi_pow2(-27)) return PM_D(1.0);
  PMI_RED_T red = pmi_rem_pio2(x);
  PM_DD_T r = PM_DD(red.hi, red.lo);
  if (red.n == 0) return pmi_cos_k(r);
  if (red.n == 1) return -pmi_sin_k(r);
  if (red.n == 2) return -pmi_cos_k(r);
  return pmi_sin_k(r);
}

#endif /* PMATH_TRIG_GLSL */
