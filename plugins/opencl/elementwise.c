/* elementwise.c — unary, binary, compare, select and cast (plugins/kernels/elementwise.k.h). Which
 * kernel runs over which operands: kp_ew_plan (kp_host.h). The OpenCL iteration carries the item
 * count, op and dtypes; dense copies (same-dtype casts, add's gradient) go through
 * clEnqueueCopyBuffer instead of a kernel. */
#include "cl_internal.h"
#include "parity_support/layout.h"
#include "kp_host.h"

_Static_assert((int)OCL_CLASS_F == KP_CLASS_F && (int)OCL_CLASS_D == KP_CLASS_D && (int)OCL_CLASS_I == KP_CLASS_I &&
                   (int)OCL_CLASS_L == KP_CLASS_L,
               "cl_internal.h: the compute classes are kp_host.h's");

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

/* A cast that is a plain copy (psup_cast_is_copy: same dtype, dense, not overlapping) goes through
 * clEnqueueCopyBuffer: bit for bit what the kernel writes, with no program to build. Sets *done. */
static int32_t copy_cast(parity_plugin_device_t *dev, const kp_ew_t *e, int *done) {
  uint64_t so, dof, bytes;
  *done = psup_cast_is_copy(e->t[0], e->t[1], &so, &dof, &bytes);
  if (!*done) return PARITY_STATUS_OK;
  return ocl_copy(dev, ocl_mem_of(e->t[0]), (size_t)so, ocl_mem_of(e->t[1]), (size_t)dof, (size_t)bytes,
                  "cast (same dtype, dense)");
}

/* add backward: da = db = dc; dense f32/f64 ones (psup_add_grad_is_copy) are buffer copies, no
 * kernel. Sets *done. */
static int32_t copy_add_grad(parity_plugin_device_t *dev, const parity_op_desc_t *d, int *done) {
  uint64_t so, dof[2], bytes;
  *done = psup_add_grad_is_copy(d, &so, dof, &bytes);
  for (int k = 0; *done && k < 2; k++) {
    if (k >= (int)d->num_outputs || !d->outputs[k]) continue;
    int32_t st = ocl_copy(dev, ocl_mem_of(d->inputs[3]), (size_t)so, ocl_mem_of(d->outputs[k]), (size_t)dof[k],
                          (size_t)bytes, "add backward (dense)");
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_ew_t e;
  if (!kp_ew_plan(&e, d, backward)) return PARITY_STATUS_OK; /* nothing to launch */
  int done = 0;
  int32_t st = PARITY_STATUS_OK;
  if (e.kid == OCL_K_ew_binary_bwd && d->op == PARITY_OP_ADD) st = copy_add_grad(dev, d, &done);
  if (st != PARITY_STATUS_OK || done) return st;
  if (e.kid == OCL_K_ew_cast) st = copy_cast(dev, &e, &done);
  if (st != PARITY_STATUS_OK || done) return st;
  kp_iter_cl_t it;
  kp_iter_cl_from_tensors(&it, e.nops, e.t);
  it.op = e.op, it.dt = e.dt, it.dt2 = e.dt2;
  /* the variant fixes op and dtypes; select's fixes nothing (its kernel copies bytes) */
  int select = e.kid == OCL_K_ew_select || e.kid == OCL_K_ew_select_bwd;
  ocl_var_t var = select ? (ocl_var_t)OCL_CLASS_F : OCL_VAR(e.cls, e.op, e.dt, e.dt2);
  scalar_arg_t s;
  cl_mem mem[KP_MAX_OPS];
  ocl_arg_t args[1 + KP_MAX_OPS];
  uint32_t nargs = 0;
  if (e.alpha) args[nargs++] = scalar_arg(dev, e.cls, d->params.unary.alpha, &s);
  for (uint32_t k = 0; k < e.nops; k++) {
    mem[k] = ocl_mem_of(e.t[k]);
    args[nargs++] = OCL_ARG(mem[k]);
  }
  return ocl_run_iter(dev, var, e.kid, &it, e.n, nargs, args);
}

int32_t ocl_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t ocl_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }
