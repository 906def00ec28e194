/* softmax_kernels.c — softmax and log_softmax rows for f64, f32, f16 and bf16 (one copy per
 * instruction-set path, see cpu_isa.h), stamped from softmax_tmpl.h. f16 and bf16 compute in
 * f32 and round once on store; f64 uses libm's exp; the f32 forward uses cpu_expf_nonpos and
 * log_softmax's backward cpu_expf (<= 1 ulp, vectorizable; libm's expf per element had made that
 * backward seven times its forward). */
#include <math.h>
#include <string.h>

#include "cpu_half.h"
#include "cpu_accum.h"
#include "cpu_expf.h"
#include "softmax_internal.h"

#define SM_SFX f64
#define SM_ST double
#define SM_AT double
#define SM_LOAD(p) (*(p))
#define SM_STORE(p, v) (*(p) = (v))
#define SM_EXP exp
#define SM_EXP_NONPOS exp
#define SM_LOG log
#define SM_CASC f64
#define SM_STORES_AT 1
#include "softmax_tmpl.h"

#define SM_SFX f32
#define SM_ST float
#define SM_AT float
#define SM_LOAD(p) (*(p))
#define SM_STORE(p, v) (*(p) = (v))
#define SM_EXP cpu_expf
#define SM_EXP_NONPOS cpu_expf_nonpos
#define SM_LOG logf
#define SM_CASC f32
#define SM_STORES_AT 1
#include "softmax_tmpl.h"

#define SM_SFX f16
#define SM_ST uint16_t
#define SM_AT float
#define SM_LOAD(p) cpu_f16_to_f32(*(p))
#define SM_STORE(p, v) (*(p) = cpu_f32_to_f16(v))
#define SM_EXP cpu_expf
#define SM_EXP_NONPOS cpu_expf_nonpos
#define SM_LOG logf
#define SM_CASC f32
#define SM_STORES_AT 0
#include "softmax_tmpl.h"

#define SM_SFX bf16
#define SM_ST uint16_t
#define SM_AT float
#define SM_LOAD(p) psup_bf16_to_f32(*(p))
#define SM_STORE(p, v) (*(p) = psup_f32_to_bf16(v))
#define SM_EXP cpu_expf
#define SM_EXP_NONPOS cpu_expf_nonpos
#define SM_LOG logf
#define SM_CASC f32
#define SM_STORES_AT 0
#include "softmax_tmpl.h"
