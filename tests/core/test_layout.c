/* The shared layout rules (parity_support/layout.h) that decide what a GPU plugin launches:
 * psup_cast_is_copy and psup_add_grad_is_copy, which turn a cast and add's backward into a driver's
 * buffer copies (OpenCL, Vulkan, CUDA). A copy where
 * the kernel would write other bits (bool, f16, bf16), read other elements (a view, a broadcast,
 * a transposed output) or read what it has already overwritten (overlapping ranges) is a wrong
 * result, so each refusal is checked here beside the cases it accepts. */
#include <criterion/criterion.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "parity_support/layout.h"

static int buf_a, buf_b; /* stand-ins for two buffers: only their addresses are compared */

static parity_tensor_desc_t vec(int32_t dtype, int64_t n, uint64_t offset_bytes, void *buffer) {
  parity_tensor_desc_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = 1;
  t.shape[0] = n;
  t.strides[0] = 1;
  t.offset_bytes = offset_bytes;
  t.buffer = buffer;
  return t;
}

Test(layout, a_dense_same_dtype_cast_is_a_copy_of_its_bytes) {
  parity_tensor_desc_t x = vec(PARITY_DTYPE_F32, 33, 8, &buf_a), y = vec(PARITY_DTYPE_F32, 33, 4, &buf_b);
  uint64_t so = 0, dof = 0, bytes = 0;
  cr_assert_eq(psup_cast_is_copy(&x, &y, &so, &dof, &bytes), 1);
  cr_assert_eq(so, 8);
  cr_assert_eq(dof, 4);
  cr_assert_eq(bytes, 33 * 4);
  /* a [3, 4] tensor merges to one axis; f64, i32 and i64 copy too */
  int32_t dts[] = {PARITY_DTYPE_F64, PARITY_DTYPE_I32, PARITY_DTYPE_I64};
  for (int i = 0; i < 3; i++) {
    parity_tensor_desc_t a = vec(dts[i], 3, 0, &buf_a), b = vec(dts[i], 3, 0, &buf_b);
    a.rank = b.rank = 2;
    a.shape[1] = b.shape[1] = 4;
    a.strides[0] = b.strides[0] = 4;
    a.strides[1] = b.strides[1] = 1;
    cr_assert_eq(psup_cast_is_copy(&a, &b, &so, &dof, &bytes), 1, "dtype %d", dts[i]);
    cr_assert_eq(bytes, 12 * (uint64_t)psup_dtype_size(dts[i]));
  }
  /* one buffer, ranges apart */
  y = vec(PARITY_DTYPE_F32, 33, 33 * 4 + 8, &buf_a);
  cr_assert_eq(psup_cast_is_copy(&x, &y, &so, &dof, &bytes), 1);
}

Test(layout, a_cast_that_is_not_a_plain_copy_takes_the_kernel) {
  uint64_t so, dof, bytes;
  parity_tensor_desc_t x = vec(PARITY_DTYPE_F32, 33, 0, &buf_a), y = vec(PARITY_DTYPE_F32, 33, 0, &buf_b);
  /* another dtype, or one whose kernel stores other bits */
  int32_t other[] = {PARITY_DTYPE_F16, PARITY_DTYPE_BF16, PARITY_DTYPE_BOOL};
  for (int i = 0; i < 3; i++) {
    parity_tensor_desc_t a = vec(other[i], 33, 0, &buf_a), b = vec(other[i], 33, 0, &buf_b);
    cr_assert_eq(psup_cast_is_copy(&a, &b, &so, &dof, &bytes), 0, "dtype %d", other[i]);
  }
  parity_tensor_desc_t d = vec(PARITY_DTYPE_F64, 33, 0, &buf_b);
  cr_assert_eq(psup_cast_is_copy(&x, &d, &so, &dof, &bytes), 0, "f32 -> f64");
  /* a strided view, a broadcast input, a transposed output */
  parity_tensor_desc_t v = x;
  v.strides[0] = 2;
  cr_assert_eq(psup_cast_is_copy(&v, &y, &so, &dof, &bytes), 0, "a view with stride 2");
  v.strides[0] = 0;
  cr_assert_eq(psup_cast_is_copy(&v, &y, &so, &dof, &bytes), 0, "a broadcast input");
  parity_tensor_desc_t a = vec(PARITY_DTYPE_F32, 3, 0, &buf_a), b = vec(PARITY_DTYPE_F32, 3, 0, &buf_b);
  a.rank = b.rank = 2;
  a.shape[1] = b.shape[1] = 4;
  a.strides[0] = 4;
  a.strides[1] = 1;
  b.strides[0] = 1;
  b.strides[1] = 3;
  cr_assert_eq(psup_cast_is_copy(&a, &b, &so, &dof, &bytes), 0, "a transposed output");
  /* an offset that is no whole element */
  parity_tensor_desc_t m = vec(PARITY_DTYPE_F32, 33, 2, &buf_a);
  cr_assert_eq(psup_cast_is_copy(&m, &y, &so, &dof, &bytes), 0, "a misaligned input");
  /* overlapping ranges of one buffer, in place included */
  parity_tensor_desc_t o = vec(PARITY_DTYPE_F32, 33, 4, &buf_a);
  cr_assert_eq(psup_cast_is_copy(&x, &o, &so, &dof, &bytes), 0, "overlapping, the output one element on");
  cr_assert_eq(psup_cast_is_copy(&o, &x, &so, &dof, &bytes), 0, "overlapping, the output one element back");
  cr_assert_eq(psup_cast_is_copy(&x, &x, &so, &dof, &bytes), 0, "in place");
}

/* add's backward: in a, b, c, dc; out da, db (either may be NULL) */
static parity_op_desc_t add_backward(const parity_tensor_desc_t *dc, const parity_tensor_desc_t *da,
                                     const parity_tensor_desc_t *db) {
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.op = PARITY_OP_ADD;
  d.direction = PARITY_DIRECTION_BACKWARD;
  d.num_inputs = 4;
  d.num_outputs = 2;
  d.inputs[0] = d.inputs[1] = d.inputs[2] = d.inputs[3] = dc;
  d.outputs[0] = da;
  d.outputs[1] = db;
  return d;
}

Test(layout, add_gradients_that_are_dc_itself_are_copies) {
  parity_tensor_desc_t dc = vec(PARITY_DTYPE_F64, 17, 16, &buf_a), da = vec(PARITY_DTYPE_F64, 17, 8, &buf_b),
                       db = vec(PARITY_DTYPE_F64, 17, 17 * 8 + 16, &buf_a);
  uint64_t so = 1, dof[2] = {1, 1}, bytes = 0;
  parity_op_desc_t d = add_backward(&dc, &da, &db);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 1);
  cr_assert(so == 16 && dof[0] == 8 && dof[1] == 17 * 8 + 16 && bytes == 17 * 8);
  d = add_backward(&dc, NULL, &db); /* da not wanted */
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 1);
  cr_assert_eq(dof[0], 0);
}

Test(layout, add_gradients_that_are_not_plain_copies_take_the_kernel) {
  uint64_t so, dof[2], bytes;
  parity_tensor_desc_t dc = vec(PARITY_DTYPE_F32, 17, 0, &buf_a), da = vec(PARITY_DTYPE_F32, 17, 0, &buf_b);
  parity_op_desc_t d = add_backward(&dc, &da, NULL);
  d.op = PARITY_OP_SUB; /* db = -dc */
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "sub");
  d = add_backward(&dc, NULL, NULL);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "no output");
  parity_tensor_desc_t h = vec(PARITY_DTYPE_F16, 17, 0, &buf_a), hb = vec(PARITY_DTYPE_F16, 17, 0, &buf_b);
  d = add_backward(&h, &hb, NULL);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "f16");
  parity_tensor_desc_t r = da; /* a broadcast operand's gradient is a sum over its axis */
  r.strides[0] = 0;
  d = add_backward(&dc, &r, NULL);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "a reduced gradient");
  parity_tensor_desc_t o = vec(PARITY_DTYPE_F32, 17, 4, &buf_a);
  d = add_backward(&dc, &da, &o);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "db overlapping dc");
  parity_tensor_desc_t m = vec(PARITY_DTYPE_F32, 17, 2, &buf_b);
  d = add_backward(&dc, &m, NULL);
  cr_assert_eq(psup_add_grad_is_copy(&d, &so, dof, &bytes), 0, "a misaligned output");
}
