/* pmathf_exp.h -- exp, log and pow of pmathf.h (included by it). Coefficients from
 * tools/pmathf_coeffs.py. */

/* ln 2 = L1 + L2 + L3, L1 and L2 with <= 16 significant bits (n * L1, n * L2 exact, |n| < 256) */
#define PF_LN2_1 PF_CF(0x3F317200u, 0.693145752)
#define PF_LN2_2 PF_CF(0x35BFB800u, 1.428416e-06)
#define PF_LN2_3 PF_CF(0x2F51CF7Au, 1.90821497e-10)
#define PF_LOG2E PF_CF(0x3FB8AA3Bu, 1.44269502)

/* e^(xh + xl) = (h + l) * 2^n, h = RN(h + l) in [0.7, 1.42]; |xh| <= 110, |xl| <= 2^-20 |xh| */
PF_FN pf_ffn pf_exp_red(float xh, float xl) {
  PF_PRECISE float kf = PF_FLOORF(xh * PF_LOG2E + PF_K(0.5));
  PF_PRECISE float t = xh - kf * PF_LN2_1; /* exact */
  PF_PRECISE float m2 = kf * PF_LN2_2;     /* exact */
  pf_ff r = pf_two_sum(t, -m2);
  PF_PRECISE float rl = r.l + (xl - kf * PF_LN2_3);
  PF_PRECISE float x = r.h;
  /* e^x - 1 - x = x^2 P(x), |x| <= 0.3501, rel err 2^-27.6 */
  PF_PRECISE float P =
      PF_CF(0x3F000000u, 0.5) +
      x * (PF_CF(0x3E2AAAAAu, 0.166666657) +
           x * (PF_CF(0x3D2AAA7Fu, 0.041666504) +
                x * (PF_CF(0x3C08899Fu, 0.00833359268) +
                     x * (PF_CF(0x3AB69A2Bu, 0.00139314437) + x * PF_CF(0x394EC8E9u, 0.000197205358)))));
  PF_PRECISE float poly = (x * x) * P;
  pf_ff o = pf_fast_two_sum(PF_K(1.0), x);
  PF_PRECISE float em1 = x + poly; /* e^x - 1: e^(x + rl) = e^x (1 + rl) */
  PF_PRECISE float lo = o.l + (poly + (rl + rl * em1));
  pf_ff e = pf_fast_two_sum(o.h, lo); /* normalised: h = RN(h + l) */
  return PF_FFN(e.h, e.l, PF_INT(kf));
}

PF_FN float pf_exp(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return x + x;
  if (x > PF_K(89.0)) return PF_INF;
  if (x < PF_K(-104.0)) return PF_K(0.0);
  pf_ffn e = pf_exp_red(x, PF_K(0.0));
  return pf_scale(e.h + e.l, e.n);
}

/* log(x) = h + l (|l| <= ulp(h)/2, rel err ~2^-30) for finite x > 0 */
PF_FN pf_ff pf_log_ff(float x) {
  pf_ffn X = pf_unpack(x);
  PF_PRECISE float m = X.h;
  int e = X.n;
  if (PF_F2U(m) > 0x3FB504F3u) {
    m = m * PF_K(0.5);
    e = e + 1;
  }
  PF_PRECISE float f = m - PF_K(1.0);      /* exact */
  pf_ff d = pf_fast_two_sum(PF_K(2.0), f); /* 2 + f */
  PF_PRECISE float sh = PF_HW_DIV(f, d.h);
  pf_ff p = pf_two_prod(sh, d.h);
  PF_PRECISE float rr = ((f - p.h) - p.l) - sh * d.l;
  PF_PRECISE float sl = rr * PF_HW_DIV(PF_K(1.0), d.h);
  pf_ff s = pf_fast_two_sum(sh, sl); /* s = f / (2 + f), |s| <= 0.1716 */
  PF_PRECISE float z = s.h * s.h;
  /* log1p(f) = 2s + s z R(z) with 2 atanh(s) = 2s + s z R(z), rel err 2^-25 on R */
  PF_PRECISE float R = PF_CF(0x3F2AAAABu, 0.666666687) +
                       z * (PF_CF(0x3ECCCB9Eu, 0.399990976) +
                            z * (PF_CF(0x3E92DA12u, 0.286819994) +
                                 z * (PF_CF(0x3E30210Bu, 0.172001049) + z * PF_CF(0x3F7252C3u, 0.946575344))));
  PF_PRECISE float T = (s.h * z) * R;
  PF_PRECISE float ef = PF_FLOAT(e);
  pf_ff a = pf_two_sum(ef * PF_LN2_1, PF_K(2.0) * s.h);
  PF_PRECISE float lo = a.l + ((ef * PF_LN2_2 + (PF_K(2.0) * s.l + T)) + ef * PF_LN2_3);
  return pf_fast_two_sum(a.h, lo);
}

PF_FN float pf_log(float x) {
  uint u = PF_F2U(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return x + x;
  if ((u & 0x7FFFFFFFu) == 0u) return -PF_INF;
  if (u >= 0x80000000u) return PF_NAN;
  if (u == 0x7F800000u) return x;
  return pf_log_ff(x).h;
}

/* y (nonzero, finite bits ay = |y|) is an integer / an odd integer */
PF_FN bool pf_is_int(uint ay) {
  int e = PF_INT(ay >> 23) - 127;
  if (e < 0) return false;
  if (e >= 23) return true;
  return (ay & ((1u << PF_UINT(23 - e)) - 1u)) == 0u;
}
PF_FN bool pf_is_odd(uint ay) {
  int e = PF_INT(ay >> 23) - 127;
  if (e < 0 || e > 23) return false;
  return pf_is_int(ay) && ((ay >> PF_UINT(23 - e)) & 1u) == 1u;
}

/* x^y with C99 Annex F / glibc special cases */
PF_FN float pf_pow(float x, float y) {
  uint ux = PF_F2U(x), uy = PF_F2U(y);
  uint ax = ux & 0x7FFFFFFFu, ay = uy & 0x7FFFFFFFu;
  if (ay == 0u || ux == 0x3F800000u) return PF_K(1.0);
  if (ax > 0x7F800000u || ay > 0x7F800000u) return x + y;
  bool yneg = uy >= 0x80000000u;
  bool big = ax > 0x3F800000u;
  if (ay == 0x7F800000u) return ax == 0x3F800000u ? PF_K(1.0) : ((big != yneg) ? PF_INF : PF_K(0.0));
  uint odd = pf_is_odd(ay) ? (ux & 0x80000000u) : 0u;
  if (ax == 0u) return PF_U2F(odd | (yneg ? 0x7F800000u : 0u));
  if (ax == 0x7F800000u) return PF_U2F(odd | (yneg ? 0u : 0x7F800000u));
  if (ux >= 0x80000000u && !pf_is_int(ay)) return PF_NAN;
  if (ax == 0x3F800000u) return PF_U2F(odd | 0x3F800000u);
  if (ay >= 0x4F000000u) return PF_U2F(odd | ((big != yneg) ? 0x7F800000u : 0u));
  pf_ff L = pf_log_ff(PF_U2F(ax));
  pf_ff P = pf_two_prod(y, L.h);
  PF_PRECISE float pl = P.l + y * L.l;
  if (P.h > PF_K(89.0)) return PF_U2F(odd | 0x7F800000u);
  if (P.h < PF_K(-105.0)) return PF_U2F(odd);
  pf_ff Z = pf_fast_two_sum(P.h, pl);
  pf_ffn E = pf_exp_red(Z.h, Z.l);
  return PF_U2F(PF_F2U(pf_scale(E.h + E.l, E.n)) | odd);
}
