/* cast.glsl — the cast kernel of elementwise.comp, one variant per (SDT, DDT) pair. Floats round
 * to nearest even (to f16/bf16 through a round-to-odd f32, so once); floats to integers truncate
 * toward zero and saturate, NaN -> 0; integers wrap; bool is 0/1 and any non-zero is true. */
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

/* one element: x[ox] -> y[oy] */
void cast_at(int ox, int oy) {
#if DDT == DT_BOOL
#if DT_IS_FLOAT(SDT)
  y[oy] = uint8_t(src_value(ox, false) != 0.0 ? 1 : 0); /* NaN -> true */
#else
  y[oy] = uint8_t(x[ox] != SS(0) ? 1 : 0);
#endif
#elif DDT == DT_I32 || DDT == DT_I64
#if DT_IS_FLOAT(SDT)
  double v = src_value(ox, false);
#if DDT == DT_I32
  y[oy] = isnan(v) ? 0 : v >= 2147483647.0lf ? 2147483647 : v <= -2147483648.0lf ? int(0x80000000) : int(v);
#else
  y[oy] = isnan(v) ? int64_t(0) : v >= 9223372036854775807.0lf ? int64_t(0x7fffffffffffffffl)
        : v <= -9223372036854775808.0lf ? int64_t(0x8000000000000000l) : int64_t(v);
#endif
#elif SDT == DT_BOOL
  y[oy] = DS(uint(x[ox]) != 0u ? 1 : 0);
#else
  y[oy] = DS(x[ox]); /* integers wrap */
#endif
#elif DDT == DT_F64
  y[oy] = src_value(ox, false);
#elif DDT == DT_F32
#if SDT == DT_I64
  y[oy] = float(src_value(ox, true)); /* odd at 53 bits, then once to 24 */
#else
  y[oy] = float(src_value(ox, false));
#endif
#else /* f16, bf16 */
  float f = f64_to_f32_odd(src_value(ox, SDT == DT_I64));
#if DDT == DT_F16
  y[oy] = uint16_t(f32_to_f16(f));
#else
  y[oy] = uint16_t(f32_to_bf16(f));
#endif
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
