/* core_needs.c — which of the autodiff core's own needs a device does not meet. A plugin may pass
 * the suite on a small subset, yet the core cannot train on it without a few ops it uses behind
 * the user's back; this says which, after the verdict (information, not a failure). */
#include <stdio.h>
#include <string.h>

#include "conform.h"

typedef struct need_t {
  int32_t op;
  int32_t direction;
  const char *why;
} need_t;

static const need_t needs[] = {
    {PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, "same-dtype cast: the core's copy (contiguous views, backward)"},
    {PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, "add: gradient accumulation"},
    {PARITY_OP_SUM, PARITY_DIRECTION_FORWARD, "sum: gradients of broadcast operands"},
    {PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, "mul: SGD and Adam"},
    {PARITY_OP_SUB, PARITY_DIRECTION_FORWARD, "sub: SGD and Adam"},
    {PARITY_OP_SQRT, PARITY_DIRECTION_FORWARD, "sqrt: Adam"},
    {PARITY_OP_DIV, PARITY_DIRECTION_FORWARD, "div: Adam"},
};

void cf_print_core_needs(cf_env_t *env) {
  int64_t shape[1] = {4}, one[1] = {1};
  parity_tensor_desc_t a, b, c;
  char missing[1024] = "";
  for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
    const need_t *n = &needs[i];
    const psup_op_info_t *info = psup_op_info(n->op);
    psup_tensor_init(&a, PARITY_DTYPE_F32, 1, shape, NULL, 0);
    psup_tensor_init(&b, PARITY_DTYPE_F32, 1, shape, NULL, 0);
    psup_tensor_init(&c, PARITY_DTYPE_F32, 1, n->op == PARITY_OP_SUM ? one : shape, NULL, 0);
    parity_op_desc_t d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.op = n->op;
    d.direction = n->direction;
    d.num_inputs = info->kind == PARITY_OP_KIND_BINARY ? 2 : 1;
    d.num_outputs = 1;
    d.inputs[0] = &a;
    if (d.num_inputs == 2) d.inputs[1] = &b;
    d.outputs[0] = &c;
    if (n->op == PARITY_OP_SUM) d.params.reduce.axes_mask = 1;
    if (parity_device_supports(env->dev, &d) == PARITY_STATUS_OK) continue;
    size_t len = strlen(missing);
    snprintf(missing + len, sizeof missing - len, "%s%s", len ? "; " : "", n->why);
  }
  if (missing[0])
    printf("core needs (f32) not met by %s, so the autodiff core cannot train on it: %s\n", env->backend, missing);
  else
    printf("core needs (f32): met by %s (copy, accumulation, broadcast gradients, SGD, Adam)\n", env->backend);
}
