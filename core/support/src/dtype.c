/* dtype.c — dtype tables and generic element load/store. */
#include "parity_support/dtype.h"

#include <math.h>
#include <string.h>

uint32_t psup_dtype_size(int32_t dtype) {
  switch (dtype) {
#define PARITY_X_(v, N, s, sz) case v: return sz;
    PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
    default: return 0;
  }
}

const char *psup_dtype_name(int32_t dtype) {
  switch (dtype) {
#define PARITY_X_(v, N, s, sz) case v: return s;
    PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
    default: return "invalid";
  }
}

int32_t psup_dtype_from_name(const char *name) {
#define PARITY_X_(v, N, s, sz) if (name && strcmp(name, s) == 0) return v;
  PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
  return PARITY_DTYPE_INVALID;
}

int psup_dtype_is_float(int32_t dtype) {
  return dtype == PARITY_DTYPE_F32 || dtype == PARITY_DTYPE_F64 || dtype == PARITY_DTYPE_F16 ||
         dtype == PARITY_DTYPE_BF16;
}

double psup_load_f64(const void *p, int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F32: { float v; memcpy(&v, p, 4); return v; }
    case PARITY_DTYPE_F64: { double v; memcpy(&v, p, 8); return v; }
    case PARITY_DTYPE_F16: { uint16_t v; memcpy(&v, p, 2); return psup_f16_to_f32(v); }
    case PARITY_DTYPE_BF16: { uint16_t v; memcpy(&v, p, 2); return psup_bf16_to_f32(v); }
    case PARITY_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case PARITY_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case PARITY_DTYPE_BOOL: return *(const uint8_t *)p != 0;
    default: return NAN;
  }
}

/* Truncate toward zero and wrap modulo 2^64 (NaN -> 0, out-of-range -> wrapped). */
static uint64_t wrap_u64(double v) {
  if (isnan(v)) return 0;
  v = trunc(v);
  double m = fmod(v, 18446744073709551616.0); /* 2^64 */
  if (m < 0) m += 18446744073709551616.0;
  if (m >= 9223372036854775808.0) return (uint64_t)(m - 9223372036854775808.0) + (1ull << 63);
  return (uint64_t)m;
}

void psup_store_f64(void *p, int32_t dtype, double v) {
  switch (dtype) {
    case PARITY_DTYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case PARITY_DTYPE_F64: memcpy(p, &v, 8); break;
    case PARITY_DTYPE_F16: { uint16_t h = psup_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
    case PARITY_DTYPE_BF16: { uint16_t h = psup_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case PARITY_DTYPE_I32: { uint32_t u = (uint32_t)wrap_u64(v); memcpy(p, &u, 4); break; }
    case PARITY_DTYPE_I64: { uint64_t u = wrap_u64(v); memcpy(p, &u, 8); break; }
    case PARITY_DTYPE_BOOL: *(uint8_t *)p = (v != 0.0); break; /* NaN != 0: true */
    default: break;
  }
}
