/* pmathf_special.h -- tanh, sigmoid and the normal-distribution functions (Phi, exp(-x^2/2),
 * gelu, gelu') of pmathf.h (included by it). Coefficients from tools/pmathf_coeffs.py. */

#define PF_RSQRT2PI PF_CF(0x3ECC422Au, 0.398942292)

/* (ah + al) / (bh + bl) = q.h + q.l (unnormalised, rel err ~2^-40), bh >= 2^-100 */
PF_FN pf_ff pf_div_ff(float ah, float al, float bh, float bl) {
  PF_PRECISE float q0 = PF_HW_DIV(ah, bh);
  pf_ff p = pf_two_prod(q0, bh);
  PF_PRECISE float r = (((ah - p.h) - p.l) + al) - q0 * bl;
  PF_PRECISE float ql = r * PF_HW_DIV(PF_K(1.0), bh);
  return PF_FF(q0, ql);
}

/* 1 + e as a float-float, e = (E.h + E.l) 2^E.n, E.n <= 26 */
PF_FN pf_ff pf_one_plus(pf_ffn E) {
  if (E.n < -40) return PF_FF(PF_K(1.0), PF_K(0.0));
  PF_PRECISE float s = pf_pow2(E.n);
  pf_ff d = pf_two_sum(PF_K(1.0), E.h * s);
  PF_PRECISE float dl = d.l + E.l * s;
  return pf_fast_two_sum(d.h, dl);
}

PF_FN float pf_tanh(float x) {
  uint ux = PF_F2U(x), ax = ux & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return x + x;
  if (ax < 0x39800000u) return x; /* |x| < 2^-12 */
  PF_PRECISE float a = PF_U2F(ax);
  PF_PRECISE float r;
  if (ax < 0x3F0CCCCDu) { /* |x| < 0.55: x + x^3 T(x^2), rel err 2^-25 on T */
    PF_PRECISE float z = a * a;
    PF_PRECISE float T =
        PF_CF(0xBEAAAAABu, -0.333333343) +
        z * (PF_CF(0x3E0888DAu, 0.133334547) +
             z * (PF_CF(0xBD5D3ADCu, -0.0540112108) +
                  z * (PF_CF(0x3CB8A719u, 0.0225406159) +
                       z * (PF_CF(0xBC697F07u, -0.0142514771) +
                            z * (PF_CF(0x3CDB5B51u, 0.0267769415) +
                                 z * (PF_CF(0xBD561C23u, -0.052272927) + z * PF_CF(0x3D38A089u, 0.0450749733)))))));
    r = a + (a * z) * T;
  } else if (ax >= 0x41119999u) { /* |x| >= 9.1 */
    r = PF_K(1.0);
  } else { /* 1 - 2 / (e^{2|x|} + 1) */
    pf_ff d = pf_one_plus(pf_exp_red(PF_K(2.0) * a, PF_K(0.0)));
    pf_ff q = pf_div_ff(PF_K(2.0), PF_K(0.0), d.h, d.l);
    pf_ff o = pf_fast_two_sum(PF_K(1.0), -q.h);
    r = o.h + (o.l - q.l);
  }
  return PF_U2F(PF_F2U(r) | (ux & 0x80000000u));
}

PF_FN float pf_sigmoid(float x) {
  uint ux = PF_F2U(x);
  if ((ux & 0x7FFFFFFFu) > 0x7F800000u) return x + x;
  if (x >= PF_K(0.0)) { /* 1 / (1 + e^-x) */
    if (x > PF_K(40.0)) return PF_K(1.0);
    pf_ff d = pf_one_plus(pf_exp_red(-x, PF_K(0.0)));
    pf_ff q = pf_div_ff(PF_K(1.0), PF_K(0.0), d.h, d.l);
    return q.h + q.l;
  }
  if (x < PF_K(-104.0)) return PF_K(0.0);
  pf_ffn E = pf_exp_red(x, PF_K(0.0)); /* e^x / (1 + e^x) */
  pf_ff d = pf_one_plus(E);
  pf_ff q = pf_div_ff(E.h, E.l, d.h, d.l);
  return pf_scale(q.h + q.l, E.n);
}

/* Phi(x) = 1/2 + x S(x^2), |x| <= 0.75 (rel err 2^-25 on S) */
PF_FN float pf_phi_center(float x) {
  PF_PRECISE float z = x * x;
  PF_PRECISE float S =
      PF_CF(0x3ECC422Au, 0.398942292) +
      z * (PF_CF(0xBD882C67u, -0.0664909407) +
           z * (PF_CF(0x3C23895Du, 0.00998148043) +
                z * (PF_CF(0xBAA1EBC2u, -0.00123535865) +
                     z * (PF_CF(0x3986C950u, 0.000257084612) +
                          z * (PF_CF(0xB95C4C00u, -0.000210091472) + z * PF_CF(0x38E6B57Au, 0.000110010573))))));
  PF_PRECISE float r = PF_K(0.5) + x * S;
  return r;
}

/* Q(u) = Phi(-u) e^{u^2/2} for 0.75 <= u <= 14.75, four pieces in t = u - c (exact) */
PF_FN float pf_phi_Q(float u) {
  PF_PRECISE float t;
  PF_PRECISE float q;
  if (u < PF_K(2.5)) {
    t = u - PF_K(1.5);
    q = PF_CF(0x3E52B82Bu, 0.20578067) +
        t * (PF_CF(0xBDB8E026u, -0.0902712792) +
             t * (PF_CF(0x3D101FFBu, 0.035186749) +
                  t * (PF_CF(0xBC4CC034u, -0.0124969967) +
                       t * (PF_CF(0x3B86BC79u, 0.00411182316) +
                            t * (PF_CF(0xBAA5FF44u, -0.00126645761) +
                                 t * (PF_CF(0x39BD2EFFu, 0.00036083904) +
                                      t * (PF_CF(0xB8D17D7Du, -9.98927062e-05) +
                                           t * (PF_CF(0x38435EE6u, 4.6580004e-05) +
                                                t * (PF_CF(0xB77A99F9u, -1.49370107e-05) +
                                                     t * (PF_CF(0xB7C0D1DDu, -2.29859088e-05) +
                                                          t * (PF_CF(0x375A25FFu, 1.30026592e-05) +
                                                               t * (PF_CF(0x374CC49Fu, 1.22051269e-05) +
                                                                    t * PF_CF(0xB706072Au, -7.98869041e-06)))))))))))));
  } else if (u < PF_K(5.0)) {
    t = u - PF_K(4.0);
    q = PF_CF(0x3DC15A5Eu, 0.094410643) +
        t * (PF_CF(0xBCAE7CBDu, -0.0212997142) +
             t * (PF_CF(0x3B96ECC3u, 0.00460586092) +
                  t * (PF_CF(0xBA7B53ACu, -0.000958735822) +
                       t * (PF_CF(0x394A4491u, 0.000192897642) +
                            t * (PF_CF(0xB81D05E9u, -3.74372212e-05) +
                                 t * (PF_CF(0x36E4D48Au, 6.81967231e-06) +
                                      t * (PF_CF(0xB5D03B2Du, -1.55144301e-06) +
                                           t * (PF_CF(0x34F2F1A2u, 4.52518236e-07) +
                                                t * (PF_CF(0x34647AA5u, 2.12787725e-07) +
                                                     t * (PF_CF(0xB2BE430Du, -2.21494023e-08) +
                                                          t * (PF_CF(0xB3CDBAE3u, -9.58005089e-08) +
                                                               t * PF_CF(0xB2D74177u, -2.50590642e-08))))))))))));
  } else if (u < PF_K(9.0)) {
    t = u - PF_K(7.0);
    q = PF_CF(0x3D64F090u, 0.0558934808) +
        t * (PF_CF(0xBBFBEACFu, -0.00768790348) +
             t * (PF_CF(0x3A88321Eu, 0.00103909126) +
                  t * (PF_CF(0xB910D2EAu, -0.000138114818) +
                       t * (PF_CF(0x37975EBDu, 1.80447187e-05) +
                            t * (PF_CF(0xB61C41E1u, -2.3284158e-06) +
                                 t * (PF_CF(0x34A965E5u, 3.15528411e-07) +
                                      t * (PF_CF(0xB31DAE04u, -3.67126773e-08) +
                                           t * (PF_CF(0xB180F51Cu, -3.75315601e-09) +
                                                t * (PF_CF(0xB029DAF7u, -6.17930096e-10) +
                                                     t * (PF_CF(0x30EDDD01u, 1.73068326e-09) +
                                                          t * (PF_CF(0xAC835A9Au, -3.73330273e-12) +
                                                               t * PF_CF(0xAF0B8658u, -1.26897048e-10))))))))))));
  } else {
    t = u - PF_K(12.0);
    q = PF_CF(0x3D073EE7u, 0.0330189727) +
        t * (PF_CF(0xBB31E7E5u, -0.00271462766) +
             t * (PF_CF(0x39687C36u, 0.000221715163) +
                  t * (PF_CF(0xB796EE7Au, -1.79924427e-05) +
                       t * (PF_CF(0x35C374EBu, 1.45626598e-06) +
                            t * (PF_CF(0xB3FAD5C0u, -1.16804131e-07) +
                                 t * (PF_CF(0x31F3651Cu, 7.08372561e-09) +
                                      t * (PF_CF(0xB01B4121u, -5.64812253e-10) +
                                           t * (PF_CF(0x3008160Eu, 4.95078534e-10) +
                                                t * (PF_CF(0xADF40371u, -2.77411167e-11) +
                                                     t * (PF_CF(0xAE38A6E9u, -4.19850023e-11) +
                                                          t * (PF_CF(0x2B9D0769u, 1.11575777e-12) +
                                                               t * PF_CF(0x2BDF5510u, 1.58687126e-12))))))))))));
  }
  return q;
}

/* e^{-u^2/2} = (h + l) 2^n with u^2 exact as a float-float; |u| <= 14.75 */
PF_FN pf_ffn pf_enhs_red(float u) {
  pf_ff s = pf_two_prod(u, u);
  return pf_exp_red(PF_K(-0.5) * s.h, PF_K(-0.5) * s.l);
}

PF_FN float pf_exp_neg_half_sq(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return x + x;
  if (ax < 0x39800000u) return PF_K(1.0); /* |x| < 2^-12 */
  if (ax > 0x416C0000u) return PF_K(0.0); /* |x| > 14.75 */
  pf_ffn E = pf_enhs_red(x);
  return pf_scale(E.h + E.l, E.n);
}

/* Phi(-u) for u > 0.75 */
PF_FN float pf_phi_tail(float u) {
  if (u > PF_K(14.25)) return PF_K(0.0);
  pf_ffn E = pf_enhs_red(u);
  PF_PRECISE float m = (E.h + E.l) * pf_phi_Q(u);
  return pf_scale(m, E.n);
}

PF_FN float pf_phi(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return x + x;
  if (ax <= 0x3F400000u) return pf_phi_center(x);
  float t = pf_phi_tail(PF_U2F(ax));
  PF_PRECISE float r = PF_K(1.0) - t;
  return x < PF_K(0.0) ? t : r;
}

/* gelu(x) = x Phi(x); gelu(+inf) = +inf, gelu(-inf) = NaN (-inf * 0, as the CPU plugin) */
PF_FN float pf_gelu(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return x + x;
  if (ax == 0x7F800000u) return x > PF_K(0.0) ? x : PF_NAN;
  if (ax <= 0x3F400000u) {
    PF_PRECISE float r = x * pf_phi_center(x);
    return r;
  }
  if (x > PF_K(0.0)) {
    PF_PRECISE float r = x - x * pf_phi_tail(x);
    return r;
  }
  PF_PRECISE float u = -x;
  if (u > PF_K(14.5)) return PF_K(-0.0);
  pf_ffn E = pf_enhs_red(u);
  PF_PRECISE float m = (E.h + E.l) * (pf_phi_Q(u) * u);
  return -pf_scale(m, E.n);
}

/* gelu'(x) = Phi(x) + x phi(x); NaN at +-inf (inf * 0, as the CPU plugin) */
PF_FN float pf_gelu_grad(float x) {
  uint ax = PF_F2U(x) & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return x - x;
  if (x >= PF_K(-0.5) && x <= PF_K(0.75)) {
    PF_PRECISE float ph = PF_RSQRT2PI * pf_exp_neg_half_sq(x);
    PF_PRECISE float S = pf_phi_center(x) - PF_K(0.5);
    PF_PRECISE float r = PF_K(0.5) + (S + x * ph);
    return r;
  }
  if (x < PF_K(-0.5) && x >= PF_K(-1.0)) { /* around the root x0: polynomial in t = x - x0 */
    PF_PRECISE float t = x - PF_CF(0xBF407569u, -0.751791537);
    PF_PRECISE float g =
        PF_CF(0xB1B39BECu, -5.22731192e-09) +
        t * (PF_CF(0x3EDCECC8u, 0.431493998) +
             t * (PF_CF(0x3EC6CD4Au, 0.388284981) +
                  t * (PF_CF(0xBC952146u, -0.0182043426) +
                       t * (PF_CF(0xBDE97D2Eu, -0.114008293) +
                            t * (PF_CF(0xBC6B2EB4u, -0.0143543966) +
                                 t * (PF_CF(0x3C9F4B2Fu, 0.01944503) +
                                      t * (PF_CF(0xBC2EE5A1u, -0.010674865) +
                                           t * (PF_CF(0xBB491ACEu, -0.00306861429) +
                                                t * (PF_CF(0x3E77FCE7u, 0.242175683) +
                                                     t * (PF_CF(0x3C053F40u, 0.00813275576) +
                                                          t * PF_CF(0xBFB49C4Du, -1.41101992)))))))))));
    return g;
  }
  PF_PRECISE float u = PF_U2F(ax);
  if (u > PF_K(14.75)) return x > PF_K(0.0) ? PF_K(1.0) : PF_K(-0.0);
  pf_ffn E = pf_enhs_red(u);
  PF_PRECISE float d = u * PF_RSQRT2PI - pf_phi_Q(u); /* u phi(u) / e^{-u^2/2} - Phi(-u) e^{u^2/2} */
  PF_PRECISE float m = (E.h + E.l) * d;
  PF_PRECISE float v = pf_scale(m, E.n);
  PF_PRECISE float r = PF_K(1.0) + v;
  return x > PF_K(0.0) ? r : -v;
}
