/* cl_ref.c — the raw OpenCL launch reference (cl_ref.h). The OpenCL headers give the types only:
 * the ICD loader is opened with dlopen, so parity-bench neither links OpenCL nor needs it. */
#define _POSIX_C_SOURCE 200809L
#include "cl_ref.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef PARITY_BENCH_OPENCL_HEADERS
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <string.h>

/* the calls it makes, by name */
// clang-format off
#define CL_REF_CALLS(X)                                                                                  \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) X(clCreateCommandQueue) \
  X(clCreateProgramWithSource) X(clBuildProgram) X(clCreateKernel) X(clCreateBuffer) X(clSetKernelArg) \
  X(clEnqueueNDRangeKernel) X(clFinish) X(clReleaseKernel) X(clReleaseProgram) X(clReleaseMemObject)   \
  X(clReleaseCommandQueue) X(clReleaseContext)
// clang-format on

struct cl_ref {
#define CL_REF_FIELD(name) __typeof__(&name) name;
  CL_REF_CALLS(CL_REF_FIELD)
  cl_context ctx;
  cl_command_queue queue;
  cl_program prog;
  cl_kernel kern;
  cl_mem x, y, z;
};

static const char *source =
    "__kernel void add2(__global const float *x, __global const float *y, __global float *z, long n) {\n"
    "  for (long i = 0; i < n; i++) z[i] = x[i] + y[i];\n"
    "}\n";

/* the first device named `name` ("device (platform)", as the OpenCL plugin names its devices, or
 * the device alone) on any platform, in the order the plugin lists them */
static cl_device_id find_device(cl_ref *r, const char *name) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (r->clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return NULL;
  for (cl_uint p = 0; p < np && p < 16; p++) {
    cl_device_id devs[16];
    cl_uint nd = 0;
    char pname[128] = "";
    if (r->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS) continue;
    r->clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    for (cl_uint d = 0; d < nd && d < 16; d++) {
      char got[128] = "", full[300];
      if (r->clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof got - 1, got, NULL) != CL_SUCCESS) continue;
      snprintf(full, sizeof full, "%s (%s)", got, pname);
      if (!strcmp(full, name) || !strcmp(got, name)) return devs[d];
    }
  }
  return NULL;
}

cl_ref *cl_ref_create(const char *device_name, char *why, size_t whylen) {
  static void *lib;
  if (!lib) lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "libOpenCL.so.1 not found (Debian: ocl-icd-libopencl1)");
    return NULL;
  }
  cl_ref *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
#define CL_REF_LOAD(name)                                                  \
  if (!(r->name = (__typeof__(&name))(void (*)(void))dlsym(lib, #name))) { \
    snprintf(why, whylen, "libOpenCL.so.1 has no %s", #name);              \
    free(r);                                                               \
    return NULL;                                                           \
  }
  CL_REF_CALLS(CL_REF_LOAD)
  cl_device_id dev = find_device(r, device_name);
  if (!dev) {
    snprintf(why, whylen, "no OpenCL device named '%s'", device_name);
    free(r);
    return NULL;
  }
  cl_int e = CL_SUCCESS;
  const float v[2] = {1.0f, 2.0f};
  r->ctx = r->clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  if (e == CL_SUCCESS) r->queue = r->clCreateCommandQueue(r->ctx, dev, 0, &e);
  if (e == CL_SUCCESS) r->prog = r->clCreateProgramWithSource(r->ctx, 1, &source, NULL, &e);
  if (e == CL_SUCCESS) e = r->clBuildProgram(r->prog, 1, &dev, "", NULL, NULL);
  if (e == CL_SUCCESS) r->kern = r->clCreateKernel(r->prog, "add2", &e);
  cl_mem *bufs[3] = {&r->x, &r->y, &r->z};
  for (int i = 0; i < 3 && e == CL_SUCCESS; i++)
    *bufs[i] = r->clCreateBuffer(r->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, (void *)v, &e);
  if (e != CL_SUCCESS || cl_ref_run(r, 16) != 0) { /* the first launches compile and warm up */
    snprintf(why, whylen, "OpenCL set-up failed on '%s' (error %d)", device_name, (int)e);
    cl_ref_destroy(r);
    return NULL;
  }
  return r;
}

int cl_ref_run(cl_ref *r, int launches) {
  const size_t one = 1;
  const cl_long n = 2;
  for (int i = 0; i < launches; i++) {
    if (r->clSetKernelArg(r->kern, 0, sizeof r->x, &r->x) != CL_SUCCESS ||
        r->clSetKernelArg(r->kern, 1, sizeof r->y, &r->y) != CL_SUCCESS ||
        r->clSetKernelArg(r->kern, 2, sizeof r->z, &r->z) != CL_SUCCESS ||
        r->clSetKernelArg(r->kern, 3, sizeof n, &n) != CL_SUCCESS ||
        r->clEnqueueNDRangeKernel(r->queue, r->kern, 1, NULL, &one, &one, 0, NULL, NULL) != CL_SUCCESS)
      return -1;
  }
  return r->clFinish(r->queue) == CL_SUCCESS ? 0 : -1;
}

void cl_ref_destroy(cl_ref *r) {
  if (!r) return;
  cl_mem bufs[3] = {r->x, r->y, r->z};
  for (int i = 0; i < 3; i++)
    if (bufs[i]) r->clReleaseMemObject(bufs[i]);
  if (r->kern) r->clReleaseKernel(r->kern);
  if (r->prog) r->clReleaseProgram(r->prog);
  if (r->queue) r->clReleaseCommandQueue(r->queue);
  if (r->ctx) r->clReleaseContext(r->ctx);
  free(r);
}

#else /* built without the OpenCL headers */
cl_ref *cl_ref_create(const char *device_name, char *why, size_t whylen) {
  (void)device_name;
  snprintf(why, whylen, "parity-bench was built without the OpenCL headers (Debian: opencl-c-headers)");
  return NULL;
}
int cl_ref_run(cl_ref *r, int launches) {
  (void)r, (void)launches;
  return -1;
}
void cl_ref_destroy(cl_ref *r) { (void)r; }
#endif
