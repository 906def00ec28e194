/* cl_device.c — device open/close, kernels created on first use, launch geometry and the
 * scratch buffer. Programs are built at open (cl_cache.c). */
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "cl_internal.h"

int ocl_class_of(int32_t dtype) {
  switch (dtype) {
    case PARITY_DTYPE_F64: return OCL_CLASS_D;
    case PARITY_DTYPE_I32: case PARITY_DTYPE_BOOL: return OCL_CLASS_I;
    case PARITY_DTYPE_I64: return OCL_CLASS_L;
    default: return OCL_CLASS_F;
  }
}

const char *ocl_class_name(int cls) {
  static const char *const names[OCL_CLASS_COUNT] = {"f32", "f64", "i32", "i64"};
  return cls >= 0 && cls < OCL_CLASS_COUNT ? names[cls] : "?";
}

static const char *const kernel_names[OCL_K_COUNT] = {
#define OCL_X_(n) #n,
    OCL_KERNEL_LIST(OCL_X_)
#undef OCL_X_
};

void ocl_device_close(parity_plugin_device_t *dev) {
  if (!dev) return;
  if (dev->queue) clFinish(dev->queue);
  for (int c = 0; c < OCL_CLASS_COUNT; c++) {
    for (int k = 0; k < OCL_K_COUNT; k++)
      if (dev->kern[c][k]) clReleaseKernel(dev->kern[c][k]);
    if (dev->prog[c]) clReleaseProgram(dev->prog[c]);
  }
  if (dev->scratch) clReleaseMemObject(dev->scratch);
  if (dev->queue) clReleaseCommandQueue(dev->queue);
  if (dev->ctx) clReleaseContext(dev->ctx);
  free(dev);
}

static int32_t open_objects(parity_plugin_device_t *dev) {
  const ocl_slot_t *s = dev->slot;
  cl_int e = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, 0};
  dev->ctx = clCreateContext(props, 1, &s->id, NULL, NULL, &e);
  OCL_CHECK(e, "clCreateContext", s->info.name);
  dev->queue = clCreateCommandQueue(dev->ctx, s->id, 0, &e); /* in-order */
  OCL_CHECK(e, "clCreateCommandQueue", s->info.name);
  cl_uint units = 1;
  size_t max_local = 1;
  OCL_CHECK(clGetDeviceInfo(s->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL),
            "clGetDeviceInfo", "CL_DEVICE_MAX_COMPUTE_UNITS");
  OCL_CHECK(clGetDeviceInfo(s->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_local, &max_local, NULL),
            "clGetDeviceInfo", "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  dev->units = units ? units : 1;
  dev->max_local = max_local ? max_local : 1;
  /* CPU devices: a few large groups per core, each work-item a contiguous run; GPUs: enough
   * groups to fill the device, work-items striding through the rest. */
  dev->max_groups = (uint64_t)dev->units * (s->cpu_like ? 4u : 64u);
  dev->contiguous = s->cpu_like;
  const char *layout = psup_getenv("PARITY_OPENCL_WORK_LAYOUT"), *groups = psup_getenv("PARITY_OPENCL_MAX_GROUPS");
  if (layout && strcmp(layout, "contiguous") == 0) dev->contiguous = 1;
  if (layout && strcmp(layout, "strided") == 0) dev->contiguous = 0;
  if (groups && atoll(groups) > 0) dev->max_groups = (uint64_t)atoll(groups);
  for (int c = 0; c < OCL_CLASS_COUNT; c++) {
    if (c == OCL_CLASS_D && !s->has_fp64) continue;
    int32_t st = ocl_build_program(dev, c, &dev->prog[c]);
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

int32_t ocl_device_open(uint32_t index, parity_plugin_device_t **out_dev) {
  const ocl_slot_t *s = ocl_slot(index);
  if (!s) return ocl_fail(PARITY_STATUS_OUT_OF_RANGE, "opencl: device %u does not exist", index);
  parity_plugin_device_t *dev = calloc(1, sizeof *dev);
  if (!dev) return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "opencl: device_open: out of host memory");
  dev->index = index;
  dev->slot = s;
  int32_t st = open_objects(dev);
  if (st != PARITY_STATUS_OK) {
    ocl_device_close(dev);
    return st;
  }
  *out_dev = dev;
  return PARITY_STATUS_OK;
}

int32_t ocl_kernel(parity_plugin_device_t *dev, int cls, int kid, cl_kernel *out) {
  if (dev->kern[cls][kid]) {
    *out = dev->kern[cls][kid];
    return PARITY_STATUS_OK;
  }
  if (!dev->prog[cls])
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: no %s program on %s", ocl_class_name(cls),
                    dev->slot->info.name);
  cl_int e;
  cl_kernel k = clCreateKernel(dev->prog[cls], kernel_names[kid], &e);
  OCL_CHECK(e, "clCreateKernel", kernel_names[kid]);
  size_t wg = 1;
  e = clGetKernelWorkGroupInfo(k, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  if (e != CL_SUCCESS) {
    clReleaseKernel(k);
    return ocl_cl_fail(e, "clGetKernelWorkGroupInfo", kernel_names[kid]);
  }
  size_t local = 64;
  while (local > 1 && (local > wg || local > dev->max_local)) local /= 2;
  dev->kern[cls][kid] = k;
  dev->kern_local[cls][kid] = local;
  *out = k;
  return PARITY_STATUS_OK;
}

static int32_t set_args(cl_kernel k, int kid, uint32_t first, uint32_t n, const ocl_arg_t *args) {
  for (uint32_t i = 0; i < n; i++)
    OCL_CHECK(clSetKernelArg(k, first + i, args[i].size, args[i].value), "clSetKernelArg",
              kernel_names[kid]);
  return PARITY_STATUS_OK;
}

int32_t ocl_run(parity_plugin_device_t *dev, int cls, int kid, uint32_t dims, const size_t *global,
                const size_t *local, uint32_t nargs, const ocl_arg_t *args) {
  cl_kernel k;
  int32_t st = ocl_kernel(dev, cls, kid, &k);
  if (st == PARITY_STATUS_OK) st = set_args(k, kid, 0, nargs, args);
  if (st != PARITY_STATUS_OK) return st;
  OCL_CHECK(clEnqueueNDRangeKernel(dev->queue, k, dims, NULL, global, local, 0, NULL, NULL),
            "clEnqueueNDRangeKernel", kernel_names[kid]);
  return PARITY_STATUS_OK;
}

int32_t ocl_run_items(parity_plugin_device_t *dev, int cls, int kid, int64_t items, uint32_t nargs,
                      const ocl_arg_t *args) {
  cl_kernel k;
  int32_t st = ocl_kernel(dev, cls, kid, &k);
  if (st != PARITY_STATUS_OK) return st;
  uint64_t local = dev->kern_local[cls][kid];
  uint64_t groups = ((uint64_t)items + local - 1) / local;
  if (groups > dev->max_groups) groups = dev->max_groups;
  uint64_t global = groups * local;
  /* CPU devices: contiguous runs of `per` items; GPUs: per = 0, stride by the global size */
  cl_long n = items, per = dev->contiguous ? (cl_long)(((uint64_t)items + global - 1) / global) : 0;
  st = set_args(k, kid, 0, 1, args);
  if (st == PARITY_STATUS_OK) st = set_args(k, kid, 1, 1, &OCL_ARG(n));
  if (st == PARITY_STATUS_OK) st = set_args(k, kid, 2, 1, &OCL_ARG(per));
  if (st == PARITY_STATUS_OK && nargs > 1) st = set_args(k, kid, 3, nargs - 1, args + 1);
  if (st != PARITY_STATUS_OK) return st;
  size_t g = (size_t)global, l = (size_t)local;
  OCL_CHECK(clEnqueueNDRangeKernel(dev->queue, k, 1, NULL, &g, &l, 0, NULL, NULL),
            "clEnqueueNDRangeKernel", kernel_names[kid]);
  return PARITY_STATUS_OK;
}

int32_t ocl_scratch(parity_plugin_device_t *dev, uint64_t bytes, cl_mem *out) {
  if (bytes == 0) bytes = 1;
  if (dev->scratch && dev->scratch_size >= bytes) {
    *out = dev->scratch;
    return PARITY_STATUS_OK;
  }
  uint64_t size = (bytes + 65535u) & ~(uint64_t)65535u;
  if (size > dev->slot->info.max_buffer_bytes) size = bytes;
  cl_int e;
  cl_mem m = clCreateBuffer(dev->ctx, CL_MEM_READ_WRITE, (size_t)size, NULL, &e);
  OCL_CHECK(e, "clCreateBuffer", "scratch for partial results");
  /* the old buffer lives until the queued work that uses it has finished */
  if (dev->scratch) clReleaseMemObject(dev->scratch);
  dev->scratch = m;
  dev->scratch_size = size;
  *out = m;
  return PARITY_STATUS_OK;
}
