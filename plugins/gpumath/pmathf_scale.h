/* pmathf_scale.h -- a float times a double given as its bits, rounded once (included by pmathf.h).
 * For parameters that are doubles in the ABI (leaky_relu's slope) on devices without float64:
 * the 53-bit and 24-bit significands are multiplied exactly in 32-bit integer pieces (a 77-bit
 * product in three words) and rounded once to f32, to nearest even, subnormal results and
 * overflow included -- the result (float)(a * (double)v) would have if that product were exact. */

/* bit j of the 96-bit w2:w1:w0 */
PF_FN uint pf_bit96(uint w2, uint w1, uint w0, int j) {
  if (j >= 64) return (w2 >> PF_UINT(j - 64)) & 1u;
  if (j >= 32) return (w1 >> PF_UINT(j - 32)) & 1u;
  return (w0 >> PF_UINT(j)) & 1u;
}
/* any bit of w2:w1:w0 below bit j */
PF_FN bool pf_any_below96(uint w2, uint w1, uint w0, int j) {
  if (j <= 0) return false;
  if (j >= 64) return (w0 | w1) != 0u || (j > 64 && (w2 & ((1u << PF_UINT(j - 64)) - 1u)) != 0u);
  if (j >= 32) return w0 != 0u || (j > 32 && (w1 & ((1u << PF_UINT(j - 32)) - 1u)) != 0u);
  return (w0 & ((1u << PF_UINT(j)) - 1u)) != 0u;
}
/* the low 32 bits of w2:w1:w0 >> s, 1 <= s < 96 */
PF_FN uint pf_shr96(uint w2, uint w1, uint w0, int s) {
  if (s >= 64) return w2 >> PF_UINT(s - 64);
  if (s >= 32) return s == 32 ? w1 : (w1 >> PF_UINT(s - 32)) | (w2 << PF_UINT(64 - s));
  return (w0 >> PF_UINT(s)) | (w1 << PF_UINT(32 - s));
}

/* v * d, d the double with bits dhi:dlo, rounded once to f32 (NaN, inf and zero as IEEE) */
PF_FN float pf_mul_d(uint dhi, uint dlo, float v) {
  uint vb = PF_F2U(v);
  uint sign = (vb ^ dhi) & 0x80000000u;
  uint de = (dhi >> 20) & 0x7FFu, ve = (vb >> 23) & 0xFFu;
  bool d_zero = ((dhi & 0x7FFFFFFFu) | dlo) == 0u, v_zero = (vb & 0x7FFFFFFFu) == 0u;
  if (ve == 0xFFu && (vb & 0x7FFFFFu) != 0u) return v;               /* NaN v */
  if (de == 0x7FFu && ((dhi & 0xFFFFFu) | dlo) != 0u) return PF_NAN; /* NaN d */
  if (ve == 0xFFu || de == 0x7FFu) return (d_zero || v_zero) ? PF_NAN : PF_U2F(sign | 0x7F800000u);
  if (d_zero || v_zero) return PF_U2F(sign);
  uint ma_hi = (dhi & 0xFFFFFu) | (de != 0u ? 0x100000u : 0u), ma_lo = dlo;
  uint mv = (vb & 0x7FFFFFu) | (ve != 0u ? 0x800000u : 0u);
  int e = (de != 0u ? PF_INT(de) : 1) - 1075 + (ve != 0u ? PF_INT(ve) : 1) - 150;
  /* P = ma * mv, exactly: w2:w1:w0 */
  uint w0 = ma_lo * mv, c1 = PF_UMULHI(ma_lo, mv), d0 = ma_hi * mv, d1 = PF_UMULHI(ma_hi, mv);
  uint w1 = c1 + d0;
  uint w2 = d1 + (w1 < c1 ? 1u : 0u);
  int k = w2 != 0u ? 64 + PF_MSB(w2) : w1 != 0u ? 32 + PF_MSB(w1) : PF_MSB(w0);
  int er = k + e; /* the value lies in [2^er, 2^(er+1)) */
  if (er > 127) return PF_U2F(sign | 0x7F800000u);
  int s = k - 23 + (er < -126 ? -126 - er : 0); /* low bits dropped: 24 kept, fewer when subnormal */
  if (s > k + 1) return PF_U2F(sign);           /* below half the smallest subnormal */
  uint mant;
  if (s <= 0) {
    mant = w0 << PF_UINT(-s); /* k <= 23: P fits w0 */
  } else {
    mant = s > k ? 0u : pf_shr96(w2, w1, w0, s);
    bool rnd = pf_bit96(w2, w1, w0, s - 1) != 0u, sticky = pf_any_below96(w2, w1, w0, s - 1);
    if (rnd && (sticky || (mant & 1u) != 0u)) mant++;
  }
  if (er < -126) return PF_U2F(sign | mant); /* subnormal (a carry into 2^23 is the smallest normal) */
  if (mant == 0x1000000u) {
    mant >>= 1;
    er++;
    if (er > 127) return PF_U2F(sign | 0x7F800000u);
  }
  return PF_U2F(sign | (PF_UINT(er + 127) << 23) | (mant & 0x7FFFFFu));
}
