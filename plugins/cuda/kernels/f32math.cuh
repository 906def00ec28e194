/* f32math.cuh — the float class's (CU_CLASS 0) math that CUDA would otherwise do in double, in
 * 32-bit float and integer arithmetic only (64-bit integers included: they are integer pairs on
 * every GPU). The PTX test (tests/cuda/ptx_test.c) fails on any .f64 in the float modules.
 *   times_alpha_f32  leaky_relu's slope * v: the slope is the f64 value's bits; the exact
 *                    53 x 24-bit product is rounded once to f32 (nearest even), subnormals included
 *   sin_f32, cos_f32 CUDA's sinf/cosf reduce arguments past 105,615 through double; these reduce
 *                    with three fma steps below that and an integer Payne-Hanek above it, then
 *                    evaluate minimax polynomials on [-pi/4, pi/4]
 * Included by elementwise.cu in the float class only. */
#ifndef PARITY_CU_F32MATH_CUH
#define PARITY_CU_F32MATH_CUH

/* (m + d) * 2^e rounded to the nearest f32 (ties to even), signed by `sign` (0 or 0x80000000):
 * m > 0 with at most 63 bits, d in (0, 1) when sticky (the bits below m were not all zero), else
 * 0. m must carry at least 25 bits when sticky is set (so the rounding position is inside m). */
DEV float f32_round_scaled(ulong m, int e, int sticky, uint sign) {
  int n = 64 - __clzll((long long)m); /* bits of m */
  int lead = e + n - 1;              /* exponent of the leading bit */
  if (lead > 127) return as_float(sign | 0x7f800000u);
  int prec = lead >= -126 ? 24 : lead + 150; /* significant bits the f32 keeps (subnormal: fewer) */
  if (prec < 0) return as_float(sign);       /* below half the smallest subnormal */
  int shift = n - prec;
  ulong q;
  if (shift <= 0) {
    q = m << -shift; /* exact (sticky is never set here, see above) */
  } else {
    q = m >> shift;
    ulong rem = m & ((1UL << shift) - 1UL), half = 1UL << (shift - 1);
    if (rem > half || (rem == half && (sticky || (q & 1UL)))) q++;
  }
  /* a normal q has its leading bit at 2^23; adding it to the exponent field counts it once, and a
   * carry to 2^24 moves to the next binade (or to inf); a subnormal q is the field itself */
  uint bits = lead >= -126 ? ((uint)(lead + 126) << 23) + (uint)q : (uint)q;
  return as_float(sign | bits);
}

/* alpha * v rounded once to f32; alpha is an f64 given by its IEEE bits. Equals the f64 product
 * rounded to f32 but where that product is itself a rounding onto an f32 tie (then this is the
 * correctly rounded one: both are within 0.5 ulp of the f64 product). */
DEV float times_alpha_f32(ulong abits, float v) {
  uint vb = as_uint(v);
  uint sign = ((uint)(abits >> 32) ^ vb) & 0x80000000u;
  uint ve = (vb >> 23) & 0xffu, vm = vb & 0x7fffffu;
  uint ae = (uint)(abits >> 52) & 0x7ffu;
  ulong am = abits & 0xfffffffffffffUL;
  int v_zero = ve == 0 && vm == 0, a_zero = ae == 0 && am == 0;
  if (ve == 0xffu || ae == 0x7ffu) {                            /* inf or NaN on a side */
    if (ve == 0xffu && vm) return v + v;                        /* NaN (quiet) */
    if ((ae == 0x7ffu && am) || v_zero || a_zero) return as_float(0x7fc00000u); /* NaN, inf * 0 */
    return as_float(sign | 0x7f800000u);
  }
  if (v_zero || a_zero || ae == 0) return as_float(sign); /* a subnormal f64 slope: |product| < 2^-894 */
  int ev;
  if (ve) {
    vm |= 0x800000u;
    ev = (int)ve - 150;
  } else { /* subnormal v: normalize so the product keeps 24 significant bits in its top part */
    int k = __clz((int)vm) - 8;
    vm <<= k;
    ev = -149 - k;
  }
  am |= 1UL << 52;
  int ea = (int)ae - 1075;
  /* the 77-bit product am * vm = (ah * vm) 2^32 + al * vm: keep the top bits and a sticky bit */
  ulong ah = am >> 32, al = am & 0xffffffffUL;
  ulong plo = al * (ulong)vm;
  ulong top = ah * (ulong)vm + (plo >> 32); /* >= 2^43 */
  return f32_round_scaled(top, ea + ev + 32, (plo & 0xffffffffUL) != 0, sign);
}

/* 2/pi in bits, 32 to a word; word 0 holds the bits of weight 2^31 .. 2^0 (all zero), word k the
 * bits of weight 2^-(32k-31) .. 2^-32k. Enough for the largest f32 (exponent 127). */
static __device__ const uint f32m_two_over_pi[8] = {0x00000000u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,
                                                    0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu};

/* x = j pi/2 + r, |r| <= pi/4 (about), for finite x; *q = j mod 4 (any integer congruent). */
DEV float f32m_reduce(float x, int *q) {
  float ax = fabs(x);
  if (ax < 105615.0f) {
    /* Cody-Waite in three fma steps: pi/2 = c1 + c2 + c3 (+ 1.1e-23; c2, c3 < 0); x - j c1 is exact (both are
     * multiples of ulp(c1) or of ulp(x), and the difference is below 1) */
    float j = rint(x * 0x1.45f306p-1f) /* 2/pi */;
    *q = (int)j;
    if (j == 0.0f) return x; /* keeps -0 */
    float r = fma(j, -0x1.921fb6p+0f, x);
    r = fma(j, 0x1.777a5cp-25f, r);
    r = fma(j, 0x1.ee59dap-50f, r);
    return r;
  }
  /* Payne-Hanek in integers: x = M 2^E (M 24 bits). x 2/pi mod 4 = M (2^E 2/pi mod 4) mod 4; the
   * 96-bit window F of 2/pi starting at the bit of weight 2^(1-E) (2 integer bits, 94 fraction bits)
   * times M, kept mod 2^96, is x 2/pi mod 4 with 94 fraction bits (error below 2^-70). */
  uint b = as_uint(ax);
  uint M = (b & 0x7fffffu) | 0x800000u;
  int i0 = (int)(b >> 23) - 150 - 1 + 31; /* position of the window's first bit in the table */
  int w = i0 >> 5, sh = i0 & 31;
  uint t0 = f32m_two_over_pi[w], t1 = f32m_two_over_pi[w + 1], t2 = f32m_two_over_pi[w + 2];
  uint t3 = w + 3 < 8 ? f32m_two_over_pi[w + 3] : 0u;
  uint f0 = t0, f1 = t1, f2 = t2;
  if (sh) {
    f0 = (t0 << sh) | (t1 >> (32 - sh));
    f1 = (t1 << sh) | (t2 >> (32 - sh));
    f2 = (t2 << sh) | (t3 >> (32 - sh));
  }
  ulong p2 = (ulong)M * f2;
  ulong p1 = (ulong)M * f1 + (p2 >> 32);
  uint r0 = (uint)((ulong)M * f0 + (p1 >> 32)), r1 = (uint)p1, r2 = (uint)p2;
  /* quadrant: the 2 integer bits, plus one when the fraction is >= 1/2 (then it is taken as
   * fraction - 1: the 64-bit two's complement reading does that) */
  ulong frac = ((ulong)r0 << 34) | ((ulong)r1 << 2) | (r2 >> 30);
  int j = (int)(r0 >> 30) + (int)(frac >> 63);
  long sf = (long)frac >> 1; /* fraction in [-1/2, 1/2) times 2^63 */
  /* r = sf 2^-63 pi/2: sf as a float pair (48 bits), times pi/2 2^-63 as a float pair */
  float a = __ll2float_rn(sf);
  float c = __ll2float_rn(sf - (long)a);
  const float ch = 0x1.921fb6p-63f, cl = -0x1.777a5cp-88f; /* ch + cl = pi/2 2^-63 */
  float rh = a * ch;
  float re = fma(a, ch, -rh);
  float r = rh + (re + (a * cl + c * ch));
  if (x < 0) {
    r = -r;
    j = -j;
  }
  *q = j;
  return r;
}

/* minimax on [-pi/4, pi/4] (Cephes sinf/cosf) */
DEV float f32m_sin_poly(float r) {
  float s = r * r;
  float p = fma(-1.95152959e-4f, s, 8.33216087e-3f);
  p = fma(p, s, -1.66666546e-1f);
  return fma(p * s, r, r);
}
DEV float f32m_cos_poly(float r) {
  float s = r * r;
  float p = fma(2.44331571e-5f, s, -1.38873163e-3f);
  p = fma(p, s, 4.16666457e-2f);
  return fma(p * s, s, fma(-0.5f, s, 1.0f));
}

/* sin (quarter = 0) or cos (quarter = 1) */
DEV float f32m_sincos(float x, int quarter) {
  if (!isfinite(x)) return x - x; /* NaN */
  /* |x| < 2^-12: sin x rounds to x (x^3/6 is below a quarter ulp), cos x to 1; keeps sin(-0) = -0 */
  if (fabs(x) < 0x1p-12f) return quarter ? 1.0f : x;
  int q;
  float r = f32m_reduce(x, &q);
  q += quarter;
  float v = (q & 1) ? f32m_cos_poly(r) : f32m_sin_poly(r);
  return (q & 2) ? -v : v;
}
DEV float sin_f32(float x) { return f32m_sincos(x, 0); }
DEV float cos_f32(float x) { return f32m_sincos(x, 1); }

#endif
