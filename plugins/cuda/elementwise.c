/* elementwise.c — unary, binary, compare, select and cast (plugins/kernels/elementwise.k.h). Operands of
 * one op share one shape (broadcasting arrives as zero strides) and, but for compare/select
 * conditions and casts, one dtype. Integer dtypes run forward only; bool runs compare, select
 * and cast. The host side of plugins/opencl/elementwise.c, on the shared layout. */
#include <string.h>

#include "cu_internal.h"

#define IN(i) (d->inputs[i])
#define OUT(i) (d->outputs[i])

/* The alpha argument (leaky_relu slope) in the class's SCALAR type (kernel_common.k.h): the f64 class
 * takes a double, the f32 class the same 8 bytes as a u64 (it has no f64; the kernel rounds the
 * slope times x once in integers). */
typedef union scalar_arg_t {
  double d;
  uint64_t u;
  int32_t i;
  int64_t l;
} scalar_arg_t;

static void *scalar_arg(int cls, double v, scalar_arg_t *s) {
  switch (cls) {
    case CU_CLASS_I: s->i = 0; return &s->i;
    case CU_CLASS_L: s->l = 0; return &s->l;
    case CU_CLASS_F: memcpy(&s->u, &v, sizeof v); return &s->u; /* the f64's bits */
    default: s->d = v; return &s->d;
  }
}

int32_t cu_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int64_t n = psup_numel(OUT(0));
  if (n == 0) return PARITY_STATUS_OK; /* nothing to launch */
  cu_iter_t it;
  int32_t op = d->op;
  CUdeviceptr y = cu_ptr_of(OUT(0));
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: {
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      cu_iter_from_tensors(&it, 2, t);
      int32_t dt = IN(0)->dtype;
      int cls = cu_class_of(dt);
      scalar_arg_t s;
      CUdeviceptr x = cu_ptr_of(IN(0));
      void *args[] = {&it, &op, &dt, scalar_arg(cls, d->params.unary.alpha, &s), &x, &y};
      return cu_run_items(dev, cls, CU_K_ew_unary, n, 6, args);
    }
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_COMPARE: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0)};
      cu_iter_from_tensors(&it, 3, t);
      int32_t dt = IN(0)->dtype;
      CUdeviceptr a = cu_ptr_of(IN(0)), b = cu_ptr_of(IN(1));
      void *args[] = {&it, &op, &dt, &a, &b, &y};
      int kid = psup_op_info(d->op)->kind == PARITY_OP_KIND_BINARY ? CU_K_ew_binary : CU_K_ew_compare;
      return cu_run_items(dev, cu_class_of(dt), kid, n, 6, args);
    }
    case PARITY_OP_KIND_SELECT: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      cu_iter_from_tensors(&it, 4, t);
      int32_t esize = (int32_t)psup_dtype_size(OUT(0)->dtype);
      CUdeviceptr c = cu_ptr_of(IN(0)), a = cu_ptr_of(IN(1)), b = cu_ptr_of(IN(2));
      void *args[] = {&it, &esize, &c, &a, &b, &y};
      return cu_run_items(dev, CU_CLASS_F, CU_K_ew_select, n, 6, args);
    }
    default: { /* cast */
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      cu_iter_from_tensors(&it, 2, t);
      int32_t sdt = IN(0)->dtype, ddt = OUT(0)->dtype;
      int cls = (sdt == PARITY_DTYPE_F64 || ddt == PARITY_DTYPE_F64) ? CU_CLASS_D : CU_CLASS_F;
      CUdeviceptr x = cu_ptr_of(IN(0));
      void *args[] = {&it, &sdt, &ddt, &x, &y};
      return cu_run_items(dev, cls, CU_K_ew_cast, n, 5, args);
    }
  }
}

int32_t cu_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *g = IN(d->num_inputs - 1); /* incoming gradient */
  int64_t n = psup_numel(g);
  int any_out = 0;
  for (uint32_t i = 0; i < d->num_outputs; i++) any_out |= OUT(i) != NULL;
  if (n == 0 || !any_out) return PARITY_STATUS_OK;
  cu_iter_t it;
  int32_t op = d->op, dt = g->dtype;
  int cls = cu_class_of(dt);
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: { /* in x, y, dy; out dx */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      cu_iter_from_tensors(&it, 4, t);
      scalar_arg_t s;
      CUdeviceptr x = cu_ptr_of(IN(0)), y = cu_ptr_of(IN(1)), dy = cu_ptr_of(IN(2)), dx = cu_ptr_of(OUT(0));
      void *args[] = {&it, &op, &dt, scalar_arg(cls, d->params.unary.alpha, &s), &x, &y, &dy, &dx};
      return cu_run_items(dev, cls, CU_K_ew_unary_bwd, n, 8, args);
    }
    case PARITY_OP_KIND_BINARY: { /* in a, b, c, dc; out da, db (either may be NULL: pointer 0) */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), IN(3), OUT(0), OUT(1)};
      cu_iter_from_tensors(&it, 6, t);
      CUdeviceptr a = cu_ptr_of(IN(0)), b = cu_ptr_of(IN(1)), c = cu_ptr_of(IN(2)), dc = cu_ptr_of(IN(3));
      CUdeviceptr da = cu_ptr_of(OUT(0)), db = cu_ptr_of(OUT(1));
      void *args[] = {&it, &op, &dt, &a, &b, &c, &dc, &da, &db};
      return cu_run_items(dev, cls, CU_K_ew_binary_bwd, n, 9, args);
    }
    default: { /* where: in cond, dc; out da, db */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0), OUT(1)};
      cu_iter_from_tensors(&it, 4, t);
      int32_t esize = (int32_t)psup_dtype_size(dt);
      CUdeviceptr c = cu_ptr_of(IN(0)), dc = cu_ptr_of(IN(1)), da = cu_ptr_of(OUT(0)), db = cu_ptr_of(OUT(1));
      void *args[] = {&it, &esize, &c, &dc, &da, &db};
      return cu_run_items(dev, CU_CLASS_F, CU_K_ew_select_bwd, n, 6, args);
    }
  }
}
