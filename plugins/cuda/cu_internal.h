/* cu_internal.h — shared by the CUDA plugin's files. Each kernel family lives in its own .c file
 * (host side) and .cu file (device side, kernels/); the driver table, device, memory, launch
 * geometry and error mapping live apart from the kernels.
 *
 * The plugin uses the CUDA Driver API only, through cu_driver.c: libcuda.so.1 is opened with
 * dlopen at init and every entry point resolved with cuGetProcAddress (typedefs from
 * cudaTypedefs.h), so the plugin loads everywhere and says why it is unavailable where there is
 * no driver. Nothing links against libcuda or the runtime.
 *
 * Device-side structs (iter_t, red_t, ...) are passed to kernels by value; they are defined once,
 * for this code and the kernels, in plugins/kernels/kernel_params.h (every field's offset checked). */
#ifndef PARITY_CU_INTERNAL_H
#define PARITY_CU_INTERNAL_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_params.h"
#include "kp_host.h"
#include "parity_plugin.h"
#include "parity_support/contract.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/gpu_kit.h"
#include "parity_support/ops.h"

/* ---- errors (cu_errors.c: pure tables and text, no driver calls) ---------------------------- */
/* "CUDA_ERROR_ILLEGAL_ADDRESS", or NULL for a code this build does not know. */
const char *cu_result_name(int res);
/* The parity status a CUresult maps to (unknown codes: DEVICE_ERROR). */
int32_t cu_result_status(int res);
/* 1 when the error is sticky: the CUDA context is corrupted and every later call fails. */
int cu_result_is_sticky(int res);
/* "cuda: <call>: CUDA_ERROR_X (n)[ (what)]" into buf. */
void cu_result_message(char *buf, size_t n, int res, const char *call, const char *what);
/* The PTX ISA version a PTX text declares (".version 9.0"); 0 when it declares none. */
int cu_ptx_isa_version(const char *ptx, int *major, int *minor);
/* The message for CUDA_ERROR_UNSUPPORTED_PTX_VERSION: names the driver's CUDA version and the
 * one the PTX needs. driver_version: cuDriverGetVersion (12040 = 12.4); toolkit_version: the
 * CUDA version that built the PTX (13000). */
void cu_ptx_version_message(char *buf, size_t n, int driver_version, int toolkit_version, const char *ptx);

/* Sticky-error state of one CUDA context (a CUdevice's primary context). */
typedef struct cu_poison_t {
  int res;     /* the first sticky CUresult seen, 0 while healthy (atomic) */
  int claimed; /* a sticky error is being recorded (atomic) */
  char call[48];
} cu_poison_t;
/* Record `res` from `call`; returns 1 when the context is (now or already) poisoned. Thread-safe. */
int cu_poison_note(cu_poison_t *p, int res, const char *call);
/* 1 once a sticky error has been recorded. */
int cu_poisoned(const cu_poison_t *p);
/* The message every call on a poisoned context reports (DEVICE_ERROR). */
void cu_poison_message(const cu_poison_t *p, char *buf, size_t n, const char *device);

/* ---- launch geometry (cu_launch.c: pure arithmetic) -------------------------------------------- */
#define CU_BLOCK 256u             /* threads per block of item kernels */
#define CU_MAX_GRID_X 0x7fffffffu /* grid.x limit (y and z stop at 65,535: never used) */
typedef struct cu_geom_t {
  uint32_t grid[3], block[3];
} cu_geom_t;
/* A 1-D launch over `items` (> 0) with `block` threads per block and at most `max_blocks` blocks
 * (0: no cap but the hardware's); kernels loop (grid-stride) over the rest. */
cu_geom_t cu_geom_items(int64_t items, uint32_t block, uint64_t max_blocks);
/* The tiled matmul: `tiles` (> 0) tiles of tile x tile threads, blocks loop over the rest. */
cu_geom_t cu_geom_tiles(uint64_t tiles, uint32_t tile, uint64_t max_blocks);
/* Items thread `t` (0-based over the whole grid) visits in a grid-stride loop over `items`. */
int64_t cu_items_of_thread(int64_t items, const cu_geom_t *g, uint64_t t);

/* ---- the driver (cu_driver.c) ------------------------------------------------------------------ */
// clang-format off
#define CU_DRIVER_LIST(X)                                                          \
  X(cuInit, v2000)                                                                 \
  X(cuDriverGetVersion, v2020)                                                     \
  X(cuGetErrorName, v6000)                                                         \
  X(cuDeviceGetCount, v2000)                                                       \
  X(cuDeviceGet, v2000)                                                            \
  X(cuDeviceGetName, v2000)                                                        \
  X(cuDeviceTotalMem, v3020)                                                       \
  X(cuDeviceGetAttribute, v2000)                                                   \
  X(cuDevicePrimaryCtxRetain, v7000)                                               \
  X(cuDevicePrimaryCtxRelease, v11000)                                             \
  X(cuCtxSetCurrent, v4000)                                                        \
  X(cuStreamCreate, v2000)                                                         \
  X(cuStreamDestroy, v4000)                                                        \
  X(cuStreamSynchronize, v2000)                                                    \
  X(cuEventCreate, v2000)                                                          \
  X(cuEventRecord, v2000)                                                          \
  X(cuEventSynchronize, v2000)                                                     \
  X(cuEventDestroy, v4000)                                                         \
  X(cuMemAlloc, v3020)                                                             \
  X(cuMemFree, v3020)                                                              \
  X(cuMemcpyHtoDAsync, v3020)                                                      \
  X(cuMemcpyDtoHAsync, v3020)                                                      \
  X(cuMemcpyDtoDAsync, v3020)                                                      \
  X(cuMemsetD8Async, v3020)                                                        \
  X(cuMemsetD16Async, v3020)                                                       \
  X(cuMemsetD32Async, v3020)                                                       \
  X(cuMemsetD2D32Async, v3020)                                                     \
  X(cuModuleLoadDataEx, v2010)                                                     \
  X(cuModuleGetFunction, v2000)                                                    \
  X(cuModuleUnload, v2000)                                                         \
  X(cuLaunchKernel, v4000)
// clang-format on
/* Optional (stream-ordered allocator, CUDA 11.2+; and the graph entries below); NULL when the
 * driver lacks them. */
// clang-format off
#define CU_DRIVER_OPTIONAL_LIST(X)                                                 \
  X(cuMemAllocAsync, v11020)                                                       \
  X(cuMemFreeAsync, v11020)                                                        \
  X(cuDeviceGetDefaultMemPool, v11020)                                             \
  X(cuMemPoolSetAttribute, v11020)                                                 \
  CU_DRIVER_GRAPH_LIST(X)
/* Optional (CUDA graphs: prepared plans, cu_plan.c; cuGraphInstantiateWithFlags is CUDA 11.4+):
 * NULL when the driver lacks them, and the plugin then declines plans (the host replays them op
 * by op). */
#define CU_DRIVER_GRAPH_LIST(X)                                                    \
  X(cuStreamBeginCapture, v10010)                                                  \
  X(cuStreamEndCapture, v10000)                                                    \
  X(cuGraphInstantiateWithFlags, v11040)                                           \
  X(cuGraphLaunch, v10000)                                                         \
  X(cuGraphExecDestroy, v10000)                                                    \
  X(cuGraphDestroy, v10000)
// clang-format on

typedef struct cu_driver_t {
  void *lib;
  int version; /* cuDriverGetVersion: 12040 = CUDA 12.4 */
#define CU_X_(name, ver) PFN_##name##_##ver name;
  CU_DRIVER_LIST(CU_X_)
  CU_DRIVER_OPTIONAL_LIST(CU_X_)
#undef CU_X_
} cu_driver_t;

extern cu_driver_t cu_drv;
/* The library the driver is opened from: "libcuda.so.1" (never libcuda.so, which may be the
 * toolkit's stub). PARITY_CUDA_DRIVER_LIBRARY overrides it (tests: a fake driver). */
const char *cu_driver_library(void);
/* dlopen + cuGetProcAddress. UNAVAILABLE with "no NVIDIA driver (libcuda.so.1 not found)" when
 * there is no driver; the message is written to msg. */
int32_t cu_driver_load(char *msg, size_t n);
void cu_driver_unload(void);

/* ---- reporting ----------------------------------------------------------------------------- */
/* The plugin's host kit (parity_support/gpu_kit.h: messages, device slots, dispatch, buffer
 * checks); cu_plugin.c fills it. Messages are written without the "cuda: " prefix: the kit adds
 * it (the message builders of cu_errors.c and cu_driver.c write none either). */
extern psup_kit_t cu_kit;
#define cu_fail(status, ...) psup_kit_fail(&cu_kit, (status), __VA_ARGS__)
#define cu_log(level, ...) psup_kit_log(&cu_kit, (level), __VA_ARGS__)
/* Report a failed driver call: "cuda: <call>: CUDA_ERROR_X (n) (what)" with the mapped status;
 * a sticky error poisons the device's context first (dev may be NULL). */
typedef struct parity_plugin_device_t cu_device_t;
int32_t cu_res_fail(cu_device_t *dev, CUresult res, const char *call, const char *what);
#define CU_CHECK(dev, expr, call, what) PSUP_KIT_CHECK(CUresult, expr, CUDA_SUCCESS, cu_res_fail((dev), r_, call, what))

/* ---- compute classes, modules and kernels --------------------------------------------------- */
typedef enum { CU_CLASS_F = 0, CU_CLASS_D, CU_CLASS_I, CU_CLASS_L, CU_CLASS_COUNT } cu_class_t;
typedef enum { CU_FAM_EW = 0, CU_FAM_RED, CU_FAM_SMX, CU_FAM_MM, CU_FAM_CONV, CU_FAM_POOL, CU_FAM_COUNT } cu_fam_t;
/* the classes and names of plugins/kernels/host (kp_names.c) */
#define cu_class_of kp_class_of
#define cu_class_name kp_class_name

/* X(kernel, family): plugins/kernels/host/kp_kernels.h, one list with the OpenCL plugin (CU_K_<name> is
 * KP_K_<name>; the OpenCL-only kernels have ids but no function in the modules) */
#define CU_KERNEL_LIST(X) KP_KERNEL_LIST(X)

typedef enum {
#define CU_X_(n, f) CU_K_##n,
  CU_KERNEL_LIST(CU_X_)
#undef CU_X_
      CU_K_COUNT
} cu_kernel_id_t;

/* The embedded PTX of family `fam` compiled for class `cls` (NUL-terminated), or NULL when that
 * pair is not built (matmul, conv and softmax have no integer classes). cu_ptx.c. */
typedef struct cu_ptx_t {
  const char *name; /* "elementwise.f32" */
  const char *text;
  size_t size;
} cu_ptx_t;
const cu_ptx_t *cu_ptx(int fam, int cls);
/* The CUDA version of the toolkit that produced the PTX (CUDA_VERSION at build time). */
int cu_ptx_toolkit_version(void);

/* ---- devices, buffers ------------------------------------------------------------------------ */
typedef struct cu_slot_t {
  psup_kit_slot_t kit; /* info record and capabilities (parity_support/gpu_kit.h) */
  CUdevice dev;
  int sm_count, cc_major, cc_minor, pools;
  cu_poison_t poison; /* shared by every open of this device: one primary context */
} cu_slot_t;

cu_slot_t *cu_slot(uint32_t index);

struct parity_plugin_buffer_t {
  CUdeviceptr ptr; /* 0 for a zero-byte buffer */
  uint64_t size;
};

struct parity_plugin_device_t {
  uint32_t index;
  cu_slot_t *slot;
  CUcontext ctx;   /* the device's primary context, retained */
  CUstream stream; /* non-blocking: never serialized with the legacy default stream */
  CUevent done;    /* recorded after the last work; synchronize waits on it */
  CUmodule mod[CU_FAM_COUNT][CU_CLASS_COUNT];
  CUfunction fn[CU_CLASS_COUNT][CU_K_COUNT];
  uint64_t max_blocks; /* cap on blocks per launch; kernels loop past it */
  int pools;           /* stream-ordered allocation from the default pool */
  CUdeviceptr scratch;
  uint64_t scratch_size;
  int scratch_mode;          /* PARITY_CUDA_SCRATCH: PSUP_SCRATCH_* (parity_support/gpu_kit.h) */
  parity_plugin_plan_t *rec; /* the plan being captured (cu_plan.c), NULL outside plan_prepare */
};

/* Make the device's context current on this thread and refuse a poisoned context. Every entry
 * that takes a device calls it first. */
int32_t cu_enter(parity_plugin_device_t *dev);

/* Launch kernel `kid` of class `cls` over `items` (> 0) items: the kernel's arguments are
 * args[0], then the item count (long), then args[1..nargs-1] (addresses of the values). */
int32_t cu_run_items(parity_plugin_device_t *dev, int cls, int kid, int64_t items, uint32_t nargs, void **args);
/* The same with the kernel's arguments a parameter struct, then the buffers of `nops` tensors
 * (0 for a NULL one). */
int32_t cu_run_ops(parity_plugin_device_t *dev, int cls, int kid, int64_t items, void *params, uint32_t nops,
                   const parity_tensor_desc_t *const *t);
/* Launch with explicit geometry; args are all the kernel's arguments. */
int32_t cu_run(parity_plugin_device_t *dev, int cls, int kid, const cu_geom_t *g, void **args);
/* A device scratch buffer of at least `bytes` (contents undefined; stream order makes reuse safe). */
int32_t cu_scratch(parity_plugin_device_t *dev, uint64_t bytes, CUdeviceptr *out);

/* The entries the kit does not write: device open/close (cu_device.c), buffers, transfers and
 * synchronize (cu_memory.c, called by the kit after its argument checks), the function table
 * (cu_plugin.c). */
PSUP_KIT_DECLARE_PLUGIN(cu);
/* memory and queue: cu_memory.c */
/* Allocate / free device memory on the device's stream (pool) or directly. */
int32_t cu_mem_alloc(parity_plugin_device_t *dev, uint64_t size, CUdeviceptr *out, const char *what);
void cu_mem_free(parity_plugin_device_t *dev, CUdeviceptr p);

/* ---- prepared plans as CUDA graphs (cu_plan.c) ------------------------------------------------ */
/* The kit's psup_kit_plans_t: begin starts capturing the device's stream, the kit issues the
 * plan's commands through the eager entries (captured, not run), end instantiates the graph. */
int32_t cu_plan_begin(parity_plugin_device_t *dev);
int32_t cu_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out);
int32_t cu_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
void cu_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *plan);
/* While dev->rec is set: scratch owned by the plan (plain cuMemAlloc, alive until release), never
 * the device's stream-ordered scratch, whose allocation or free would be captured. */
int32_t cu_plan_scratch(parity_plugin_device_t *dev, uint64_t bytes, CUdeviceptr *out);

/* ---- operands (the kernels' strided iteration: kp_iter_cu_build, kp_host.h) -------------------- */
/* The device pointer of a tensor's buffer (0 for a NULL tensor). */
CUdeviceptr cu_ptr_of(const parity_tensor_desc_t *t);

/* ---- kernel families --------------------------------------------------------------------------- */
PSUP_KIT_DECLARE_FAMILIES(cu);
/* max_pool2d and avg_pool2d (pool.c), which the CONV2D family's entries (conv.c) hand on */
int32_t cu_pool2d_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d);
int32_t cu_pool2d_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d);

#endif
