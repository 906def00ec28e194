/* cast.glsl — the cast kernel of elementwise.comp, one variant per (SDT, DDT) pair. Floats round
 * to nearest even (to f16/bf16 through a round-to-odd f32, so once); floats to integers truncate
 * toward zero and saturate, NaN -> 0; integers wrap; bool is 0/1 and any non-zero is true.
 * Casts that involve f64 go through double; every other pair uses 32-bit float and integer
 * arithmetic only (integers to floats rounded by integer code, so no driver conversion is
 * trusted), so it runs on devices without shaderFloat64. */
#define DT_IS_FLOAT(d) ((d) == DT_F32 || (d) == DT_F16 || (d) == DT_BF16 || (d) == DT_F64)

#if SDT == DT_F32
#define SS float
#elif SDT == DT_F16 || SDT == DT_BF16
#define SS uint16_t
#elif SDT == DT_F64
#define SS double
#elif SDT == DT_I32
#define SS int
#elif SDT == DT_I64
#define SS int64_t
#else
#define SS uint8_t
#endif
#if DDT == DT_F32
#define DS float
#elif DDT == DT_F16 || DDT == DT_BF16
#define DS uint16_t
#elif DDT == DT_F64
#define DS double
#elif DDT == DT_I32
#define DS int
#elif DDT == DT_I64
#define DS int64_t
#else
#define DS uint8_t
#endif

OPERAND_RO(0, x, SS)
OPERAND(1, y, DS)

#if NEEDS_DOUBLE

/* step a double one ulp toward zero (finite, non-zero) */
double toward_zero(double d) {
  uvec2 b = unpackDouble2x32(d);
  if (b.x == 0u) b.y -= 1u;
  b.x -= 1u;
  return packDouble2x32(b);
}

#if SDT == DT_I64
/* v rounded to 53 bits: nearest even (odd = false) or to odd (odd = true) */
double i64_to_f64(int64_t v, bool odd) {
  precise double hi = double(int(v >> 32)) * 4294967296.0lf; /* exact */
  precise double lo = double(uint(v & int64_t(0xffffffff)));
  precise double s = hi + lo;
  precise double bb = s - hi;
  precise double err = (hi - (s - bb)) + (lo - bb); /* s + err == v exactly */
  if (!odd || err == 0.0) return s;
  if ((err < 0.0) != (s < 0.0)) s = toward_zero(s); /* s was rounded away from zero */
  uvec2 b = unpackDouble2x32(s);
  b.x |= 1u;
  return packDouble2x32(b);
}
#endif

/* the source element as double (exact for every dtype; i64 rounded to odd when `odd`) */
double src_value(int i, bool odd) {
#if SDT == DT_F32
  return double(x[i]);
#elif SDT == DT_F16
  return double(f16_to_f32(uint(x[i])));
#elif SDT == DT_BF16
  return double(bf16_to_f32(uint(x[i])));
#elif SDT == DT_F64
  return x[i];
#elif SDT == DT_I32
  return double(x[i]);
#elif SDT == DT_I64
  return i64_to_f64(x[i], odd);
#else
  return uint(x[i]) != 0u ? 1.0 : 0.0;
#endif
}

#if DT_IS_FLOAT(DDT)
/* the cast of x[ox] to a floating DDT */
DS to_float(int ox) {
#if DDT == DT_F64
  return src_value(ox, false);
#elif DDT == DT_F32
  return float(src_value(ox, SDT == DT_I64)); /* i64: odd at 53 bits, then once to 24 */
#else
  float f = f64_to_f32_odd(src_value(ox, SDT == DT_I64));
#if DDT == DT_F16
  return uint16_t(f32_to_f16(f));
#else
  return uint16_t(f32_to_bf16(f));
#endif
#endif
}
#endif
#define CW double
#define CSRC(i) src_value((i), false)
#endif

#if !NEEDS_DOUBLE
/* bit k of the 64-bit magnitude hi:lo, and whether any bit below k is set */
uint bit64(uint hi, uint lo, int k) { return k >= 32 ? (hi >> (k - 32)) & 1u : (lo >> k) & 1u; }
bool any_below(uint hi, uint lo, int k) {
  if (k <= 0) return false;
  if (k >= 32) return lo != 0u || (k > 32 && (hi & ((1u << (k - 32)) - 1u)) != 0u);
  return (lo & ((1u << k) - 1u)) != 0u;
}
/* the low 32 bits of hi:lo >> s, 0 <= s < 64 */
uint shr64(uint hi, uint lo, int s) {
  if (s == 0) return lo;
  if (s >= 32) return hi >> (s - 32);
  return (lo >> s) | (hi << (32 - s));
}
/* (-1)^neg * hi:lo as f32: rounded to nearest even, or to odd (odd = true: rounding that to 11
 * or 8 bits equals rounding the integer directly) */
float int_to_f32(bool neg, uint hi, uint lo, bool odd) {
  if (hi == 0u && lo == 0u) return 0.0;
  int msb = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);
  uint mant;
  if (msb <= 23) {
    mant = lo << (23 - msb);
  } else {
    int sh = msb - 23;
    mant = shr64(hi, lo, sh) & 0xffffffu;
    bool rnd = bit64(hi, lo, sh - 1) != 0u, sticky = any_below(hi, lo, sh - 1);
    if (odd) {
      if (rnd || sticky) mant |= 1u;
    } else if (rnd && (sticky || (mant & 1u) != 0u)) {
      mant++;
      if (mant == 0x1000000u) {
        mant >>= 1;
        msb++;
      }
    }
  }
  return uintBitsToFloat((neg ? 0x80000000u : 0u) | (uint(127 + msb) << 23) | (mant & 0x7fffffu));
}

/* the source element as f32 (exact for f32, f16, bf16, bool and integers below 2^24; other
 * integers rounded to nearest even, or to odd when `odd`) */
float src_f32(int i, bool odd) {
#if SDT == DT_F32
  return x[i];
#elif SDT == DT_F16
  return f16_to_f32(uint(x[i]));
#elif SDT == DT_BF16
  return bf16_to_f32(uint(x[i]));
#elif SDT == DT_I32
  int v = x[i];
  return int_to_f32(v < 0, 0u, v < 0 ? uint(-v) : uint(v), odd);
#elif SDT == DT_I64
  int64_t v = x[i];
  uint64_t m = v < int64_t(0) ? uint64_t(-v) : uint64_t(v);
  return int_to_f32(v < int64_t(0), uint(m >> 32), uint(m & uint64_t(0xffffffffu)), odd);
#else
  return uint(x[i]) != 0u ? 1.0 : 0.0;
#endif
}

#if DT_IS_FLOAT(DDT)
/* the cast of x[ox] to a floating DDT */
DS to_float(int ox) {
#if DDT == DT_F32
  return src_f32(ox, false);
#elif DDT == DT_F16
  return uint16_t(f32_to_f16(src_f32(ox, true)));
#else
  return uint16_t(f32_to_bf16(src_f32(ox, true)));
#endif
}
#endif
#define CW float
#define CSRC(i) src_f32((i), false)
#endif

/* one element: x[ox] -> y[oy] (CW, CSRC: the working type and the source as it, per path) */
void cast_at(int ox, int oy) {
#if DDT == DT_BOOL
#if DT_IS_FLOAT(SDT)
  y[oy] = uint8_t(CSRC(ox) != CW(0) ? 1 : 0); /* NaN -> true */
#else
  y[oy] = uint8_t(x[ox] != SS(0) ? 1 : 0);
#endif
#elif DDT == DT_I32 || DDT == DT_I64
#if DT_IS_FLOAT(SDT)
  CW v = CSRC(ox); /* saturate at 2^31 and 2^63 (float literals, exact in both types) */
#if DDT == DT_I32
  y[oy] = isnan(v) ? 0 : v >= CW(2147483648.0) ? 2147483647 : v <= CW(-2147483648.0) ? int(0x80000000) : int(v);
#else
  y[oy] = isnan(v) ? int64_t(0) : v >= CW(9223372036854775808.0) ? int64_t(0x7fffffffffffffffl)
        : v <= CW(-9223372036854775808.0) ? int64_t(0x8000000000000000l) : int64_t(v);
#endif
#elif SDT == DT_BOOL
  y[oy] = DS(uint(x[ox]) != 0u ? 1 : 0);
#else
  y[oy] = DS(x[ox]); /* integers wrap */
#endif
#else
  y[oy] = to_float(ox);
#endif
}

#define CAST_BODY(AT) { \
    int ox, oy; \
    AT(i, 0, ox); \
    AT(i, 1, oy); \
    cast_at(ox, oy); \
  }
void main() {
  ITER_LOCALS
  FOR_EACH_ITEM(CAST_BODY)
}
