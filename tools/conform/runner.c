/* runner.c — one case, start to end: inputs, the device twice (determinism, guards), the oracle,
 * the absolute-value bound S, and the comparison of every output. A backward case first runs the
 * device's own forward and hands its stored output to backward, as an autodiff tape would. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "parity_support/operands.h"

enum { SENTINEL_A = 0xff, SENTINEL_B = 0x7e };

int cf_host_from_values(cf_host_t *h, int32_t dtype, uint32_t rank, const int64_t *shape, const double *values) {
  cf_spec_t s = cf_spec_make(dtype, rank, shape);
  if (cf_host_alloc(h, &s) != 0) return -1;
  for (int64_t i = 0; i < h->count; i++) cf_host_set(h, i, values ? values[i] : 0.0);
  return 0;
}

int cf_check_run(parity_device_t *dev, const cf_op_t *op, cf_host_t *outputs, cf_result_t *r, const char *what) {
  char msg[512];
  cf_exec_status_t st = cf_exec(dev, op, SENTINEL_A, outputs, msg, sizeof msg);
  if (st == CF_EXEC_OK) return 1;
  if (st == CF_EXEC_UNSUPPORTED) {
    if (r->status == CF_PASS) r->status = CF_UNSUPPORTED;
    cf_result_note(r, "%s: %s", what, msg);
  } else {
    cf_result_fail(r, "%s: %s", what, msg);
  }
  for (uint32_t i = 0; i < op->nout; i++) cf_host_free(&outputs[i]);
  return 0;
}

static const char *const out_names[][3] = {
    [PARITY_OP_KIND_UNARY] = {"dx"},        [PARITY_OP_KIND_BINARY] = {"da", "db"},
    [PARITY_OP_KIND_SELECT] = {"da", "db"}, [PARITY_OP_KIND_REDUCE] = {"dx"},
    [PARITY_OP_KIND_MATMUL] = {"da", "db"}, [PARITY_OP_KIND_CONV2D] = {"dx", "dw", "dbias"},
    [PARITY_OP_KIND_POOL2D] = {"dx"},       [PARITY_OP_KIND_SOFTMAX] = {"dx"},
};

static const char *out_name(const cf_case_t *c, uint32_t i) {
  if (c->direction == PARITY_DIRECTION_FORWARD) return "y";
  const char *n = c->kind < (int32_t)(sizeof out_names / sizeof out_names[0]) ? out_names[c->kind][i] : NULL;
  return n ? n : "out";
}

/* The gradient of an input has its logical shape, no broadcast and no negative strides. */
static cf_spec_t grad_spec(const cf_spec_t *in) {
  cf_spec_t s = *in;
  s.bcast = 0;
  if (s.layout == CF_LAYOUT_REVERSED) s.layout = CF_LAYOUT_CONTIG;
  return s;
}

typedef struct case_state_t {
  cf_host_t x[PARITY_MAX_INPUTS]; /* forward inputs */
  cf_host_t dy;
  cf_spec_t dy_spec, grads[PARITY_MAX_OUTPUTS];
  cf_op_t fwd;
} case_state_t;

int cf_grad_input(int32_t kind, uint32_t slot) {
  switch (kind) {
    case PARITY_OP_KIND_SELECT: return (int)slot + 1;
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_MATMUL:
    case PARITY_OP_KIND_CONV2D: return (int)slot;
    default: return slot == 0 ? 0 : -1;
  }
}

void cf_backward_op(const cf_case_t *c, const cf_host_t *x, const cf_host_t *y, const cf_host_t *dy, cf_spec_t *grads,
                    cf_op_t *op) {
  memset(op, 0, sizeof *op);
  op->op = c->op;
  op->direction = PARITY_DIRECTION_BACKWARD;
  op->params = c->params;
  switch (c->kind) {
    case PARITY_OP_KIND_BINARY:
      op->nin = 4, op->in[0] = &x[0], op->in[1] = &x[1], op->in[2] = y, op->in[3] = dy, op->nout = 2;
      break;
    case PARITY_OP_KIND_SELECT: op->nin = 2, op->in[0] = &x[0], op->in[1] = dy, op->nout = 2; break;
    case PARITY_OP_KIND_MATMUL: op->nin = 3, op->in[0] = &x[0], op->in[1] = &x[1], op->in[2] = dy, op->nout = 2; break;
    case PARITY_OP_KIND_CONV2D: op->nin = 3, op->in[0] = &x[0], op->in[1] = &x[1], op->in[2] = dy, op->nout = 3; break;
    case PARITY_OP_KIND_SOFTMAX: op->nin = 2, op->in[0] = y, op->in[1] = dy, op->nout = 1; break;
    default: /* unary, reduce, pool: {x, y, dy} -> {dx} */
      op->nin = 3, op->in[0] = &x[0], op->in[1] = y, op->in[2] = dy, op->nout = 1;
      break;
  }
  for (uint32_t i = 0; i < op->nout; i++) {
    int src = cf_grad_input(c->kind, i);
    grads[i] = grad_spec(&c->in[src]);
    op->out[i] = c->has_in[src] ? &grads[i] : NULL;
  }
}

static void free_hosts(cf_host_t *h, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) cf_host_free(&h[i]);
}

static int prepare(cf_env_t *env, const cf_case_t *c, case_state_t *s) {
  memset(s, 0, sizeof *s);
  s->fwd.op = c->op;
  s->fwd.direction = PARITY_DIRECTION_FORWARD;
  s->fwd.params = c->params;
  s->fwd.nin = c->nin;
  s->fwd.nout = c->nout;
  s->fwd.in_place = c->in_place;
  for (uint32_t i = 0; i < c->nin; i++) {
    if (!c->has_in[i]) continue;
    if (cf_host_alloc(&s->x[i], &c->in[i]) != 0) return -1;
    cf_values_fill(&env->values, c, (int)i, c->values, 0, &s->x[i]);
    s->fwd.in[i] = &s->x[i];
  }
  for (uint32_t i = 0; i < c->nout; i++) s->fwd.out[i] = &c->out[i];
  s->dy_spec = c->out[0];
  s->dy_spec.layout = c->dy_layout; /* contiguous unless the variant lays dy out otherwise */
  if (c->direction == PARITY_DIRECTION_BACKWARD) {
    if (cf_host_alloc(&s->dy, &s->dy_spec) != 0) return -1;
    cf_values_fill(&env->values, c, 0, c->dy_values, 1, &s->dy);
  }
  return 0;
}

/* How many times a forward case runs for the determinism check: large accumulating ops, where an
 * arrival-order (atomics, work-stealing) reduction shows only now and then, run 4 times. */
static int forward_runs(const cf_case_t *c) {
  if (c->kind != PARITY_OP_KIND_REDUCE && c->kind != PARITY_OP_KIND_MATMUL && c->kind != PARITY_OP_KIND_CONV2D &&
      c->kind != PARITY_OP_KIND_SOFTMAX && c->kind != PARITY_OP_KIND_POOL2D)
    return 2;
  for (uint32_t i = 0; i < c->nin; i++)
    if (c->has_in[i] && cf_spec_numel(&c->in[i]) > ((int64_t)1 << 30))
      return 1; /* --full huge: 2 GiB and minutes a run; determinism is cap.determinism's (same kernels) */
  for (uint32_t i = 0; i < c->nin; i++)
    if (c->has_in[i] && cf_spec_numel(&c->in[i]) >= 4096) return 4;
  return 2;
}

/* Element i of two runs agrees: the same bytes, or both NaN, as in every comparison of the suite
 * (IEEE 754 and OpenCL leave which NaN an operation on two NaNs returns unspecified, and a driver
 * may change it when it swaps in other code: the OpenCL plugin's compile tiers), unless either
 * is a run's untouched sentinel fill (an f16 sentinel reads as NaN). */
static int same_element(const cf_host_t *a, const cf_host_t *b, int64_t i, size_t esz) {
  const unsigned char *pa = a->data + i * esz, *pb = b->data + i * esz;
  if (memcmp(pa, pb, esz) == 0) return 1;
  if (!isnan(cf_host_get(a, i)) || !isnan(cf_host_get(b, i))) return 0;
  for (int s = 0; s < 2; s++) {
    unsigned char fill = s ? SENTINEL_B : SENTINEL_A;
    size_t na = 0, nb = 0;
    for (size_t j = 0; j < esz; j++) na += pa[j] == fill, nb += pb[j] == fill;
    if (na == esz || nb == esz) return 0;
  }
  return 1;
}

/* First element where two runs differ, as a failure message; shape_only: run 2 had NaN (or 7) in
 * the op's SHAPE-ONLY inputs, named there. */
static int check_same(const cf_case_t *c, const cf_host_t *a, const cf_host_t *b, uint32_t n, int run,
                      const char *shape_only, cf_result_t *r) {
  for (uint32_t k = 0; k < n; k++) {
    if (!a[k].data || !b[k].data) continue;
    size_t esz = psup_dtype_size(a[k].spec.dtype);
    if (a[k].count == b[k].count && memcmp(a[k].data, b[k].data, (size_t)a[k].count * esz) == 0) continue;
    for (int64_t i = 0; i < a[k].count; i++)
      if (!same_element(&a[k], &b[k], i, esz)) {
        char idx[96];
        if (shape_only)
          cf_result_fail(r,
                         "depends on the values of %s, which it must not (abi/parity_plugin.h: SHAPE-ONLY inputs; "
                         "a prepared plan leaves out what computes them), or is nondeterministic: %s[%s] was %.17g, "
                         "and %.17g in a second run with NaN there",
                         shape_only, out_name(c, k), cf_index_str(&a[k].spec, i, idx, sizeof idx),
                         cf_host_get(&a[k], i), cf_host_get(&b[k], i));
        else
          cf_result_fail(r, "nondeterministic: %s[%s] was %.17g in run 1 and %.17g in run %d", out_name(c, k),
                         cf_index_str(&a[k].spec, i, idx, sizeof idx), cf_host_get(&a[k], i), cf_host_get(&b[k], i),
                         run);
        return 0;
      }
  }
  return 1;
}

int cf_device_run(cf_env_t *env, const cf_op_t *op, int second, cf_host_t *out, cf_result_t *r, const char *what) {
  char msg[512];
  cf_exec_status_t st = cf_exec(env->dev, op, second ? SENTINEL_B : SENTINEL_A, out, msg, sizeof msg);
  if (st == CF_EXEC_OK) return 1;
  if (st == CF_EXEC_CORRUPT) {
    cf_result_fail(r, "%s: %s", what, msg);
    return 1;
  }
  if (st == CF_EXEC_UNSUPPORTED) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "%s", msg);
  } else {
    cf_result_fail(r, "%s failed: %s", what, msg);
  }
  return 0;
}

/* Oracle outputs of op (and S when want_S) into ref / S. Returns 0 and marks the result skipped
 * when the oracle cannot run it. */
static int oracle_run(cf_env_t *env, const cf_case_t *c, const cf_op_t *op, cf_host_t *ref, cf_host_t *S, int want_S,
                      cf_result_t *r) {
  char msg[512];
  if (!env->oracle) {
    if (r->status != CF_FAIL) r->status = CF_SKIPPED;
    cf_result_note(r, "no oracle: the cpu plugin is not loaded");
    return 0;
  }
  cf_host_t conv[PARITY_MAX_INPUTS];
  cf_spec_t specs[PARITY_MAX_OUTPUTS];
  cf_op_t oop;
  int keep_out = c->kind == PARITY_OP_KIND_CAST;
  int ok = 0;
  if (cf_oracle_inputs(op, 0, conv, &oop, specs, !keep_out) == 0) {
    cf_exec_status_t st = cf_exec(env->oracle, &oop, SENTINEL_A, ref, msg, sizeof msg);
    ok = st == CF_EXEC_OK;
    if (!ok) {
      if (r->status != CF_FAIL) r->status = CF_SKIPPED;
      cf_result_note(r, "oracle (cpu, f64) cannot run it: %s", msg);
    }
  }
  if (ok && want_S && c->kind == PARITY_OP_KIND_SOFTMAX) {
    const cf_host_t *a = oop.in[0], *b = op->direction == PARITY_DIRECTION_BACKWARD ? oop.in[1] : NULL;
    if (cf_host_alloc(&S[0], &ref[0].spec) == 0)
      cf_softmax_abs_bound(c->op, op->direction, c->params.softmax.axis, a, b, &ref[0], &S[0]);
  } else if (ok && want_S) {
    cf_host_t aconv[PARITY_MAX_INPUTS];
    cf_op_t aop;
    if (cf_oracle_inputs(op, 1, aconv, &aop, specs, 1) == 0 &&
        cf_exec(env->oracle, &aop, SENTINEL_A, S, msg, sizeof msg) != CF_EXEC_OK) {
      free_hosts(S, op->nout);
      cf_result_note(r, "S from |inputs| unavailable (%s); using |ref|", msg);
    }
    free_hosts(aconv, op->nin);
  }
  free_hosts(conv, op->nin);
  return ok;
}

static void compare_outputs(cf_env_t *env, const cf_case_t *c, int32_t direction, const cf_host_t *got,
                            const cf_host_t *ref, const cf_host_t *S, uint32_t n, cf_result_t *r) {
  int flushes = env->info.denormals == PARITY_DENORMALS_FLUSHED;
  double worst = 0, max_ulp = NAN, min_cos = NAN, ratio_at_min = NAN;
  for (uint32_t k = 0; k < n; k++) {
    if (!got[k].data || !ref[k].data) continue;
    int32_t dt = got[k].spec.dtype;
    cf_compare_t cmp;
    cf_compare_init(&cmp, cf_rule_for(c->op, c->kind, dt, direction), dt, c->op, cf_terms(c, direction, (int)k),
                    flushes);
    if (direction == PARITY_DIRECTION_FORWARD) {
      cmp.zero_sign = c->op == PARITY_OP_SUM || c->op == PARITY_OP_MEAN;
      cmp.store_rounded = c->kind == PARITY_OP_KIND_REDUCE || c->kind == PARITY_OP_KIND_MATMUL ||
                          c->kind == PARITY_OP_KIND_CONV2D || c->kind == PARITY_OP_KIND_POOL2D;
    }
    cf_compare(&cmp, out_name(c, k), &got[k], &ref[k], S && S[k].data ? &S[k] : NULL);
    if (cmp.worst_ratio > worst) worst = cmp.worst_ratio;
    for (int b = 0; b < CF_HIST_BINS; b++) r->hist[b] += cmp.hist[b];
    if (!isnan(cmp.max_ulp)) max_ulp = isnan(max_ulp) ? cmp.max_ulp : fmax(max_ulp, cmp.max_ulp);
    if (cmp.bad)
      cf_result_fail(r, "%lld of %lld elements of %s outside the rule; first %s", (long long)cmp.bad,
                     (long long)cmp.checked, out_name(c, k), cmp.first_bad);
    if (direction == PARITY_DIRECTION_BACKWARD) {
      double cs, nr;
      cf_cosine(&got[k], &ref[k], &cs, &nr);
      if (isnan(min_cos) || cs < min_cos) min_cos = cs, ratio_at_min = nr;
    }
  }
  r->worst_ratio = worst;
  r->max_ulp = max_ulp;
  r->cosine = min_cos;
  r->norm_ratio = ratio_at_min;
}

static void run_forward(cf_env_t *env, const cf_case_t *c, case_state_t *s, cf_result_t *r) {
  cf_host_t y1[PARITY_MAX_OUTPUTS] = {0}, y2[PARITY_MAX_OUTPUTS] = {0}, ref[PARITY_MAX_OUTPUTS] = {0},
            S[PARITY_MAX_OUTPUTS] = {0};
  char msg[512];
  cf_exec_status_t st = cf_exec(env->dev, &s->fwd, SENTINEL_A, y1, msg, sizeof msg);
  if (c->expect_error) {
    if (st == CF_EXEC_OK || st == CF_EXEC_CORRUPT)
      cf_result_fail(r, "must be refused (the reduced axis is empty) but the run succeeded");
    else if (st == CF_EXEC_UNSUPPORTED)
      r->status = CF_UNSUPPORTED, cf_result_note(r, "%s", msg);
    else
      cf_result_note(r, "refused as required: %s", msg);
    free_hosts(y1, c->nout);
    return;
  }
  if (st == CF_EXEC_UNSUPPORTED) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "%s", msg);
    return;
  }
  if (st == CF_EXEC_ERROR) {
    cf_result_fail(r, "run failed: %s", msg);
    return;
  }
  if (st == CF_EXEC_CORRUPT) cf_result_fail(r, "%s", msg);
  for (int run = 2, runs = forward_runs(c); run <= runs; run++) {
    char what[32];
    snprintf(what, sizeof what, "run %d", run);
    int ok = cf_device_run(env, &s->fwd, run % 2 == 0, y2, r, what);
    if (ok && !check_same(c, y1, y2, c->nout, run, NULL, r)) ok = 0;
    if (run < runs) free_hosts(y2, c->nout);
    if (!ok) break;
  }
  int want_S = cf_rule_for(c->op, c->kind, c->out_dtype, PARITY_DIRECTION_FORWARD) == CF_RULE_ACCUM;
  if (oracle_run(env, c, &s->fwd, ref, S, want_S, r))
    compare_outputs(env, c, PARITY_DIRECTION_FORWARD, y1, ref, want_S ? S : NULL, c->nout, r);
  free_hosts(y1, c->nout);
  free_hosts(y2, c->nout);
  free_hosts(ref, c->nout);
  free_hosts(S, c->nout);
}

/* abi/parity_plugin.h's SHAPE-ONLY inputs (the backward of sum, mean, add, sub, neg, avg_pool2d):
 * the second backward run gives each of them NaN in place of its values (7 in an integer dtype),
 * and its gradients must keep the first run's bits, as a prepared plan that leaves out what
 * computes those inputs requires (core/src/plan_prune.c). names: the inputs replaced, or "". */
static void nan_shape_only(const cf_case_t *c, cf_op_t *bop, cf_host_t *junk, char *names, size_t n) {
  const psup_operands_t *ops = psup_operands(c->kind, PARITY_DIRECTION_BACKWARD);
  size_t used = 0;
  names[0] = 0;
  for (uint32_t k = 0; k < bop->nin && k < PARITY_MAX_INPUTS; k++) {
    if (!bop->in[k] || !psup_operand_values_unused(c->op, PARITY_DIRECTION_BACKWARD, k)) continue;
    if (cf_host_alloc(&junk[k], &bop->in[k]->spec) != 0) continue;
    double v = psup_dtype_is_float(junk[k].spec.dtype) ? NAN : 7;
    for (int64_t i = 0; i < junk[k].count; i++) cf_host_set(&junk[k], i, v);
    bop->in[k] = &junk[k];
    const psup_operand_t *o = psup_operand(ops, 0, k);
    const char *name = o ? o->name : "an input";
    if (used < n) used += (size_t)snprintf(names + used, n - used, "%s%s", used ? " and " : "", name);
  }
}

static void run_backward(cf_env_t *env, const cf_case_t *c, case_state_t *s, cf_result_t *r) {
  cf_host_t y[2][PARITY_MAX_OUTPUTS], g[2][PARITY_MAX_OUTPUTS];
  memset(y, 0, sizeof y);
  memset(g, 0, sizeof g);
  cf_host_t ref[PARITY_MAX_OUTPUTS] = {0}, S[PARITY_MAX_OUTPUTS] = {0};
  cf_op_t bop;
  char msg[512];
  /* supports() for the backward before anything runs: y's spec stands in for y */
  cf_host_t y_spec_only = {.spec = c->out[0]};
  cf_backward_op(c, s->x, &y_spec_only, &s->dy, s->grads, &bop);
  cf_exec_status_t st = cf_supports(env->dev, &bop, msg, sizeof msg);
  if (st == CF_EXEC_OK) st = cf_supports(env->dev, &s->fwd, msg, sizeof msg);
  if (st != CF_EXEC_OK) {
    r->status = st == CF_EXEC_UNSUPPORTED ? CF_UNSUPPORTED : CF_FAIL;
    cf_result_note(r, "%s", msg);
    return;
  }
  uint32_t nrun = 0;
  cf_host_t nan_in[PARITY_MAX_INPUTS] = {0};
  char shape_only[64] = "";
  for (int run = 0; run < 2; run++) {
    if (!cf_device_run(env, &s->fwd, run, y[run], r, "forward")) break;
    cf_backward_op(c, s->x, &y[run][0], &s->dy, s->grads, &bop);
    if (run == 1) nan_shape_only(c, &bop, nan_in, shape_only, sizeof shape_only);
    if (!cf_device_run(env, &bop, run, g[run], r, "backward")) break;
    nrun++;
  }
  free_hosts(nan_in, PARITY_MAX_INPUTS);
  if (nrun == 2) check_same(c, g[0], g[1], bop.nout, 2, shape_only[0] ? shape_only : NULL, r);
  if (nrun >= 1) {
    cf_backward_op(c, s->x, &y[0][0], &s->dy, s->grads, &bop);
    if (oracle_run(env, c, &bop, ref, S, 1, r))
      compare_outputs(env, c, PARITY_DIRECTION_BACKWARD, g[0], ref, S, bop.nout, r);
  }
  for (int run = 0; run < 2; run++) {
    free_hosts(y[run], c->nout);
    free_hosts(g[run], PARITY_MAX_OUTPUTS);
  }
  free_hosts(ref, PARITY_MAX_OUTPUTS);
  free_hosts(S, PARITY_MAX_OUTPUTS);
}

cf_exec_status_t cf_case_supports(cf_env_t *env, const cf_case_t *c, char *msg, size_t msg_size) {
  cf_host_t x[PARITY_MAX_INPUTS], y = {.spec = c->out[0]}, dy = {.spec = c->out[0]};
  memset(x, 0, sizeof x);
  cf_op_t fwd = {
      .op = c->op, .direction = PARITY_DIRECTION_FORWARD, .params = c->params, .nin = c->nin, .nout = c->nout};
  for (uint32_t i = 0; i < c->nin; i++) {
    x[i].spec = c->in[i];
    fwd.in[i] = c->has_in[i] ? &x[i] : NULL;
  }
  for (uint32_t i = 0; i < c->nout; i++) fwd.out[i] = &c->out[i];
  cf_exec_status_t st = cf_supports(env->dev, &fwd, msg, msg_size);
  if (st != CF_EXEC_OK || c->direction == PARITY_DIRECTION_FORWARD) return st;
  cf_spec_t grads[PARITY_MAX_OUTPUTS];
  cf_op_t bop;
  dy.spec.layout = CF_LAYOUT_CONTIG;
  cf_backward_op(c, x, &y, &dy, grads, &bop);
  return cf_supports(env->dev, &bop, msg, msg_size);
}

static const char *const operand_names[][3] = {
    [PARITY_OP_KIND_UNARY] = {"x"},        [PARITY_OP_KIND_BINARY] = {"a", "b"},
    [PARITY_OP_KIND_COMPARE] = {"a", "b"}, [PARITY_OP_KIND_SELECT] = {"cond", "a", "b"},
    [PARITY_OP_KIND_CAST] = {"x"},         [PARITY_OP_KIND_REDUCE] = {"x"},
    [PARITY_OP_KIND_MATMUL] = {"a", "b"},  [PARITY_OP_KIND_CONV2D] = {"x", "w", "bias"},
    [PARITY_OP_KIND_POOL2D] = {"x"},       [PARITY_OP_KIND_SOFTMAX] = {"x"},
};

void cf_case_operands(const cf_case_t *c, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < c->nin + c->nout && used < n; i++) {
    int out = i >= c->nin;
    if (!out && !c->has_in[i]) continue;
    const char *name = out ? "y" : NULL;
    if (!out && c->kind >= 0 && c->kind < (int32_t)(sizeof operand_names / sizeof operand_names[0]))
      name = operand_names[c->kind][i];
    char one[192];
    cf_spec_describe(name ? name : "in", out ? &c->out[i - c->nin] : &c->in[i], i, one, sizeof one);
    if (out && i == c->nin && c->in_place && c->kind >= 0 &&
        c->kind < (int32_t)(sizeof operand_names / sizeof operand_names[0])) { /* in place: the input's view */
      const char *src = operand_names[c->kind][c->in_place - 1];
      snprintf(one, sizeof one, "y in place: %s's own view, in its buffer", src ? src : "the input");
    }
    used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "; " : "", one);
  }
}

/* The host memory a case with an operand past 1 GiB (the --full 2^31-byte case) needs: about five
 * times its operands' bytes (inputs, the device's copy where it is host memory, two runs' outputs,
 * the oracle's float64 copies), measured 8.5 GB at its peak for 2 GiB of input on the CPU. Skipped,
 * with both figures, where MemAvailable is smaller: a shared CI machine must not be pushed into
 * the OOM killer. 1: it may run. */
static int host_memory_allows(const cf_case_t *c, cf_result_t *r) {
  uint64_t bytes = 0;
  int big = 0;
  for (uint32_t i = 0; i < c->nin + c->nout; i++) {
    const cf_spec_t *spec = i < c->nin ? (c->has_in[i] ? &c->in[i] : NULL) : &c->out[i - c->nin];
    uint64_t b = spec ? cf_spec_buffer_bytes(spec, i) : 0;
    bytes += b;
    big |= b > (1ull << 30);
  }
  if (!big) return 1;
  unsigned long long avail_kb = 0;
  FILE *f = fopen("/proc/meminfo", "r");
  char line[128];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &avail_kb) == 1) break;
  if (f) fclose(f);
  uint64_t need = 5 * bytes, avail = (uint64_t)avail_kb * 1024;
  if (avail_kb && avail >= need) return 1;
  r->status = CF_SKIPPED;
  cf_result_note(r, "needs about %.1f GiB of host memory; %s", (double)need / (1u << 30),
                 avail_kb ? "less is available (MemAvailable)" : "/proc/meminfo gives no MemAvailable");
  return 0;
}

void cf_run_case(cf_env_t *env, const cf_case_t *c, cf_result_t *r) {
  if (c->mode == CF_MODE_FD) {
    cf_run_fd(env, c, r);
    if (r->status == CF_FAIL) cf_case_operands(c, r->operands, sizeof r->operands);
    return;
  }
  /* an operand past the device's largest buffer is refused before any host memory is spent on it
   * (the --full 2^31-byte case); so is a case supports() refuses */
  uint64_t limit = env->info.max_buffer_bytes;
  for (uint32_t i = 0; limit && i < c->nin + c->nout; i++) {
    const cf_spec_t *spec = i < c->nin ? (c->has_in[i] ? &c->in[i] : NULL) : &c->out[i - c->nin];
    uint64_t bytes = spec ? cf_spec_buffer_bytes(spec, i) : 0;
    if (bytes > limit) {
      r->status = CF_UNSUPPORTED;
      cf_result_note(r, "operand %u needs a %llu-byte buffer; the device's max_buffer_bytes is %llu", i,
                     (unsigned long long)bytes, (unsigned long long)limit);
      return;
    }
  }
  if (!host_memory_allows(c, r)) return;
  char pre[512];
  if (!c->expect_error && cf_case_supports(env, c, pre, sizeof pre) == CF_EXEC_UNSUPPORTED) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "%s", pre);
    return;
  }
  case_state_t s;
  if (prepare(env, c, &s) != 0) {
    cf_result_fail(r, "host out of memory preparing the inputs");
  } else {
    char msg[512];
    cf_exec_status_t st = CF_EXEC_OK;
    if (!c->expect_error && c->direction == PARITY_DIRECTION_FORWARD)
      st = cf_supports(env->dev, &s.fwd, msg, sizeof msg);
    if (st == CF_EXEC_UNSUPPORTED) {
      r->status = CF_UNSUPPORTED;
      cf_result_note(r, "%s", msg);
    } else if (st != CF_EXEC_OK) {
      cf_result_fail(r, "supports() rejected a valid descriptor: %s", msg);
    } else if (c->direction == PARITY_DIRECTION_FORWARD) {
      run_forward(env, c, &s, r);
    } else {
      run_backward(env, c, &s, r);
    }
  }
  free_hosts(s.x, PARITY_MAX_INPUTS);
  cf_host_free(&s.dy);
  if (r->status == CF_FAIL) cf_case_operands(c, r->operands, sizeof r->operands);
}
