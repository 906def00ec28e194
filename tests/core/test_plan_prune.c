/* What a replay leaves out of a recorded plan (core/src/plan_prune.c): commands whose results no
 * one can read any more, and commands that would write the same bits on every replay. Each test
 * replays with new inputs and requires the bits of the same plan recorded with
 * PARITY_PLAN_PRUNE=0, which keeps every command. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"

typedef struct dense {
  parity_tensor_t *x, *w, *b, *y, *s;
  parity_plan_t *plan;
} dense;

/* Dense(2,2) as parity-bench's prepared section records it: sum(x w^T + b) and its backward; keep
 * the forward's tensors when keep, else release them while recording, as the bench does. */
static dense record_dense(parity_device_t *dev, int keep) {
  dense d = {0};
  float xv[2] = {0.5f, -1.5f};
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1, 2}, xv, &d.x));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, 2}, 0, 1, 1, 0, &d.w));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, 0, 1, 1, 1ull << 32, &d.b));
  OK(parity_tensor_set_requires_grad(d.w, 1));
  OK(parity_tensor_set_requires_grad(d.b, 1));
  OK(parity_plan_begin(dev, &d.plan));
  OK(parity_linear(d.x, d.w, d.b, &d.y));
  OK(parity_reduce(PARITY_OP_SUM, d.y, 3, 0, &d.s));
  OK(parity_backward(d.s, NULL, 0));
  if (!keep) {
    parity_tensor_release(d.y);
    parity_tensor_release(d.s);
    d.y = d.s = NULL;
  }
  OK(parity_plan_end(d.plan));
  return d;
}

static void free_dense(dense *d) {
  parity_plan_destroy(d->plan);
  parity_tensor_t *all[] = {d->x, d->w, d->b, d->y, d->s};
  for (int i = 0; i < 5; i++) parity_tensor_release(all[i]);
}

static void expect_count(parity_plan_t *p, uint64_t n, const char *what) {
  cr_assert_eq(parity_plan_command_count(p), n, "%s: a replay issues %llu commands, not %llu", what,
               (unsigned long long)parity_plan_command_count(p), (unsigned long long)n);
}

/* The gradient's plan with the loss released: the forward (matmul, add, sum) computes what no one
 * can read, the seed's fill and sum's backward (a function of the seed alone: x and y are
 * SHAPE-ONLY there) the same bits every time; left: b's gradient (the seed's ones, copied) and
 * the matmul's backward. 7 commands recorded, 2 replayed; the gradients are the same bits as the
 * unpruned plan's for every new x, and d/dw[o][i] = x[i], d/db = 1 exactly. */
Test(plan_prune, a_gradients_plan_with_its_loss_released_replays_two_commands) {
  parity_device_t *dev = pt_device("cpu");
  dense d = record_dense(dev, 0);
  setenv("PARITY_PLAN_PRUNE", "0", 1);
  dense whole = record_dense(dev, 0);
  unsetenv("PARITY_PLAN_PRUNE");
  expect_count(d.plan, 2, "pruned");
  expect_count(whole.plan, 7, "PARITY_PLAN_PRUNE=0");
  for (int r = 0; r < 5; r++) {
    float xv[2] = {(float)r - 1.25f, 3.5f * (float)r};
    OK(parity_tensor_write(d.x, xv, sizeof xv));
    OK(parity_tensor_write(whole.x, xv, sizeof xv));
    OK(parity_plan_replay(d.plan));
    OK(parity_plan_replay(whole.plan));
    float gw[4], gb[2], ww[4], wb[2];
    OK(parity_tensor_to_host(parity_tensor_grad(d.w), gw, sizeof gw));
    OK(parity_tensor_to_host(parity_tensor_grad(d.b), gb, sizeof gb));
    OK(parity_tensor_to_host(parity_tensor_grad(whole.w), ww, sizeof ww));
    OK(parity_tensor_to_host(parity_tensor_grad(whole.b), wb, sizeof wb));
    cr_assert(!memcmp(gw, ww, sizeof gw) && !memcmp(gb, wb, sizeof gb), "replay %d: pruned and whole plans differ", r);
    for (int o = 0; o < 2; o++) {
      cr_assert_eq(gb[o], 1.0f, "replay %d: db[%d] = %g", r, o, gb[o]);
      for (int i = 0; i < 2; i++)
        cr_assert_eq(gw[o * 2 + i], xv[i], "replay %d: dw[%d][%d] = %g", r, o, i, gw[o * 2 + i]);
    }
  }
  free_dense(&d);
  free_dense(&whole);
}

/* A tensor the caller still holds is read after every replay: the forward that writes it stays
 * (y and the loss follow each new x); only the seed's fill and sum's backward go. */
Test(plan_prune, what_the_caller_still_holds_is_recomputed) {
  parity_device_t *dev = pt_device("cpu");
  dense d = record_dense(dev, 1);
  expect_count(d.plan, 5, "the loss kept");
  float xv[2] = {2.0f, -4.0f}, w[4], b[2], y[2], s;
  OK(parity_tensor_write(d.x, xv, sizeof xv));
  OK(parity_plan_replay(d.plan));
  OK(parity_tensor_to_host(d.w, w, sizeof w));
  OK(parity_tensor_to_host(d.b, b, sizeof b));
  OK(parity_tensor_to_host(d.y, y, sizeof y));
  OK(parity_tensor_to_host(d.s, &s, sizeof s));
  for (int o = 0; o < 2; o++) {
    float want = xv[0] * w[o * 2] + xv[1] * w[o * 2 + 1] + b[o];
    cr_assert(fabsf(y[o] - want) <= 1e-5f * (1 + fabsf(want)), "y[%d] = %g, want %g", o, y[o], want);
  }
  cr_assert(fabsf(s - (y[0] + y[1])) <= 1e-5f * (1 + fabsf(s)), "the loss %g is not the new y's sum", s);
  free_dense(&d);
}

/* t = neg(full(1)), a constant, then overwritten by the host while recording (t = 5), read by exp,
 * and exp(t) + x kept. A replay recomputes t = -1 and exp(-1): had exp been taken as constant, its
 * recorded exp(5) would stay. A storage the host wrote while recording is never constant. */
static void host_written(parity_device_t *dev, parity_tensor_t *x, parity_plan_t **plan, parity_tensor_t **out) {
  parity_tensor_t *one, *t, *u;
  OK(parity_plan_begin(dev, plan));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, 1.0, &one));
  OK(parity_unary(PARITY_OP_NEG, one, &t));
  float five[2] = {5, 5};
  OK(parity_tensor_write(t, five, sizeof five));
  OK(parity_unary(PARITY_OP_EXP, t, &u));
  OK(parity_binary(PARITY_OP_ADD, u, x, out));
  parity_tensor_release(one);
  parity_tensor_release(t);
  parity_tensor_release(u);
  OK(parity_plan_end(*plan));
}

Test(plan_prune, what_the_host_wrote_while_recording_is_never_constant) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *out, *out_whole;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, &x));
  parity_plan_t *plan, *whole;
  host_written(dev, x, &plan, &out);
  setenv("PARITY_PLAN_PRUNE", "0", 1);
  host_written(dev, x, &whole, &out_whole);
  unsetenv("PARITY_PLAN_PRUNE");
  expect_count(plan, 3, "neg, exp, add (the fill of ones is constant)");
  OK(parity_plan_replay(plan));
  OK(parity_plan_replay(whole));
  float got[2], want[2];
  OK(parity_tensor_to_host(out, got, sizeof got));
  OK(parity_tensor_to_host(out_whole, want, sizeof want));
  cr_assert(!memcmp(got, want, sizeof got), "pruned %g, whole %g", got[0], want[0]);
  cr_assert(fabsf(got[0] - expf(-1.0f)) < 1e-6f, "exp(-1) + 0 replayed as %g (exp(5) is %g)", got[0], expf(5.0f));
  parity_plan_destroy(plan);
  parity_plan_destroy(whole);
  parity_tensor_release(out);
  parity_tensor_release(out_whole);
  parity_tensor_release(x);
}
