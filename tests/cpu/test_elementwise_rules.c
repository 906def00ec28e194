/* CPU elementwise semantics, one test per rule of docs/semantics.md (unary and binary ops):
 * subgradients at kinks, signed zeros, NaN and infinities, ties, pow and division edge cases,
 * denormals, and backward using the stored forward values. Each rule is checked in every
 * floating dtype (f64, f32, f16, bf16). */
#include <float.h>

#include "elementwise_test.h"

static const int32_t floats[] = EWT_FLOATS;
#define NFLOATS 4

#define ASSERT_SAME(got, want, ...) cr_assert(ewt_same((got), (want)), __VA_ARGS__)

/* ---- subgradients -------------------------------------------------------------------------- */

Test(elementwise_rules, relu_grad_at_zero_is_zero) {
  const double x[] = {0.0, -0.0, 2.0, -2.0}, y[] = {0, 0, 2, 0}, dy[] = {1, -3, 5, 7}, want[] = {0, 0, 5, 0};
  double dx[4];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary_bwd(PARITY_OP_RELU, floats[d], 4, x, y, dy, dx, 0);
    for (int i = 0; i < 4; i++)
      ASSERT_SAME(dx[i], want[i], "%s relu'(%g)*%g = %g", psup_dtype_name(floats[d]), x[i], dy[i], dx[i]);
  }
}

Test(elementwise_rules, abs_grad_at_zero_is_zero) {
  const double x[] = {0.0, -0.0, 2.0, -2.0}, y[] = {0, 0, 2, 2}, dy[] = {1, -3, 5, 7}, want[] = {0, 0, 5, -7};
  double dx[4];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary_bwd(PARITY_OP_ABS, floats[d], 4, x, y, dy, dx, 0);
    for (int i = 0; i < 4; i++)
      ASSERT_SAME(dx[i], want[i], "%s abs'(%g)*%g = %g", psup_dtype_name(floats[d]), x[i], dy[i], dx[i]);
  }
}

Test(elementwise_rules, leaky_relu_grad_at_zero_is_alpha) {
  const double x[] = {0.0, -0.0, 2.0, -2.0}, y[] = {0, 0, 2, -0.5}, dy[] = {1, 1, 1, 1}, want[] = {0.25, 0.25, 1, 0.25};
  double dx[4];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary_bwd(PARITY_OP_LEAKY_RELU, floats[d], 4, x, y, dy, dx, 0.25);
    for (int i = 0; i < 4; i++)
      ASSERT_SAME(dx[i], want[i], "%s leaky_relu'(%g) = %g", psup_dtype_name(floats[d]), x[i], dx[i]);
  }
}

Test(elementwise_rules, sign_of_signed_zero_is_positive_zero_and_sign_of_nan_is_nan) {
  const double x[] = {0.0, -0.0, NAN, -3.5, 2.0, INFINITY, -INFINITY, 0x1p-130};
  const double want[] = {0.0, 0.0, NAN, -1, 1, 1, -1, 1};
  double y[8];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary(PARITY_OP_SIGN, floats[d], 8, x, y, 0);
    for (int i = 0; i < 8; i++) {
      /* 2^-130 is below f16's range and stores as 0 there, whose sign is 0 */
      double w = ewt_round(floats[d], x[i]) == 0 && !isnan(x[i]) ? 0.0 : want[i];
      ASSERT_SAME(y[i], w, "%s sign(%g) = %g", psup_dtype_name(floats[d]), x[i], y[i]);
    }
  }
}

Test(elementwise_rules, sign_grad_is_zero_everywhere) {
  const double x[] = {-2.0, 0.0, 3.0, NAN}, y[] = {-1, 0, 1, NAN}, dy[] = {1, INFINITY, NAN, 1};
  double dx[4];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary_bwd(PARITY_OP_SIGN, floats[d], 4, x, y, dy, dx, 0);
    for (int i = 0; i < 4; i++) ASSERT_SAME(dx[i], 0.0, "%s sign' at %g = %g", psup_dtype_name(floats[d]), x[i], dx[i]);
  }
}

Test(elementwise_rules, relu_maps_negative_zero_to_positive_zero_and_propagates_nan) {
  const double x[] = {-0.0, 0.0, NAN, -INFINITY, INFINITY, -1.0, 0x1p-140};
  const double want[] = {0.0, 0.0, NAN, 0.0, INFINITY, 0.0, 0x1p-140};
  const double dy[] = {1, 1, 1, 1, 1, 1, 1};
  double y[7], dx[7];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary(PARITY_OP_RELU, floats[d], 7, x, y, 0);
    for (int i = 0; i < 7; i++)
      ASSERT_SAME(y[i], ewt_round(floats[d], want[i]), "%s relu(%g) = %g", psup_dtype_name(floats[d]), x[i], y[i]);
    ewt_unary_bwd(PARITY_OP_RELU, floats[d], 7, x, y, dy, dx, 0);
    cr_assert(isnan(dx[2]), "%s relu' at NaN = %g", psup_dtype_name(floats[d]), dx[2]);
  }
}

/* ---- maximum / minimum ---------------------------------------------------------------------- */

Test(elementwise_rules, maximum_and_minimum_propagate_nan) {
  const double a[] = {NAN, 1.0, NAN, -INFINITY}, b[] = {1.0, NAN, NAN, NAN};
  double c[4];
  for (int d = 0; d < NFLOATS; d++)
    for (int op = PARITY_OP_MAXIMUM; op <= PARITY_OP_MINIMUM; op++) {
      ewt_binary(op, floats[d], 4, a, b, c);
      for (int i = 0; i < 4; i++)
        cr_assert(isnan(c[i]), "%s %s(%g, %g) = %g", psup_dtype_name(floats[d]), psup_op_name(op), a[i], b[i], c[i]);
    }
}

Test(elementwise_rules, maximum_and_minimum_order_negative_zero_below_positive_zero) {
  const double a[] = {-0.0, 0.0, -0.0, 0.0}, b[] = {0.0, -0.0, -0.0, 0.0};
  const double wmax[] = {0.0, 0.0, -0.0, 0.0}, wmin[] = {-0.0, -0.0, -0.0, 0.0};
  double c[4];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_binary(PARITY_OP_MAXIMUM, floats[d], 4, a, b, c);
    for (int i = 0; i < 4; i++)
      ASSERT_SAME(c[i], wmax[i], "%s maximum(%g, %g)", psup_dtype_name(floats[d]), a[i], b[i]);
    ewt_binary(PARITY_OP_MINIMUM, floats[d], 4, a, b, c);
    for (int i = 0; i < 4; i++)
      ASSERT_SAME(c[i], wmin[i], "%s minimum(%g, %g)", psup_dtype_name(floats[d]), a[i], b[i]);
  }
}

Test(elementwise_rules, maximum_and_minimum_ties_split_the_gradient_in_half) {
  const double a[] = {2.0, -0.0, 0.0, 5.0, 1.0}, b[] = {2.0, 0.0, 0.0, 5.0, 3.0};
  const double dc[] = {1.0, 3.0, -6.0, 0x1p-20, 8.0};
  const double wa[] = {0.5, 1.5, -3.0, 0x1p-21, 0}, wb[] = {0.5, 1.5, -3.0, 0x1p-21, 8.0};
  double c[5], da[5], db[5];
  for (int d = 0; d < NFLOATS; d++)
    for (int op = PARITY_OP_MAXIMUM; op <= PARITY_OP_MINIMUM; op++) {
      ewt_binary(op, floats[d], 5, a, b, c);
      ewt_binary_bwd(op, floats[d], 5, a, b, c, dc, da, db);
      for (int i = 0; i < 4; i++) {
        ASSERT_SAME(da[i], wa[i], "%s %s tie da = %g", psup_dtype_name(floats[d]), psup_op_name(op), da[i]);
        ASSERT_SAME(db[i], wb[i], "%s %s tie db = %g", psup_dtype_name(floats[d]), psup_op_name(op), db[i]);
      }
      /* no tie: the whole gradient to the winner */
      int max = op == PARITY_OP_MAXIMUM;
      ASSERT_SAME(da[4], max ? 0.0 : 8.0, "%s da", psup_op_name(op));
      ASSERT_SAME(db[4], max ? 8.0 : 0.0, "%s db", psup_op_name(op));
    }
}

Test(elementwise_rules, maximum_and_minimum_route_the_gradient_to_the_nan_operand) {
  const double a[] = {NAN, 1.0, NAN}, b[] = {1.0, NAN, NAN}, c[] = {NAN, NAN, NAN}, dc[] = {4.0, 4.0, 4.0};
  const double wa[] = {4.0, 0.0, 2.0}, wb[] = {0.0, 4.0, 2.0};
  double da[3], db[3];
  for (int d = 0; d < NFLOATS; d++)
    for (int op = PARITY_OP_MAXIMUM; op <= PARITY_OP_MINIMUM; op++) {
      ewt_binary_bwd(op, floats[d], 3, a, b, c, dc, da, db);
      for (int i = 0; i < 3; i++) {
        ASSERT_SAME(da[i], wa[i], "%s %s(%g, %g) da = %g", psup_dtype_name(floats[d]), psup_op_name(op), a[i], b[i],
                    da[i]);
        ASSERT_SAME(db[i], wb[i], "%s %s(%g, %g) db = %g", psup_dtype_name(floats[d]), psup_op_name(op), a[i], b[i],
                    db[i]);
      }
    }
}

/* ---- pow, division, log -------------------------------------------------------------------- */

Test(elementwise_rules, pow_follows_c_pow) {
  const double a[] = {0.0, 5.0, NAN, -2.0, -2.0, 1.0, 0.0, -0.0, 2.0, -INFINITY};
  const double b[] = {0.0, 0.0, 0.0, 0.5, 3.0, NAN, -1.0, -1.0, -2.0, 3.0};
  const double want[] = {1.0, 1.0, 1.0, NAN, -8.0, 1.0, INFINITY, -INFINITY, 0.25, -INFINITY};
  double c[10];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_binary(PARITY_OP_POW, floats[d], 10, a, b, c);
    for (int i = 0; i < 10; i++)
      ASSERT_SAME(c[i], want[i], "%s pow(%g, %g) = %g", psup_dtype_name(floats[d]), a[i], b[i], c[i]);
  }
}

Test(elementwise_rules, pow_grads_are_zero_where_the_formula_would_give_nan) {
  /* da = 0 where b == 0 (a^0 is constant, also at a = 0); db = 0 where a == 0 and b > 0 */
  const double a[] = {0.0, 0.0, 3.0, 0.0, 2.0}, b[] = {0.0, 2.5, 0.0, 1.0, 3.0}, c[] = {1.0, 0.0, 1.0, 0.0, 8.0};
  const double dc[] = {1.0, 1.0, 1.0, 1.0, 1.0};
  double da[5], db[5];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_binary_bwd(PARITY_OP_POW, floats[d], 5, a, b, c, dc, da, db);
    ASSERT_SAME(da[0], 0.0, "%s d/da 0^0 = %g", psup_dtype_name(floats[d]), da[0]);
    ASSERT_SAME(da[2], 0.0, "%s d/da 3^0 = %g", psup_dtype_name(floats[d]), da[2]);
    ASSERT_SAME(db[1], 0.0, "%s d/db 0^2.5 = %g", psup_dtype_name(floats[d]), db[1]);
    ASSERT_SAME(db[3], 0.0, "%s d/db 0^1 = %g", psup_dtype_name(floats[d]), db[3]);
    ASSERT_SAME(da[3], 1.0, "%s d/da 0^1 = %g", psup_dtype_name(floats[d]), da[3]);
    ASSERT_SAME(da[4], 12.0, "%s d/da 2^3 = %g", psup_dtype_name(floats[d]), da[4]);
    cr_assert(isinf(db[0]) && db[0] < 0, "%s d/db 0^0 = %g (c*log(0) = -inf)", psup_dtype_name(floats[d]), db[0]);
  }
}

Test(elementwise_rules, division_by_zero_gives_ieee_infinities_and_nan) {
  const double a[] = {1.0, -1.0, 0.0, 1.0, INFINITY}, b[] = {0.0, 0.0, 0.0, -0.0, INFINITY};
  const double want[] = {INFINITY, -INFINITY, NAN, -INFINITY, NAN};
  double c[5];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_binary(PARITY_OP_DIV, floats[d], 5, a, b, c);
    for (int i = 0; i < 5; i++)
      ASSERT_SAME(c[i], want[i], "%s %g/%g = %g", psup_dtype_name(floats[d]), a[i], b[i], c[i]);
  }
}

Test(elementwise_rules, log_grad_at_zero_is_infinite) {
  const double x[] = {0.0, -0.0}, y[] = {-INFINITY, -INFINITY}, dy[] = {2.0, 2.0};
  double dx[2];
  for (int d = 0; d < NFLOATS; d++) {
    ewt_unary_bwd(PARITY_OP_LOG, floats[d], 2, x, y, dy, dx, 0);
    ASSERT_SAME(dx[0], INFINITY, "%s log'(0) = %g", psup_dtype_name(floats[d]), dx[0]);
    ASSERT_SAME(dx[1], -INFINITY, "%s log'(-0) = %g", psup_dtype_name(floats[d]), dx[1]);
  }
}

/* ---- infinities and NaN through the transcendentals ------------------------------------------ */

Test(elementwise_rules, infinities_and_nan_follow_ieee_limits) {
  struct {
    int32_t op;
    double x, want;
  } c[] = {
      {PARITY_OP_EXP, INFINITY, INFINITY},
      {PARITY_OP_EXP, -INFINITY, 0.0},
      {PARITY_OP_LOG, 0.0, -INFINITY},
      {PARITY_OP_LOG, -1.0, NAN},
      {PARITY_OP_LOG, INFINITY, INFINITY},
      {PARITY_OP_SQRT, -1.0, NAN},
      {PARITY_OP_SQRT, -0.0, -0.0},
      {PARITY_OP_RSQRT, 0.0, INFINITY},
      {PARITY_OP_RSQRT, INFINITY, 0.0},
      {PARITY_OP_RECIPROCAL, -0.0, -INFINITY},
      {PARITY_OP_RECIPROCAL, INFINITY, 0.0},
      {PARITY_OP_TANH, INFINITY, 1.0},
      {PARITY_OP_TANH, -INFINITY, -1.0},
      {PARITY_OP_SIGMOID, INFINITY, 1.0},
      {PARITY_OP_SIGMOID, -INFINITY, 0.0},
      {PARITY_OP_GELU, INFINITY, INFINITY},
      {PARITY_OP_GELU, -INFINITY, NAN},
      {PARITY_OP_SIN, INFINITY, NAN},
      {PARITY_OP_COS, -INFINITY, NAN},
      {PARITY_OP_SQUARE, -INFINITY, INFINITY},
      {PARITY_OP_NEG, 0.0, -0.0},
      {PARITY_OP_ABS, -0.0, 0.0},
      {PARITY_OP_EXP, NAN, NAN},
      {PARITY_OP_TANH, NAN, NAN},
  };
  for (int d = 0; d < NFLOATS; d++)
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
      double y;
      ewt_unary(c[i].op, floats[d], 1, &c[i].x, &y, 0);
      ASSERT_SAME(y, c[i].want, "%s %s(%g) = %g, want %g", psup_dtype_name(floats[d]), psup_op_name(c[i].op), c[i].x, y,
                  c[i].want);
    }
}

/* ---- denormals -------------------------------------------------------------------------------- */

Test(elementwise_rules, denormals_are_preserved_never_flushed) {
  /* per dtype: a subnormal s of that dtype; s + s, s * 0.5 (exact when s has a spare bit), -s, |-s| */
  const struct {
    int32_t dt;
    double s;
  } c[] = {
      {PARITY_DTYPE_F64, 0x1p-1070},
      {PARITY_DTYPE_F32, 0x1p-140},
      {PARITY_DTYPE_F16, 0x1p-20},
      {PARITY_DTYPE_BF16, 0x1p-130},
  };
  for (size_t i = 0; i < 4; i++) {
    int32_t dt = c[i].dt;
    double s = c[i].s, a[2] = {s, -s}, half[2] = {0.5, 0.5}, out[2];
    cr_assert_eq(ewt_round(dt, s), s, "test value %a must be a %s subnormal", s, psup_dtype_name(dt));
    ewt_binary(PARITY_OP_ADD, dt, 2, a, a, out);
    ASSERT_SAME(out[0], 2 * s, "%s %a + %a = %a", psup_dtype_name(dt), s, s, out[0]);
    ewt_binary(PARITY_OP_MUL, dt, 2, a, half, out);
    ASSERT_SAME(out[0], s / 2, "%s %a * 0.5 = %a", psup_dtype_name(dt), s, out[0]);
    ASSERT_SAME(out[1], -s / 2, "%s %a * 0.5 = %a", psup_dtype_name(dt), -s, out[1]);
    ewt_unary(PARITY_OP_NEG, dt, 2, a, out, 0);
    ASSERT_SAME(out[0], -s, "%s neg(%a) = %a", psup_dtype_name(dt), s, out[0]);
    ewt_unary(PARITY_OP_ABS, dt, 2, a, out, 0);
    ASSERT_SAME(out[1], s, "%s abs(%a) = %a", psup_dtype_name(dt), -s, out[1]);
    ewt_binary(PARITY_OP_MAXIMUM, dt, 2, a, half, out);
    ASSERT_SAME(out[0], 0.5, "%s maximum", psup_dtype_name(dt));
    ewt_binary(PARITY_OP_SUB, dt, 2, a, a, out);
    ASSERT_SAME(out[0], 0.0, "%s s - s", psup_dtype_name(dt));
    /* a result that only exists as a subnormal: (3s) - (2s) = s */
    double t3[1] = {3 * s}, t2[1] = {2 * s};
    ewt_binary(PARITY_OP_SUB, dt, 1, t3, t2, out);
    ASSERT_SAME(out[0], s, "%s 3s - 2s = %a", psup_dtype_name(dt), out[0]);
  }
}

/* ---- backward uses the values it is given ----------------------------------------------------- */

Test(elementwise_rules, backward_uses_the_given_forward_output) {
  /* y deliberately differs from op(x): the gradient must follow y, not a recomputation */
  const double x[] = {0.0, 0.0, 0.0}, y[] = {4.0, 0.5, 0.25}, dy[] = {1.0, 1.0, 1.0};
  const struct {
    int32_t op;
    double want;
    int i;
  } c[] = {
      {PARITY_OP_EXP, 4.0, 0},          /* dy * y */
      {PARITY_OP_TANH, 0.75, 1},        /* dy * (1 - y^2) */
      {PARITY_OP_SIGMOID, 0.1875, 2},   /* dy * y * (1 - y) */
      {PARITY_OP_SQRT, 2.0, 2},         /* dy / (2 y) */
      {PARITY_OP_RECIPROCAL, -16.0, 0}, /* -dy * y^2 */
  };
  for (int d = 0; d < NFLOATS; d++)
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
      double dx[3];
      ewt_unary_bwd(c[k].op, floats[d], 3, x, y, dy, dx, 0);
      ASSERT_SAME(dx[c[k].i], c[k].want, "%s %s' with given y=%g: %g", psup_dtype_name(floats[d]),
                  psup_op_name(c[k].op), y[c[k].i], dx[c[k].i]);
    }
  /* binary: div's db uses the given c */
  const double a[] = {1.0}, b[] = {2.0}, cc[] = {3.0}, dc[] = {1.0};
  double da, db;
  ewt_binary_bwd(PARITY_OP_DIV, PARITY_DTYPE_F32, 1, a, b, cc, dc, &da, &db);
  ASSERT_SAME(db, -1.5, "div db = -(dc/b)*c with the given c: %g", db);
}

/* ---- definitions ------------------------------------------------------------------------------- */

Test(elementwise_rules, gelu_is_the_erf_form_and_its_grad_is_phi_plus_x_phi) {
  enum { M = 61 };
  double x[M], y[M], dy[M], dx[M];
  for (int i = 0; i < M; i++) {
    x[i] = -6 + 0.2 * i;
    dy[i] = 1;
  }
  ewt_unary(PARITY_OP_GELU, PARITY_DTYPE_F64, M, x, y, 0);
  ewt_unary_bwd(PARITY_OP_GELU, PARITY_DTYPE_F64, M, x, y, dy, dx, 0);
  for (int i = 0; i < M; i++) {
    double v = x[i], phi = exp(-v * v / 2) / sqrt(2 * 3.14159265358979323846);
    double want = 0.5 * v * (1 + erf(v / sqrt(2.0))), dwant = 0.5 * (1 + erf(v / sqrt(2.0))) + v * phi;
    /* the erf form itself cancels for v < 0; compare with its own rounding error */
    double tol = 1e-14 * (fabs(want) + 0.5 * fabs(v));
    cr_assert(fabs(y[i] - want) <= tol, "gelu(%g) = %.17g, erf form %.17g", v, y[i], want);
    cr_assert(fabs(dx[i] - dwant) <= 1e-14 * (1 + fabs(v)), "gelu'(%g) = %.17g, want %.17g", v, dx[i], dwant);
  }
}

Test(elementwise_rules, leaky_relu_scales_the_negative_side_by_alpha_rounded_once) {
  const double x[] = {-3.0, -0.1, 7.0, -0.0};
  double y[4];
  for (int d = 0; d < NFLOATS; d++) {
    int32_t dt = floats[d];
    double xr[4];
    for (int i = 0; i < 4; i++) xr[i] = ewt_round(dt, x[i]);
    ewt_unary(PARITY_OP_LEAKY_RELU, dt, 4, xr, y, 0.1);
    for (int i = 0; i < 4; i++) {
      double want = xr[i] > 0 ? xr[i] : 0.1 * xr[i];
      if (dt == PARITY_DTYPE_F32 || dt == PARITY_DTYPE_F64) {
        ASSERT_SAME(y[i], ewt_round(dt, want), "%s leaky_relu(%g) = %a", psup_dtype_name(dt), xr[i], y[i]);
      } else {
        cr_assert(pt_ulp_diff(y[i], want, dt) <= 1, "%s leaky_relu(%g) = %a", psup_dtype_name(dt), xr[i], y[i]);
      }
    }
  }
}

Test(elementwise_rules, results_that_fit_do_not_overflow_in_intermediates) {
  const double big[] = {DBL_MAX, FLT_MAX, 65504.0, 0x1.fep127};
  for (int d = 0; d < NFLOATS; d++) {
    double x = big[d], y, dx, dy = 0.25;
    ewt_unary(PARITY_OP_GELU, floats[d], 1, &x, &y, 0);
    ASSERT_SAME(y, x, "%s gelu(%g) = %g", psup_dtype_name(floats[d]), x, y);
    ewt_unary_bwd(PARITY_OP_SQUARE, floats[d], 1, &x, &y, &dy, &dx, 0);
    cr_assert(isfinite(dx), "%s square'(%g) * 0.25 = %g", psup_dtype_name(floats[d]), x, dx);
    cr_assert_eq(dx, ewt_round(floats[d], 0.5 * x), "%s square'(%g) * 0.25", psup_dtype_name(floats[d]), x);
  }
}
