/* cu_plugin.c — the CUDA plugin's function table: lifecycle (driver, device enumeration),
 * device info, validation and dispatch to the kernel family files. Devices live in cu_device.c,
 * memory and the stream in cu_memory.c, the driver table in cu_driver.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/desc.h"
#include "cu_internal.h"

const parity_host_api_t *cu_host;

void cu_set_host(const parity_host_api_t *host) { cu_host = host; }

void cu_log(int32_t level, const char *msg) {
  psup_log(cu_host, level, "%s", msg);
}

int32_t cu_res_fail(cu_device_t *dev, CUresult res, const char *call, const char *what) {
  char msg[512];
  cu_result_message(msg, sizeof msg, (int)res, call, what);
  if (dev && cu_poison_note(&dev->slot->poison, (int)res, call)) {
    /* this call's own error first (asynchronous: it may come from earlier work; CUDA_LAUNCH_BLOCKING=1
     * attributes it to its kernel), then what it means for every later call */
    char poison[512];
    cu_poison_message(&dev->slot->poison, poison, sizeof poison, dev->slot->info.name);
    return cu_fail(PARITY_STATUS_DEVICE_ERROR, "%s; %s", msg, poison);
  }
  int32_t st = cu_result_status((int)res);
  if (st == PARITY_STATUS_OK) st = PARITY_STATUS_INTERNAL;
  return cu_fail(st, "%s", msg);
}

/* ---- enumeration (init is single-threaded; the table is read-only afterwards but for the
 * poison state) ---------------------------------------------------------------------------------- */
#define CU_MAX_DEVICES 64
static cu_slot_t slots[CU_MAX_DEVICES];
static uint32_t slot_count;

cu_slot_t *cu_slot(uint32_t index) { return index < slot_count ? &slots[index] : NULL; }

static int attr(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  if (cu_drv.cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS) v = 0;
  return v;
}

static int32_t add_device(int ordinal) {
  CUdevice d;
  CUresult r = cu_drv.cuDeviceGet(&d, ordinal);
  if (r != CUDA_SUCCESS) return cu_res_fail(NULL, r, "cuDeviceGet", "enumerating devices");
  if (slot_count == CU_MAX_DEVICES) return PARITY_STATUS_OK;
  cu_slot_t *s = &slots[slot_count++];
  memset(s, 0, sizeof *s);
  s->dev = d;
  char name[128] = "";
  if (cu_drv.cuDeviceGetName(name, (int)sizeof name - 1, d) != CUDA_SUCCESS) snprintf(name, sizeof name, "CUDA device %d", ordinal);
  size_t mem = 0;
  if (cu_drv.cuDeviceTotalMem(&mem, d) != CUDA_SUCCESS) mem = 0;
  s->cc_major = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  s->cc_minor = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  s->sm_count = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  s->pools = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) && cu_drv.cuMemAllocAsync &&
             cu_drv.cuMemFreeAsync && cu_drv.cuDeviceGetDefaultMemPool && cu_drv.cuMemPoolSetAttribute;
  parity_device_info_t *info = &s->info;
  info->struct_size = sizeof *info;
  info->type = PARITY_DEVICE_TYPE_GPU;
  snprintf(info->name, sizeof info->name, "%.100s (sm_%d%d)", name, s->cc_major, s->cc_minor);
  snprintf(info->driver, sizeof info->driver, "CUDA %d.%d driver", cu_drv.version / 1000,
           (cu_drv.version % 1000) / 10);
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
  snprintf(info->math, sizeof info->math, "f32 f16 bf16: CUDA libm in float, sin cos from the float32 library; f64: CUDA libm");
  s->caps.backend = "cuda";
  s->caps.device = info->name;
  s->caps.dtype_mask = info->dtype_mask;
  char msg[400];
  snprintf(msg, sizeof msg, "cuda: device %u: %s, %s, %d SMs, %.1f GiB, stream-ordered pool %s",
           slot_count - 1, info->name, info->driver, s->sm_count, (double)mem / (1 << 30),
           s->pools ? "yes" : "no");
  cu_log(PARITY_LOG_DEBUG, msg);
  return PARITY_STATUS_OK;
}

static int32_t cu_init(void) {
  slot_count = 0;
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
    return cu_fail(PARITY_STATUS_UNAVAILABLE, "cuda: the NVIDIA driver reports no CUDA device");
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
  slot_count = 0;
  cu_driver_unload();
}

static int32_t cu_get_device_count(uint32_t *out_count) {
  *out_count = slot_count;
  return PARITY_STATUS_OK;
}

static int32_t cu_get_device_info(uint32_t index, parity_device_info_t *out) {
  if (index >= slot_count)
    return cu_fail(PARITY_STATUS_OUT_OF_RANGE, "cuda: device %u does not exist (%u devices)", index, slot_count);
  uint32_t size = out->struct_size < sizeof slots[index].info ? out->struct_size : (uint32_t)sizeof slots[index].info;
  parity_device_info_t info = slots[index].info;
  info.struct_size = size;
  memcpy(out, &info, size);
  return PARITY_STATUS_OK;
}

/* ---- validation and dispatch ------------------------------------------------------------------ */
/* Element-aligned offsets: the kernels address elements, not bytes. */
static int32_t check_alignment(const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (t && t->offset_bytes % psup_dtype_size(t->dtype))
        return cu_fail(PARITY_STATUS_UNSUPPORTED,
                       "cuda: %s: %s %u starts at byte offset %llu, not a multiple of its %u-byte element",
                       psup_op_name(d->op), pass ? "output" : "input", i, (unsigned long long)t->offset_bytes,
                       psup_dtype_size(t->dtype));
    }
  }
  return PARITY_STATUS_OK;
}

static int32_t family_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t st = check_alignment(d);
  if (st != PARITY_STATUS_OK) return st;
  char msg[512];
  st = psup_check_operands(d, &dev->slot->caps, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cu_fail(st, "%s", msg);
  return PARITY_STATUS_OK;
}

static int32_t cu_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  /* the host validated the descriptor (parity_plugin.h): answer the capability question */
  return family_supports(dev, d);
}

/* Kernel entries check only what is cheap (the host validated the descriptor and asked
 * supports() first: parity_plugin.h), then
 * refuses a poisoned context and makes the device's context current. */
static int32_t validate(parity_plugin_device_t *dev, const parity_op_desc_t *d, int32_t family, int32_t direction) {
  char msg[512];
  int32_t st = psup_check_kernel_entry(d, family, direction, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cu_fail(st, "cuda: %s", msg);
  return cu_enter(dev);
}

#define CU_ENTRY(name, FAMILY, dir, DIR)                                                       \
  static int32_t entry_##name##_##dir(parity_plugin_device_t *dev, const parity_op_desc_t *d) { \
    int32_t st = validate(dev, d, PARITY_FAMILY_##FAMILY, PARITY_DIRECTION_##DIR);             \
    return st != PARITY_STATUS_OK ? st : cu_##name##_##dir(dev, d);                            \
  }
#define CU_ENTRIES(name, FAMILY)             \
  CU_ENTRY(name, FAMILY, forward, FORWARD)   \
  CU_ENTRY(name, FAMILY, backward, BACKWARD)
CU_ENTRIES(elementwise, ELEMENTWISE)
CU_ENTRIES(reduce, REDUCE)
CU_ENTRIES(matmul, MATMUL)
CU_ENTRIES(conv2d, CONV2D)
CU_ENTRIES(softmax, SOFTMAX)

static const parity_plugin_api_t cu_api = {
    .struct_size = sizeof(parity_plugin_api_t),
    .init = cu_init,
    .shutdown = cu_shutdown,
    .get_device_count = cu_get_device_count,
    .get_device_info = cu_get_device_info,
    .device_open = cu_device_open,
    .device_close = cu_device_close,
    .buffer_alloc = cu_buffer_alloc,
    .buffer_free = cu_buffer_free,
    .buffer_write = cu_buffer_write,
    .buffer_read = cu_buffer_read,
    .buffer_copy = cu_buffer_copy,
    .buffer_fill = cu_buffer_fill,
    .synchronize = cu_synchronize,
    .supports = cu_supports,
    .elementwise_forward = entry_elementwise_forward,
    .elementwise_backward = entry_elementwise_backward,
    .reduce_forward = entry_reduce_forward,
    .reduce_backward = entry_reduce_backward,
    .matmul_forward = entry_matmul_forward,
    .matmul_backward = entry_matmul_backward,
    .conv2d_forward = entry_conv2d_forward,
    .conv2d_backward = entry_conv2d_backward,
    .softmax_forward = entry_softmax_forward,
    .softmax_backward = entry_softmax_backward,
};

const parity_plugin_api_t *cu_plugin_api(void) { return &cu_api; }
