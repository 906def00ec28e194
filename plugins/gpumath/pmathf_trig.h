/* pmathf_trig.h -- sin and cos of pmathf.h (included by it): |x| < pi/4 directly, every larger
 * |x| by Payne-Hanek reduction in 32-bit integer arithmetic. */

/* A zero word, then the first 224 bits of 2/pi (checked against mpmath by the test and
 * tools/pmathf_coeffs.py) */
PF_TABLE(pf_2opi, 8)
0x00000000u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u,
    0xFE5163ABu PF_TABLE_END

        /* bits [s, s + 32) of the word pair (a, b), 0 <= s < 32 (no shift by 32) */
        PF_FN uint
        pf_win(uint a, uint b, uint s) {
  return s == 0u ? a : ((a << s) | (b >> (32u - s)));
}

/* |x| = (h + l) + q pi/2 (mod 2pi), |h + l| <= pi/4, for |x| >= pi/4 finite (ax: bits of |x|).
 * x = M 2^(E-23); the 96-bit window of 2/pi starting at bit E - 24 times M gives, mod 4, the
 * quadrant (top 2 bits) and 94 bits of fraction. */
PF_FN pf_ffn pf_trig_reduce(uint ax) {
  uint M = (ax & 0x7FFFFFu) | 0x800000u;
  uint k = ax >> 23; /* k = E + 127; window start (1-based, zero word first) E + 8 = k - 119 */
  uint w = (k - 120u) >> 5, s = (k - 120u) & 31u;
  uint w0 = pf_win(pf_2opi[w], pf_2opi[w + 1u], s);
  uint w1 = pf_win(pf_2opi[w + 1u], pf_2opi[w + 2u], s);
  uint w2 = pf_win(pf_2opi[w + 2u], pf_2opi[w + 3u], s);
  uint r2 = M * w2;
  uint lo1 = M * w1;
  uint r1 = lo1 + PF_UMULHI(M, w2);
  uint r0 = M * w0 + PF_UMULHI(M, w1) + (r1 < lo1 ? 1u : 0u);
  uint q = r0 >> 30;
  uint f0 = (r0 << 2) | (r1 >> 30), f1 = (r1 << 2) | (r2 >> 30), f2 = r2 << 2;
  bool neg = f0 >= 0x80000000u;
  if (neg) { /* round to the nearest quadrant: fraction - 1, negated */
    q = q + 1u;
    f2 = ~f2 + 1u;
    f1 = ~f1 + (f2 == 0u ? 1u : 0u);
    f0 = ~f0 + ((f2 == 0u && f1 == 0u) ? 1u : 0u);
  }
  int ex = 0;
  if (f0 == 0u) {
    f0 = f1;
    f1 = f2;
    f2 = 0u;
    ex = -32;
  }
  if (f0 == 0u) {
    f0 = f1;
    f1 = 0u;
    ex = ex - 32;
  }
  if (f0 == 0u) return PF_FFN(PF_K(0.0), PF_K(0.0), PF_INT(q & 3u));
  uint sh = PF_UINT(31 - PF_MSB(f0));
  f0 = pf_win(f0, f1, sh);
  f1 = pf_win(f1, f2, sh);
  ex = ex - PF_INT(sh);
  /* fraction = (f0 2^-32 + f1 2^-64) 2^ex, f0 >= 2^31: two exact 24-bit pieces */
  PF_PRECISE float fh = PF_FLOAT(f0 >> 8) * pf_pow2(ex - 24);
  PF_PRECISE float fl = PF_FLOAT(((f0 & 0xFFu) << 16) | (f1 >> 16)) * pf_pow2(ex - 48 < -126 ? -126 : ex - 48);
  if (neg) {
    fh = -fh;
    fl = -fl;
  }
  /* times pi/2 = P1 + P2 */
  pf_ff p = pf_two_prod(fh, PF_CF(0x3FC90FDBu, 1.57079637));
  PF_PRECISE float pl = p.l + (fh * PF_CF(0xB33BBD2Eu, -4.37113883e-08) + fl * PF_CF(0x3FC90FDBu, 1.57079637));
  pf_ff r = pf_fast_two_sum(p.h, pl);
  return PF_FFN(r.h, r.l, PF_INT(q & 3u));
}

/* sin(h + l), |h| <= pi/4 (+ slack), |l| <= ulp(h) */
PF_FN float pf_sin_eval(float h, float l) {
  PF_PRECISE float z = h * h;
  /* sin h = h + h^3 S(z), rel err 2^-25 on S */
  PF_PRECISE float S = PF_CF(0xBE2AAAABu, -0.166666672) +
                       z * (PF_CF(0x3C0888FBu, 0.00833343994) +
                            z * (PF_CF(0xB950B31Fu, -0.000199031536) +
                                 z * (PF_CF(0x3689271Au, 4.08747019e-06) + z * PF_CF(0xB583A4C8u, -9.80821824e-07))));
  PF_PRECISE float t = (h * z) * S + l * (PF_K(1.0) - PF_K(0.5) * z);
  PF_PRECISE float r = h + t;
  return r;
}

/* cos(h + l), |h| <= pi/4 (+ slack), |l| <= ulp(h) */
PF_FN float pf_cos_eval(float h, float l) {
  pf_ff z = pf_two_prod(h, h);
  PF_PRECISE float hz = PF_K(0.5) * z.h;
  PF_PRECISE float w = PF_K(1.0) - hz;
  PF_PRECISE float rr = (PF_K(1.0) - w) - hz;
  /* cos h = 1 - z/2 + z^2 C(z), rel err 2^-25 on C */
  PF_PRECISE float C =
      PF_CF(0x3D2AAAABu, 0.0416666679) +
      z.h * (PF_CF(0xBAB60C46u, -0.00138891558) +
             z.h * (PF_CF(0x37D15A1Du, 2.49567038e-05) +
                    z.h * (PF_CF(0xB523A6E8u, -6.09651124e-07) + z.h * PF_CF(0x3481EE61u, 2.42015659e-07))));
  PF_PRECISE float c = (z.h * z.h) * C;
  PF_PRECISE float r = w + (rr + (c - (PF_K(0.5) * z.l + l * h)));
  return r;
}

PF_FN float pf_sin(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return x - x;
  if (ax < 0x39800000u) return x; /* |x| < 2^-12 */
  if (ax < 0x3F490FDBu) return pf_sin_eval(x, PF_K(0.0));
  pf_ffn R = pf_trig_reduce(ax);
  float v = (R.n & 1) == 0 ? pf_sin_eval(R.h, R.l) : pf_cos_eval(R.h, R.l);
  uint sg = ((R.n & 2) != 0 ? 0x80000000u : 0u) ^ (PF_F2U(x) & 0x80000000u);
  return PF_U2F(PF_F2U(v) ^ sg);
}

PF_FN float pf_cos(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return x - x;
  if (ax < 0x39800000u) return PF_K(1.0);
  if (ax < 0x3F490FDBu) return pf_cos_eval(PF_U2F(ax), PF_K(0.0));
  pf_ffn R = pf_trig_reduce(ax);
  float v = (R.n & 1) == 0 ? pf_cos_eval(R.h, R.l) : pf_sin_eval(R.h, R.l);
  uint sg = (R.n == 1 || R.n == 2) ? 0x80000000u : 0u;
  return PF_U2F(PF_F2U(v) ^ sg);
}
