/* elementwise.c — unary, binary, compare, select and cast (plugins/kernels/elementwise.k.h). Operands of
 * one op share one shape (broadcasting arrives as zero strides) and, but for compare/select
 * conditions and casts, one dtype. Integer dtypes run forward only; bool runs compare, select
 * and cast. */
#include "cl_internal.h"

#define IN(i) (d->inputs[i])
#define OUT(i) (d->outputs[i])

/* The alpha argument (leaky_relu slope) in the class's SCALAR type: double where the device
 * has fp64, else (float class) the f64 value split exactly into three floats. */
typedef union scalar_arg_t {
  cl_float4 f;
  double d;
  cl_int i;
  cl_long l;
} scalar_arg_t;

static ocl_arg_t scalar_arg(const parity_plugin_device_t *dev, int cls, double v, scalar_arg_t *s) {
  switch (cls) {
    case OCL_CLASS_F:
      if (dev->slot->has_fp64) break;
      s->f.s[0] = (float)v;
      s->f.s[1] = (float)(v - (double)s->f.s[0]);
      s->f.s[2] = (float)(v - (double)s->f.s[0] - (double)s->f.s[1]);
      s->f.s[3] = 0;
      return (ocl_arg_t){sizeof s->f, &s->f, 0};
    case OCL_CLASS_D: break;
    case OCL_CLASS_I: s->i = 0; return (ocl_arg_t){sizeof s->i, &s->i, 0};
    default: s->l = 0; return (ocl_arg_t){sizeof s->l, &s->l, 0};
  }
  s->d = v;
  return (ocl_arg_t){sizeof s->d, &s->d, 0};
}

/* A cast that is a plain copy: same dtype (not bool, which the kernel stores canonically as 0/1,
 * nor f16/bf16, whose NaNs the kernel quiets), both operands dense with unit strides after the
 * iteration's axis merging. Such copies go through clEnqueueCopyBuffer: bit for bit what the
 * kernel writes, with no program to build (the core copies gradients this way). */
static int copy_is_plain(cl_int sdt, cl_int ddt, const ocl_iter_t *it) {
  if (sdt != ddt || !(sdt == PARITY_DTYPE_F32 || sdt == PARITY_DTYPE_F64 || sdt == PARITY_DTYPE_I32 ||
                      sdt == PARITY_DTYPE_I64))
    return 0;
  return it->rank == 1 && (it->shape[0] == 1 || (it->strides[0][0] == 1 && it->strides[1][0] == 1));
}

int32_t ocl_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int64_t n = psup_numel(OUT(0));
  if (n == 0) return PARITY_STATUS_OK; /* nothing to launch */
  ocl_iter_t it;
  cl_int op = d->op;
  cl_mem y = ocl_mem_of(OUT(0));
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: {
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      ocl_iter_from_tensors(&it, 2, t);
      cl_int dt = IN(0)->dtype;
      int cls = ocl_class_of(dt);
      scalar_arg_t s;
      cl_mem x = ocl_mem_of(IN(0));
      it.op = op, it.dt = dt;
      ocl_arg_t args[] = {scalar_arg(dev, cls, d->params.unary.alpha, &s), OCL_ARG(x), OCL_ARG(y)};
      return ocl_run_iter(dev, OCL_VAR(cls, op, dt, 0), OCL_K_ew_unary, &it, n, 3, args);
    }
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_COMPARE: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0)};
      ocl_iter_from_tensors(&it, 3, t);
      cl_int dt = IN(0)->dtype;
      cl_mem a = ocl_mem_of(IN(0)), b = ocl_mem_of(IN(1));
      it.op = op, it.dt = dt;
      ocl_arg_t args[] = {OCL_ARG(a), OCL_ARG(b), OCL_ARG(y)};
      int kid = psup_op_info(d->op)->kind == PARITY_OP_KIND_BINARY ? OCL_K_ew_binary : OCL_K_ew_compare;
      return ocl_run_iter(dev, OCL_VAR(ocl_class_of(dt), op, dt, 0), kid, &it, n, 3, args);
    }
    case PARITY_OP_KIND_SELECT: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      ocl_iter_from_tensors(&it, 4, t);
      cl_int esize = (cl_int)psup_dtype_size(OUT(0)->dtype);
      cl_mem c = ocl_mem_of(IN(0)), a = ocl_mem_of(IN(1)), b = ocl_mem_of(IN(2));
      it.op = esize;
      ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(a), OCL_ARG(b), OCL_ARG(y)};
      return ocl_run_iter(dev, OCL_CLASS_F, OCL_K_ew_select, &it, n, 4, args);
    }
    default: { /* cast */
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      ocl_iter_from_tensors(&it, 2, t);
      cl_int sdt = IN(0)->dtype, ddt = OUT(0)->dtype;
      int cls = (sdt == PARITY_DTYPE_F64 || ddt == PARITY_DTYPE_F64) ? OCL_CLASS_D : OCL_CLASS_F;
      cl_mem x = ocl_mem_of(IN(0));
      if (copy_is_plain(sdt, ddt, &it)) { /* a dense same-dtype copy (the core's copies): no kernel */
        size_t es = (size_t)psup_dtype_size(sdt), so = (size_t)it.base[0] * es, dof = (size_t)it.base[1] * es;
        size_t bytes = (size_t)n * es;
        if (x != y || so + bytes <= dof || dof + bytes <= so) {
          OCL_CHECK(clEnqueueCopyBuffer(dev->queue, x, y, so, dof, bytes, 0, NULL, NULL), "clEnqueueCopyBuffer",
                    "cast (same dtype, dense)");
          return PARITY_STATUS_OK;
        }
      }
      it.dt = sdt, it.dt2 = ddt;
      ocl_arg_t args[] = {OCL_ARG(x), OCL_ARG(y)};
      return ocl_run_iter(dev, OCL_VAR(cls, 0, sdt, ddt), OCL_K_ew_cast, &it, n, 2, args);
    }
  }
}

int32_t ocl_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *g = IN(d->num_inputs - 1); /* incoming gradient */
  int64_t n = psup_numel(g);
  int any_out = 0;
  for (uint32_t i = 0; i < d->num_outputs; i++) any_out |= OUT(i) != NULL;
  if (n == 0 || !any_out) return PARITY_STATUS_OK;
  ocl_iter_t it;
  cl_int op = d->op, dt = g->dtype;
  int cls = ocl_class_of(dt);
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: { /* in x, y, dy; out dx */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      ocl_iter_from_tensors(&it, 4, t);
      scalar_arg_t s;
      cl_mem x = ocl_mem_of(IN(0)), y = ocl_mem_of(IN(1)), dy = ocl_mem_of(IN(2)), dx = ocl_mem_of(OUT(0));
      it.op = op, it.dt = dt;
      ocl_arg_t args[] = {scalar_arg(dev, cls, d->params.unary.alpha, &s), OCL_ARG(x), OCL_ARG(y), OCL_ARG(dy),
                          OCL_ARG(dx)};
      return ocl_run_iter(dev, OCL_VAR(cls, op, dt, 0), OCL_K_ew_unary_bwd, &it, n, 5, args);
    }
    case PARITY_OP_KIND_BINARY: { /* in a, b, c, dc; out da, db */
      if (d->op == PARITY_OP_ADD) { /* da = db = dc: dense ones are buffer copies, no kernel */
        const parity_tensor_desc_t *t[] = {IN(3), OUT(0), OUT(1)};
        ocl_iter_from_tensors(&it, 3, t);
        int dense = (dt == PARITY_DTYPE_F32 || dt == PARITY_DTYPE_F64) && it.rank == 1;
        for (int k = 0; dense && k < 3; k++) dense = !t[k] || it.shape[0] == 1 || it.strides[k][0] == 1;
        size_t es = (size_t)psup_dtype_size(dt), bytes = (size_t)n * es, so = (size_t)it.base[0] * es;
        cl_mem dc = ocl_mem_of(IN(3));
        for (int k = 1; dense && k < 3; k++) { /* an output overlapping dc takes the kernel */
          cl_mem m = ocl_mem_of(t[k]);
          size_t o = (size_t)it.base[k] * es;
          if (m && m == dc && o < so + bytes && so < o + bytes) dense = 0;
        }
        for (int k = 1; dense && k < 3; k++) {
          if (!t[k]) continue;
          OCL_CHECK(clEnqueueCopyBuffer(dev->queue, dc, ocl_mem_of(t[k]), so, (size_t)it.base[k] * es, bytes, 0, NULL,
                                        NULL),
                    "clEnqueueCopyBuffer", "add backward (dense)");
        }
        if (dense) return PARITY_STATUS_OK;
      }
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), IN(3), OUT(0), OUT(1)};
      ocl_iter_from_tensors(&it, 6, t);
      cl_mem a = ocl_mem_of(IN(0)), b = ocl_mem_of(IN(1)), c = ocl_mem_of(IN(2)), dc = ocl_mem_of(IN(3));
      cl_mem da = ocl_mem_of(OUT(0)), db = ocl_mem_of(OUT(1));
      it.op = op, it.dt = dt;
      ocl_arg_t args[] = {OCL_ARG(a), OCL_ARG(b), OCL_ARG(c), OCL_ARG(dc), OCL_ARG(da), OCL_ARG(db)};
      return ocl_run_iter(dev, OCL_VAR(cls, op, dt, 0), OCL_K_ew_binary_bwd, &it, n, 6, args);
    }
    default: { /* where: in cond, dc; out da, db */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0), OUT(1)};
      ocl_iter_from_tensors(&it, 4, t);
      cl_int esize = (cl_int)psup_dtype_size(dt);
      cl_mem c = ocl_mem_of(IN(0)), dc = ocl_mem_of(IN(1)), da = ocl_mem_of(OUT(0)), db = ocl_mem_of(OUT(1));
      it.op = esize;
      ocl_arg_t args[] = {OCL_ARG(c), OCL_ARG(dc), OCL_ARG(da), OCL_ARG(db)};
      return ocl_run_iter(dev, OCL_CLASS_F, OCL_K_ew_select_bwd, &it, n, 4, args);
    }
  }
}
