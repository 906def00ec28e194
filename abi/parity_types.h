/* parity_types.h — the types the plugin ABI shares with applications: status codes, dtypes, op
 * identities (from parity_ops.def) and the device information record. parity_plugin.h (the plugin
 * ABI) and parity/parity.h (the application API) both include it; an application sees nothing of
 * the plugin ABI beyond this header. Part of ABI 1.2: the same versioning rules apply (values are
 * appended, never renumbered; see parity_plugin.h). Depends only on <stdint.h> and <stddef.h>. */
#ifndef PARITY_TYPES_H
#define PARITY_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most axes a tensor has (tensors, views and op descriptors alike). */
#define PARITY_MAX_RANK 8

/* ---- status codes ---------------------------------------------------------------------- */
/* X(value, NAME, "name") — fixed values; new codes are appended (minor change). */
// clang-format off
#define PARITY_STATUS_LIST(X)                                      \
  X(0, OK, "ok")                                                   \
  X(1, INVALID_ARGUMENT, "invalid argument")                       \
  X(2, UNSUPPORTED, "unsupported")                                 \
  X(3, OUT_OF_MEMORY, "out of memory")                             \
  X(4, OUT_OF_RANGE, "out of range")                               \
  X(5, NOT_FOUND, "not found")                                     \
  X(6, UNAVAILABLE, "unavailable")                                 \
  X(7, VERSION_MISMATCH, "version mismatch")                       \
  X(8, DEVICE_ERROR, "device error")                               \
  X(9, INTERNAL, "internal error")                                 \
  X(10, FAILED_PRECONDITION, "failed precondition")
// clang-format on

typedef enum parity_status_t {
#define PARITY_X_(v, N, s) PARITY_STATUS_##N = v,
  PARITY_STATUS_LIST(PARITY_X_)
#undef PARITY_X_
      PARITY_STATUS_FORCE_32 = 0x7fffffff
} parity_status_t;

/* ---- dtypes ----------------------------------------------------------------------------- */
/* X(value, NAME, "name", size_in_bytes) */
// clang-format off
#define PARITY_DTYPE_LIST(X)   \
  X(1, F32, "f32", 4)          \
  X(2, F64, "f64", 8)          \
  X(3, F16, "f16", 2)          \
  X(4, BF16, "bf16", 2)        \
  X(5, I32, "i32", 4)          \
  X(6, I64, "i64", 8)          \
  X(7, BOOL, "bool", 1)
// clang-format on

typedef enum parity_dtype_t {
  PARITY_DTYPE_INVALID = 0,
#define PARITY_X_(v, N, s, sz) PARITY_DTYPE_##N = v,
  PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
      PARITY_DTYPE_FORCE_32 = 0x7fffffff
} parity_dtype_t;

#define PARITY_DTYPE_BIT(dt) (1u << (uint32_t)(dt))

/* ---- operations ------------------------------------------------------------------------- */
enum { PARITY_OPF_BACKWARD = 1u << 0, PARITY_OPF_FLOAT = 1u << 1 };

typedef enum parity_op_t {
  PARITY_OP_INVALID = 0,
#define PARITY_OP(id, N, s, K, f) PARITY_OP_##N = id,
#include "parity_ops.def"
#undef PARITY_OP
  PARITY_OP_FORCE_32 = 0x7fffffff
} parity_op_t;

/* The kind decides the operand layout (see "OPERANDS" below) and the entry family. */
typedef enum parity_op_kind_t {
  PARITY_OP_KIND_UNARY = 1,    /* family ELEMENTWISE */
  PARITY_OP_KIND_BINARY = 2,   /* family ELEMENTWISE */
  PARITY_OP_KIND_COMPARE = 3,  /* family ELEMENTWISE */
  PARITY_OP_KIND_SELECT = 4,   /* family ELEMENTWISE */
  PARITY_OP_KIND_CAST = 5,     /* family ELEMENTWISE */
  PARITY_OP_KIND_REDUCE = 6,   /* family REDUCE */
  PARITY_OP_KIND_MATMUL = 7,   /* family MATMUL */
  PARITY_OP_KIND_CONV2D = 8,   /* family CONV2D */
  PARITY_OP_KIND_POOL2D = 9,   /* family CONV2D */
  PARITY_OP_KIND_SOFTMAX = 10, /* family SOFTMAX */
  PARITY_OP_KIND_FORCE_32 = 0x7fffffff
} parity_op_kind_t;

typedef enum parity_family_t {
  PARITY_FAMILY_ELEMENTWISE = 1,
  PARITY_FAMILY_REDUCE = 2,
  PARITY_FAMILY_MATMUL = 3,
  PARITY_FAMILY_CONV2D = 4,
  PARITY_FAMILY_SOFTMAX = 5,
  PARITY_FAMILY_FORCE_32 = 0x7fffffff
} parity_family_t;

typedef enum parity_direction_t {
  PARITY_DIRECTION_FORWARD = 0,
  PARITY_DIRECTION_BACKWARD = 1,
  PARITY_DIRECTION_FORCE_32 = 0x7fffffff
} parity_direction_t;

/* ---- devices ---------------------------------------------------------------------------- */
typedef enum parity_plugin_device_type_t {
  PARITY_DEVICE_TYPE_CPU = 1,
  PARITY_DEVICE_TYPE_GPU = 2,
  PARITY_DEVICE_TYPE_SOFTWARE_GPU = 3, /* a GPU API emulated on the CPU (lavapipe, PoCL) */
  PARITY_DEVICE_TYPE_OTHER = 4,
  PARITY_DEVICE_TYPE_FORCE_32 = 0x7fffffff
} parity_plugin_device_type_t;

typedef enum parity_denormals_t {
  PARITY_DENORMALS_UNKNOWN = 0, /* default when a plugin does not say */
  PARITY_DENORMALS_PRESERVED = 1,
  PARITY_DENORMALS_FLUSHED = 2,
  PARITY_DENORMALS_FORCE_32 = 0x7fffffff
} parity_denormals_t;

enum {
  PARITY_DEVICE_FLAG_FLOAT64 = 1u << 0,       /* every floating op runs in f64 */
  PARITY_DEVICE_FLAG_DETERMINISTIC = 1u << 1, /* same inputs give bitwise-same outputs */
  /* ABI 1.1: supports() answers OK alike for every valid descriptor of one class (op, direction,
   * rank, each operand's dtype and presence), whatever the shapes, strides and buffers: the host
   * may remember an OK per class for the descriptors it builds itself and not ask again. */
  PARITY_DEVICE_FLAG_SUPPORTS_BY_CLASS = 1u << 2,
};

/* Filled by get_device_info(). The host zeroes it and sets struct_size; the plugin writes only
 * fields inside struct_size. Defaults for fields a plugin leaves out: zero / UNKNOWN. */
typedef struct parity_device_info_t {
  uint32_t struct_size;
  int32_t type;              /* parity_plugin_device_type_t */
  char name[128];            /* NUL-terminated, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
  char driver[64];           /* driver / runtime version, NUL-terminated */
  uint64_t memory_bytes;     /* total memory usable by buffers */
  uint64_t max_buffer_bytes; /* largest single buffer */
  uint32_t dtype_mask;       /* PARITY_DTYPE_BIT() of every dtype some op supports */
  uint32_t flags;            /* PARITY_DEVICE_FLAG_* */
  int32_t denormals;         /* parity_denormals_t for f32 arithmetic */
  uint32_t reserved0;
  /* ABI 1.2: how each floating dtype computes division, square root and transcendentals, for
   * people (parity-info), NUL-terminated, e.g. "f32 f16 bf16: float32 library; f64: software
   * double". Empty from plugins before 1.2. */
  char math[96];
} parity_device_info_t;

#ifdef __cplusplus
}
#endif

#endif /* PARITY_TYPES_H */
