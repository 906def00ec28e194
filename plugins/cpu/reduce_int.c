/* reduce_int.c — reduce kernels for i32, i64 and bool (see reduce_tmpl.h). Integer sums wrap
 * (two's complement); bool reads any non-zero byte as 1, so max is "any", min is "all", and a
 * bool sum is either stored as bool (any element true) or counted into i64. */
#include <math.h>

#include "cpu_accum.h"
#include "reduce_internal.h"

#define RD_SFX i32
#define RD_ST int32_t
#define RD_VT int32_t
#define RD_KT int32_t
#define RD_KEY(v) (v)
#define RD_UNKEY(k) (k)
#define RD_UT uint32_t
#define RD_OT int32_t
#define RD_FLOAT 0
#define RD_LOAD(p) (*(p))
#define RD_STORE_VAL(p, v) (*(p) = (v))
#define RD_STORE_SUM(p, u) (*(p) = (int32_t)(u))
#include "reduce_tmpl.h"

#define RD_SFX i64
#define RD_ST int64_t
#define RD_VT int64_t
#define RD_KT int64_t
#define RD_KEY(v) (v)
#define RD_UNKEY(k) (k)
#define RD_UT uint64_t
#define RD_OT int64_t
#define RD_FLOAT 0
#define RD_LOAD(p) (*(p))
#define RD_STORE_VAL(p, v) (*(p) = (v))
#define RD_STORE_SUM(p, u) (*(p) = (int64_t)(u))
#include "reduce_tmpl.h"

#define RD_SFX b8
#define RD_ST uint8_t
#define RD_VT int
#define RD_KT int
#define RD_KEY(v) (v)
#define RD_UNKEY(k) (k)
#define RD_UT uint64_t
#define RD_OT uint8_t
#define RD_FLOAT 0
#define RD_LOAD(p) (*(p) != 0)
#define RD_STORE_VAL(p, v) (*(p) = (uint8_t)((v) != 0))
#define RD_STORE_SUM(p, u) (*(p) = (uint8_t)((u) != 0))
#include "reduce_tmpl.h"

#define RD_SFX b8_count
#define RD_ST uint8_t
#define RD_VT int
#define RD_KT int
#define RD_KEY(v) (v)
#define RD_UNKEY(k) (k)
#define RD_UT uint64_t
#define RD_OT int64_t
#define RD_FLOAT 0
#define RD_LOAD(p) (*(p) != 0)
#define RD_STORE_VAL(p, v) (*(p) = (uint8_t)((v) != 0))
#define RD_STORE_SUM(p, u) (*(p) = (int64_t)(u))
#include "reduce_tmpl.h"
