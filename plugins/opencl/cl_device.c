/* cl_device.c — device open/close, launch geometry and argument setting, and the scratch buffer.
 * Kernels are built on first use (cl_programs.c, cl_cache.c); opening a device compiles nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/cachefile.h"
#include "parity_support/env.h"
#include "parity_support/desc.h"
#include "cl_internal.h"

_Atomic uint64_t ocl_mem_epoch;

/* Kernels whose items are single elements (elementwise): on the contiguous layout they start a
 * second work-item only past dev->grain items (PARITY_OPENCL_GRAIN, default 4096); the others'
 * items are rows, outputs or blocks, one or more per work-item. */
static const unsigned char kernel_elementwise[OCL_K_COUNT] = {
#define OCL_X_(n, src) OCL_SRC_##src == OCL_SRC_EW,
    OCL_KERNEL_LIST(OCL_X_)
#undef OCL_X_
};

int ocl_kernel_partner(int kid, ocl_var_t v) {
  int cls = ocl_var_class(v);
  if (cls != OCL_CLASS_F && cls != OCL_CLASS_D) return -1; /* integer classes run forward only */
  switch (kid) {
    case OCL_K_ew_unary: return OCL_K_ew_unary_bwd;
    case OCL_K_ew_unary_bwd: return OCL_K_ew_unary;
    case OCL_K_ew_binary: return OCL_K_ew_binary_bwd;
    case OCL_K_ew_binary_bwd: return OCL_K_ew_binary;
    case OCL_K_smx_fwd: return OCL_K_smx_bwd;
    case OCL_K_smx_bwd: return OCL_K_smx_fwd;
    case OCL_K_smx_row_fwd: return OCL_K_smx_row_bwd;
    case OCL_K_smx_row_bwd: return OCL_K_smx_row_fwd;
    /* a sum (or mean) and its backward, which reduce.c asks for in the same variant */
    case OCL_K_red_pass:
      return ocl_var_op(v) == PARITY_OP_SUM && ocl_var_dt(v) == ocl_var_dt2(v) ? OCL_K_red_bwd_sum : -1;
    case OCL_K_red_bwd_sum:
      return ocl_var_op(v) == PARITY_OP_SUM && ocl_var_dt(v) == ocl_var_dt2(v) ? OCL_K_red_pass : -1;
    default: return -1;
  }
}

int ocl_program_kernel(int kid, ocl_var_t v) {
  int q = ocl_kernel_partner(kid, v);
  return q >= 0 && q < kid ? q : kid;
}

void ocl_device_close(parity_plugin_device_t *dev) {
  if (!dev) return;
  if (dev->queue && clFinish(dev->queue) == CL_SUCCESS) {
    ocl_queue_drained(dev);
    ocl_cache_flush(dev, 1);
  }
  /* if the queue did not drain, a queued write may still read its staging copy: leave it */
  free(dev->staging);
  ocl_programs_release(dev);
  if (dev->scratch) ocl_mem_release(dev->scratch);
  if (dev->queue) clReleaseCommandQueue(dev->queue);
  if (dev->ctx) clReleaseContext(dev->ctx);
  free(dev);
}

static int32_t open_objects(parity_plugin_device_t *dev) {
  const ocl_slot_t *s = dev->slot;
  cl_int e = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, 0};
  dev->ctx = clCreateContext(props, 1, &s->id, NULL, NULL, &e);
  OCL_CHECK(e, "clCreateContext", s->kit.info.name);
  dev->queue = clCreateCommandQueue(dev->ctx, s->id, 0, &e); /* in-order */
  OCL_CHECK(e, "clCreateCommandQueue", s->kit.info.name);
  cl_uint units = 1;
  size_t max_local = 1;
  OCL_CHECK(clGetDeviceInfo(s->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL), "clGetDeviceInfo",
            "CL_DEVICE_MAX_COMPUTE_UNITS");
  OCL_CHECK(clGetDeviceInfo(s->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_local, &max_local, NULL),
            "clGetDeviceInfo", "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  dev->units = units ? units : 1;
  dev->max_local = max_local ? max_local : 1;
  /* CPU devices: a few large groups per core, each work-item a contiguous run; GPUs: enough
   * groups to fill the device, work-items striding through the rest. */
  dev->max_groups = (uint64_t)dev->units * (s->cpu_like ? 4u : 64u);
  dev->contiguous = s->cpu_like;
  static const char *const layouts[] = {"auto", "contiguous", "strided", NULL};
  int layout = 0;
  long long groups = 0, grain = 4096;
  char msg[200];
  if (s->knob_error[0]) return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", s->knob_error);
  if (psup_env_choice("PARITY_OPENCL_WORK_LAYOUT", layouts, 0, &layout, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_OPENCL_MAX_GROUPS", 0, 1ll << 32, 0, &groups, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_OPENCL_GRAIN", 1, 1ll << 30, 4096, &grain, msg, sizeof msg) != 0 ||
      psup_kit_scratch_mode(&ocl_kit, &dev->scratch_mode, msg, sizeof msg) != 0)
    return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  dev->grain = (uint32_t)grain;
  if (layout) dev->contiguous = layout == 1;
  if (groups > 0) dev->max_groups = (uint64_t)groups;
  /* parity's program cache (cl_cache.c): auto leaves it off where the driver caches compiled
   * kernels itself and a binary asked of it compiles every kernel again (PoCL: the cold conformance
   * subset's optimised tier 220 -> 110 s without the writes; README: Program cache) */
  static const char *const cache_modes[] = {"auto", "on", "off", NULL};
  int cache_mode = 0;
  if (psup_env_choice("PARITY_OPENCL_PROGRAM_CACHE", cache_modes, 0, &cache_mode, msg, sizeof msg) != 0)
    return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  const char *cache_why = psup_cache_dir("opencl", dev->cache_dir, sizeof dev->cache_dir);
  if (cache_why && strstr(cache_why, "too long")) ocl_log(PARITY_LOG_WARNING, "%s", cache_why);
  const char *pocl_cache = psup_getenv("POCL_KERNEL_CACHE"); /* PoCL's default: on */
  int driver_caches = s->pocl && !(pocl_cache && strcmp(pocl_cache, "0") == 0);
  if (cache_mode == 2 || (cache_mode == 0 && driver_caches)) {
    if (cache_mode == 0)
      ocl_log(PARITY_LOG_DEBUG,
              "program cache off: the driver keeps its own (POCL_KERNEL_CACHE=0 turns that off and this on)");
    dev->cache_dir[0] = 0;
  }
  return ocl_tier_mode(s, &dev->tier);
}

/* device_open's part (the kit, parity_support/gpu_kit.h, allocates the zeroed device and closes it
 * when this fails) */
int32_t ocl_device_init(parity_plugin_device_t *dev, uint32_t index) {
  dev->index = index;
  dev->slot = ocl_slot(index);
  return open_objects(dev);
}

/* Set args[0..n) as arguments first.. of p's kernel, skipping values it already holds (cl_mem
 * handles too, while no buffer of the device has been released since they were set). */
static int32_t set_args(ocl_prog_t *p, int kid, uint32_t first, uint32_t n, const ocl_arg_t *args) {
  if (!p->args) p->args = calloc(1, sizeof *p->args); /* without it every argument is set */
  ocl_argcache_t *c = p->args;
  uint64_t epoch = __atomic_load_n(&ocl_mem_epoch, __ATOMIC_RELAXED);
  if (c && c->epoch != epoch) {
    memset(c->size, 0, sizeof c->size);
    c->epoch = epoch;
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t a = first + i;
    size_t size = args[i].size;
    int cacheable = c && a < OCL_MAX_ARGS && size <= OCL_ARG_CACHE_BYTES;
    if (cacheable && c->size[a] == size && memcmp(c->value[a], args[i].value, size) == 0) continue;
    cl_int e = clSetKernelArg(p->kern, a, size, args[i].value);
    if (c && a < OCL_MAX_ARGS) c->size[a] = 0;
    OCL_CHECK(e, "clSetKernelArg", kp_kernel_name(kid));
    if (cacheable) {
      memcpy(c->value[a], args[i].value, size);
      c->size[a] = (uint16_t)size;
    }
  }
  return PARITY_STATUS_OK;
}

/* Set every argument and enqueue p's kernel, or record the launch while a plan records
 * (cl_plan.c: a kernel object of the plan's own with these arguments). */
static int32_t launch(parity_plugin_device_t *dev, ocl_prog_t *p, int kid, uint32_t dims, const size_t *global,
                      const size_t *local, uint32_t nargs, const ocl_arg_t *args) {
  if (dev->rec) return ocl_rec_launch(dev, p, kid, dims, global, local, nargs, args);
  int32_t st = set_args(p, kid, 0, nargs, args);
  if (st != PARITY_STATUS_OK) return st;
  OCL_CHECK(clEnqueueNDRangeKernel(dev->queue, p->kern, dims, NULL, global, local, 0, NULL, NULL),
            "clEnqueueNDRangeKernel", kp_kernel_name(kid));
  return PARITY_STATUS_OK;
}

int32_t ocl_run(parity_plugin_device_t *dev, ocl_var_t v, int kid, uint32_t dims, const size_t *global,
                const size_t *local, uint32_t nargs, const ocl_arg_t *args) {
  ocl_prog_t *p;
  int32_t st = ocl_program(dev, v, kid, 0, &p); /* explicit geometry: no tier change under it */
  return st != PARITY_STATUS_OK ? st : launch(dev, p, kid, dims, global, local, nargs, args);
}

/* 1-D launch geometry over `items`: global and local sizes, and items per work-item (0: strided). */
static void items_geometry(const parity_plugin_device_t *dev, const ocl_prog_t *p, int kid, int64_t items, size_t *g,
                           size_t *l, cl_long *per) {
  uint64_t local = p->local;
  /* contiguous layout: an elementwise work-item takes at least dev->grain items, so a small op is one
   * work-item in one group (the least a driver like PoCL has to schedule) */
  uint64_t grain = dev->contiguous && kernel_elementwise[kid] ? dev->grain : 1;
  uint64_t groups = ((uint64_t)items + local * grain - 1) / (local * grain);
  if (groups > dev->max_groups) groups = dev->max_groups;
  uint64_t global = groups * local;
  /* CPU devices: contiguous runs of `per` items; GPUs: per = 0, stride by the global size */
  *per = dev->contiguous ? (cl_long)(((uint64_t)items + global - 1) / global) : 0;
  *g = (size_t)global;
  *l = (size_t)local;
}

int32_t ocl_run_ops(parity_plugin_device_t *dev, ocl_var_t v, int kid, int64_t items, uint64_t work, ocl_arg_t params,
                    uint32_t nops, const parity_tensor_desc_t *const *t) {
  cl_mem m[KP_MAX_OPS];
  ocl_arg_t args[KP_MAX_OPS + 1] = {params};
  if (nops > KP_MAX_OPS) return ocl_fail(PARITY_STATUS_INTERNAL, "%s: too many operands", kp_kernel_name(kid));
  for (uint32_t k = 0; k < nops; k++) m[k] = ocl_mem_of(t[k]), args[k + 1] = OCL_ARG(m[k]);
  return ocl_run_items(dev, v, kid, items, work, nops + 1, args);
}

int32_t ocl_run_items(parity_plugin_device_t *dev, ocl_var_t v, int kid, int64_t items, uint64_t work, uint32_t nargs,
                      const ocl_arg_t *args) {
  ocl_prog_t *p;
  int32_t st = ocl_program(dev, v, kid, work, &p);
  if (st != PARITY_STATUS_OK) return st;
  if (nargs == 0 || nargs + 2 > OCL_MAX_ARGS)
    return ocl_fail(PARITY_STATUS_INTERNAL, "%s: %u arguments", kp_kernel_name(kid), (unsigned)nargs);
  size_t g, l;
  cl_long n = items, per;
  items_geometry(dev, p, kid, items, &g, &l, &per);
  ocl_arg_t all[OCL_MAX_ARGS]; /* args[0], then n and per, then args[1..] */
  all[0] = args[0];
  all[1] = OCL_ARG(n);
  all[2] = OCL_ARG(per);
  for (uint32_t i = 1; i < nargs; i++) all[i + 2] = args[i];
  return launch(dev, p, kid, 1, &g, &l, nargs + 2, all);
}

int32_t ocl_run_iter(parity_plugin_device_t *dev, ocl_var_t v, int kid, kp_iter_cl_t *it, int64_t items, uint32_t nargs,
                     const ocl_arg_t *args) {
  ocl_prog_t *p;
  int32_t st = ocl_program(dev, v, kid, (uint64_t)items, &p);
  if (st != PARITY_STATUS_OK) return st;
  if (nargs + 1 > OCL_MAX_ARGS)
    return ocl_fail(PARITY_STATUS_INTERNAL, "%s: %u arguments", kp_kernel_name(kid), (unsigned)nargs);
  size_t g, l;
  cl_long per;
  items_geometry(dev, p, kid, items, &g, &l, &per);
  it->n = items;
  it->per = per;
  ocl_arg_t all[OCL_MAX_ARGS]; /* the iteration, then args */
  all[0] = OCL_ARG(*it);
  for (uint32_t i = 0; i < nargs; i++) all[i + 1] = args[i];
  return launch(dev, p, kid, 1, &g, &l, nargs + 1, all);
}

int32_t ocl_scratch(parity_plugin_device_t *dev, uint64_t bytes, cl_mem *out) {
  if (bytes == 0) bytes = 1;
  if (dev->rec) return ocl_rec_scratch(dev, bytes, out); /* the plan's own, alive until its release */
  if (psup_kit_scratch_fits(dev->scratch_mode, dev->scratch ? dev->scratch_size : 0, bytes)) {
    *out = dev->scratch;
    return PARITY_STATUS_OK;
  }
  uint64_t size = psup_kit_scratch_size(dev->scratch_mode, bytes, dev->slot->kit.info.max_buffer_bytes);
  cl_int e;
  cl_mem m = clCreateBuffer(dev->ctx, CL_MEM_READ_WRITE, (size_t)size, NULL, &e);
  OCL_CHECK(e, "clCreateBuffer", "scratch for partial results");
  /* the old buffer lives until the queued work that uses it has finished */
  if (dev->scratch) ocl_mem_release(dev->scratch);
  dev->scratch = m;
  dev->scratch_size = size;
  *out = m;
  return PARITY_STATUS_OK;
}
