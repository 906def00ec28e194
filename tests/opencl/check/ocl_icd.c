/* ocl_icd.c — the fake OpenCL ICD's platform, device, context and queue, and its dispatch table
 * (ocl_check.h). The ICD loader (ocl-icd) opens this library when OCL_ICD_VENDORS or
 * OCL_ICD_FILENAMES names it, finds the platform through clIcdGetPlatformIDsKHR and calls every
 * entry through the table at the start of each object. The device is a GPU (the plugin takes its
 * GPU layout: work-groups of 64 or 16 x 16 work-items, local memory, barriers), or with
 * PARITY_OPENCL_CHECK_DEVICE=cpu a CPU (the plugin takes what it takes on PoCL: the CPU layout,
 * a contiguous run per work-item and the vector kernels, a few work-groups per compute unit, the
 * compile tiers), or with gpu-fp32 a GPU without cl_khr_fp64 and without correctly rounded float
 * division and sqrt (the plugin's portable float programs: HAS_FP64 0, pmathf's division), named after the executor and its settings, so reports and reproduce lines name
 * it. Entries the plugin does not use answer CL_INVALID_OPERATION (or NULL, where the entry
 * returns an object), never crash. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_check.h"

#define EXPORT __attribute__((visibility("default")))
#define PLATFORM_NAME "opencl-check"
#define DEVICE_NAME_FMT "opencl-check: checking executor, seed %llu, switch 1/%u%s"
#define UNITS 2u /* CL_DEVICE_MAX_COMPUTE_UNITS: the plugin launches up to 64 (CPU: 4) x UNITS work-groups */

struct _cl_platform_id ocl_chk_platform = {&ocl_chk_dispatch};
struct _cl_device_id ocl_chk_device = {&ocl_chk_dispatch};
static cl_device_type device_type = CL_DEVICE_TYPE_GPU; /* PARITY_OPENCL_CHECK_DEVICE */
int ocl_chk_fp32_only; /* PARITY_OPENCL_CHECK_DEVICE=gpu-fp32: no cl_khr_fp64, no correctly rounded division */

void ocl_chk_say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("opencl-check: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

cl_int ocl_chk_configure(void) {
  static int done; /* 1: configured, -1: refused */
  if (!done) {
    chk_words = OCL_CHK_WORDS;
    char msg[256];
    done = chk_configure(msg, sizeof msg) == 0 ? 1 : -1;
    const char *type = getenv("PARITY_OPENCL_CHECK_DEVICE");
    if (done > 0 && type && *type && strcmp(type, "gpu")) {
      if (!strcmp(type, "cpu")) {
        device_type = CL_DEVICE_TYPE_CPU;
      } else if (!strcmp(type, "gpu-fp32")) {
        ocl_chk_fp32_only = 1;
      } else {
        snprintf(msg, sizeof msg, "PARITY_OPENCL_CHECK_DEVICE='%.40s' is not gpu, gpu-fp32 or cpu", type);
        done = -1;
      }
    }
    if (done < 0) ocl_chk_say("%s", msg);
  }
  return done > 0 ? CL_SUCCESS : CL_INVALID_VALUE;
}

cl_int ocl_chk_answer(const void *v, size_t n, size_t size, void *out, size_t *size_ret) {
  if (size_ret) *size_ret = n;
  if (!out) return CL_SUCCESS;
  if (size < n) return CL_INVALID_VALUE;
  memcpy(out, v, n);
  return CL_SUCCESS;
}

static cl_int str_answer(const char *s, size_t size, void *out, size_t *size_ret) {
  return ocl_chk_answer(s, strlen(s) + 1, size, out, size_ret);
}

/* ---- platform ---- */
static cl_int CL_API_CALL get_platforms(cl_uint n, cl_platform_id *out, cl_uint *count) {
  if ((!out && !count) || (out && n == 0)) return CL_INVALID_VALUE;
  if (ocl_chk_configure() != CL_SUCCESS) return CL_PLATFORM_NOT_FOUND_KHR;
  if (count) *count = 1;
  if (out) out[0] = &ocl_chk_platform;
  return CL_SUCCESS;
}

EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *out, cl_uint *count) {
  return get_platforms(n, out, count);
}

static cl_int CL_API_CALL platform_info(cl_platform_id p, cl_platform_info what, size_t size, void *out,
                                        size_t *size_ret) {
  if (p != &ocl_chk_platform) return CL_INVALID_PLATFORM;
  switch (what) {
    case CL_PLATFORM_PROFILE: return str_answer("FULL_PROFILE", size, out, size_ret);
    case CL_PLATFORM_VERSION: return str_answer("OpenCL 1.2 opencl-check", size, out, size_ret);
    case CL_PLATFORM_NAME: return str_answer(PLATFORM_NAME, size, out, size_ret);
    case CL_PLATFORM_VENDOR: return str_answer("parity", size, out, size_ret);
    case CL_PLATFORM_EXTENSIONS: return str_answer("cl_khr_icd", size, out, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR: return str_answer("CHK", size, out, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

/* the loader asks for clIcdGetPlatformIDsKHR and clGetPlatformInfo (ocl-icd: to check the platform) */
EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
  if (name && !strcmp(name, "clIcdGetPlatformIDsKHR")) return (void *)&clIcdGetPlatformIDsKHR;
  if (name && !strcmp(name, "clGetPlatformInfo")) return (void *)&platform_info;
  return NULL;
}

static void *CL_API_CALL extension_for_platform(cl_platform_id p, const char *name) {
  return p == &ocl_chk_platform ? clGetExtensionFunctionAddress(name) : NULL;
}

/* ---- device ---- */
static cl_int CL_API_CALL get_devices(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *out,
                                      cl_uint *count) {
  if (p != &ocl_chk_platform) return CL_INVALID_PLATFORM;
  if ((!out && !count) || (out && n == 0)) return CL_INVALID_VALUE;
  if (!(type & (device_type | CL_DEVICE_TYPE_DEFAULT))) return CL_DEVICE_NOT_FOUND;
  if (count) *count = 1;
  if (out) out[0] = &ocl_chk_device;
  return CL_SUCCESS;
}

static cl_int device_numbers(cl_device_info what, size_t size, void *out, size_t *size_ret) {
  const cl_device_fp_config fp =
      CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA;
  /* host IEEE division and sqrt; gpu-fp32 claims neither them nor float64, as many GPUs without
   * float64 do (the plugin then takes pmathf's division and its float-only programs) */
  const cl_device_fp_config single = fp | (ocl_chk_fp32_only ? 0 : CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
  const cl_device_fp_config dbl = ocl_chk_fp32_only ? 0 : fp;
  const cl_ulong mem = (cl_ulong)4 << 30, alloc = (cl_ulong)1 << 30, local = 64 * 1024;
  const cl_bool yes = CL_TRUE;
  const cl_uint units = UNITS, dims = 3, align = 1024;
  const size_t wg = OCL_CHK_WG, items[3] = {OCL_CHK_WG, OCL_CHK_WG, OCL_CHK_WG};
  const cl_device_type type = device_type;
  const cl_device_local_mem_type ltype = CL_LOCAL;
  const cl_platform_id plat = &ocl_chk_platform;
#define ANSWER(v) return ocl_chk_answer(&(v), sizeof(v), size, out, size_ret)
  switch (what) {
    case CL_DEVICE_TYPE: ANSWER(type);
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE:
    case CL_DEVICE_ENDIAN_LITTLE: ANSWER(yes);
    case CL_DEVICE_MAX_COMPUTE_UNITS: ANSWER(units);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: ANSWER(dims);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN: ANSWER(align);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: ANSWER(wg);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: ANSWER(items);
    case CL_DEVICE_GLOBAL_MEM_SIZE: ANSWER(mem);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: ANSWER(alloc);
    case CL_DEVICE_LOCAL_MEM_SIZE: ANSWER(local);
    case CL_DEVICE_LOCAL_MEM_TYPE: ANSWER(ltype);
    case CL_DEVICE_SINGLE_FP_CONFIG: ANSWER(single);
    case CL_DEVICE_DOUBLE_FP_CONFIG: ANSWER(dbl);
    case CL_DEVICE_PLATFORM: ANSWER(plat);
    default: return CL_INVALID_VALUE;
  }
#undef ANSWER
}

static cl_int CL_API_CALL device_info(cl_device_id d, cl_device_info what, size_t size, void *out, size_t *size_ret) {
  if (d != &ocl_chk_device) return CL_INVALID_DEVICE;
  char name[128];
  switch (what) {
    case CL_DEVICE_NAME:
      snprintf(name, sizeof name, DEVICE_NAME_FMT, (unsigned long long)chk_config.seed, chk_config.switch_every,
               device_type == CL_DEVICE_TYPE_CPU ? ", CPU device"
               : ocl_chk_fp32_only               ? ", GPU without float64"
                                                 : "");
      return str_answer(name, size, out, size_ret);
    case CL_DEVICE_VENDOR: return str_answer("parity", size, out, size_ret);
    case CL_DEVICE_VERSION: return str_answer("OpenCL 1.2 opencl-check", size, out, size_ret);
    case CL_DRIVER_VERSION: return str_answer("1.0", size, out, size_ret);
    case CL_DEVICE_PROFILE: return str_answer("FULL_PROFILE", size, out, size_ret);
    case CL_DEVICE_OPENCL_C_VERSION: return str_answer("OpenCL C 1.2 opencl-check", size, out, size_ret);
    case CL_DEVICE_EXTENSIONS: return str_answer(ocl_chk_fp32_only ? "" : "cl_khr_fp64", size, out, size_ret);
    default: return device_numbers(what, size, out, size_ret);
  }
}

static cl_int CL_API_CALL device_nop(cl_device_id d) { return d == &ocl_chk_device ? CL_SUCCESS : CL_INVALID_DEVICE; }

/* ---- context and queue ---- */
static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
                                             void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                             void *user, cl_int *err) {
  cl_int e = CL_SUCCESS;
  for (const cl_context_properties *p = props; p && p[0]; p += 2)
    if (p[0] != CL_CONTEXT_PLATFORM || (cl_platform_id)p[1] != &ocl_chk_platform) e = CL_INVALID_PROPERTY;
  if (n != 1 || !devs || devs[0] != &ocl_chk_device) e = CL_INVALID_DEVICE;
  cl_context c = e == CL_SUCCESS ? calloc(1, sizeof *c) : NULL;
  if (e == CL_SUCCESS && !c) e = CL_OUT_OF_HOST_MEMORY;
  if (c) *c = (struct _cl_context){&ocl_chk_dispatch, OCL_MAGIC_CTX, 1};
  if (err) *err = e;
  return c;
}

static cl_int CL_API_CALL retain_context(cl_context c) {
  if (!c || c->magic != OCL_MAGIC_CTX) return CL_INVALID_CONTEXT;
  c->refs++;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL release_context(cl_context c) {
  if (!c || c->magic != OCL_MAGIC_CTX) return CL_INVALID_CONTEXT;
  if (--c->refs == 0) {
    c->magic = 0;
    free(c);
  }
  return CL_SUCCESS;
}

/* in order, and every command runs when it is enqueued: finish and flush have nothing to wait for */
static cl_command_queue CL_API_CALL create_queue(cl_context c, cl_device_id d, cl_command_queue_properties props,
                                                 cl_int *err) {
  cl_int e = !c || c->magic != OCL_MAGIC_CTX ? CL_INVALID_CONTEXT
             : d != &ocl_chk_device          ? CL_INVALID_DEVICE
             : props != 0                    ? CL_INVALID_QUEUE_PROPERTIES
                                             : CL_SUCCESS;
  cl_command_queue q = e == CL_SUCCESS ? calloc(1, sizeof *q) : NULL;
  if (e == CL_SUCCESS && !q) e = CL_OUT_OF_HOST_MEMORY;
  if (q) {
    *q = (struct _cl_command_queue){&ocl_chk_dispatch, OCL_MAGIC_QUEUE, 1, c};
    c->refs++;
  }
  if (err) *err = e;
  return q;
}

static cl_int CL_API_CALL retain_queue(cl_command_queue q) {
  if (!q || q->magic != OCL_MAGIC_QUEUE) return CL_INVALID_COMMAND_QUEUE;
  q->refs++;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL release_queue(cl_command_queue q) {
  if (!q || q->magic != OCL_MAGIC_QUEUE) return CL_INVALID_COMMAND_QUEUE;
  if (--q->refs == 0) {
    ocl_chk_drain(); /* a released queue still runs what it holds */
    release_context(q->ctx);
    q->magic = 0;
    free(q);
  }
  return CL_SUCCESS;
}

/* clFinish: what the queue holds runs; clFlush only submits it (a non-blocking write may still run
 * later, so it stays pending) */
static cl_int CL_API_CALL queue_wait(cl_command_queue q) {
  return q && q->magic == OCL_MAGIC_QUEUE ? ocl_chk_drain() : CL_INVALID_COMMAND_QUEUE;
}
static cl_int CL_API_CALL queue_flush(cl_command_queue q) {
  return q && q->magic == OCL_MAGIC_QUEUE ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
}

/* ---- the dispatch table ---- */
static cl_int CL_API_CALL unimplemented(void) { return CL_INVALID_OPERATION; }
static void *CL_API_CALL unimplemented_object(void) { return NULL; }

struct _cl_icd_dispatch ocl_chk_dispatch;

__attribute__((constructor)) static void fill_dispatch(void) {
  struct _cl_icd_dispatch *d = &ocl_chk_dispatch;
  void **slot = (void **)d;
  for (size_t i = 0; i < sizeof *d / sizeof(void *); i++) slot[i] = (void *)&unimplemented;
  /* the entries that return an object (or a pointer): NULL */
  static const size_t objects[] = {
// clang-format off
#define OBJ(name) offsetof(struct _cl_icd_dispatch, name),
      OBJ(clCreateContextFromType) OBJ(clCreateImage2D) OBJ(clCreateImage3D) OBJ(clCreateSampler)
      OBJ(clEnqueueMapBuffer) OBJ(clEnqueueMapImage) OBJ(clCreateSubBuffer) OBJ(clCreateUserEvent) OBJ(clCreateImage)
      OBJ(clCreateProgramWithBuiltInKernels) OBJ(clLinkProgram) OBJ(clCreateFromGLBuffer) OBJ(clCreateFromGLTexture2D)
      OBJ(clCreateFromGLTexture3D) OBJ(clCreateFromGLRenderbuffer) OBJ(clCreateFromGLTexture)
      OBJ(clCreateEventFromGLsyncKHR) OBJ(clCreateCommandQueueWithProperties) OBJ(clCreatePipe) OBJ(clSVMAlloc)
      OBJ(clCreateSamplerWithProperties) OBJ(clCreateProgramWithIL) OBJ(clCloneKernel)
      OBJ(clCreateBufferWithProperties) OBJ(clCreateImageWithProperties)
#undef OBJ
      // clang-format on
  };
  for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++)
    slot[objects[i] / sizeof(void *)] = (void *)&unimplemented_object;
  d->clGetPlatformIDs = get_platforms;
  d->clGetPlatformInfo = platform_info;
  d->clGetExtensionFunctionAddress = clGetExtensionFunctionAddress;
  d->clGetExtensionFunctionAddressForPlatform = extension_for_platform;
  d->clGetDeviceIDs = get_devices;
  d->clGetDeviceInfo = device_info;
  d->clRetainDevice = device_nop;
  d->clReleaseDevice = device_nop;
  d->clCreateContext = create_context;
  d->clRetainContext = retain_context;
  d->clReleaseContext = release_context;
  d->clCreateCommandQueue = create_queue;
  d->clRetainCommandQueue = retain_queue;
  d->clReleaseCommandQueue = release_queue;
  d->clFinish = queue_wait;
  d->clFlush = queue_flush;
  d->clCreateBuffer = ocl_chk_create_buffer;
  d->clRetainMemObject = ocl_chk_retain_mem;
  d->clReleaseMemObject = ocl_chk_release_mem;
  d->clEnqueueReadBuffer = ocl_chk_read;
  d->clEnqueueWriteBuffer = ocl_chk_write;
  d->clEnqueueCopyBuffer = ocl_chk_copy;
  d->clEnqueueFillBuffer = ocl_chk_fill;
  d->clCreateProgramWithSource = ocl_chk_program_source;
  d->clCreateProgramWithBinary = ocl_chk_program_binary;
  d->clBuildProgram = ocl_chk_build;
  d->clGetProgramInfo = ocl_chk_program_info;
  d->clGetProgramBuildInfo = ocl_chk_build_info;
  d->clRetainProgram = ocl_chk_retain_program;
  d->clReleaseProgram = ocl_chk_release_program;
  d->clCreateKernel = ocl_chk_create_kernel;
  d->clSetKernelArg = ocl_chk_set_arg;
  d->clGetKernelWorkGroupInfo = ocl_chk_wg_info;
  d->clRetainKernel = ocl_chk_retain_kernel;
  d->clReleaseKernel = ocl_chk_release_kernel;
  d->clEnqueueNDRangeKernel = ocl_chk_ndrange;
}
