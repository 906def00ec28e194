/* ops.h — tables generated from abi/parity_ops.def and the status list. */
#ifndef PARITY_SUPPORT_OPS_H
#define PARITY_SUPPORT_OPS_H

#include <stdint.h>

#include "parity_plugin.h"

typedef struct psup_op_info_t {
  int32_t op;       /* parity_op_t */
  const char *name; /* "relu" */
  int32_t kind;     /* parity_op_kind_t */
  uint32_t flags;   /* PARITY_OPF_* */
} psup_op_info_t;

/* Every op in parity_ops.def order; psup_op_count() entries. */
extern const psup_op_info_t psup_ops[];
uint32_t psup_op_count(void);
/* NULL for an unknown op. */
const psup_op_info_t *psup_op_info(int32_t op);
const char *psup_op_name(int32_t op);        /* "unknown-op" when unknown */
int32_t psup_op_from_name(const char *name); /* PARITY_OP_INVALID when unknown */
int32_t psup_kind_family(int32_t kind);      /* parity_family_t, 0 when unknown */
const char *psup_family_name(int32_t family);
const char *psup_status_name(int32_t status);       /* "invalid argument" ... */
const char *psup_direction_name(int32_t direction); /* "forward" | "backward" */

#endif
