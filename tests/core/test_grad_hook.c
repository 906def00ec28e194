/* parity_tensor_set_grad_hook (issue 39: the per-gradient hook data-parallel training overlaps
 * communication with): each hooked leaf's hook runs once per backward, as soon as its gradient is
 * final (the value it sees is the value backward ends with) and before backward has reached the
 * leaves nearer the input. */
#include <string.h>

#include "core_test.h"

typedef struct seen {
  int calls;
  double grad[8];
  int other_had_grad; /* whether the other watched leaf already had its gradient */
  parity_tensor_t *other;
  int order;
} seen;

static int clock_;

static parity_status_t record(parity_tensor_t *leaf, void *user) {
  seen *s = user;
  s->calls++;
  s->order = ++clock_;
  cr_assert_eq(parity_grad_mode_enabled(), 0, "grad mode is on inside a hook");
  parity_tensor_t *g = parity_tensor_grad(leaf);
  cr_assert_not_null(g);
  OK(parity_tensor_to_f64(g, s->grad, (uint64_t)parity_tensor_numel(g)));
  s->other_had_grad = s->other && parity_tensor_grad(s->other) != NULL;
  return PARITY_STATUS_OK;
}

static void expect_final(parity_tensor_t *leaf, const seen *s, const char *what) {
  double now[8];
  int64_t n = parity_tensor_numel(leaf);
  OK(parity_tensor_to_f64(parity_tensor_grad(leaf), now, (uint64_t)n));
  cr_assert_eq(memcmp(now, s->grad, (size_t)n * sizeof *now), 0, "%s: the hook saw a gradient that changed later",
               what);
}

/* loss = sum(tanh(tanh(x w1) w2) + w1 broadcast...): w1 is reached twice (by the first matmul and by
 * a late add), w2 once, near the loss */
Test(grad_hook, runs_once_with_the_final_gradient_and_before_backward_ends) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 2}, (double[]){0.5, -1, 2, 0.25});
  parity_tensor_t *w1 = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 2}, (double[]){0.1, 0.2, -0.3, 0.4});
  parity_tensor_t *w2 = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 2}, (double[]){0.7, -0.5, 0.2, 0.9});
  OK(parity_tensor_set_requires_grad(w1, 1));
  OK(parity_tensor_set_requires_grad(w2, 1));
  seen s1 = {0}, s2 = {.other = w1};
  OK(parity_tensor_set_grad_hook(w1, record, &s1));
  OK(parity_tensor_set_grad_hook(w2, record, &s2));
  OK(parity_scope_begin());
  parity_tensor_t *h, *a, *y, *b, *z, *loss;
  OK(parity_matmul(x, w1, &h));
  OK(parity_unary(PARITY_OP_TANH, h, &a));
  OK(parity_matmul(a, w2, &y));
  OK(parity_unary(PARITY_OP_TANH, y, &b));
  OK(parity_binary(PARITY_OP_ADD, b, w1, &z)); /* w1's second use, near the loss */
  OK(parity_reduce(PARITY_OP_SUM, z, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 1));
  cr_assert_eq(s1.calls, 1);
  cr_assert_eq(s2.calls, 1);
  cr_assert_lt(s2.order, s1.order, "w2 (near the loss) is final before w1");
  cr_assert_eq(s2.other_had_grad, 1, "w1 got its first contribution before w2 was final (add is last)");
  expect_final(w1, &s1, "w1");
  expect_final(w2, &s2, "w2");
  /* a second backward through the retained graph: the hook runs once more */
  OK(parity_backward(loss, NULL, 0));
  cr_assert_eq(s1.calls, 2);
  expect_final(w1, &s1, "w1, second backward");
  OK(parity_scope_end());
  parity_tensor_release(w2);
  parity_tensor_release(w1);
  parity_tensor_release(x);
}

Test(grad_hook, fires_before_the_layers_nearer_the_input_are_done) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){1, 2}, (double[]){1, 2});
  parity_tensor_t *w1 = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 1});
  parity_tensor_t *w2 = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 2}, (double[]){2, 0, 0, 2});
  OK(parity_tensor_set_requires_grad(w1, 1));
  OK(parity_tensor_set_requires_grad(w2, 1));
  seen s2 = {.other = w1};
  OK(parity_tensor_set_grad_hook(w2, record, &s2));
  OK(parity_scope_begin());
  parity_tensor_t *h, *y, *loss;
  OK(parity_matmul(x, w1, &h));
  OK(parity_matmul(h, w2, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  OK(parity_scope_end());
  cr_assert_eq(s2.calls, 1);
  cr_assert_eq(s2.other_had_grad, 0, "w2's hook ran only after backward had reached w1: no overlap is possible");
  parity_tensor_release(w2);
  parity_tensor_release(w1);
  parity_tensor_release(x);
}

static parity_status_t refuse(parity_tensor_t *leaf, void *user) {
  (void)leaf;
  (*(int *)user)++;
  return PARITY_STATUS_UNAVAILABLE;
}

Test(grad_hook, refusals_and_a_failing_hook) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *w = vec(dev, PARITY_DTYPE_F64, 2, (double[]){1, 2}),
                  *c = vec(dev, PARITY_DTYPE_F64, 2, (double[]){3, 4});
  cr_assert_eq(parity_tensor_set_grad_hook(w, record, NULL), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "requires_grad is off"), "%s", parity_last_error());
  cr_assert_eq(parity_tensor_set_grad_hook(NULL, record, NULL), PARITY_STATUS_INVALID_ARGUMENT);
  OK(parity_tensor_set_requires_grad(w, 1));
  parity_tensor_t *y, *loss;
  OK(parity_binary(PARITY_OP_MUL, w, c, &y));
  cr_assert_eq(parity_tensor_set_grad_hook(y, record, NULL), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "was computed"), "%s", parity_last_error());
  int calls = 0;
  OK(parity_tensor_set_grad_hook(w, refuse, &calls));
  OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &loss));
  cr_assert_eq(parity_backward(loss, NULL, 1), PARITY_STATUS_UNAVAILABLE);
  cr_assert_eq(calls, 1);
  cr_assert(strstr(parity_last_error(), "gradient hook failed"), "%s", parity_last_error());
  OK(parity_tensor_set_grad_hook(w, NULL, NULL)); /* removed: backward runs plainly */
  parity_tensor_zero_grad(w);
  OK(parity_backward(loss, NULL, 0));
  cr_assert_eq(calls, 1);
  /* a leaf that is itself the loss */
  seen s = {0};
  parity_tensor_t *one = vec(dev, PARITY_DTYPE_F64, 1, (double[]){5});
  OK(parity_tensor_set_requires_grad(one, 1));
  OK(parity_tensor_set_grad_hook(one, record, &s));
  OK(parity_backward(one, NULL, 0));
  cr_assert_eq(s.calls, 1);
  cr_assert_eq(s.grad[0], 1.0);
  parity_tensor_release(one);
  parity_tensor_release(loss);
  parity_tensor_release(y);
  parity_tensor_release(c);
  parity_tensor_release(w);
}
