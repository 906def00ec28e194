/* ops.c — op, family and status tables generated from the ABI's X-macro lists. */
#include "parity_support/ops.h"

#include <string.h>

#define K_(K) PARITY_OP_KIND_##K
const psup_op_info_t psup_ops[] = {
#define PARITY_OP(id, N, s, K, f) {id, s, K_(K), f},
#include "parity_ops.def"
#undef PARITY_OP
};
#undef K_

enum {
  PSUP_OP_COUNT_ = 0
#define PARITY_OP(id, N, s, K, f) +1
#include "parity_ops.def"
#undef PARITY_OP
};
_Static_assert(sizeof(psup_ops) / sizeof(psup_ops[0]) == PSUP_OP_COUNT_, "op table matches the op list");

uint32_t psup_op_count(void) { return PSUP_OP_COUNT_; }

/* each op's position in psup_ops, so psup_op_info is a jump table, not a search (it runs
 * several times per launch) */
enum {
#define PARITY_OP(id, N, s, K, f) PSUP_AT_##N,
#include "parity_ops.def"
#undef PARITY_OP
};

const psup_op_info_t *psup_op_info(int32_t op) {
  switch (op) {
#define PARITY_OP(id, N, s, K, f) \
  case id:                        \
    return &psup_ops[PSUP_AT_##N];
#include "parity_ops.def"
#undef PARITY_OP
    default: return NULL;
  }
}

const char *psup_op_name(int32_t op) {
  const psup_op_info_t *info = psup_op_info(op);
  return info ? info->name : "unknown-op";
}

int32_t psup_op_from_name(const char *name) {
  for (uint32_t i = 0; name && i < PSUP_OP_COUNT_; i++)
    if (strcmp(psup_ops[i].name, name) == 0) return psup_ops[i].op;
  return PARITY_OP_INVALID;
}

int32_t psup_kind_family(int32_t kind) {
  switch (kind) {
    case PARITY_OP_KIND_UNARY:
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_COMPARE:
    case PARITY_OP_KIND_SELECT:
    case PARITY_OP_KIND_CAST: return PARITY_FAMILY_ELEMENTWISE;
    case PARITY_OP_KIND_REDUCE: return PARITY_FAMILY_REDUCE;
    case PARITY_OP_KIND_MATMUL: return PARITY_FAMILY_MATMUL;
    case PARITY_OP_KIND_CONV2D:
    case PARITY_OP_KIND_POOL2D: return PARITY_FAMILY_CONV2D;
    case PARITY_OP_KIND_SOFTMAX: return PARITY_FAMILY_SOFTMAX;
    default: return 0;
  }
}

const char *psup_family_name(int32_t family) {
  switch (family) {
    case PARITY_FAMILY_ELEMENTWISE: return "elementwise";
    case PARITY_FAMILY_REDUCE: return "reduce";
    case PARITY_FAMILY_MATMUL: return "matmul";
    case PARITY_FAMILY_CONV2D: return "conv2d";
    case PARITY_FAMILY_SOFTMAX: return "softmax";
    default: return "unknown-family";
  }
}

const char *psup_status_name(int32_t status) {
  switch (status) {
#define PARITY_X_(v, N, s) \
  case v: return s;
    PARITY_STATUS_LIST(PARITY_X_)
#undef PARITY_X_
    default: return "unknown status";
  }
}

const char *psup_direction_name(int32_t direction) {
  return direction == PARITY_DIRECTION_BACKWARD ? "backward" : "forward";
}
