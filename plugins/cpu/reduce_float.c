/* reduce_float.c — reduce kernels for f64, f32, f16 and bf16 (see reduce_tmpl.h). f16 and bf16
 * are storage: they load exactly into f32, accumulate in f32 and round once on store. */
#include <math.h>

#include "cpu_half.h"
#include "cpu_accum.h"
#include "reduce_internal.h"

#define RD_SFX f64
#define RD_ST double
#define RD_VT double
#define RD_KT int64_t
#define RD_KEY(v) rd_key_f64(v)
#define RD_UNKEY(k) rd_unkey_f64(k)
#define RD_AT double
#define RD_LEAF_DENSE cpu_leaf_f64
#define RD_EXT_DENSE 1
#define RD_CASC f64
#define RD_FLOAT 1
#define RD_LOAD(p) (*(p))
#define RD_STORE_F64(p, d) (*(p) = (d))
#define RD_STORE_VAL(p, v) (*(p) = (v))
#include "reduce_tmpl.h"

#define RD_SFX f32
#define RD_ST float
#define RD_VT float
#define RD_KT int32_t
#define RD_KEY(v) rd_key_f32(v)
#define RD_UNKEY(k) rd_unkey_f32(k)
#define RD_AT float
#define RD_LEAF_DENSE cpu_leaf_f32
#define RD_EXT_DENSE 1
#define RD_CASC f32
#define RD_FLOAT 1
#define RD_LOAD(p) (*(p))
/* f64 -> f32 rounds once; a quotient rounded through f64 first is still correctly rounded */
#define RD_STORE_F64(p, d) (*(p) = (float)(d))
#define RD_STORE_VAL(p, v) (*(p) = (v))
#include "reduce_tmpl.h"

#define RD_SFX f16
#define RD_ST uint16_t
#define RD_VT float
#define RD_KT int32_t
#define RD_KEY(v) rd_key_f32(v)
#define RD_UNKEY(k) rd_unkey_f32(k)
#define RD_AT float
#define RD_CASC f32
#define RD_FLOAT 1
#define RD_LOAD(p) cpu_f16_to_f32(*(p))
#define RD_STORE_F64(p, d) (*(p) = cpu_f32_to_f16(psup_f64_to_f32_odd(d)))
#define RD_STORE_VAL(p, v) (*(p) = cpu_f32_to_f16(v))
#include "reduce_tmpl.h"

#define RD_SFX bf16
#define RD_ST uint16_t
#define RD_VT float
#define RD_KT int32_t
#define RD_KEY(v) rd_key_f32(v)
#define RD_UNKEY(k) rd_unkey_f32(k)
#define RD_AT float
#define RD_CASC f32
#define RD_FLOAT 1
#define RD_LOAD(p) psup_bf16_to_f32(*(p))
#define RD_STORE_F64(p, d) (*(p) = psup_f64_to_bf16(d))
#define RD_STORE_VAL(p, v) (*(p) = psup_f32_to_bf16(v))
#include "reduce_tmpl.h"
