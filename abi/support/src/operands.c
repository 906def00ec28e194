/* operands.c — see operands.h. The one table of abi/parity_plugin.h's "OPERANDS by kind". */
#include "parity_support/operands.h"

#include <string.h>

#define OPT PSUP_OPERAND_OPTIONAL
#define R1 PSUP_OPERAND_RANK1
/* every backward output is optional: NULL means "not needed" */
#define BO (PSUP_OPERAND_OPTIONAL)

/* [kind][direction]; a zero entry (num_outputs 0) is a direction the kind lacks */
static const psup_operands_t table[PARITY_OP_KIND_SOFTMAX + 1][2] = {
    [PARITY_OP_KIND_UNARY] = {{1, 1, {{"x", 0}}, {{"y", 0}}}, {3, 1, {{"x", 0}, {"y", 0}, {"dy", 0}}, {{"dx", BO}}}},
    [PARITY_OP_KIND_BINARY] = {{2, 1, {{"a", 0}, {"b", 0}}, {{"c", 0}}},
                               {4, 2, {{"a", 0}, {"b", 0}, {"c", 0}, {"dc", 0}}, {{"da", BO}, {"db", BO}}}},
    [PARITY_OP_KIND_COMPARE] = {{2, 1, {{"a", 0}, {"b", 0}}, {{"c", 0}}}},
    [PARITY_OP_KIND_SELECT] = {{3, 1, {{"cond", 0}, {"a", 0}, {"b", 0}}, {{"c", 0}}},
                               {2, 2, {{"cond", 0}, {"dc", 0}}, {{"da", BO}, {"db", BO}}}},
    [PARITY_OP_KIND_CAST] = {{1, 1, {{"x", 0}}, {{"y", 0}}}},
    [PARITY_OP_KIND_REDUCE] = {{1, 1, {{"x", 0}}, {{"y", 0}}}, {3, 1, {{"x", 0}, {"y", 0}, {"dy", 0}}, {{"dx", BO}}}},
    [PARITY_OP_KIND_MATMUL] = {{2, 1, {{"a", 0}, {"b", 0}}, {{"c", 0}}},
                               {3, 2, {{"a", 0}, {"b", 0}, {"dc", 0}}, {{"da", BO}, {"db", BO}}}},
    [PARITY_OP_KIND_CONV2D] = {{3, 1, {{"x", 0}, {"w", 0}, {"bias", OPT | R1}}, {{"y", 0}}},
                               {3, 3, {{"x", 0}, {"w", 0}, {"dy", 0}}, {{"dx", BO}, {"dw", BO}, {"dbias", BO | R1}}}},
    [PARITY_OP_KIND_POOL2D] = {{1, 1, {{"x", 0}}, {{"y", 0}}}, {3, 1, {{"x", 0}, {"y", 0}, {"dy", 0}}, {{"dx", BO}}}},
    [PARITY_OP_KIND_SOFTMAX] = {{1, 1, {{"x", 0}}, {{"y", 0}}}, {2, 1, {{"y", 0}, {"dy", 0}}, {{"dx", BO}}}},
};

const psup_operands_t *psup_operands(int32_t kind, int32_t direction) {
  if (kind < PARITY_OP_KIND_UNARY || kind > PARITY_OP_KIND_SOFTMAX) return NULL;
  if (direction != PARITY_DIRECTION_FORWARD && direction != PARITY_DIRECTION_BACKWARD) return NULL;
  const psup_operands_t *e = &table[kind][direction];
  return e->num_outputs ? e : NULL;
}

const psup_operand_t *psup_operand(const psup_operands_t *ops, int is_output, uint32_t slot) {
  if (!ops || slot >= (is_output ? ops->num_outputs : ops->num_inputs)) return NULL;
  return is_output ? &ops->out[slot] : &ops->in[slot];
}

int psup_operand_slot(const psup_operands_t *ops, int is_output, const char *name) {
  uint32_t n = ops ? (is_output ? ops->num_outputs : ops->num_inputs) : 0;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp((is_output ? ops->out : ops->in)[i].name, name) == 0) return (int)i;
  return -1;
}

int psup_operand_values_unused(int32_t op, int32_t direction, uint32_t slot) {
  if (direction != PARITY_DIRECTION_BACKWARD) return 0;
  switch (op) {
    case PARITY_OP_SUM:
    case PARITY_OP_MEAN:
    case PARITY_OP_NEG:
    case PARITY_OP_AVG_POOL2D: return slot < 2; /* {x, y, dy}: x and y */
    case PARITY_OP_ADD:
    case PARITY_OP_SUB: return slot < 3; /* {a, b, c, dc}: a, b and c */
    default: return 0;
  }
}
