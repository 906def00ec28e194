/* cu_device.c — device open/close (the primary context, one non-blocking stream, an event),
 * modules loaded from the embedded PTX on first use (JIT logs captured into the message),
 * kernel launches and the scratch buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/desc.h"
#include "cu_internal.h"

static const int kernel_family[CU_K_COUNT] = {
#define CU_X_(n, f) CU_FAM_##f,
    CU_KERNEL_LIST(CU_X_)
#undef CU_X_
};

int32_t cu_enter(parity_plugin_device_t *dev) {
  if (cu_poisoned(&dev->slot->poison)) {
    char msg[512];
    cu_poison_message(&dev->slot->poison, msg, sizeof msg, dev->slot->kit.info.name);
    return cu_fail(PARITY_STATUS_DEVICE_ERROR, "%s", msg);
  }
  CU_CHECK(dev, cu_drv.cuCtxSetCurrent(dev->ctx), "cuCtxSetCurrent", dev->slot->kit.info.name);
  return PARITY_STATUS_OK;
}

void cu_device_close(parity_plugin_device_t *dev) {
  if (!dev) return;
  if (dev->ctx && cu_drv.cuCtxSetCurrent(dev->ctx) == CUDA_SUCCESS) {
    int healthy = !cu_poisoned(&dev->slot->poison);
    /* a poisoned context fails every call at once: nothing here can wait forever */
    if (healthy && dev->stream) cu_drv.cuStreamSynchronize(dev->stream);
    if (healthy && dev->scratch) cu_mem_free(dev, dev->scratch);
    if (healthy && dev->stream) cu_drv.cuStreamSynchronize(dev->stream);
    for (int f = 0; f < CU_FAM_COUNT; f++)
      for (int c = 0; c < CU_CLASS_COUNT; c++)
        if (dev->mod[f][c]) cu_drv.cuModuleUnload(dev->mod[f][c]);
    if (dev->done) cu_drv.cuEventDestroy(dev->done);
    if (dev->stream) cu_drv.cuStreamDestroy(dev->stream);
    cu_drv.cuCtxSetCurrent(NULL);
  }
  if (dev->ctx) cu_drv.cuDevicePrimaryCtxRelease(dev->slot->dev);
  free(dev);
}

/* Load one module from its embedded PTX; JIT error and info logs go into the message. */
static int32_t load_module(parity_plugin_device_t *dev, int fam, int cls) {
  const cu_ptx_t *ptx = cu_ptx(fam, cls);
  if (!ptx)
    return cu_fail(PARITY_STATUS_INTERNAL, "no PTX for family %d class %s in this build", fam, cu_class_name(cls));
  char err[4096] = "", info[4096] = "";
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {err, (void *)(uintptr_t)sizeof err, info, (void *)(uintptr_t)sizeof info};
  CUresult r = cu_drv.cuModuleLoadDataEx(&dev->mod[fam][cls], ptx->text, 4, opts, vals);
  if (r == CUDA_SUCCESS) {
    if (info[0]) {
      char msg[4200];
      snprintf(msg, sizeof msg, "JIT of %s: %s", ptx->name, info);
      cu_log(PARITY_LOG_DEBUG, msg);
    }
    return PARITY_STATUS_OK;
  }
  dev->mod[fam][cls] = NULL;
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    char msg[512];
    cu_ptx_version_message(msg, sizeof msg, cu_drv.version, cu_ptx_toolkit_version(), ptx->text);
    return cu_fail(PARITY_STATUS_UNAVAILABLE, "%s (loading %s)", msg, ptx->name);
  }
  /* the whole logs to the log; the message (the host keeps 1,024 characters) starts with the
   * error log */
  char full[8600];
  snprintf(full, sizeof full, "JIT of %s failed; error log: %s; info log: %s", ptx->name, err[0] ? err : "(empty)",
           info[0] ? info : "(empty)");
  cu_log(PARITY_LOG_WARNING, full);
  if (cu_result_is_sticky((int)r)) return cu_res_fail(dev, r, "cuModuleLoadDataEx", ptx->name);
  char what[1000], msg[1024];
  snprintf(what, sizeof what, "loading %s; JIT error log: %.900s", ptx->name, err[0] ? err : "(empty)");
  cu_result_message(msg, sizeof msg, (int)r, "cuModuleLoadDataEx", what);
  int32_t st = cu_result_status((int)r);
  if (st == PARITY_STATUS_OK) st = PARITY_STATUS_INTERNAL;
  return cu_fail(st, "%s", msg);
}

static int32_t get_function(parity_plugin_device_t *dev, int cls, int kid, CUfunction *out) {
  if (dev->fn[cls][kid]) {
    *out = dev->fn[cls][kid];
    return PARITY_STATUS_OK;
  }
  int fam = kernel_family[kid];
  if (!dev->mod[fam][cls]) {
    int32_t st = load_module(dev, fam, cls);
    if (st != PARITY_STATUS_OK) return st;
  }
  CU_CHECK(dev, cu_drv.cuModuleGetFunction(&dev->fn[cls][kid], dev->mod[fam][cls], kp_kernel_name(kid)),
           "cuModuleGetFunction", kp_kernel_name(kid));
  *out = dev->fn[cls][kid];
  return PARITY_STATUS_OK;
}

static int32_t open_objects(parity_plugin_device_t *dev) {
  cu_slot_t *s = dev->slot;
  CUresult r = cu_drv.cuDevicePrimaryCtxRetain(&dev->ctx, s->dev);
  if (r != CUDA_SUCCESS) {
    dev->ctx = NULL;
    return cu_res_fail(dev, r, "cuDevicePrimaryCtxRetain", s->kit.info.name);
  }
  int32_t st = cu_enter(dev);
  if (st != PARITY_STATUS_OK) return st;
  CU_CHECK(dev, cu_drv.cuStreamCreate(&dev->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", s->kit.info.name);
  CU_CHECK(dev, cu_drv.cuEventCreate(&dev->done, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC), "cuEventCreate",
           s->kit.info.name);
  dev->pools = s->pools;
  if (dev->pools) { /* keep freed memory in the pool instead of returning it at every sync */
    CUmemoryPool pool;
    cuuint64_t keep = UINT64_MAX;
    if (cu_drv.cuDeviceGetDefaultMemPool(&pool, s->dev) != CUDA_SUCCESS ||
        cu_drv.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) != CUDA_SUCCESS)
      dev->pools = 0;
  }
  dev->max_blocks = (uint64_t)(s->sm_count > 0 ? s->sm_count : 1) * 32u;
  long long blocks = 0; /* test knob: force grid-stride loops */
  char msg[200];
  if (psup_env_int("PARITY_CUDA_MAX_BLOCKS", 0, 1ll << 31, 0, &blocks, msg, sizeof msg) != 0 ||
      psup_kit_scratch_mode(&cu_kit, &dev->scratch_mode, msg, sizeof msg) != 0)
    return cu_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  if (blocks > 0) dev->max_blocks = (uint64_t)blocks;
  /* load the elementwise f32 module now: a driver too old for the PTX fails here, with the
   * versions named, rather than at the first kernel */
  return load_module(dev, CU_FAM_EW, CU_CLASS_F);
}

/* device_open's part (the kit, parity_support/gpu_kit.h, allocates the zeroed device and closes it
 * when this fails) */
int32_t cu_device_init(parity_plugin_device_t *dev, uint32_t index) {
  dev->index = index;
  dev->slot = cu_slot(index);
  return open_objects(dev);
}

int32_t cu_run(parity_plugin_device_t *dev, int cls, int kid, const cu_geom_t *g, void **args) {
  CUfunction f = NULL;
  int32_t st = get_function(dev, cls, kid, &f);
  if (st != PARITY_STATUS_OK) return st;
  CU_CHECK(dev,
           cu_drv.cuLaunchKernel(f, g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2], 0,
                                 dev->stream, args, NULL),
           "cuLaunchKernel", kp_kernel_name(kid));
  return PARITY_STATUS_OK;
}

int32_t cu_run_items(parity_plugin_device_t *dev, int cls, int kid, int64_t items, uint32_t nargs, void **args) {
  void *all[16];
  if (nargs + 1 > 16) return cu_fail(PARITY_STATUS_INTERNAL, "%s: too many arguments", kp_kernel_name(kid));
  int64_t n = items; /* the kernel's `long n` */
  all[0] = args[0];
  all[1] = &n;
  for (uint32_t i = 1; i < nargs; i++) all[i + 1] = args[i];
  cu_geom_t g = cu_geom_items(items, CU_BLOCK, dev->max_blocks);
  return cu_run(dev, cls, kid, &g, all);
}

int32_t cu_run_ops(parity_plugin_device_t *dev, int cls, int kid, int64_t items, void *params, uint32_t nops,
                   const parity_tensor_desc_t *const *t) {
  CUdeviceptr m[KP_MAX_OPS];
  void *args[KP_MAX_OPS + 1] = {params};
  if (nops > KP_MAX_OPS) return cu_fail(PARITY_STATUS_INTERNAL, "%s: too many operands", kp_kernel_name(kid));
  for (uint32_t k = 0; k < nops; k++) m[k] = cu_ptr_of(t[k]), args[k + 1] = &m[k];
  return cu_run_items(dev, cls, kid, items, nops + 1, args);
}

int32_t cu_scratch(parity_plugin_device_t *dev, uint64_t bytes, CUdeviceptr *out) {
  if (bytes == 0) bytes = 1;
  if (dev->rec) return cu_plan_scratch(dev, bytes, out); /* capturing: the plan's own memory */
  if (psup_kit_scratch_fits(dev->scratch_mode, dev->scratch ? dev->scratch_size : 0, bytes)) {
    *out = dev->scratch;
    return PARITY_STATUS_OK;
  }
  uint64_t size = psup_kit_scratch_size(dev->scratch_mode, bytes, dev->slot->kit.info.max_buffer_bytes);
  CUdeviceptr p;
  int32_t st = cu_mem_alloc(dev, size, &p, "scratch for partial results");
  if (st != PARITY_STATUS_OK) return st;
  /* stream-ordered: the old buffer is released after the queued work that uses it */
  if (dev->scratch) cu_mem_free(dev, dev->scratch);
  dev->scratch = p;
  dev->scratch_size = size;
  *out = p;
  return PARITY_STATUS_OK;
}

/* ---- operands ------------------------------------------------------------------------------------ */
CUdeviceptr cu_ptr_of(const parity_tensor_desc_t *t) { return t && t->buffer ? t->buffer->ptr : 0; }
