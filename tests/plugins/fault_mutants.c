/* fault_mutants.c — kernel mutants: each is one bug of a class that GPU backends ship, written the
 * way such a kernel would get it wrong, applied on top of the CPU plugin (which has already
 * validated the descriptor). tests/conform/conform_faults.c requires the default subset of
 * parity-conform to fail on every one of them. Speed does not matter here. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

static int32_t oom(void) { return psup_report(cpu_host, PARITY_STATUS_OUT_OF_MEMORY, "fault: out of host memory"); }

/* f32 value f stored to an f16/bf16 element by truncation toward zero (never rounding up). */
static void store_truncated(const parity_tensor_desc_t *t, int64_t i, float f) {
  uint16_t h = t->dtype == PARITY_DTYPE_BF16 ? psup_f32_to_bf16(f) : psup_f32_to_f16(f);
  float back = t->dtype == PARITY_DTYPE_BF16 ? psup_bf16_to_f32(h) : psup_f16_to_f32(h);
  if (isfinite(f) && fabsf(back) > fabsf(f) && (h & 0x7fffu)) h--; /* sign-magnitude: one step toward 0 */
  memcpy(fault_element(t, i), &h, 2);
}

/* ---- sums ---------------------------------------------------------------------------------- */
static atomic_uint_fast64_t sum_calls;

/* One reduced group's values in order; the mutant's sum of them. */
static double mutant_sum(const double *v, int64_t n, int32_t dtype, uint64_t call) {
  /* a correct sum starts from its first element (an empty sum is +0, a sum of -0s is -0); the
   * positive-zero-sum bug starts from +0 */
  double acc = 0;
  int64_t first = fault_active == FAULT_POSITIVE_ZERO_SUM || n == 0 ? 0 : 1;
  if (first) acc = v[0];
  switch (fault_active) {
    case FAULT_NAIVE_SUM: {
      if (dtype == PARITY_DTYPE_F64) break;
      float f = n ? (float)v[0] : 0.0f;
      for (int64_t i = 1; i < n; i++) f += (float)v[i];
      return f;
    }
    case FAULT_DROP_PARTIAL:
      if (n >= 4096) { /* 512 partials; the last one (the ragged tail) is never added */
        int64_t chunk = (n + 511) / 512, last = (n - 1) / chunk * chunk;
        for (int64_t i = 1; i < last; i++) acc += v[i];
        return acc;
      }
      break;
    case FAULT_ARRIVAL_ORDER:
      if (n >= 4096) { /* 64 partials combined in f32 in the order they "arrive" */
        float part[64] = {0}, total = 0;
        for (int64_t i = 0; i < n; i++) part[i * 64 / n] += (float)v[i];
        int reversed = call % 4 == 3;
        for (int k = 0; k < 64; k++) total += part[reversed ? 63 - k : k];
        return total;
      }
      break;
    default: break;
  }
  for (int64_t i = first; i < n; i++) acc += v[i];
  return acc;
}

int32_t fault_mutant_reduce(const parity_op_desc_t *d, int *handled) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  *handled = 0;
  if (d->op != PARITY_OP_SUM || !psup_dtype_is_float(x->dtype)) return PARITY_STATUS_OK;
  if (fault_active == FAULT_BF16_TRUNCATE && y->dtype != PARITY_DTYPE_BF16) return PARITY_STATUS_OK;
  *handled = 1;
  int64_t n = psup_numel(x), groups = psup_numel(y);
  if (groups == 0) return PARITY_STATUS_OK;
  int64_t per = n / groups;
  double *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  int64_t *fill = calloc((size_t)groups, sizeof(int64_t));
  if (!vals || !fill) {
    free(vals);
    free(fill);
    return oom();
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t g = fault_reduced_index(x, d->params.reduce.axes_mask, i);
    vals[g * per + fill[g]++] = fault_load(x, i);
  }
  uint64_t call = atomic_fetch_add(&sum_calls, 1);
  for (int64_t g = 0; g < groups; g++) {
    double s = mutant_sum(vals + g * per, per, y->dtype, call);
    if (fault_active == FAULT_BF16_TRUNCATE)
      store_truncated(y, g, (float)s);
    else
      fault_store(y, g, s);
  }
  free(vals);
  free(fill);
  return PARITY_STATUS_OK;
}

/* ---- elementwise ---------------------------------------------------------------------------- */
static int binary_value(int32_t op, double a, double b, double *out) {
  switch (op) {
    case PARITY_OP_ADD: *out = a + b; return 1;
    case PARITY_OP_SUB: *out = a - b; return 1;
    case PARITY_OP_MUL: *out = a * b; return 1;
    case PARITY_OP_DIV: *out = a / b; return 1;
    default: return 0;
  }
}

/* bcast-contiguous: a GPU kernel's wide-launch path that indexes a broadcast operand as if it
 * were contiguous (element i of the output reads stored element i mod its stored count). */
static void bcast_contiguous(const parity_op_desc_t *d) {
  const parity_tensor_desc_t *c = d->outputs[0];
  int64_t n = psup_numel(c);
  if (n <= 4096) return;
  for (int s = 0; s < 2; s++) {
    const parity_tensor_desc_t *t = d->inputs[s];
    parity_tensor_desc_t compact = *t;
    compact.rank = 0;
    for (uint32_t a = 0; a < t->rank; a++)
      if (t->strides[a] != 0) {
        compact.shape[compact.rank] = t->shape[a];
        compact.strides[compact.rank++] = t->strides[a];
      }
    if (compact.rank == t->rank) continue;
    int64_t stored = psup_numel(&compact);
    for (int64_t i = 0; i < n; i++) {
      double a = s == 0 ? fault_load(&compact, i % stored) : fault_load(d->inputs[0], i);
      double b = s == 1 ? fault_load(&compact, i % stored) : fault_load(d->inputs[1], i), v;
      if (binary_value(d->op, a, b, &v)) fault_store(c, i, v);
    }
    return;
  }
}

int32_t fault_mutant_elementwise(const parity_op_desc_t *d) {
  const parity_tensor_desc_t *y = d->outputs[0];
  int32_t kind = psup_op_info(d->op) ? psup_op_info(d->op)->kind : 0;
  int64_t n = psup_numel(y);
  int low = y->dtype == PARITY_DTYPE_F16 || y->dtype == PARITY_DTYPE_BF16;
  switch (fault_active) {
    case FAULT_LOWP_TRUNCATE:
      if (!low || (d->op != PARITY_OP_ADD && d->op != PARITY_OP_SUB && d->op != PARITY_OP_MUL)) break;
      for (int64_t i = 0; i < n; i++) {
        double v = 0;
        binary_value(d->op, (float)fault_load(d->inputs[0], i), (float)fault_load(d->inputs[1], i), &v);
        store_truncated(y, i, (float)v);
      }
      break;
    case FAULT_BCAST_CONTIGUOUS:
      if (kind == PARITY_OP_KIND_BINARY) bcast_contiguous(d);
      break;
    case FAULT_SIGMOID_UNDERFLOW: /* 1 / (1 + expf(-x)): expf overflows to inf below -88.72 */
      if (d->op != PARITY_OP_SIGMOID || y->dtype != PARITY_DTYPE_F32) break;
      for (int64_t i = 0; i < n; i++)
        if (fault_load(d->inputs[0], i) < -88.7) fault_store(y, i, 0.0);
      break;
    case FAULT_EXP_FLUSH:
      if (d->op != PARITY_OP_EXP || y->dtype != PARITY_DTYPE_F32) break;
      for (int64_t i = 0; i < n; i++)
        if (fabs(fault_load(y, i)) < 0x1p-126) fault_store(y, i, 0.0);
      break;
    case FAULT_MAXIMUM_NAN_SECOND: /* NaN checked on a only (fmax-like for b): a NaN b is dropped */
      if (d->op != PARITY_OP_MAXIMUM && d->op != PARITY_OP_MINIMUM) break;
      for (int64_t i = 0; i < n; i++)
        if (isnan(fault_load(d->inputs[1], i))) fault_store(y, i, fault_load(d->inputs[0], i));
      break;
    case FAULT_CAST_DOUBLE_ROUND: /* (half)(float)x: a value one f64 ulp past a tie becomes the tie */
      if (kind != PARITY_OP_KIND_CAST || !low || d->inputs[0]->dtype != PARITY_DTYPE_F64) break;
      for (int64_t i = 0; i < n; i++) fault_store(y, i, (float)fault_load(d->inputs[0], i));
      break;
    case FAULT_CAST_RTZ:
      if (kind != PARITY_OP_KIND_CAST || !low) break;
      for (int64_t i = 0; i < n; i++) {
        double v = fault_load(d->inputs[0], i);
        float f = (float)v;
        if (fabs((double)f) > fabs(v)) f = nextafterf(f, 0.0f); /* f64 -> f32 toward zero first */
        store_truncated(y, i, f);
      }
      break;
    default: break;
  }
  return PARITY_STATUS_OK;
}

/* pow-grad-nan: da = dc·b·a^(b-1) and db = dc·c·log(a) straight from the formulas, so a = 0 gives
 * 0·inf = NaN where the semantics say 0. Inputs {a, b, c, dc}, outputs {da, db}. */
int32_t fault_mutant_elementwise_backward(const parity_op_desc_t *d) {
  if (fault_active != FAULT_POW_GRAD_NAN || d->op != PARITY_OP_POW) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *c = d->inputs[2], *dc = d->inputs[3];
  const parity_tensor_desc_t *da = d->outputs[0], *db = d->num_outputs > 1 ? d->outputs[1] : NULL;
  int64_t n = psup_numel(c);
  for (int64_t i = 0; i < n; i++) {
    double av = fault_load(a, i), bv = fault_load(b, i), g = fault_load(dc, i);
    if (av != 0) continue;
    if (da) fault_store(da, i, g * bv * pow(av, bv - 1));
    if (db) fault_store(db, i, g * fault_load(c, i) * log(av));
  }
  return PARITY_STATUS_OK;
}

/* matmul-drop-ktile: a tiled kernel whose K loop stops one 256-wide tile early when K >= 4096 (the
 * tail tile of a K that is not a multiple of the tile is lost). Rank-2 operands only. */
int32_t fault_mutant_matmul(const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *y = d->outputs[0];
  if (fault_active != FAULT_MATMUL_DROP_KTILE || a->rank != 2 || b->rank != 2) return PARITY_STATUS_OK;
  int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
  if (K < 4096) return PARITY_STATUS_OK;
  int64_t kept = (K - 1) / 256 * 256;
  for (int64_t m = 0; m < M; m++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < kept; k++) acc += fault_load(a, m * K + k) * fault_load(b, k * N + j);
      fault_store(y, m * N + j, acc);
    }
  return PARITY_STATUS_OK;
}

/* strided-wide: a wide-launch path that assumes a dense input (element i at offset i from the
 * view's start) for unary ops over 4096 elements. Rewrites the descriptor the CPU kernel then runs;
 * only views with non-negative strides, whose dense reading stays inside the buffer. */
int fault_mutant_dense_view(const parity_op_desc_t *d, parity_op_desc_t *out, parity_tensor_desc_t *dense) {
  int32_t kind = psup_op_info(d->op) ? psup_op_info(d->op)->kind : 0;
  const parity_tensor_desc_t *x = d->inputs[0];
  if (fault_active != FAULT_STRIDED_WIDE || kind != PARITY_OP_KIND_UNARY || psup_numel(x) <= 4096 ||
      psup_is_contiguous(x))
    return 0;
  for (uint32_t a = 0; a < x->rank; a++)
    if (x->strides[a] <= 0 && x->shape[a] > 1) return 0; /* broadcast or reversed: not this bug */
  psup_tensor_init(dense, x->dtype, x->rank, x->shape, x->buffer, x->offset_bytes);
  *out = *d;
  out->inputs[0] = dense;
  return 1;
}

/* softmax-mean-shift: f32 softmax as exp(x - mean) / sum, fine for logits close together; rows
 * whose logits are far apart overflow exp. */
int32_t fault_mutant_softmax(const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  if (fault_active != FAULT_SOFTMAX_MEAN_SHIFT || d->op != PARITY_OP_SOFTMAX || y->dtype != PARITY_DTYPE_F32)
    return PARITY_STATUS_OK;
  int32_t axis = d->params.softmax.axis;
  int64_t n = x->shape[axis], inner = 1, total = psup_numel(x);
  for (uint32_t a = (uint32_t)axis + 1; a < x->rank; a++) inner *= x->shape[a];
  if (n == 0) return PARITY_STATUS_OK;
  for (int64_t base = 0; base < total; base++) {
    if ((base / inner) % n != 0) continue; /* the first element of each row */
    float mean = 0, sum = 0;
    for (int64_t j = 0; j < n; j++) mean += (float)fault_load(x, base + j * inner) / (float)n;
    for (int64_t j = 0; j < n; j++) sum += expf((float)fault_load(x, base + j * inner) - mean);
    for (int64_t j = 0; j < n; j++)
      fault_store(y, base + j * inner, expf((float)fault_load(x, base + j * inner) - mean) / sum);
  }
  return PARITY_STATUS_OK;
}
