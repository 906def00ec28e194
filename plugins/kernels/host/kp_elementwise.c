/* kp_elementwise.c — which elementwise kernel runs over which operands (kp_host.h), and the
 * compute classes. */
#include <string.h>

#include "kp_host.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"

static void set_operands(kp_ew_t *e, const parity_tensor_desc_t *const *t, uint32_t n) {
  e->nops = n;
  for (uint32_t k = 0; k < n; k++) e->t[k] = t[k];
}
/* e's operands, in the kernel's order */
#define OPERANDS(...)                                                 \
  set_operands(e, (const parity_tensor_desc_t *const[]){__VA_ARGS__}, \
               sizeof((const parity_tensor_desc_t *const[]){__VA_ARGS__}) / sizeof(void *))

#define IN(i) (d->inputs[i])
#define OUT(i) (d->outputs[i])

static int forward(kp_ew_t *e, const parity_op_desc_t *d) {
  e->n = psup_numel(OUT(0));
  if (e->n == 0) return 0; /* nothing to launch */
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY:
      OPERANDS(IN(0), OUT(0));
      e->kid = KP_K_ew_unary, e->op = d->op, e->dt = IN(0)->dtype, e->alpha = 1;
      break;
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_COMPARE:
      OPERANDS(IN(0), IN(1), OUT(0));
      e->kid = psup_op_info(d->op)->kind == PARITY_OP_KIND_BINARY ? KP_K_ew_binary : KP_K_ew_compare;
      e->op = d->op, e->dt = IN(0)->dtype;
      break;
    case PARITY_OP_KIND_SELECT: /* cond, a, b, y: copies elements of the output's size */
      OPERANDS(IN(0), IN(1), IN(2), OUT(0));
      e->kid = KP_K_ew_select, e->op = (int32_t)psup_dtype_size(OUT(0)->dtype);
      e->cls = KP_CLASS_F;
      return 1;
    default: { /* cast: the f64 class when either side is f64 */
      OPERANDS(IN(0), OUT(0));
      int32_t sdt = IN(0)->dtype, ddt = OUT(0)->dtype;
      e->kid = KP_K_ew_cast, e->dt = sdt, e->dt2 = ddt;
      e->cls = (sdt == PARITY_DTYPE_F64 || ddt == PARITY_DTYPE_F64) ? KP_CLASS_D : KP_CLASS_F;
      return 1;
    }
  }
  e->cls = kp_class_of(e->dt);
  return 1;
}

static int backward(kp_ew_t *e, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *g = IN(d->num_inputs - 1); /* incoming gradient */
  int any_out = 0;
  for (uint32_t i = 0; i < d->num_outputs; i++) any_out |= OUT(i) != NULL;
  e->n = psup_numel(g);
  if (e->n == 0 || !any_out) return 0;
  e->dt = g->dtype;
  e->cls = kp_class_of(e->dt);
  e->op = d->op;
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: /* in x, y, dy; out dx */
      OPERANDS(IN(0), IN(1), IN(2), OUT(0));
      e->kid = KP_K_ew_unary_bwd, e->alpha = 1;
      break;
    case PARITY_OP_KIND_BINARY: /* in a, b, c, dc; out da, db (either may be NULL) */
      OPERANDS(IN(0), IN(1), IN(2), IN(3), OUT(0), OUT(1));
      e->kid = KP_K_ew_binary_bwd;
      break;
    default: /* where: in cond, dc; out da, db */
      OPERANDS(IN(0), IN(1), OUT(0), OUT(1));
      e->kid = KP_K_ew_select_bwd, e->op = (int32_t)psup_dtype_size(e->dt), e->dt = 0;
      e->cls = KP_CLASS_F;
      break;
  }
  return 1;
}

int kp_ew_plan(kp_ew_t *e, const parity_op_desc_t *d, int backward_) {
  memset(e, 0, sizeof *e);
  return backward_ ? backward(e, d) : forward(e, d);
}

uint32_t kp_ew_ints(const kp_ew_t *e, int32_t out[2]) {
  if (e->kid == KP_K_ew_select || e->kid == KP_K_ew_select_bwd) {
    out[0] = e->op;
    return 1;
  }
  if (e->kid == KP_K_ew_cast) {
    out[0] = e->dt, out[1] = e->dt2;
    return 2;
  }
  out[0] = e->op, out[1] = e->dt;
  return 2;
}
