/* contract.c — see contract.h. The rules follow abi/parity_plugin.h ("OPERANDS by kind") and
 * docs/semantics.md; every plugin's supports() starts here. */
#include "parity_support/contract.h"

#include <stdarg.h>
#include <stdio.h>

#include "parity_support/dtype.h"
#include "parity_support/operands.h"
#include "parity_support/ops.h"

typedef struct chk_t {
  const parity_op_desc_t *d;
  const psup_caps_t *caps;
  char *msg;
  size_t n;
} chk_t;

static int32_t failf(const chk_t *c, int32_t st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int32_t failf(const chk_t *c, int32_t st, const char *fmt, ...) {
  int off = snprintf(c->msg, c->n, "%s: %s %s: ", c->caps->backend, psup_op_name(c->d->op),
                     psup_direction_name(c->d->direction));
  if (off < 0 || (size_t)off >= c->n) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg + off, c->n - (size_t)off, fmt, ap);
  va_end(ap);
  return st;
}

const char *psup_shape_str(const parity_tensor_desc_t *t, char *buf, size_t n) {
  size_t off = (size_t)snprintf(buf, n, "[");
  for (uint32_t i = 0; i < t->rank && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, i ? ",%lld" : "%lld", (long long)t->shape[i]);
  if (off < n) snprintf(buf + off, n - off, "]");
  return buf;
}

int64_t psup_conv_out_extent(int64_t in, int32_t pad0, int32_t pad1, int64_t k, int32_t dil, int32_t stride) {
  int64_t span = (int64_t)dil * (k - 1) + 1, avail = in + pad0 + pad1;
  return avail < span || stride < 1 ? -1 : (avail - span) / stride + 1;
}

/* the operand's name from the one operand table ("dy"), "?" past it */
static const char *operand_name(const chk_t *c, int is_output, uint32_t slot) {
  const psup_operand_t *o = psup_operand(psup_operands(psup_op_info(c->d->op)->kind, c->d->direction), is_output, slot);
  return o ? o->name : "?";
}

/* dtype usable for this op: the device stores it, integers and bool never backward (no
 * gradient), integers forward only where allow_int and never for FLOAT ops, bool only where
 * allow_bool */
static int32_t check_dtype(const chk_t *c, int32_t dtype, int allow_int, int allow_bool) {
  const char *dn = psup_dtype_name(dtype);
  if (dtype <= 0 || dtype >= 8 || !(c->caps->dtype_mask & PARITY_DTYPE_BIT(dtype))) {
    const char *why = dtype > 0 && dtype < 8 ? c->caps->missing[dtype] : NULL;
    return failf(c, PARITY_STATUS_UNSUPPORTED, "%s needs %s, which %s lacks", dn, why ? why : dn,
                 c->caps->device ? c->caps->device : "the device");
  }
  int is_int = dtype == PARITY_DTYPE_I32 || dtype == PARITY_DTYPE_I64;
  if ((is_int || dtype == PARITY_DTYPE_BOOL) && c->d->direction == PARITY_DIRECTION_BACKWARD)
    return failf(c, PARITY_STATUS_UNSUPPORTED, "%s tensors carry no gradient (floating dtypes only)", dn);
  if (is_int && (!allow_int || (psup_op_info(c->d->op)->flags & PARITY_OPF_FLOAT)))
    return failf(c, PARITY_STATUS_UNSUPPORTED, "no %s kernel (floating dtypes only)", dn);
  if (dtype == PARITY_DTYPE_BOOL && !allow_bool) return failf(c, PARITY_STATUS_UNSUPPORTED, "no bool kernel");
  return PARITY_STATUS_OK;
}

/* every present operand (but the skipped ones) has `dtype` */
static int32_t check_same_dtype(const chk_t *c, int32_t dtype, int skip_input, int skip_output) {
  const parity_op_desc_t *d = c->d;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t || (int)i == (pass ? skip_output : skip_input)) continue;
      if (t->dtype != dtype)
        return failf(c, PARITY_STATUS_UNSUPPORTED, "%s %u (%s) is %s, expected %s (no mixed dtypes)",
                     pass ? "output" : "input", i, operand_name(c, pass, i), psup_dtype_name(t->dtype),
                     psup_dtype_name(dtype));
    }
  }
  return PARITY_STATUS_OK;
}

static int same_shape(const parity_tensor_desc_t *t, const parity_tensor_desc_t *ref) {
  int same = t->rank == ref->rank;
  for (uint32_t i = 0; same && i < t->rank; i++) same = t->shape[i] == ref->shape[i];
  return same;
}

static int32_t check_shape(const chk_t *c, const parity_tensor_desc_t *t, const char *role, uint32_t slot,
                           const parity_tensor_desc_t *ref, const char *ref_name) {
  if (same_shape(t, ref)) return PARITY_STATUS_OK;
  char a[160], b[160];
  /* the operand's name from the one operand table: "input 2 (dy) has shape ..." */
  return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "%s %u (%s) has shape %s, %s has %s", role, slot,
               operand_name(c, role[0] == 'o', slot), psup_shape_str(t, a, sizeof a), ref_name,
               psup_shape_str(ref, b, sizeof b));
}

static int32_t need_bool(const chk_t *c, const parity_tensor_desc_t *t, const char *what) {
  if (t->dtype == PARITY_DTYPE_BOOL) return PARITY_STATUS_OK;
  return failf(c, PARITY_STATUS_UNSUPPORTED, "%s must be bool, got %s", what, psup_dtype_name(t->dtype));
}

static int32_t elementwise(const chk_t *c) {
  const parity_op_desc_t *d = c->d;
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  int32_t st, dt;
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY:
    case PARITY_OP_KIND_BINARY:
      dt = d->inputs[0]->dtype;
      st = check_dtype(c, dt, fwd, 0); /* no gradients for integers */
      if (st == PARITY_STATUS_OK) st = check_same_dtype(c, dt, -1, -1);
      break;
    case PARITY_OP_KIND_COMPARE:
      dt = d->inputs[0]->dtype;
      st = check_dtype(c, dt, 1, 1);
      if (st == PARITY_STATUS_OK) st = check_same_dtype(c, dt, -1, 0);
      if (st == PARITY_STATUS_OK) st = need_bool(c, d->outputs[0], "output");
      break;
    case PARITY_OP_KIND_SELECT:
      st = need_bool(c, d->inputs[0], "condition (input 0)");
      dt = d->inputs[1]->dtype;
      if (st == PARITY_STATUS_OK) st = check_dtype(c, dt, fwd, fwd);
      if (st == PARITY_STATUS_OK) st = check_same_dtype(c, dt, 0, -1);
      break;
    default: /* cast */
      st = check_dtype(c, d->inputs[0]->dtype, 1, 1);
      if (st == PARITY_STATUS_OK) st = check_dtype(c, d->outputs[0]->dtype, 1, 1);
      break;
  }
  if (st != PARITY_STATUS_OK) return st;
  /* forward: everything has the output's shape; backward: the incoming gradient's */
  const parity_tensor_desc_t *ref = fwd ? d->outputs[0] : d->inputs[d->num_inputs - 1];
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t || same_shape(t, ref)) continue;
      /* the reference's name is formatted only for the message (this runs on every elementwise op) */
      char ref_name[64]; /* "output 0 (y)", "the gradient, input 2 (dy)" */
      uint32_t ref_slot = fwd ? 0 : d->num_inputs - 1;
      snprintf(ref_name, sizeof ref_name, "%s %u (%s)", fwd ? "output" : "the gradient, input", ref_slot,
               operand_name(c, fwd, ref_slot));
      return check_shape(c, t, pass ? "output" : "input", i, ref, ref_name);
    }
  }
  return PARITY_STATUS_OK;
}

static int32_t reduce(const chk_t *c) {
  const parity_op_desc_t *d = c->d;
  const parity_tensor_desc_t *x = d->inputs[0];
  uint32_t mask = d->params.reduce.axes_mask, rank = x->rank;
  if (rank < 32 && (mask >> rank) != 0)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "axes mask 0x%x names axes past rank %u", mask, rank);
  int is_arg = d->op == PARITY_OP_ARGMAX || d->op == PARITY_OP_ARGMIN;
  int is_extreme = is_arg || d->op == PARITY_OP_MAX || d->op == PARITY_OP_MIN;
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  int32_t st = check_dtype(c, x->dtype, fwd, fwd && (is_extreme || d->op == PARITY_OP_SUM));
  if (st != PARITY_STATUS_OK) return st;
  const parity_tensor_desc_t *y = fwd ? d->outputs[0] : d->inputs[1];
  int bool_count = d->op == PARITY_OP_SUM && x->dtype == PARITY_DTYPE_BOOL && y->dtype == PARITY_DTYPE_I64;
  if (is_arg) {
    if (y->dtype != PARITY_DTYPE_I64)
      return failf(c, PARITY_STATUS_UNSUPPORTED, "output must be i64, got %s", psup_dtype_name(y->dtype));
    if (!(c->caps->dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_I64))) return check_dtype(c, PARITY_DTYPE_I64, 1, 0);
  } else if (bool_count) {
    if ((st = check_dtype(c, PARITY_DTYPE_I64, 1, 0)) != PARITY_STATUS_OK) return st;
  } else if ((st = check_same_dtype(c, x->dtype, -1, -1)) != PARITY_STATUS_OK) {
    return st;
  }
  char a[160], b[160];
  if (y->rank != rank)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "output rank %u differs from input rank %u", y->rank, rank);
  for (uint32_t i = 0; i < rank; i++) {
    int64_t want = (mask >> i) & 1u ? 1 : x->shape[i];
    if (y->shape[i] != want)
      return failf(c, PARITY_STATUS_INVALID_ARGUMENT,
                   "output shape %s does not match input %s reduced over mask 0x%x (axis %u should be %lld)",
                   psup_shape_str(y, a, sizeof a), psup_shape_str(x, b, sizeof b), mask, i, (long long)want);
    if (is_extreme && ((mask >> i) & 1u) && x->shape[i] == 0)
      return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "over an empty axis (axis %u of input %s has size 0)", i,
                   psup_shape_str(x, b, sizeof b));
  }
  if (!fwd) {
    st = check_shape(c, d->inputs[2], "input", 2, y, "y");
    if (st == PARITY_STATUS_OK && d->outputs[0]) st = check_shape(c, d->outputs[0], "output", 0, x, "x");
  }
  return st;
}

static int32_t matmul(const chk_t *c) {
  const parity_op_desc_t *d = c->d;
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1];
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  const parity_tensor_desc_t *out = fwd ? d->outputs[0] : d->inputs[2];
  int32_t st = check_dtype(c, a->dtype, 0, 0);
  if (st == PARITY_STATUS_OK) st = check_same_dtype(c, a->dtype, -1, -1);
  if (st != PARITY_STATUS_OK) return st;
  uint32_t r = a->rank;
  if (r < 2) return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "needs rank >= 2, got rank %u", r);
  const char *cn = fwd ? "c" : "dc";
  char why[200] = "", sa[160], sb[160], sc[160];
  if (b->rank != r || out->rank != r) {
    snprintf(why, sizeof why, "the ranks differ");
  } else if (a->shape[r - 1] != b->shape[r - 2]) {
    snprintf(why, sizeof why, "a has %lld columns but b has %lld rows", (long long)a->shape[r - 1],
             (long long)b->shape[r - 2]);
  } else if (out->shape[r - 2] != a->shape[r - 2] || out->shape[r - 1] != b->shape[r - 1]) {
    snprintf(why, sizeof why, "%s should be [..,%lld,%lld]", cn, (long long)a->shape[r - 2],
             (long long)b->shape[r - 1]);
  } else {
    for (uint32_t i = 0; !why[0] && i + 2 < r; i++)
      if (a->shape[i] != out->shape[i] || b->shape[i] != out->shape[i])
        snprintf(why, sizeof why, "batch axis %u of %s is %lld, %s has %lld (batch axes arrive broadcast, stride 0)", i,
                 a->shape[i] != out->shape[i] ? "a" : "b",
                 (long long)(a->shape[i] != out->shape[i] ? a->shape[i] : b->shape[i]), cn, (long long)out->shape[i]);
  }
  if (why[0])
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "a %s times b %s cannot give %s %s: %s",
                 psup_shape_str(a, sa, sizeof sa), psup_shape_str(b, sb, sizeof sb), cn,
                 psup_shape_str(out, sc, sizeof sc), why);
  if (!fwd && d->outputs[0]) st = check_shape(c, d->outputs[0], "output", 0, a, "a");
  if (!fwd && st == PARITY_STATUS_OK && d->outputs[1]) st = check_shape(c, d->outputs[1], "output", 1, b, "b");
  return st;
}

/* stride and dilation >= 1, padding >= 0: each rule named with the values it is about */
static int32_t conv_params(const chk_t *c, const parity_conv2d_params_t *p) {
  if (p->stride[0] < 1 || p->stride[1] < 1)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "stride %dx%d must be >= 1", p->stride[0], p->stride[1]);
  if (p->dilation[0] < 1 || p->dilation[1] < 1)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "dilation %dx%d must be >= 1", p->dilation[0], p->dilation[1]);
  if (p->padding[0] < 0 || p->padding[1] < 0 || p->padding[2] < 0 || p->padding[3] < 0)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "padding %d,%d,%d,%d (top, bottom, left, right) must be >= 0",
                 p->padding[0], p->padding[1], p->padding[2], p->padding[3]);
  return PARITY_STATUS_OK;
}

/* pooling: a window of at least 1x1, padding at most half of it, and every window holds at least
 * one input element (padding alone gives -inf or a division by zero; with dilation a window can
 * skip over the input even when the padding rule holds) */
static int32_t pool_window(const chk_t *c, const parity_conv2d_params_t *p, const parity_tensor_desc_t *x) {
  if (p->kernel[0] < 1 || p->kernel[1] < 1)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "window %dx%d must be >= 1", p->kernel[0], p->kernel[1]);
  if (p->padding[0] > p->kernel[0] / 2 || p->padding[1] > p->kernel[0] / 2 || p->padding[2] > p->kernel[1] / 2 ||
      p->padding[3] > p->kernel[1] / 2)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT,
                 "padding %d,%d,%d,%d (top, bottom, left, right) must be at most half the %dx%d window", p->padding[0],
                 p->padding[1], p->padding[2], p->padding[3], p->kernel[0], p->kernel[1]);
  if (c->d->op == PARITY_OP_AVG_POOL2D && p->count_include_pad != 0 && p->count_include_pad != 1)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "count_include_pad %d must be 0 or 1", p->count_include_pad);
  for (int axis = 0; axis < 2; axis++) {
    int64_t in = x->shape[2 + axis], k = p->kernel[axis], dil = p->dilation[axis], s = p->stride[axis];
    int64_t pad = p->padding[2 * axis];
    int64_t out = psup_conv_out_extent(in, (int32_t)pad, p->padding[2 * axis + 1], k, (int32_t)dil, (int32_t)s);
    /* A window starting at or past row/column 0 begins inside the input (it fits the padded
     * input and the far padding is at most half of it). One starting in the padding must have a
     * tap at or past 0 that lies inside: that tap is below dil, so with in >= dil only the
     * first window (which needs the most taps to get there) can fail; with in < dil there are at
     * most two windows. (Checked against every window over 34,515 small geometries.) */
    for (int64_t i = 0; i < out && i * s < pad; i++) {
      int64_t start = i * s - pad, first = (-start + dil - 1) / dil;
      if (first >= k || start + first * dil >= in)
        return failf(c, PARITY_STATUS_INVALID_ARGUMENT,
                     "window %lld along %s covers only padding (input %lld, window %lld, dilation %lld, "
                     "padding %lld, stride %lld)",
                     (long long)i, axis ? "width" : "height", (long long)in, (long long)k, (long long)dil,
                     (long long)pad, (long long)s);
      if (in >= dil) break;
    }
  }
  return PARITY_STATUS_OK;
}

/* conv2d: a rank-4 weight of at least 1x1 whose channels fit the input's in `groups` groups, and
 * a bias of one value per output channel */
static int32_t conv_weight(const chk_t *c, const parity_tensor_desc_t *x, const parity_tensor_desc_t *w) {
  const parity_conv2d_params_t *p = &c->d->params.conv2d;
  char a[160], b[160];
  if (w->rank != 4) return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "weight must be rank 4, got rank %u", w->rank);
  int64_t C = x->shape[1], O = w->shape[0], G = p->groups;
  char why[160] = "";
  if (G < 1)
    snprintf(why, sizeof why, "groups must be >= 1");
  else if (C % G)
    snprintf(why, sizeof why, "the input's %lld channels are not divisible by %lld groups", (long long)C, (long long)G);
  else if (O % G)
    snprintf(why, sizeof why, "the weight's %lld output channels are not divisible by %lld groups", (long long)O,
             (long long)G);
  else if (w->shape[1] * G != C)
    snprintf(why, sizeof why, "the weight has %lld input channels per group, the input's %lld in %lld groups need %lld",
             (long long)w->shape[1], (long long)C, (long long)G, (long long)(C / G));
  if (why[0])
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "weight %s does not fit input %s with groups=%d: %s",
                 psup_shape_str(w, a, sizeof a), psup_shape_str(x, b, sizeof b), p->groups, why);
  if (w->shape[2] < 1 || w->shape[3] < 1)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "weight %s: window %lldx%lld must be >= 1",
                 psup_shape_str(w, a, sizeof a), (long long)w->shape[2], (long long)w->shape[3]);
  int fwd = c->d->direction == PARITY_DIRECTION_FORWARD;
  const parity_tensor_desc_t *bias = fwd ? c->d->inputs[2] : c->d->outputs[2];
  if (bias && (bias->rank != 1 || bias->shape[0] != O))
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "%s %s should be [%lld] (one per output channel)",
                 fwd ? "bias" : "dbias", psup_shape_str(bias, a, sizeof a), (long long)O);
  return PARITY_STATUS_OK;
}

static int32_t conv2d(const chk_t *c) {
  const parity_op_desc_t *d = c->d;
  const parity_conv2d_params_t *p = &d->params.conv2d;
  const parity_tensor_desc_t *x = d->inputs[0];
  int fwd = d->direction == PARITY_DIRECTION_FORWARD;
  int pool = psup_op_info(d->op)->kind == PARITY_OP_KIND_POOL2D;
  int32_t st = check_dtype(c, x->dtype, 0, 0);
  if (st == PARITY_STATUS_OK) st = check_same_dtype(c, x->dtype, -1, -1);
  if (st != PARITY_STATUS_OK) return st;
  if (x->rank != 4) return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "needs NCHW (rank 4) input, got rank %u", x->rank);
  if ((st = conv_params(c, p)) != PARITY_STATUS_OK) return st;
  const parity_tensor_desc_t *w = pool ? NULL : d->inputs[1];
  if ((st = pool ? pool_window(c, p, x) : conv_weight(c, x, w)) != PARITY_STATUS_OK) return st;
  int64_t O = pool ? x->shape[1] : w->shape[0], KH = pool ? p->kernel[0] : w->shape[2];
  int64_t KW = pool ? p->kernel[1] : w->shape[3];
  if (!pool && !fwd && d->outputs[1] &&
      (st = check_shape(c, d->outputs[1], "output", 1, w, "the weight")) != PARITY_STATUS_OK)
    return st;
  char a[160];
  int64_t OH = psup_conv_out_extent(x->shape[2], p->padding[0], p->padding[1], KH, p->dilation[0], p->stride[0]);
  int64_t OW = psup_conv_out_extent(x->shape[3], p->padding[2], p->padding[3], KW, p->dilation[1], p->stride[1]);
  if (OH < 0 || OW < 0)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT,
                 "window %lldx%lld (dilation %dx%d) larger than the padded input %lldx%lld (input %s)", (long long)KH,
                 (long long)KW, p->dilation[0], p->dilation[1],
                 (long long)(x->shape[2] + p->padding[0] + p->padding[1]),
                 (long long)(x->shape[3] + p->padding[2] + p->padding[3]), psup_shape_str(x, a, sizeof a));
  const parity_tensor_desc_t *y = fwd ? d->outputs[0] : pool ? d->inputs[1] : d->inputs[2];
  int64_t want[4] = {x->shape[0], O, OH, OW};
  for (int i = 0; i < 4; i++)
    if (y->rank != 4 || y->shape[i] != want[i])
      return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "%s %s should be [%lld,%lld,%lld,%lld]",
                   fwd    ? "output"
                   : pool ? "y"
                          : "dy",
                   psup_shape_str(y, a, sizeof a), (long long)want[0], (long long)want[1], (long long)want[2],
                   (long long)want[3]);
  if (!fwd && pool && (st = check_shape(c, d->inputs[2], "input", 2, y, "y")) != PARITY_STATUS_OK) return st;
  if (!fwd && d->outputs[0]) st = check_shape(c, d->outputs[0], "output", 0, x, "x");
  return st;
}

static int32_t softmax(const chk_t *c) {
  const parity_op_desc_t *d = c->d;
  const parity_tensor_desc_t *x = d->inputs[0];
  int32_t axis = d->params.softmax.axis;
  char xs[160];
  if (axis < 0 || (uint32_t)axis >= x->rank)
    return failf(c, PARITY_STATUS_INVALID_ARGUMENT, "axis %d outside [0, %u) for input %s", axis, x->rank,
                 psup_shape_str(x, xs, sizeof xs));
  int32_t st = check_dtype(c, x->dtype, 0, 0);
  if (st == PARITY_STATUS_OK) st = check_same_dtype(c, x->dtype, -1, -1);
  for (uint32_t i = 1; st == PARITY_STATUS_OK && i < d->num_inputs; i++)
    st = check_shape(c, d->inputs[i], "input", i, x, "input 0");
  if (st == PARITY_STATUS_OK && d->outputs[0]) st = check_shape(c, d->outputs[0], "output", 0, x, "input 0");
  return st;
}

int32_t psup_check_operands(const parity_op_desc_t *d, const psup_caps_t *caps, char *msg, size_t msg_size) {
  chk_t c = {d, caps, msg, msg_size};
  const psup_op_info_t *info = psup_op_info(d->op);
  if (!info) return failf(&c, PARITY_STATUS_INVALID_ARGUMENT, "unknown op %d", (int)d->op);
  switch (psup_kind_family(info->kind)) {
    case PARITY_FAMILY_ELEMENTWISE: return elementwise(&c);
    case PARITY_FAMILY_REDUCE: return reduce(&c);
    case PARITY_FAMILY_MATMUL: return matmul(&c);
    case PARITY_FAMILY_CONV2D: return conv2d(&c);
    case PARITY_FAMILY_SOFTMAX: return softmax(&c);
    default: return failf(&c, PARITY_STATUS_UNSUPPORTED, "unknown op family");
  }
}
