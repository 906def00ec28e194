/* dtype.c — dtype tables and generic element load/store. */
#include "parity_support/dtype.h"

#include <math.h>
#include <string.h>

const char *psup_dtype_name(int32_t dtype) {
  switch (dtype) {
#define PARITY_X_(v, N, s, sz) \
  case v: return s;
    PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
    default: return "invalid";
  }
}

int32_t psup_dtype_from_name(const char *name) {
#define PARITY_X_(v, N, s, sz) \
  if (name && strcmp(name, s) == 0) return v;
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
    case PARITY_DTYPE_F32: {
      float v;
      memcpy(&v, p, 4);
      return v;
    }
    case PARITY_DTYPE_F64: {
      double v;
      memcpy(&v, p, 8);
      return v;
    }
    case PARITY_DTYPE_F16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return psup_f16_to_f32(v);
    }
    case PARITY_DTYPE_BF16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return psup_bf16_to_f32(v);
    }
    case PARITY_DTYPE_I32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case PARITY_DTYPE_I64: {
      int64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    case PARITY_DTYPE_BOOL: return *(const uint8_t *)p != 0;
    default: return NAN;
  }
}

/* Truncate toward zero and saturate to [lo, hi]; NaN -> 0. */
static double sat(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  v = trunc(v);
  return v < lo ? lo : v > hi ? hi : v;
}

void psup_store_f64(void *p, int32_t dtype, double v) {
  switch (dtype) {
    case PARITY_DTYPE_F32: {
      float f = (float)v;
      memcpy(p, &f, 4);
      break;
    }
    case PARITY_DTYPE_F64: memcpy(p, &v, 8); break;
    case PARITY_DTYPE_F16: {
      uint16_t h = psup_f64_to_f16(v);
      memcpy(p, &h, 2);
      break;
    }
    case PARITY_DTYPE_BF16: {
      uint16_t h = psup_f64_to_bf16(v);
      memcpy(p, &h, 2);
      break;
    }
    case PARITY_DTYPE_I32: {
      int32_t x = (int32_t)sat(v, -2147483648.0, 2147483647.0);
      memcpy(p, &x, 4);
      break;
    }
    case PARITY_DTYPE_I64: {
      /* 2^63 is not representable in i64: compare against it before converting */
      double t = sat(v, -9223372036854775808.0, 9223372036854775808.0);
      int64_t x = t >= 9223372036854775808.0 ? INT64_MAX : (int64_t)t;
      memcpy(p, &x, 8);
      break;
    }
    case PARITY_DTYPE_BOOL: *(uint8_t *)p = (v != 0.0); break; /* NaN != 0: true */
    default: break;
  }
}
