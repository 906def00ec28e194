/* cu_plugin.c — the CUDA plugin's function table: lifecycle (driver, device enumeration) and its
 * host kit (parity_support/gpu_kit.h: device slots and info, supports(), the kernel entries and
 * the buffer-argument checks, driven by the families table below). Devices live in cu_device.c,
 * memory and the stream in cu_memory.c, the driver table in cu_driver.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/desc.h"
#include "cu_internal.h"

#define CU_MAX_DEVICES 64
/* filled at init (single-threaded), read-only afterwards but for the poison state */
static cu_slot_t slots[CU_MAX_DEVICES];

int32_t cu_res_fail(cu_device_t *dev, CUresult res, const char *call, const char *what) {
  char msg[512];
  cu_result_message(msg, sizeof msg, (int)res, call, what);
  if (dev && cu_poison_note(&dev->slot->poison, (int)res, call)) {
    /* this call's own error first (asynchronous: it may come from earlier work; CUDA_LAUNCH_BLOCKING=1
     * attributes it to its kernel), then what it means for every later call */
    char poison[512];
    cu_poison_message(&dev->slot->poison, poison, sizeof poison, dev->slot->kit.info.name);
    return cu_fail(PARITY_STATUS_DEVICE_ERROR, "%s; %s", msg, poison);
  }
  int32_t st = cu_result_status((int)res);
  if (st == PARITY_STATUS_OK) st = PARITY_STATUS_INTERNAL;
  return cu_fail(st, "%s", msg);
}

cu_slot_t *cu_slot(uint32_t index) { return psup_kit_slot_at(&cu_kit, index); }

static int attr(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  if (cu_drv.cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS) v = 0;
  return v;
}

static int32_t add_device(int ordinal) {
  CUdevice d;
  CUresult r = cu_drv.cuDeviceGet(&d, ordinal);
  if (r != CUDA_SUCCESS) return cu_res_fail(NULL, r, "cuDeviceGet", "enumerating devices");
  char name[128] = "";
  if (cu_drv.cuDeviceGetName(name, (int)sizeof name - 1, d) != CUDA_SUCCESS)
    snprintf(name, sizeof name, "CUDA device %d", ordinal);
  cu_slot_t *s = psup_kit_slot_add(&cu_kit, name);
  if (!s) return PARITY_STATUS_OK;
  s->dev = d;
  size_t mem = 0;
  if (cu_drv.cuDeviceTotalMem(&mem, d) != CUDA_SUCCESS) mem = 0;
  s->cc_major = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  s->cc_minor = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  s->sm_count = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  s->pools = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) && cu_drv.cuMemAllocAsync && cu_drv.cuMemFreeAsync &&
             cu_drv.cuDeviceGetDefaultMemPool && cu_drv.cuMemPoolSetAttribute;
  parity_device_info_t *info = &s->kit.info;
  info->type = PARITY_DEVICE_TYPE_GPU;
  snprintf(info->name, sizeof info->name, "%.100s (sm_%d%d)", name, s->cc_major, s->cc_minor);
  snprintf(info->driver, sizeof info->driver, "CUDA %d.%d driver", cu_drv.version / 1000, (cu_drv.version % 1000) / 10);
  info->memory_bytes = mem;
  info->max_buffer_bytes = mem;
  /* every op of every family has kernels for every dtype the operand contract allows */
  info->dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32) | PARITY_DTYPE_BIT(PARITY_DTYPE_F64) |
                     PARITY_DTYPE_BIT(PARITY_DTYPE_F16) | PARITY_DTYPE_BIT(PARITY_DTYPE_BF16) |
                     PARITY_DTYPE_BIT(PARITY_DTYPE_I32) | PARITY_DTYPE_BIT(PARITY_DTYPE_I64) |
                     PARITY_DTYPE_BIT(PARITY_DTYPE_BOOL);
  /* f64 kernels for every floating op; no atomics, geometry fixed by shape and device */
  info->flags = PARITY_DEVICE_FLAG_FLOAT64 | PARITY_DEVICE_FLAG_DETERMINISTIC;
  info->denormals = PARITY_DENORMALS_PRESERVED; /* PTX built with -ftz=false */
  snprintf(info->math, sizeof info->math,
           "f32 f16 bf16: CUDA libm in float, sin cos from the float32 library; f64: CUDA libm");
  psup_kit_slot_ready(&cu_kit, &s->kit);
  cu_log(PARITY_LOG_DEBUG, "device %u: %s, %s, %d SMs, %.1f GiB, stream-ordered pool %s", cu_kit.slot_count - 1,
         info->name, info->driver, s->sm_count, (double)mem / (1 << 30), s->pools ? "yes" : "no");
  return PARITY_STATUS_OK;
}

static int32_t cu_init(void) {
  psup_kit_slots_reset(&cu_kit);
  char msg[512];
  int32_t st = cu_driver_load(msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cu_fail(st, "%s", msg);
  CUresult r = cu_drv.cuInit(0);
  if (r != CUDA_SUCCESS) {
    /* no device, a stub library, a driver/kernel-module mismatch: the backend cannot run here */
    cu_result_message(msg, sizeof msg, (int)r, "cuInit", NULL);
    int v = cu_drv.version;
    cu_driver_unload();
    return cu_fail(PARITY_STATUS_UNAVAILABLE, "%s (CUDA %d.%d driver in %s)", msg, v / 1000, (v % 1000) / 10,
                   cu_driver_library());
  }
  int count = 0;
  r = cu_drv.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    int32_t e = cu_res_fail(NULL, r, "cuDeviceGetCount", "listing devices");
    cu_driver_unload();
    return e;
  }
  if (count <= 0) {
    cu_driver_unload();
    return cu_fail(PARITY_STATUS_UNAVAILABLE, "the NVIDIA driver reports no CUDA device");
  }
  for (int i = 0; i < count; i++) {
    st = add_device(i);
    if (st != PARITY_STATUS_OK) {
      cu_driver_unload();
      return st;
    }
  }
  return PARITY_STATUS_OK;
}

static void cu_shutdown(void) {
  psup_kit_slots_reset(&cu_kit);
  cu_driver_unload();
}

static const psup_kit_slot_t *slot_of(const parity_plugin_device_t *dev) { return &dev->slot->kit; }
static uint64_t buffer_size(const parity_plugin_buffer_t *b) { return b->size; }

psup_kit_t cu_kit = {
    .backend = "cuda",
    PSUP_KIT_SLOTS(slots),
    .slot_of = slot_of,
    PSUP_KIT_DEVICES(cu),
    .enter = cu_enter, /* refuses a poisoned context, makes the device's context current */
    PSUP_KIT_FAMILIES(cu, NULL, NULL, NULL, NULL, NULL),
    .buffers = PSUP_KIT_TRANSFERS(cu, buffer_size),
    /* prepared plans: the eager entries captured into a CUDA graph (cu_plan.c) */
    .plans = {cu_plan_begin, cu_plan_end, cu_plan_run, cu_plan_release},
};

PSUP_KIT_ENTRIES(cu_kit)
PSUP_KIT_PLAN_ENTRIES(cu_kit)
PSUP_KIT_API_PLANS(cu_api, cu);

const parity_plugin_api_t *cu_plugin_api(void) { return &cu_api; }
