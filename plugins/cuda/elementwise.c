/* elementwise.c — unary, binary, compare, select and cast (plugins/kernels/elementwise.k.h). Which
 * kernel runs over which operands: kp_ew_plan (kp_host.h). The CUDA kernels take the item count,
 * op and dtypes as arguments after the iteration (dialect.h's ITER_PARAMS*); a dense same-dtype
 * cast and add's dense backward are device-to-device copies. */
#include <string.h>

#include "cu_internal.h"
#include "kp_host.h"
#include "parity_support/layout.h"

_Static_assert((int)CU_CLASS_F == KP_CLASS_F && (int)CU_CLASS_D == KP_CLASS_D && (int)CU_CLASS_I == KP_CLASS_I &&
                   (int)CU_CLASS_L == KP_CLASS_L,
               "cu_internal.h: the compute classes are kp_host.h's");

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

/* The kernel's arguments: the iteration, the ints, alpha where it takes one, the pointers. */
static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, int backward) {
  kp_ew_t e;
  if (!kp_ew_plan(&e, d, backward)) return PARITY_STATUS_OK; /* nothing to launch */
  uint64_t so, dof, bytes; /* a cast that is a plain copy (parity_support/layout.h): cuMemcpyDtoDAsync */
  if (e.kid == KP_K_ew_cast && psup_cast_is_copy(e.t[0], e.t[1], &so, &dof, &bytes))
    return cu_buffer_copy(dev, e.t[0]->buffer, so, e.t[1]->buffer, dof, bytes);
  uint64_t dofs[2]; /* add's da = db = dc, dense (psup_add_grad_is_copy): copies too */
  if (e.kid == KP_K_ew_binary_bwd && psup_add_grad_is_copy(d, &so, dofs, &bytes)) {
    int32_t st = PARITY_STATUS_OK;
    for (uint32_t k = 0; k < 2 && k < d->num_outputs && st == PARITY_STATUS_OK; k++)
      if (d->outputs[k]) st = cu_buffer_copy(dev, d->inputs[3]->buffer, so, d->outputs[k]->buffer, dofs[k], bytes);
    return st;
  }
  kp_iter_cu_t it;
  kp_iter_cu_from_tensors(&it, e.nops, e.t);
  int32_t ints[2];
  scalar_arg_t s;
  CUdeviceptr ptr[KP_MAX_OPS];
  void *args[1 + 2 + 1 + KP_MAX_OPS];
  uint32_t nargs = 0, nints = kp_ew_ints(&e, ints);
  args[nargs++] = &it;
  for (uint32_t k = 0; k < nints; k++) args[nargs++] = &ints[k];
  if (e.alpha) args[nargs++] = scalar_arg(e.cls, d->params.unary.alpha, &s);
  for (uint32_t k = 0; k < e.nops; k++) {
    ptr[k] = cu_ptr_of(e.t[k]);
    args[nargs++] = &ptr[k];
  }
  return cu_run_items(dev, e.cls, e.kid, e.n, nargs, args);
}

int32_t cu_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 0); }

int32_t cu_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return run(dev, d, 1); }
