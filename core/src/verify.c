/* verify.c — shadow verification: with PARITY_VERIFY=cpu, every op a program runs on its device is
 * run again on the CPU plugin in float64 with the same inputs (read back from the device, so
 * already rounded to their dtype) and every output is judged by the conformance rule
 * (parity_support/tolerance.h: exact, ULP or accumulating, with S the op on |inputs|). The first op
 * that breaks its bound is logged with the op, dtype, shapes, ratio, the autodiff node it belongs
 * to and a command that reproduces it, and kept as the device's report; checking stops there.
 * Ops with i64 operands are skipped (float64 cannot hold them); so is everything when no CPU
 * plugin is loaded. It synchronizes after every op: a debugging mode, not a fast one. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "parity_support/tolerance.h"
#include "tensor_internal.h"

static _Thread_local const parity__node *current_node;

void parity__verify_set_node(const parity__node *n) { current_node = n; }

static int verify_on(void) {
  static _Atomic int mode = -1; /* read once; threads that race all compute the same value */
  if (mode < 0) {
    const char *e = psup_getenv("PARITY_VERIFY");
    mode = e && strcmp(e, "cpu") == 0;
  }
  return mode;
}

/* One operand, read back as doubles in row-major order of its shape. */
typedef struct vf_operand_t {
  const parity_tensor_t *t;
  double *v;
  int64_t n;
} vf_operand_t;

static int read_operand(const parity_tensor_t *t, vf_operand_t *o) {
  o->t = t;
  o->n = parity_tensor_numel(t);
  o->v = malloc(sizeof(double) * (size_t)(o->n > 0 ? o->n : 1));
  if (!o->v) return -1;
  parity_tensor_desc_t d;
  parity__tensor_desc(t, &d);
  int64_t lo, hi;
  if (o->n == 0 || psup_byte_extent(&d, &lo, &hi) != 0) return o->n == 0 ? 0 : -1;
  unsigned char *bytes = malloc((size_t)(hi - lo));
  if (!bytes || parity_buffer_read(t->st->buf, (uint64_t)lo, bytes, (uint64_t)(hi - lo)) != PARITY_STATUS_OK) {
    free(bytes);
    return -1;
  }
  uint32_t es = psup_dtype_size(t->dtype);
  psup_iter_t it;
  const int64_t *strides[1] = {d.strides};
  psup_iter_init(&it, d.rank, d.shape, 1, strides);
  int64_t base = (int64_t)d.offset_bytes - lo;
  for (int64_t i = 0; i < o->n; i++) {
    o->v[i] = psup_load_f64(bytes + base + it.off[0] * es, t->dtype);
    psup_iter_next(&it);
  }
  free(bytes);
  return 0;
}

/* A contiguous CPU buffer of `dtype` holding v (NULL: zeros), described by out. */
static parity_status_t cpu_operand(parity_device_t *cpu, const parity_tensor_t *like, int32_t dtype, const double *v,
                                   int absval, parity_buffer_t **buf, parity_tensor_desc_t *out) {
  int64_t n = parity_tensor_numel(like);
  uint32_t es = psup_dtype_size(dtype);
  parity_status_t st = parity_buffer_alloc(cpu, (uint64_t)(n > 0 ? n : 1) * es, buf);
  if (st != PARITY_STATUS_OK) return st;
  unsigned char *host = calloc((size_t)(n > 0 ? n : 1), es);
  if (!host) return PARITY_STATUS_OUT_OF_MEMORY;
  for (int64_t i = 0; v && i < n; i++) psup_store_f64(host + i * es, dtype, absval ? fabs(v[i]) : v[i]);
  st = parity_buffer_write(*buf, 0, host, (uint64_t)n * es);
  free(host);
  psup_tensor_init(out, dtype, like->rank, like->shape, parity_buffer_handle(*buf), 0);
  return st;
}

static int32_t oracle_dtype(int32_t op, int32_t dtype, int is_output) {
  if (op == PARITY_OP_CAST && is_output) return dtype; /* a cast keeps its target */
  return psup_dtype_is_float(dtype) ? PARITY_DTYPE_F64 : dtype;
}

/* Run the op on the CPU plugin: outputs (read back) into res[]. absval: on |float inputs|. */
static parity_status_t oracle_run(parity_device_t *cpu, const parity_op_desc_t *d, vf_operand_t *in, uint32_t nin,
                                  const parity_tensor_t *const *outs, uint32_t nout, int absval, double **res) {
  parity_buffer_t *bufs[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS] = {0};
  parity_tensor_desc_t descs[PARITY_MAX_INPUTS + PARITY_MAX_OUTPUTS];
  parity_op_desc_t od = *d;
  parity_status_t st = PARITY_STATUS_OK;
  for (uint32_t i = 0; i < nin && st == PARITY_STATUS_OK; i++) {
    od.inputs[i] = NULL;
    if (!in[i].t) continue;
    int32_t dt = in[i].t->dtype;
    st = cpu_operand(cpu, in[i].t, oracle_dtype(d->op, dt, 0), in[i].v, absval && psup_dtype_is_float(dt), &bufs[i],
                     &descs[i]);
    od.inputs[i] = &descs[i];
  }
  for (uint32_t i = 0; i < nout && st == PARITY_STATUS_OK; i++) {
    od.outputs[i] = NULL;
    if (!outs[i]) continue;
    st = cpu_operand(cpu, outs[i], oracle_dtype(d->op, outs[i]->dtype, 1), NULL, 0, &bufs[nin + i], &descs[nin + i]);
    od.outputs[i] = &descs[nin + i];
  }
  if (st == PARITY_STATUS_OK) st = parity_device_run(cpu, &od);
  for (uint32_t i = 0; i < nout && st == PARITY_STATUS_OK; i++) {
    if (!outs[i]) continue;
    int64_t n = parity_tensor_numel(outs[i]);
    int32_t dt = descs[nin + i].dtype;
    uint32_t es = psup_dtype_size(dt);
    unsigned char *host = malloc((size_t)(n > 0 ? n : 1) * es);
    res[i] = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!host || !res[i])
      st = PARITY_STATUS_OUT_OF_MEMORY;
    else
      st = parity_buffer_read(bufs[nin + i], 0, host, (uint64_t)n * es);
    for (int64_t k = 0; st == PARITY_STATUS_OK && k < n; k++) res[i][k] = psup_load_f64(host + k * es, dt);
    free(host);
  }
  for (uint32_t i = 0; i < nin + nout; i++) parity_buffer_free(bufs[i]);
  return st;
}

static double max_abs(const vf_operand_t *o) {
  double m = 0;
  for (int64_t i = 0; o && o->t && i < o->n; i++)
    if (isfinite(o->v[i]) && fabs(o->v[i]) > m) m = fabs(o->v[i]);
  return m;
}

/* S for softmax and log_softmax, where the op on |inputs| is no bound: the formulas of
 * docs/conformance.md with each row sum bounded by the whole tensor's (sound, a little loose). */
static double softmax_s(const parity_op_desc_t *d, vf_operand_t *in, double ref, int64_t i) {
  int log_sm = d->op == PARITY_OP_LOG_SOFTMAX;
  if (d->direction == PARITY_DIRECTION_FORWARD) {
    double m = max_abs(&in[0]), x = in[0].v[i];
    return log_sm ? fabs(x) + m + fabs(ref) + 1.0 + log((double)in[0].t->shape[d->params.softmax.axis])
                  : fabs(ref) * (1.0 + fabs(x) + m);
  }
  double y = in[0].v[i], dy = fabs(in[1].v[i]), mdy = max_abs(&in[1]);
  double n = (double)in[0].t->shape[d->params.softmax.axis];
  return log_sm ? dy + exp(y) * n * mdy : fabs(y) * (dy + mdy);
}

static void describe(char *buf, size_t n, const char *role, uint32_t i, const parity_tensor_t *t) {
  char sh[96];
  size_t len = strlen(buf);
  snprintf(buf + len, n - len, "%s%s %u %s strides (", len ? "; " : "", role, i, parity__shape_str(t, sh, sizeof sh));
  for (uint32_t a = 0; a < t->rank; a++) {
    len = strlen(buf);
    snprintf(buf + len, n - len, a ? ",%lld" : "%lld", (long long)t->strides[a]);
  }
  len = strlen(buf);
  snprintf(buf + len, n - len, ") offset %lld", (long long)t->offset);
}

static void report(parity_device_t *dev, const parity_op_desc_t *d, vf_operand_t *in, uint32_t nin,
                   const parity_tensor_t *const *outs, uint32_t nout, uint32_t slot, int64_t idx, double got,
                   double ref, double err, double bound, const char *why) {
  char ops[1024] = "", node[160];
  for (uint32_t i = 0; i < nin; i++)
    if (in[i].t) describe(ops, sizeof ops, "input", i, in[i].t);
  for (uint32_t i = 0; i < nout; i++)
    if (outs[i]) describe(ops, sizeof ops, "output", i, outs[i]);
  if (current_node)
    snprintf(node, sizeof node, "in the backward of autodiff node #%llu (%s)", (unsigned long long)current_node->seq,
             current_node->name ? current_node->name : "?");
  else
    snprintf(node, sizeof node, "a forward op (its autodiff node, if any, is the next one created)");
  const char *dt = psup_dtype_name(outs[slot]->dtype);
  char msg[2600];
  snprintf(msg, sizeof msg,
           "verify: op #%llu on %s, %s %s %s, is the first to break its bound: output %u element %lld is %.17g, "
           "the CPU plugin in float64 says %.17g (%s; |err| %.3g, bound %.3g, ratio %.3g); %s; operands: %s; "
           "reproduce the op alone: parity-conform --backend %s --op %s --dtype %s --direction %s; the run: "
           "PARITY_VERIFY=cpu PARITY_BACKEND=%s <program>",
           (unsigned long long)dev->launches, dev->plugin->name, psup_op_name(d->op), dt,
           psup_direction_name(d->direction), slot, (long long)idx, got, ref, why, err, bound,
           bound > 0 ? err / bound : INFINITY, node, ops, dev->plugin->name, psup_op_name(d->op), dt,
           psup_direction_name(d->direction), dev->plugin->name);
  dev->verify_report = strdup(msg);
  parity__log(dev->ctx, 0, "%s", msg);
}

/* Judge output `slot`; returns 1 and reports on the first element out of its rule. */
static int judge(parity_device_t *dev, const parity_op_desc_t *d, vf_operand_t *in, uint32_t nin,
                 const parity_tensor_t *const *outs, uint32_t nout, uint32_t slot, const vf_operand_t *got,
                 const double *ref, const double *sabs) {
  int32_t dt = outs[slot]->dtype;
  int32_t rule = psup_rule_for(d->op, dt, d->direction);
  if (!psup_dtype_is_float(dt)) rule = PSUP_RULE_EXACT;
  int64_t k = psup_accum_terms(d, (int)slot);
  uint32_t es = psup_dtype_size(dt);
  unsigned char tmp[8];
  for (int64_t i = 0; i < got->n; i++) {
    double g = got->v[i], r = ref[i];
    psup_store_f64(tmp, dt, r);
    double rr = psup_load_f64(tmp, dt); /* the oracle rounded to the output dtype */
    (void)es;
    int same = (isnan(g) && isnan(rr)) || (g == rr && signbit(g) == signbit(rr));
    if (same) continue;
    if (rule == PSUP_RULE_EXACT) {
      report(dev, d, in, nin, outs, nout, slot, i, g, r, fabs(g - r), 0, "must match bit for bit");
      return 1;
    }
    if (isnan(g) || isnan(r) || isinf(g) || isinf(r)) {
      report(dev, d, in, nin, outs, nout, slot, i, g, r, INFINITY, 0, "special values must match");
      return 1;
    }
    if (rule == PSUP_RULE_ULP) {
      double u = psup_ulp_distance(g, r, dt), b = psup_ulp_bound(d->op, dt);
      if (u <= b) continue;
      report(dev, d, in, nin, outs, nout, slot, i, g, r, u, b, "in ulps");
      return 1;
    }
    double s = sabs ? fabs(sabs[i]) : fabs(r);
    if (psup_op_info(d->op)->kind == PARITY_OP_KIND_SOFTMAX) s = softmax_s(d, in, r, i);
    if (!(s >= fabs(r)) || !isfinite(s)) s = fabs(r);
    double b = psup_accum_bound(dt, r, s, k), e = fabs(g - r);
    if (e <= b) continue;
    report(dev, d, in, nin, outs, nout, slot, i, g, r, e, b, "accumulating rule");
    return 1;
  }
  return 0;
}

/* an output in an input's memory (an op run in place) */
static int aliases(parity_tensor_t *const *ins, uint32_t nin, parity_tensor_t *const *outs, uint32_t nout) {
  for (uint32_t i = 0; i < nin; i++)
    for (uint32_t o = 0; o < nout; o++)
      if (ins[i] && outs[o] && ins[i]->st == outs[o]->st) return 1;
  return 0;
}

struct parity__verify_inputs {
  vf_operand_t in[PARITY_MAX_INPUTS];
};

static void inputs_free(parity__verify_inputs *pre) {
  if (!pre) return;
  for (uint32_t i = 0; i < PARITY_MAX_INPUTS; i++) free(pre->in[i].v);
  free(pre);
}

parity__verify_inputs *parity__verify_before(parity_device_t *dev, parity_tensor_t *const *ins, uint32_t nin,
                                             parity_tensor_t *const *outs, uint32_t nout) {
  if (!verify_on() || dev->verify_report || !aliases(ins, nin, outs, nout)) return NULL;
  parity__verify_inputs *pre = calloc(1, sizeof *pre);
  int ok = pre && parity_device_synchronize(dev) == PARITY_STATUS_OK;
  for (uint32_t i = 0; ok && i < nin; i++)
    if (ins[i]) ok = read_operand(ins[i], &pre->in[i]) == 0;
  if (!ok) inputs_free(pre); /* parity__verify_launch then skips the op */
  parity__clear_error();
  return ok ? pre : NULL;
}

void parity__verify_launch(parity_device_t *dev, const parity_op_desc_t *d, parity_tensor_t *const *ins, uint32_t nin,
                           parity_tensor_t *const *outs, uint32_t nout, int ran, parity__verify_inputs *pre) {
  if (!ran || !verify_on() || dev->verify_report) {
    inputs_free(pre);
    return;
  }
  for (uint32_t i = 0; i < nin + nout; i++) {
    const parity_tensor_t *t = i < nin ? ins[i] : outs[i - nin];
    if ((t && t->dtype == PARITY_DTYPE_I64) || (i == 0 && !pre && aliases(ins, nin, outs, nout))) {
      dev->verify_skipped++; /* i64, or an op in place whose inputs could not be read before it ran */
      inputs_free(pre);
      return;
    }
  }
  uint32_t p;
  parity_device_t *cpu;
  if (parity_context_find_plugin(dev->ctx, "cpu", &p) != PARITY_STATUS_OK ||
      parity_context_open_device(dev->ctx, p, 0, &cpu) != PARITY_STATUS_OK) {
    dev->verify_skipped++;
    inputs_free(pre);
    return;
  }
  vf_operand_t in[PARITY_MAX_INPUTS], got[PARITY_MAX_OUTPUTS];
  double *ref[PARITY_MAX_OUTPUTS] = {0}, *sabs[PARITY_MAX_OUTPUTS] = {0};
  memset(in, 0, sizeof in);
  memset(got, 0, sizeof got);
  int ok = parity_device_synchronize(dev) == PARITY_STATUS_OK;
  if (pre) { /* in place: the inputs as they were before the launch */
    memcpy(in, pre->in, sizeof in);
    memset(pre->in, 0, sizeof pre->in);
  }
  for (uint32_t i = 0; ok && !pre && i < nin; i++)
    if (ins[i]) ok = read_operand(ins[i], &in[i]) == 0;
  inputs_free(pre);
  for (uint32_t i = 0; ok && i < nout; i++)
    if (outs[i]) ok = read_operand(outs[i], &got[i]) == 0;
  int accum = 0;
  for (uint32_t i = 0; i < nout; i++)
    if (outs[i] && psup_rule_for(d->op, outs[i]->dtype, d->direction) == PSUP_RULE_ACCUM) accum = 1;
  const parity_tensor_t *const *co = (const parity_tensor_t *const *)outs;
  if (ok) ok = oracle_run(cpu, d, in, nin, co, nout, 0, ref) == PARITY_STATUS_OK;
  if (ok && accum) ok = oracle_run(cpu, d, in, nin, co, nout, 1, sabs) == PARITY_STATUS_OK;
  if (!ok) {
    dev->verify_skipped++;
  } else {
    dev->verify_checked++;
    for (uint32_t i = 0; i < nout; i++)
      if (outs[i] && judge(dev, d, in, nin, co, nout, i, &got[i], ref[i], sabs[i])) break;
  }
  for (uint32_t i = 0; i < nin; i++) free(in[i].v);
  for (uint32_t i = 0; i < nout; i++) {
    free(got[i].v);
    free(ref[i]);
    free(sabs[i]);
  }
  parity__clear_error(); /* nothing here is the caller's error */
}

uint64_t parity_device_verify_count(const parity_device_t *dev) { return dev ? dev->verify_checked : 0; }

const char *parity_device_verify_report(const parity_device_t *dev) { return dev ? dev->verify_report : NULL; }
