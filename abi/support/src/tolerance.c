/* tolerance.c — see tolerance.h. */
#include "parity_support/tolerance.h"

#include <math.h>

#include "parity_support/desc.h"
#include "parity_support/ops.h"

double psup_unit_roundoff(int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F64: return 0x1p-53;
    case PARITY_DTYPE_F32: return 0x1p-24;
    case PARITY_DTYPE_F16: return 0x1p-11;
    case PARITY_DTYPE_BF16: return 0x1p-8;
    default: return 0;
  }
}

double psup_accum_roundoff(int32_t dtype) { return dtype == PARITY_DTYPE_F64 ? 0x1p-53 : 0x1p-24; }

static double smallest_normal(int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F64: return 0x1p-1022;
    case PARITY_DTYPE_F16: return 0x1p-14;
    default: return 0x1p-126; /* f32, bf16 */
  }
}

int psup_op_is_exact(int32_t op, int32_t dtype) {
  int is_float =
      dtype == PARITY_DTYPE_F32 || dtype == PARITY_DTYPE_F64 || dtype == PARITY_DTYPE_F16 || dtype == PARITY_DTYPE_BF16;
  switch (op) {
    case PARITY_OP_EQ:
    case PARITY_OP_NE:
    case PARITY_OP_LT:
    case PARITY_OP_LE:
    case PARITY_OP_GT:
    case PARITY_OP_GE:
    case PARITY_OP_WHERE:
    case PARITY_OP_CAST:
    case PARITY_OP_ARGMAX:
    case PARITY_OP_ARGMIN:
    case PARITY_OP_NEG:
    case PARITY_OP_ABS:
    case PARITY_OP_SIGN:
    case PARITY_OP_RELU:
    case PARITY_OP_MAXIMUM:
    case PARITY_OP_MINIMUM:
    case PARITY_OP_MAX:
    case PARITY_OP_MIN: return 1;
    case PARITY_OP_ADD:
    case PARITY_OP_SUB:
    case PARITY_OP_MUL:
    case PARITY_OP_SQUARE: return !is_float || dtype == PARITY_DTYPE_F32 || dtype == PARITY_DTYPE_F64;
    case PARITY_OP_SUM: return !is_float; /* integer sums wrap exactly */
    default: return 0;
  }
}

double psup_ulp_bound(int32_t op, int32_t dtype) {
  /* f16 and bf16 compute in f32 and round once: within 1 ulp of the stored dtype. */
  if (dtype == PARITY_DTYPE_F16 || dtype == PARITY_DTYPE_BF16) return 1;
  switch (op) {
    case PARITY_OP_ADD:
    case PARITY_OP_SUB:
    case PARITY_OP_MUL:
    case PARITY_OP_SQUARE:
    case PARITY_OP_LEAKY_RELU: return 0.5;
    case PARITY_OP_DIV:
    case PARITY_OP_SQRT:
    case PARITY_OP_RECIPROCAL: return 1;
    case PARITY_OP_RSQRT: return 2;
    case PARITY_OP_EXP:
    case PARITY_OP_LOG:
    case PARITY_OP_SIN:
    case PARITY_OP_COS: return 4;
    case PARITY_OP_TANH:
    case PARITY_OP_SIGMOID: return 5;
    case PARITY_OP_GELU: return 8;
    case PARITY_OP_POW: return 16;
    default: return 0; /* exact ops */
  }
}

double psup_accum_bound(int32_t dtype, double ref, double abs_ref, int64_t k) {
  double c = 4.0 * ceil(sqrt((double)(k > 0 ? k : 1))) + 4.0;
  return smallest_normal(dtype) + 2.0 * psup_unit_roundoff(dtype) * fabs(ref) +
         c * psup_accum_roundoff(dtype) * fabs(abs_ref);
}

double psup_ulp_distance(double a, double b, int32_t dtype) {
  if (isnan(a) && isnan(b)) return 0;
  if (a == b) return 0;
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return INFINITY;
  int mant = dtype == PARITY_DTYPE_F64 ? 52 : dtype == PARITY_DTYPE_F16 ? 10 : dtype == PARITY_DTYPE_BF16 ? 7 : 23;
  int min_exp = dtype == PARITY_DTYPE_F64 ? -1022 : dtype == PARITY_DTYPE_F16 ? -14 : -126;
  int e;
  frexp(fmax(fabs(a), fabs(b)), &e);
  e -= 1;
  if (e < min_exp) e = min_exp;
  return fabs(a - b) / ldexp(1.0, e - mant);
}

int32_t psup_rule_for(int32_t op, int32_t dtype, int32_t direction) {
  if (direction == PARITY_DIRECTION_BACKWARD) return PSUP_RULE_ACCUM;
  if (psup_op_is_exact(op, dtype)) return PSUP_RULE_EXACT;
  const psup_op_info_t *info = psup_op_info(op);
  switch (info ? info->kind : 0) {
    case PARITY_OP_KIND_UNARY:
    case PARITY_OP_KIND_BINARY: return PSUP_RULE_ULP;
    case PARITY_OP_KIND_COMPARE:
    case PARITY_OP_KIND_SELECT:
    case PARITY_OP_KIND_CAST: return PSUP_RULE_EXACT;
    default: return PSUP_RULE_ACCUM;
  }
}

int64_t psup_accum_terms(const parity_op_desc_t *d, int slot) {
  const psup_op_info_t *info = psup_op_info(d->op);
  const parity_conv2d_params_t *p = &d->params.conv2d;
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  int64_t k = 1;
  switch (info ? info->kind : 0) {
    case PARITY_OP_KIND_REDUCE:
      if (fwd && psup_numel(d->outputs[0]) > 0) k = psup_numel(d->inputs[0]) / psup_numel(d->outputs[0]);
      break;
    case PARITY_OP_KIND_MATMUL: {
      uint32_t r = d->inputs[0]->rank;
      if (fwd)
        k = d->inputs[0]->shape[r - 1];
      else
        k = slot == 0 ? d->inputs[1]->shape[r - 1] : d->inputs[0]->shape[r - 2];
      break;
    }
    case PARITY_OP_KIND_CONV2D: {
      const parity_tensor_desc_t *w = d->inputs[1], *y = fwd ? d->outputs[0] : d->inputs[2];
      int64_t taps = w->shape[2] * w->shape[3];
      if (fwd)
        k = w->shape[1] * taps + (d->num_inputs > 2 && d->inputs[2] ? 1 : 0);
      else if (slot == 0)
        k = (w->shape[0] / (p->groups > 0 ? p->groups : 1)) * taps;
      else
        k = y->shape[0] * y->shape[2] * y->shape[3];
      break;
    }
    case PARITY_OP_KIND_POOL2D: k = (int64_t)p->kernel[0] * p->kernel[1]; break;
    case PARITY_OP_KIND_SOFTMAX: k = d->inputs[0]->shape[d->params.softmax.axis]; break;
    default: break;
  }
  return k > 0 ? k : 1;
}
