/* pmathf_core.h -- error-free transformations, scaling, and the correctly rounded division and
 * square root of pmathf.h (included by it). */

#define PF_NAN PF_U2F(0x7FC00000u)
#define PF_INF PF_U2F(0x7F800000u)

/* 2^n for -126 <= n <= 127, built from its bits */
PF_FN float pf_pow2(int n) { return PF_U2F(PF_UINT(n + 127) << 23); }

/* (p, e) with p + e = a * b exactly (no over/underflow; Dekker: |a|, |b| < 2^115). */
PF_FN pf_ff pf_two_prod(float a, float b) {
  PF_PRECISE float p = a * b;
  if (PF_FUSED_FMA) {
    PF_PRECISE float e = PF_FMAF(a, b, -p);
    return PF_FF(p, e);
  }
  PF_PRECISE float ca = PF_K(4097.0) * a;
  PF_PRECISE float ah = ca - (ca - a);
  PF_PRECISE float al = a - ah;
  PF_PRECISE float cb = PF_K(4097.0) * b;
  PF_PRECISE float bh = cb - (cb - b);
  PF_PRECISE float bl = b - bh;
  PF_PRECISE float e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
  return PF_FF(p, e);
}
#define PF_TWO_PROD(a, b) pf_two_prod((a), (b))

/* s + e = a + b exactly (Knuth) */
PF_FN pf_ff pf_two_sum(float a, float b) {
  PF_PRECISE float s = a + b;
  PF_PRECISE float bb = s - a;
  PF_PRECISE float e = (a - (s - bb)) + (b - bb);
  return PF_FF(s, e);
}

/* s + e = a + b exactly when |a| >= |b| (or a == 0) */
PF_FN pf_ff pf_fast_two_sum(float a, float b) {
  PF_PRECISE float s = a + b;
  PF_PRECISE float e = b - (s - a);
  return PF_FF(s, e);
}

/* x * 2^n for 2^-10 <= |x| < 4 and any n, rounded once (the first product is exact). */
PF_FN float pf_scale(float x, int n) {
  PF_PRECISE float y = x;
  int m = n;
  if (m > 127) {
    y = y * pf_pow2(127);
    m = m - 127 > 127 ? 127 : m - 127;
  } else if (m < -126) {
    y = y * pf_pow2(-64);
    m = m + 64 < -126 ? -126 : m + 64;
  }
  PF_PRECISE float r = y * pf_pow2(m);
  return r;
}

/* |x| = h * 2^n with h in [1, 2) (x finite, nonzero; subnormals normalised with the MSB) */
PF_FN pf_ffn pf_unpack(float x) {
  uint u = PF_F2U(x) & 0x7FFFFFFFu;
  int e = PF_INT(u >> 23);
  if (e == 0) {
    int s = 23 - PF_MSB(u);
    u = u << PF_UINT(s);
    e = 1 - s;
  }
  return PF_FFN(PF_U2F((u & 0x7FFFFFu) | 0x3F800000u), PF_K(0.0), e - 127);
}

/* (ah:al) >= (bh:bl) as 64-bit unsigned numbers */
PF_FN bool pf_ge64(uint ah, uint al, uint bh, uint bl) { return ah > bh || (ah == bh && al >= bl); }

/* Round the candidate significand Q (2^23 <= Q < 2^24, within 1.5 ulp of the exact value) to
 * nearest, given the exact test "value >= (2Q+1)/2^24": lhs (hi:lo) compared with t(2Q+-1) where
 * t() = (2Q+-1) * B, or (2Q+-1)^2 when B == 0 (square root). No ties are possible. */
PF_FN uint pf_round_sig(uint Q, uint B, uint lh, uint ll) {
  uint t = 2u * Q + 1u;
  uint b = B == 0u ? t : B;
  if (pf_ge64(lh, ll, PF_UMULHI(t, b), t * b)) return Q + 1u;
  t = 2u * Q - 1u;
  b = B == 0u ? t : B;
  if (!pf_ge64(lh, ll, PF_UMULHI(t, b), t * b)) return Q - 1u;
  return Q;
}

/* q in float clamped to [1, 2 - 2^-23], as its 24-bit integer significand */
PF_FN uint pf_sig12(float q) {
  PF_PRECISE float c = q < PF_K(1.0) ? PF_K(1.0) : q;
  c = c > PF_U2F(0x3FFFFFFFu) ? PF_U2F(0x3FFFFFFFu) : c;
  return (PF_F2U(c) & 0x7FFFFFu) | 0x800000u;
}

/* a / b correctly rounded (subnormal quotients: one more rounding, <= 1 ulp) */
PF_FN float pf_div(float a, float b) {
  uint ua = PF_F2U(a), ub = PF_F2U(b);
  uint sgn = (ua ^ ub) & 0x80000000u;
  uint aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu;
  if (aa > 0x7F800000u || ab > 0x7F800000u) return a + b;
  if (aa == 0x7F800000u) return ab == 0x7F800000u ? PF_NAN : PF_U2F(sgn | 0x7F800000u);
  if (ab == 0u) return aa == 0u ? PF_NAN : PF_U2F(sgn | 0x7F800000u);
  if (ab == 0x7F800000u || aa == 0u) return PF_U2F(sgn);
  pf_ffn A = pf_unpack(a), B = pf_unpack(b);
  PF_PRECISE float ma = A.h;
  int k = A.n - B.n;
  uint ia = (PF_F2U(ma) & 0x7FFFFFu) | 0x800000u;
  if (ma < B.h) {
    ma = ma * PF_K(2.0);
    k = k - 1;
    ia = ia << 1;
  }
  PF_PRECISE float q0 = PF_HW_DIV(ma, B.h);
  pf_ff p = pf_two_prod(q0, B.h);
  PF_PRECISE float r = (ma - p.h) - p.l;
  PF_PRECISE float q = q0 + r * PF_HW_DIV(PF_K(1.0), B.h);
  uint ib = (PF_F2U(B.h) & 0x7FFFFFu) | 0x800000u;
  uint Q = pf_round_sig(pf_sig12(q), ib, ia >> 8, ia << 24);
  float qf = PF_U2F((Q & 0x7FFFFFu) | 0x3F800000u);
  return PF_U2F(PF_F2U(pf_scale(qf, k)) | sgn);
}

PF_FN float pf_rcp(float x) { return pf_div(PF_K(1.0), x); }

/* sqrt(x) correctly rounded; sqrt(-0) = -0, negative -> NaN */
PF_FN float pf_sqrt(float x) {
  uint u = PF_F2U(x);
  if ((u & 0x7FFFFFFFu) == 0u || u == 0x7F800000u) return x;
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return x + x;
  if (u >= 0x80000000u) return PF_NAN;
  pf_ffn X = pf_unpack(x);
  PF_PRECISE float m = X.h;
  int e = X.n;
  uint im = (PF_F2U(m) & 0x7FFFFFu) | 0x800000u;
  if ((e & 1) != 0) {
    m = m * PF_K(2.0);
    e = e - 1;
    im = im << 1;
  }
  PF_PRECISE float s0 = PF_HW_SQRT(m);
  pf_ff p = pf_two_prod(s0, s0);
  PF_PRECISE float r = (m - p.h) - p.l;
  PF_PRECISE float s = s0 + r * PF_HW_DIV(PF_K(0.5), s0);
  uint S = pf_round_sig(pf_sig12(s), 0u, im >> 7, im << 25);
  return PF_U2F((S & 0x7FFFFFu) | 0x3F800000u) * pf_pow2(e / 2);
}

/* 1/sqrt(x) (<= 1 ulp: a correctly rounded quotient of a correctly rounded root) */
PF_FN float pf_rsqrt(float x) {
  uint u = PF_F2U(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return x + x;
  if ((u & 0x7FFFFFFFu) == 0u) return PF_U2F(u | 0x7F800000u);
  if (u >= 0x80000000u) return PF_NAN;
  if (u == 0x7F800000u) return PF_K(0.0);
  return pf_div(PF_K(1.0), pf_sqrt(x));
}
