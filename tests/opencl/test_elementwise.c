/* The OpenCL plugin's elementwise family against the CPU plugin in float64: every unary,
 * binary, compare, where and cast op, forward and backward, in every dtype it takes, over
 * strided, offset and broadcast operands with special values (NaN, +-inf, +-0, subnormals). */
#include "ocl_test.h"

static const int32_t float_dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
static const int32_t all_dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16,
                                     PARITY_DTYPE_I32, PARITY_DTYPE_I64, PARITY_DTYPE_BOOL};
static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -3e-39, 65504, 70000, 1e-8, -2.5, 0.5};
#define NSPECIAL ((int)(sizeof specials / sizeof specials[0]))

static int op_takes(int32_t op, int32_t dt) {
  const psup_op_info_t *info = psup_op_info(op);
  if (dt == PARITY_DTYPE_BOOL) return 0;
  return psup_dtype_is_float(dt) || !(info->flags & PARITY_OPF_FLOAT);
}

static void range_for(int32_t op, int32_t dt, double *lo, double *hi) {
  *lo = -4, *hi = 4;
  if (op == PARITY_OP_LOG || op == PARITY_OP_SQRT || op == PARITY_OP_RSQRT || op == PARITY_OP_POW) *lo = 0.05;
  if (dt == PARITY_DTYPE_I32) *lo = -3e9, *hi = 3e9; /* wraps in mul and square */
  if (dt == PARITY_DTYPE_I64) *lo = -1e19, *hi = 1e19;
}

/* x [5,37] read through a transposed, offset view; y contiguous */
static ot_case unary_case(int32_t op, int32_t dt, int32_t dir) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  c.params.unary.alpha = 0.01;
  int64_t shape[2] = {5, 37}, tstrides[2] = {1, 5};
  ot_view xt = ot_strided(dt, 2, shape, tstrides, 3), y = ot_contig(dt, 2, shape);
  range_for(op, dt, &c.lo, &c.hi);
  c.specials = specials;
  c.nspecials = NSPECIAL;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 1, c.nout = 1;
    c.in[0] = xt, c.out[0] = y;
  } else {
    c.nin = 3, c.nout = 1;
    c.in[0] = xt, c.in[1] = y, c.in[2] = y, c.out[0] = ot_strided(dt, 2, shape, tstrides, 0);
  }
  return c;
}

Test(ocl_elementwise, unary_forward_matches_the_f64_oracle_in_every_dtype) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (const psup_op_info_t *o = psup_ops; o < psup_ops + psup_op_count(); o++) {
    if (o->kind != PARITY_OP_KIND_UNARY) continue;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof *all_dtypes; k++) {
      int32_t dt = all_dtypes[k];
      if (!op_takes(o->op, dt)) continue;
      ot_case c = unary_case(o->op, dt, PARITY_DIRECTION_FORWARD);
      ot_result r = ot_check(ocl, cpu, &c);
      if (r.max_ulp > 0) cr_log_info("%s %s: max %.2f ulp", o->name, psup_dtype_name(dt), r.max_ulp);
    }
  }
}

Test(ocl_elementwise, unary_backward_matches_the_f64_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (const psup_op_info_t *o = psup_ops; o < psup_ops + psup_op_count(); o++) {
    if (o->kind != PARITY_OP_KIND_UNARY) continue;
    for (size_t k = 0; k < 4; k++) {
      ot_case c = unary_case(o->op, float_dtypes[k], PARITY_DIRECTION_BACKWARD);
      c.nspecials = 0; /* finite inputs: kinks and NaN are in unary_backward_edge_values */
      ot_check(ocl, cpu, &c);
    }
  }
}

Test(ocl_elementwise, unary_backward_edge_values_follow_the_cpu_plugin) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  /* relu'(0) = 0, abs'(0) = 0, leaky_relu'(0) = alpha, NaN x gives NaN for those three */
  static const double x[] = {0.0, -0.0, NAN, 2.0, -2.0, 0.0};
  static const double ones[] = {1, 1, 1, 1, 1, 1};
  static const int32_t ops[] = {PARITY_OP_RELU, PARITY_OP_ABS, PARITY_OP_LEAKY_RELU, PARITY_OP_SIGN};
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 4; k++) {
      int64_t shape[1] = {6};
      ot_case c;
      memset(&c, 0, sizeof c);
      c.name = psup_op_name(ops[i]);
      c.op = ops[i];
      c.direction = PARITY_DIRECTION_BACKWARD;
      c.params.unary.alpha = 0.1;
      c.nin = 3, c.nout = 1;
      c.in[0] = c.in[1] = c.in[2] = c.out[0] = ot_contig(float_dtypes[k], 1, shape);
      c.values[0] = x, c.values[1] = x, c.values[2] = ones;
      ot_check(ocl, cpu, &c);
    }
}

/* a [4,3,33] strided with an offset, b broadcast along axes 0 and 1 (zero strides) */
static ot_case binary_case(int32_t op, int32_t dt, int32_t dir) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  int64_t shape[3] = {4, 3, 33}, astr[3] = {200, 66, 2}, bstr[3] = {0, 0, 1};
  ot_view a = ot_strided(dt, 3, shape, astr, 5), b = ot_strided(dt, 3, shape, bstr, 0), c0 = ot_contig(dt, 3, shape);
  range_for(op, dt, &c.lo, &c.hi);
  if (op == PARITY_OP_DIV && !psup_dtype_is_float(dt)) c.lo = 1;
  c.specials = specials;
  c.nspecials = dir == PARITY_DIRECTION_FORWARD ? NSPECIAL : 0;
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 2, c.nout = 1;
    c.in[0] = a, c.in[1] = b, c.out[0] = c0;
  } else {
    c.nin = 4, c.nout = 2;
    c.in[0] = a, c.in[1] = b, c.in[2] = c0, c.in[3] = c0;
    c.out[0] = c0, c.out[1] = ot_strided(dt, 3, shape, astr, 1);
  }
  return c;
}

Test(ocl_elementwise, binary_forward_with_broadcast_and_strides_matches_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (const psup_op_info_t *o = psup_ops; o < psup_ops + psup_op_count(); o++) {
    if (o->kind != PARITY_OP_KIND_BINARY) continue;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof *all_dtypes; k++) {
      if (!op_takes(o->op, all_dtypes[k])) continue;
      ot_case c = binary_case(o->op, all_dtypes[k], PARITY_DIRECTION_FORWARD);
      ot_result r = ot_check(ocl, cpu, &c);
      if (r.max_ulp > 0) cr_log_info("%s %s: max %.2f ulp", o->name, psup_dtype_name(all_dtypes[k]), r.max_ulp);
    }
  }
}

Test(ocl_elementwise, binary_backward_matches_the_oracle_and_skips_null_outputs) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (const psup_op_info_t *o = psup_ops; o < psup_ops + psup_op_count(); o++) {
    if (o->kind != PARITY_OP_KIND_BINARY) continue;
    for (size_t k = 0; k < 4; k++) {
      ot_case c = binary_case(o->op, float_dtypes[k], PARITY_DIRECTION_BACKWARD);
      ot_check(ocl, cpu, &c);
      c.out[0].dtype = PARITY_DTYPE_INVALID; /* da not needed */
      ot_check(ocl, cpu, &c);
    }
  }
}

Test(ocl_elementwise, maximum_minimum_ties_nan_and_signed_zero_are_exact) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const double a[] = {1, 2, NAN, 3, NAN, -0.0, 0.0, 5};
  static const double b[] = {1, 3, 4, NAN, NAN, 0.0, -0.0, -5};
  static const double g[] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t shape[1] = {8};
  for (int op = PARITY_OP_MAXIMUM; op <= PARITY_OP_MINIMUM; op++)
    for (int dir = 0; dir < 2; dir++)
      for (size_t k = 0; k < 4; k++) {
        ot_case c;
        memset(&c, 0, sizeof c);
        c.name = dir ? "maximum/minimum backward" : "maximum/minimum forward";
        c.op = op;
        c.direction = dir;
        ot_view v = ot_contig(float_dtypes[k], 1, shape);
        c.nin = dir ? 4 : 2, c.nout = dir ? 2 : 1;
        c.in[0] = c.in[1] = c.in[2] = c.in[3] = c.out[0] = c.out[1] = v;
        c.values[0] = a, c.values[1] = b, c.values[2] = a, c.values[3] = g;
        ot_check(ocl, cpu, &c);
      }
}

Test(ocl_elementwise, comparisons_are_exact_in_every_dtype) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  for (int32_t op = PARITY_OP_EQ; op <= PARITY_OP_GE; op++)
    for (size_t k = 0; k < sizeof all_dtypes / sizeof *all_dtypes; k++) {
      int32_t dt = all_dtypes[k];
      ot_case c = binary_case(op, dt, PARITY_DIRECTION_FORWARD);
      c.lo = -3, c.hi = 3; /* many ties */
      c.out[0].dtype = PARITY_DTYPE_BOOL;
      ot_check(ocl, cpu, &c);
    }
}

Test(ocl_elementwise, where_copies_bits_and_routes_gradients) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[2] = {7, 29}, cstr[2] = {1, 0}, astr[2] = {29, 1}, tstr[2] = {1, 7};
  for (size_t k = 0; k < sizeof all_dtypes / sizeof *all_dtypes; k++) {
    int32_t dt = all_dtypes[k];
    ot_case c;
    memset(&c, 0, sizeof c);
    c.name = "where forward";
    c.op = PARITY_OP_WHERE;
    c.lo = -9, c.hi = 9;
    c.specials = specials;
    c.nspecials = NSPECIAL;
    c.nin = 3, c.nout = 1;
    c.in[0] = ot_strided(PARITY_DTYPE_BOOL, 2, shape, cstr, 0);
    c.in[1] = ot_strided(dt, 2, shape, astr, 2);
    c.in[2] = ot_strided(dt, 2, shape, tstr, 0);
    c.out[0] = ot_contig(dt, 2, shape);
    ot_check(ocl, cpu, &c);
    if (!psup_dtype_is_float(dt)) continue;
    c.name = "where backward";
    c.direction = PARITY_DIRECTION_BACKWARD;
    c.nin = 2, c.nout = 2;
    c.in[1] = ot_contig(dt, 2, shape);
    c.out[0] = ot_strided(dt, 2, shape, tstr, 0);
    c.out[1] = ot_contig(dt, 2, shape);
    ot_check(ocl, cpu, &c);
  }
}

Test(ocl_elementwise, where_reads_any_nonzero_condition_byte_as_true) {
  parity_device_t *ocl = ot_device();
  int64_t shape[1] = {4};
  static const double av[] = {1, 2, 3, 4}, bv[] = {-1, -2, -3, -4};
  pt_tensor cond = pt_tensor_new(ocl, PARITY_DTYPE_BOOL, 1, shape, NULL);
  unsigned char bytes[4] = {0, 2, 255, 0x80};
  cr_assert_eq(parity_buffer_write(cond.buf, 0, bytes, 4), PARITY_STATUS_OK);
  pt_tensor a = pt_tensor_new(ocl, PARITY_DTYPE_F32, 1, shape, av),
            b = pt_tensor_new(ocl, PARITY_DTYPE_F32, 1, shape, bv);
  pt_tensor c = pt_tensor_new(ocl, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&cond, &a, &b}, *out[] = {&c};
  cr_assert_eq(pt_run(ocl, PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, in, 3, out, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  double got[4];
  pt_tensor_read(&c, got);
  cr_assert(got[0] == -1 && got[1] == 2 && got[2] == 3 && got[3] == 4, "%g %g %g %g", got[0], got[1], got[2], got[3]);
  /* a bool result is stored as 0/1 even when the selected byte is another non-zero value */
  pt_tensor ba = pt_tensor_new(ocl, PARITY_DTYPE_BOOL, 1, shape, NULL),
            bc = pt_tensor_new(ocl, PARITY_DTYPE_BOOL, 1, shape, NULL);
  cr_assert_eq(parity_buffer_write(ba.buf, 0, bytes, 4), PARITY_STATUS_OK);
  const pt_tensor *bin[] = {&cond, &ba, &ba}, *bout[] = {&bc};
  cr_assert_eq(pt_run(ocl, PARITY_OP_WHERE, PARITY_DIRECTION_FORWARD, bin, 3, bout, 1, NULL), PARITY_STATUS_OK);
  unsigned char raw[4];
  cr_assert_eq(parity_buffer_read(bc.buf, 0, raw, 4), PARITY_STATUS_OK);
  cr_assert(raw[0] == 0 && raw[1] == 1 && raw[2] == 1 && raw[3] == 1, "%d %d %d %d", raw[0], raw[1], raw[2], raw[3]);
}

Test(ocl_elementwise, casts_between_every_pair_of_dtypes_are_exact) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  static const double vals[] = {NAN,       INFINITY, -INFINITY, -0.0,  0.5,      -1.5,  2.5,      1e-40,
                                3e9,       -3e9,     4e19,      -4e19, 65519.99, 65520, 16809985, 9007199254740993.0,
                                1.0000001, 255,      256,       -7,    1,        0};
  int64_t shape[1] = {(int64_t)(sizeof vals / sizeof *vals)};
  for (size_t s = 0; s < 7; s++)
    for (size_t d = 0; d < 7; d++) {
      ot_case c;
      memset(&c, 0, sizeof c);
      c.name = "cast";
      c.op = PARITY_OP_CAST;
      c.nin = 1, c.nout = 1;
      c.in[0] = ot_contig(all_dtypes[s], 1, shape);
      c.out[0] = ot_contig(all_dtypes[d], 1, shape);
      c.values[0] = vals;
      c.oracle_same_dtype = 1;
      ot_check(ocl, cpu, &c);
    }
}

Test(ocl_elementwise, integer_arithmetic_wraps) {
  parity_device_t *ocl = ot_device();
  int64_t shape[1] = {3};
  static const double a[] = {2147483647.0, -2147483648.0, 65536}, b[] = {1, -1, 65536};
  pt_tensor ta = pt_tensor_new(ocl, PARITY_DTYPE_I32, 1, shape, a),
            tb = pt_tensor_new(ocl, PARITY_DTYPE_I32, 1, shape, b);
  pt_tensor tc = pt_tensor_new(ocl, PARITY_DTYPE_I32, 1, shape, NULL);
  const pt_tensor *in[] = {&ta, &tb}, *out[] = {&tc};
  double got[3];
  cr_assert_eq(pt_run(ocl, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_read(&tc, got);
  cr_assert(got[0] == -2147483648.0 && got[1] == 2147483647.0 && got[2] == 131072, "%g %g %g", got[0], got[1], got[2]);
  cr_assert_eq(pt_run(ocl, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_read(&tc, got);
  cr_assert(got[0] == 2147483647.0 && got[1] == -2147483648.0 && got[2] == 0, "%g %g %g", got[0], got[1], got[2]);
  const pt_tensor *in1[] = {&ta};
  cr_assert_eq(pt_run(ocl, PARITY_OP_NEG, PARITY_DIRECTION_FORWARD, in1, 1, out, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_read(&tc, got);
  cr_assert(got[0] == -2147483647.0 && got[1] == -2147483648.0, "%g %g", got[0], got[1]);
}
