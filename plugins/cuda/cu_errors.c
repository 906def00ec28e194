/* cu_errors.c — every CUresult with its name, the parity status it maps to and whether it is
 * sticky (the context is corrupted: every later call on it fails), the PTX-version message and
 * the poisoning of a context. Pure tables and text: no driver calls and no plugin state, so the
 * host-side tests compile this file alone. Codes are listed by value, since an older cuda.h may
 * lack some names. */
#include <stdio.h>
#include <string.h>

#include "cu_internal.h"

/* X(code, NAME, parity status, sticky) */
// clang-format off
#define CU_RESULT_LIST(X)                                                  \
  X(0, CUDA_SUCCESS, OK, 0)                                                \
  X(1, CUDA_ERROR_INVALID_VALUE, INTERNAL, 0)                              \
  X(2, CUDA_ERROR_OUT_OF_MEMORY, OUT_OF_MEMORY, 0)                         \
  X(3, CUDA_ERROR_NOT_INITIALIZED, UNAVAILABLE, 0)                         \
  X(4, CUDA_ERROR_DEINITIALIZED, UNAVAILABLE, 0)                           \
  X(5, CUDA_ERROR_PROFILER_DISABLED, UNSUPPORTED, 0)                       \
  X(6, CUDA_ERROR_PROFILER_NOT_INITIALIZED, UNSUPPORTED, 0)                \
  X(7, CUDA_ERROR_PROFILER_ALREADY_STARTED, UNSUPPORTED, 0)                \
  X(8, CUDA_ERROR_PROFILER_ALREADY_STOPPED, UNSUPPORTED, 0)                \
  X(34, CUDA_ERROR_STUB_LIBRARY, UNAVAILABLE, 0)                           \
  X(35, CUDA_ERROR_INSUFFICIENT_DRIVER, UNAVAILABLE, 0)                     \
  X(36, CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, UNAVAILABLE, 0)             \
  X(46, CUDA_ERROR_DEVICE_UNAVAILABLE, UNAVAILABLE, 0)                     \
  X(100, CUDA_ERROR_NO_DEVICE, UNAVAILABLE, 0)                             \
  X(101, CUDA_ERROR_INVALID_DEVICE, UNAVAILABLE, 0)                        \
  X(102, CUDA_ERROR_DEVICE_NOT_LICENSED, UNAVAILABLE, 0)                   \
  X(200, CUDA_ERROR_INVALID_IMAGE, INTERNAL, 0)                            \
  X(201, CUDA_ERROR_INVALID_CONTEXT, INTERNAL, 0)                          \
  X(202, CUDA_ERROR_CONTEXT_ALREADY_CURRENT, INTERNAL, 0)                  \
  X(205, CUDA_ERROR_MAP_FAILED, DEVICE_ERROR, 0)                           \
  X(206, CUDA_ERROR_UNMAP_FAILED, DEVICE_ERROR, 0)                         \
  X(207, CUDA_ERROR_ARRAY_IS_MAPPED, INTERNAL, 0)                          \
  X(208, CUDA_ERROR_ALREADY_MAPPED, INTERNAL, 0)                           \
  X(209, CUDA_ERROR_NO_BINARY_FOR_GPU, UNAVAILABLE, 0)                     \
  X(210, CUDA_ERROR_ALREADY_ACQUIRED, INTERNAL, 0)                         \
  X(211, CUDA_ERROR_NOT_MAPPED, INTERNAL, 0)                               \
  X(212, CUDA_ERROR_NOT_MAPPED_AS_ARRAY, INTERNAL, 0)                      \
  X(213, CUDA_ERROR_NOT_MAPPED_AS_POINTER, INTERNAL, 0)                    \
  X(214, CUDA_ERROR_ECC_UNCORRECTABLE, DEVICE_ERROR, 1)                    \
  X(215, CUDA_ERROR_UNSUPPORTED_LIMIT, UNSUPPORTED, 0)                     \
  X(216, CUDA_ERROR_CONTEXT_ALREADY_IN_USE, UNAVAILABLE, 0)                \
  X(217, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, UNSUPPORTED, 0)               \
  X(218, CUDA_ERROR_INVALID_PTX, INTERNAL, 0)                              \
  X(219, CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, INTERNAL, 0)                 \
  X(220, CUDA_ERROR_NVLINK_UNCORRECTABLE, DEVICE_ERROR, 1)                 \
  X(221, CUDA_ERROR_JIT_COMPILER_NOT_FOUND, UNAVAILABLE, 0)                \
  X(222, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, UNAVAILABLE, 0)               \
  X(223, CUDA_ERROR_JIT_COMPILATION_DISABLED, UNAVAILABLE, 0)              \
  X(224, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, UNSUPPORTED, 0)             \
  X(225, CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, UNSUPPORTED, 0)              \
  X(226, CUDA_ERROR_CONTAINED, DEVICE_ERROR, 1)                            \
  X(300, CUDA_ERROR_INVALID_SOURCE, INTERNAL, 0)                           \
  X(301, CUDA_ERROR_FILE_NOT_FOUND, INTERNAL, 0)                           \
  X(302, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, INTERNAL, 0)           \
  X(303, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, INTERNAL, 0)                \
  X(304, CUDA_ERROR_OPERATING_SYSTEM, DEVICE_ERROR, 0)                     \
  X(400, CUDA_ERROR_INVALID_HANDLE, INTERNAL, 0)                           \
  X(401, CUDA_ERROR_ILLEGAL_STATE, INTERNAL, 0)                            \
  X(402, CUDA_ERROR_LOSSY_QUERY, INTERNAL, 0)                              \
  X(500, CUDA_ERROR_NOT_FOUND, INTERNAL, 0)                                \
  X(600, CUDA_ERROR_NOT_READY, INTERNAL, 0)                                \
  X(700, CUDA_ERROR_ILLEGAL_ADDRESS, DEVICE_ERROR, 1)                      \
  X(701, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, INTERNAL, 0)                  \
  X(702, CUDA_ERROR_LAUNCH_TIMEOUT, DEVICE_ERROR, 1)                       \
  X(703, CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, INTERNAL, 0)            \
  X(704, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, INTERNAL, 0)              \
  X(705, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, INTERNAL, 0)                  \
  X(708, CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, INTERNAL, 0)                   \
  X(709, CUDA_ERROR_CONTEXT_IS_DESTROYED, DEVICE_ERROR, 0)                 \
  X(710, CUDA_ERROR_ASSERT, DEVICE_ERROR, 1)                               \
  X(711, CUDA_ERROR_TOO_MANY_PEERS, UNSUPPORTED, 0)                        \
  X(712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, INTERNAL, 0)           \
  X(713, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, INTERNAL, 0)               \
  X(714, CUDA_ERROR_HARDWARE_STACK_ERROR, DEVICE_ERROR, 1)                 \
  X(715, CUDA_ERROR_ILLEGAL_INSTRUCTION, DEVICE_ERROR, 1)                  \
  X(716, CUDA_ERROR_MISALIGNED_ADDRESS, DEVICE_ERROR, 1)                   \
  X(717, CUDA_ERROR_INVALID_ADDRESS_SPACE, DEVICE_ERROR, 1)                \
  X(718, CUDA_ERROR_INVALID_PC, DEVICE_ERROR, 1)                           \
  X(719, CUDA_ERROR_LAUNCH_FAILED, DEVICE_ERROR, 1)                        \
  X(720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, INTERNAL, 0)             \
  X(721, CUDA_ERROR_TENSOR_MEMORY_LEAK, DEVICE_ERROR, 1)                   \
  X(800, CUDA_ERROR_NOT_PERMITTED, UNAVAILABLE, 0)                         \
  X(801, CUDA_ERROR_NOT_SUPPORTED, UNSUPPORTED, 0)                         \
  X(802, CUDA_ERROR_SYSTEM_NOT_READY, UNAVAILABLE, 0)                      \
  X(803, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, UNAVAILABLE, 0)                \
  X(804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, UNAVAILABLE, 0)        \
  X(805, CUDA_ERROR_MPS_CONNECTION_FAILED, UNAVAILABLE, 0)                 \
  X(806, CUDA_ERROR_MPS_RPC_FAILURE, DEVICE_ERROR, 0)                      \
  X(807, CUDA_ERROR_MPS_SERVER_NOT_READY, UNAVAILABLE, 0)                  \
  X(808, CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, UNAVAILABLE, 0)               \
  X(809, CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, UNAVAILABLE, 0)           \
  X(810, CUDA_ERROR_MPS_CLIENT_TERMINATED, DEVICE_ERROR, 1)                \
  X(811, CUDA_ERROR_CDP_NOT_SUPPORTED, UNSUPPORTED, 0)                     \
  X(812, CUDA_ERROR_CDP_VERSION_MISMATCH, UNSUPPORTED, 0)                  \
  X(900, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, INTERNAL, 0)               \
  X(901, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, INTERNAL, 0)               \
  X(902, CUDA_ERROR_STREAM_CAPTURE_MERGE, INTERNAL, 0)                     \
  X(903, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, INTERNAL, 0)                 \
  X(904, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, INTERNAL, 0)                  \
  X(905, CUDA_ERROR_STREAM_CAPTURE_ISOLATION, INTERNAL, 0)                 \
  X(906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, INTERNAL, 0)                  \
  X(907, CUDA_ERROR_CAPTURED_EVENT, INTERNAL, 0)                           \
  X(908, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, INTERNAL, 0)              \
  X(909, CUDA_ERROR_TIMEOUT, DEVICE_ERROR, 0)                              \
  X(910, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, INTERNAL, 0)                \
  X(911, CUDA_ERROR_EXTERNAL_DEVICE, DEVICE_ERROR, 1)                      \
  X(912, CUDA_ERROR_INVALID_CLUSTER_SIZE, INTERNAL, 0)                     \
  X(913, CUDA_ERROR_FUNCTION_NOT_LOADED, INTERNAL, 0)                      \
  X(914, CUDA_ERROR_INVALID_RESOURCE_TYPE, INTERNAL, 0)                    \
  X(915, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, INTERNAL, 0)           \
  X(916, CUDA_ERROR_KEY_ROTATION, DEVICE_ERROR, 1)                         \
  X(999, CUDA_ERROR_UNKNOWN, DEVICE_ERROR, 0)
// clang-format on

const char *cu_result_name(int res) {
  switch (res) {
#define CU_X_(code, NAME, st, sticky) \
  case code: return #NAME;
    CU_RESULT_LIST(CU_X_)
#undef CU_X_
    default: return NULL;
  }
}

int32_t cu_result_status(int res) {
  switch (res) {
#define CU_X_(code, NAME, st, sticky) \
  case code: return PARITY_STATUS_##st;
    CU_RESULT_LIST(CU_X_)
#undef CU_X_
    default: return PARITY_STATUS_DEVICE_ERROR; /* a code newer than this table: a device fault */
  }
}

int cu_result_is_sticky(int res) {
  switch (res) {
#define CU_X_(code, NAME, st, sticky) \
  case code: return sticky;
    CU_RESULT_LIST(CU_X_)
#undef CU_X_
    default: return 0;
  }
}

void cu_result_message(char *buf, size_t n, int res, const char *call, const char *what) {
  const char *name = cu_result_name(res);
  char code[48];
  if (!name) {
    snprintf(code, sizeof code, "unknown CUDA error");
    name = code;
  }
  if (what && *what)
    snprintf(buf, n, "%s: %s (%d) (%s)", call, name, res, what);
  else
    snprintf(buf, n, "%s: %s (%d)", call, name, res);
}

int cu_ptx_isa_version(const char *ptx, int *major, int *minor) {
  *major = *minor = 0;
  if (!ptx) return 0;
  const char *v = strstr(ptx, "\n.version ");
  if (!v && strncmp(ptx, ".version ", 9) == 0) v = ptx - 1;
  if (!v) return 0;
  return sscanf(v + 10, "%d.%d", major, minor) == 2;
}

void cu_ptx_version_message(char *buf, size_t n, int driver_version, int toolkit_version, const char *ptx) {
  int maj = 0, min = 0;
  char isa[32] = "unknown";
  if (cu_ptx_isa_version(ptx, &maj, &min)) snprintf(isa, sizeof isa, "%d.%d", maj, min);
  snprintf(buf, n,
           "the NVIDIA driver supports CUDA %d.%d, older than the PTX of this plugin needs "
           "(PTX ISA %s, built with CUDA %d.%d): CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); install a "
           "driver for CUDA %d.%d or newer, or build parity with an older CUDA toolkit",
           driver_version / 1000, (driver_version % 1000) / 10, isa, toolkit_version / 1000,
           (toolkit_version % 1000) / 10, toolkit_version / 1000, (toolkit_version % 1000) / 10);
}

/* Opens of one device share its slot (one primary context) and may run on different threads:
 * the first sticky error claims the slot atomically, and its call is written before res is
 * published. */
int cu_poison_note(cu_poison_t *p, int res, const char *call) {
  if (__atomic_load_n(&p->res, __ATOMIC_ACQUIRE)) return 1;
  if (!cu_result_is_sticky(res)) return 0;
  int none = 0;
  if (__atomic_compare_exchange_n(&p->claimed, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    snprintf(p->call, sizeof p->call, "%s", call ? call : "?");
    __atomic_store_n(&p->res, res, __ATOMIC_RELEASE);
  }
  return 1;
}

int cu_poisoned(const cu_poison_t *p) { return __atomic_load_n(&p->res, __ATOMIC_ACQUIRE) != 0; }

void cu_poison_message(const cu_poison_t *p, char *buf, size_t n, const char *device) {
  const char *name = cu_result_name(p->res);
  snprintf(buf, n,
           "%s: the CUDA context is unusable after a sticky device error (%s (%d), reported by "
           "%s); every later call on this device fails: restart the process",
           device ? device : "device", name ? name : "unknown CUDA error", p->res, p->call);
}
