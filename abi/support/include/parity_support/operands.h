/* operands.h — the operand table: for every op kind and direction, which operands a descriptor
 * carries, in which slots, under which names, and which may be NULL. This is abi/parity_plugin.h's
 * "OPERANDS by kind" as data, stated once: the host's structure check (desc.c) takes the counts,
 * optional slots and rank-1 slots from it, the contract check (contract.c) and the plugins take
 * the names and slots from it. */
#ifndef PARITY_SUPPORT_OPERANDS_H
#define PARITY_SUPPORT_OPERANDS_H

#include <stdint.h>

#include "parity_plugin.h"

enum {
  PSUP_OPERAND_OPTIONAL = 1u << 0, /* may be NULL (conv2d's bias; every backward output: not wanted) */
  PSUP_OPERAND_RANK1 = 1u << 1     /* rank 1 whatever the others' rank (conv2d's bias and dbias) */
};

typedef struct psup_operand_t {
  const char *name; /* "x", "dy", "bias", ... as parity_plugin.h names them */
  uint32_t flags;   /* PSUP_OPERAND_* */
} psup_operand_t;

typedef struct psup_operands_t {
  uint32_t num_inputs, num_outputs;
  psup_operand_t in[PARITY_MAX_INPUTS];
  psup_operand_t out[PARITY_MAX_OUTPUTS];
} psup_operands_t;

/* The operands of `kind` (parity_op_kind_t) in `direction`; NULL when the kind has no such
 * direction (compare and cast have no backward) or either is out of range. */
const psup_operands_t *psup_operands(int32_t kind, int32_t direction);

/* Slot `slot` of the inputs (is_output 0) or outputs (1), or NULL past the count. */
const psup_operand_t *psup_operand(const psup_operands_t *ops, int is_output, uint32_t slot);

/* 1 when the result of `op` (parity_op_t) in `direction` must not depend on the values of input
 * `slot`, only on its shape and layout: abi/parity_plugin.h's SHAPE-ONLY inputs (the backward of
 * sum, mean, add, sub, neg and avg_pool2d reads only the incoming gradient). 0 otherwise. */
int psup_operand_values_unused(int32_t op, int32_t direction, uint32_t slot);

/* Slot of the operand named `name` among the inputs (is_output 0) or outputs (1); -1 if none. */
int psup_operand_slot(const psup_operands_t *ops, int is_output, const char *name);

#endif
