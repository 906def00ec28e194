/* oracle.c — what the oracle is fed and how large the error may be.
 *
 * The oracle is the CPU plugin computing in float64 on the same values the device was given
 * (already rounded to the tested dtype, so widening is exact). Integer and bool operands keep
 * their dtype: their ops are exact, and widening i64 to f64 would not be. S, the absolute-value
 * evaluation of the same op, is the oracle run on |inputs| (and |dy|); for softmax and
 * log_softmax, where that is not a bound, S is the same formula with every term made positive. */
#include <math.h>
#include <string.h>

#include "conform.h"
#include "parity_support/tolerance.h"

int32_t cf_oracle_dtype(int32_t dtype) { return psup_dtype_is_float(dtype) ? PARITY_DTYPE_F64 : dtype; }

int cf_oracle_inputs(const cf_op_t *op, int absval, cf_host_t *conv, cf_op_t *out_op, cf_spec_t *out_specs,
                     int outputs_to_oracle_dtype) {
  *out_op = *op;
  out_op->in_place = 0; /* the oracle writes a fresh output (its own dtype and layout) */
  for (uint32_t i = 0; i < op->nin; i++) {
    memset(&conv[i], 0, sizeof conv[i]);
    if (!op->in[i]) continue;
    int32_t dt = op->in[i]->spec.dtype;
    if (cf_host_convert(op->in[i], cf_oracle_dtype(dt), absval && psup_dtype_is_float(dt), &conv[i]) != 0) return -1;
    out_op->in[i] = &conv[i];
  }
  for (uint32_t i = 0; i < op->nout; i++) {
    if (!op->out[i]) continue;
    out_specs[i] = *op->out[i];
    out_specs[i].layout = CF_LAYOUT_CONTIG;
    if (outputs_to_oracle_dtype) out_specs[i].dtype = cf_oracle_dtype(out_specs[i].dtype);
    out_op->out[i] = &out_specs[i];
  }
  return 0;
}

/* k from the shared statement (parity_support/tolerance.c), on descriptors of the case's shapes */
int64_t cf_terms(const cf_case_t *c, int direction, int slot) {
  parity_tensor_desc_t t[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = c->op;
  d.direction = direction;
  d.params = c->params;
  d.num_inputs = 3;
  d.num_outputs = 1;
  for (int i = 0; i < 3; i++) {
    psup_tensor_init(&t[i], c->in[i].dtype, c->in[i].rank, c->in[i].shape, NULL, 0);
    d.inputs[i] = i < 2 || c->has_in[2] ? &t[i] : NULL;
  }
  psup_tensor_init(&t[3], c->out[0].dtype, c->out[0].rank, c->out[0].shape, NULL, 0);
  d.outputs[0] = &t[3];
  if (direction == PARITY_DIRECTION_BACKWARD && c->kind == PARITY_OP_KIND_CONV2D) d.inputs[2] = &t[3]; /* dy */
  return psup_accum_terms(&d, slot);
}

void cf_softmax_abs_bound(int32_t op, int32_t direction, int32_t axis, const cf_host_t *a, const cf_host_t *b,
                          const cf_host_t *ref, cf_host_t *S) {
  const cf_spec_t *s = &ref->spec;
  int64_t inner = 1, n = s->shape[axis], outer = 1;
  for (uint32_t d = (uint32_t)axis + 1; d < s->rank; d++) inner *= s->shape[d];
  for (int32_t d = 0; d < axis; d++) outer *= s->shape[d];
  int log_sm = op == PARITY_OP_LOG_SOFTMAX;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in;
      if (direction == PARITY_DIRECTION_FORWARD) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; j++) m = fmax(m, cf_host_get(a, base + j * inner));
        for (int64_t j = 0; j < n; j++) sum += exp(cf_host_get(a, base + j * inner) - m);
        for (int64_t j = 0; j < n; j++) {
          int64_t i = base + j * inner;
          /* softmax: y·(1 + |x − max|): x − max is rounded once in the working precision, and
           * exp turns that absolute error of u·|x − max| into a relative error of y */
          double d = fabs(cf_host_get(a, i) - m);
          double v = log_sm ? d + fabs(log(sum)) + 1.0 : fabs(cf_host_get(ref, i)) * (1.0 + (isfinite(d) ? d : 0));
          cf_host_set(S, i, v);
        }
      } else { /* a = y, b = dy */
        double sum = 0;
        for (int64_t j = 0; j < n; j++) {
          int64_t i = base + j * inner;
          sum += log_sm ? fabs(cf_host_get(b, i)) : fabs(cf_host_get(a, i) * cf_host_get(b, i));
        }
        for (int64_t j = 0; j < n; j++) {
          int64_t i = base + j * inner;
          double y = cf_host_get(a, i), dy = fabs(cf_host_get(b, i));
          cf_host_set(S, i, log_sm ? dy + exp(y) * sum : fabs(y) * (dy + sum));
        }
      }
    }
}
