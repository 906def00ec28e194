/* hazard_mask_under_gradient.c — Zygote.jl issue 1570 at op level. On CUDA and Metal the mask
 * `[0,1,2] .== 1` came out all-false inside a gradient, so the gradient of sum(x[mask]) was
 * [0,0,0] instead of [0,1,0]. Here, in every floating dtype the device supports: eq([0,1,2], 1)
 * must be exactly [0,1,0], and where's backward with that mask and dc = 1 must route dc to a
 * only where the mask is true: da = [0,1,0], db = [1,0,1], bit for bit. */
#include <stdio.h>
#include <string.h>

#include "conform.h"

static int exact(const cf_host_t *h, const double *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (cf_host_get(h, i) != want[i]) return 0;
  return 1;
}

static void fmt3(const cf_host_t *h, char *buf, size_t n) {
  snprintf(buf, n, "[%g,%g,%g]", cf_host_get(h, 0), cf_host_get(h, 1), cf_host_get(h, 2));
}

void cf_hazard_mask_under_gradient(cf_env_t *env, cf_result_t *r) {
  static const double x[3] = {0, 1, 2}, one[3] = {1, 1, 1}, mask_want[3] = {0, 1, 0}, db_want[3] = {1, 0, 1};
  int64_t shape[1] = {3};
  int checked = 0;
  for (int32_t dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    cf_host_t a = {0}, b = {0}, dc = {0}, mask = {0}, grads[2] = {0};
    cf_host_from_values(&a, dt, 1, shape, x);
    cf_host_from_values(&b, dt, 1, shape, one);
    cf_host_from_values(&dc, dt, 1, shape, one);
    cf_spec_t ms = cf_spec_make(PARITY_DTYPE_BOOL, 1, shape), gs = cf_spec_make(dt, 1, shape);
    cf_op_t eq = {
        .op = PARITY_OP_EQ, .direction = PARITY_DIRECTION_FORWARD, .nin = 2, .nout = 1, .in = {&a, &b}, .out = {&ms}};
    cf_result_t probe;
    cf_result_init(&probe, r->id, r->op, r->dtype, r->direction, r->variant);
    char got[64], label[48];
    snprintf(label, sizeof label, "eq %s", psup_dtype_name(dt));
    if (cf_check_run(env->dev, &eq, &mask, &probe, label)) {
      checked++;
      if (!exact(&mask, mask_want, 3)) {
        fmt3(&mask, got, sizeof got);
        cf_result_fail(r, "%s: eq([0,1,2], 1) gave %s, must be [1 at index 1 only]", psup_dtype_name(dt), got);
      } else {
        cf_op_t wb = {.op = PARITY_OP_WHERE,
                      .direction = PARITY_DIRECTION_BACKWARD,
                      .nin = 2,
                      .nout = 2,
                      .in = {&mask, &dc},
                      .out = {&gs, &gs}};
        snprintf(label, sizeof label, "where backward %s", psup_dtype_name(dt));
        if (cf_check_run(env->dev, &wb, grads, &probe, label)) {
          if (!exact(&grads[0], mask_want, 3)) {
            fmt3(&grads[0], got, sizeof got);
            cf_result_fail(r, "%s: where backward gave da = %s, expected [0,1,0]", psup_dtype_name(dt), got);
          }
          if (!exact(&grads[1], db_want, 3)) {
            fmt3(&grads[1], got, sizeof got);
            cf_result_fail(r, "%s: where backward gave db = %s, expected [1,0,1]", psup_dtype_name(dt), got);
          }
        }
      }
    }
    if (probe.status == CF_FAIL)
      cf_result_fail(r, "%s", probe.message);
    else if (probe.status == CF_UNSUPPORTED && checked)
      cf_result_note(r, "%s", probe.message);
    cf_host_free(&a), cf_host_free(&b), cf_host_free(&dc), cf_host_free(&mask);
    cf_host_free(&grads[0]), cf_host_free(&grads[1]);
  }
  if (r->status != CF_FAIL && !checked) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "eq is not supported in any floating dtype");
  } else if (r->status != CF_FAIL) {
    cf_result_note(r, "mask exact and where routes the gradient through the mask in %d dtype(s)", checked);
  }
}
