/* cl_plugin.c — the OpenCL plugin's function table: lifecycle and device enumeration, and its
 * host kit (parity_support/gpu_kit.h: device slots and info, supports(), the kernel entries and
 * the buffer-argument checks, driven by the families table below). Device objects and programs
 * live in cl_device.c, memory and the queue in cl_memory.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/desc.h"
#include "cl_internal.h"

#define OCL_MAX_DEVICES 64
static ocl_slot_t slots[OCL_MAX_DEVICES]; /* filled at init (single-threaded), read-only afterwards */

int32_t ocl_cl_fail(cl_int err, const char *call, const char *what) {
  return psup_kit_driver_fail(&ocl_kit, ocl_error_status(err), call, ocl_error_name(err), "OpenCL error", err, what);
}

const ocl_slot_t *ocl_slot(uint32_t index) { return psup_kit_slot_at(&ocl_kit, index); }

static void dev_str(cl_device_id d, cl_device_info what, char *out, size_t n) {
  out[0] = 0;
  if (clGetDeviceInfo(d, what, n, out, NULL) != CL_SUCCESS) out[0] = 0;
  out[n - 1] = 0;
}

static void plat_str(cl_platform_id p, cl_platform_info what, char *out, size_t n) {
  out[0] = 0;
  if (clGetPlatformInfo(p, what, n, out, NULL) != CL_SUCCESS) out[0] = 0;
  out[n - 1] = 0;
}

/* "OpenCL 3.0 PoCL HSTR: ..." -> "OpenCL 3.0" */
static void short_version(const char *v, char *out, size_t n) {
  const char *sp = strchr(v, ' ');
  sp = sp ? strchr(sp + 1, ' ') : NULL;
  snprintf(out, n, "%.*s", sp ? (int)(sp - v) : (int)strlen(v), v);
}

static void add_device(cl_platform_id p, cl_device_id d) {
  char name[128], pname[128], pver[160], dver[160], drv[64], ext[8192];
  dev_str(d, CL_DEVICE_NAME, name, sizeof name);
  plat_str(p, CL_PLATFORM_NAME, pname, sizeof pname);
  cl_bool avail = CL_FALSE, compiler = CL_FALSE;
  clGetDeviceInfo(d, CL_DEVICE_AVAILABLE, sizeof avail, &avail, NULL);
  clGetDeviceInfo(d, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
  if (!avail || !compiler) {
    ocl_log(PARITY_LOG_INFO, "skipping '%s' (%s): %s", name, pname,
            !avail ? "device not available" : "no OpenCL C compiler");
    return;
  }
  ocl_slot_t *s = psup_kit_slot_add(&ocl_kit, name);
  if (!s) return;
  s->platform = p;
  s->id = d;
  plat_str(p, CL_PLATFORM_VERSION, pver, sizeof pver);
  dev_str(d, CL_DEVICE_VERSION, dver, sizeof dver);
  dev_str(d, CL_DRIVER_VERSION, drv, sizeof drv);
  dev_str(d, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
  cl_device_type type = 0;
  cl_ulong mem = 0, max_alloc = 0;
  cl_device_fp_config single = 0, dbl = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
  clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof single, &single, NULL);
  if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dbl, &dbl, NULL) != CL_SUCCESS) dbl = 0;
  s->has_fp64 = strstr(ext, "cl_khr_fp64") != NULL && dbl != 0;
  int no64 = 0; /* test knob: behave as without fp64 */
  psup_env_flag("PARITY_OPENCL_NO_FP64", 0, &no64, s->knob_error, sizeof s->knob_error);
  if (no64) s->has_fp64 = 0;
  s->cpu_like = (type & CL_DEVICE_TYPE_CPU) != 0;
  s->correct_divide = (single & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  s->fma32 = (single & CL_FP_FMA) != 0;
  /* OpenCL's float division and sqrt may be 2.5 and 3 ulp off unless the device rounds them
   * correctly (and is built with -cl-fp32-correctly-rounded-divide-sqrt); parity's bound is 1 */
  static const char *const div_modes[] = {"auto", "lib", "builtin", NULL};
  int dm = 0;
  if (!s->knob_error[0])
    psup_env_choice("PARITY_OPENCL_EXACT_DIV", div_modes, 0, &dm, s->knob_error, sizeof s->knob_error);
  s->lib_div = dm == 0 ? !s->correct_divide : dm == 1;
  char cver[128]; /* "OpenCL C 1.2 ..." */
  dev_str(d, CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
  int cmaj = 0, cmin = 0;
  s->c12 = sscanf(cver, "OpenCL C %d.%d", &cmaj, &cmin) == 2 && (cmaj > 1 || (cmaj == 1 && cmin >= 2));
  snprintf(s->cache_key, sizeof s->cache_key, "%s|%s|%s|%s|%s", name, pname, pver, dver, drv);
  /* PoCL parses its 900 KB opencl-c.h for every program; kernels/builtins.cl declares what the
   * kernels call (cl_cache.c). PARITY_OPENCL_BUILTINS=0 turns that off, =file uses that file. */
  const char *bi = psup_getenv("PARITY_OPENCL_BUILTINS");
  int pocl = strstr(pname, "Portable Computing Language") != NULL;
  s->builtins = bi && *bi ? strcmp(bi, "0") != 0 : pocl;
  s->pocl = pocl;

  parity_device_info_t *info = &s->kit.info;
  /* a GPU API on the CPU (PoCL's pthread device, Intel's CPU runtime) is a software GPU */
  info->type = (type & CL_DEVICE_TYPE_GPU)   ? PARITY_DEVICE_TYPE_GPU
               : (type & CL_DEVICE_TYPE_CPU) ? PARITY_DEVICE_TYPE_SOFTWARE_GPU
                                             : PARITY_DEVICE_TYPE_OTHER;
  snprintf(info->name, sizeof info->name, "%.80s (%.40s)", name, pname);
  char sv[32];
  short_version(dver, sv, sizeof sv);
  snprintf(info->driver, sizeof info->driver, "%.20s, driver %.32s", sv, drv);
  info->memory_bytes = mem;
  info->max_buffer_bytes = max_alloc;
  info->dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32) | PARITY_DTYPE_BIT(PARITY_DTYPE_F16) |
                     PARITY_DTYPE_BIT(PARITY_DTYPE_BF16) | PARITY_DTYPE_BIT(PARITY_DTYPE_I32) |
                     PARITY_DTYPE_BIT(PARITY_DTYPE_I64) | PARITY_DTYPE_BIT(PARITY_DTYPE_BOOL);
  info->flags = PARITY_DEVICE_FLAG_DETERMINISTIC; /* no atomics, fixed launch geometry */
  if (s->has_fp64) {
    info->dtype_mask |= PARITY_DTYPE_BIT(PARITY_DTYPE_F64);
    info->flags |= PARITY_DEVICE_FLAG_FLOAT64; /* every floating op has an f64 kernel */
  }
  info->denormals = (single & CL_FP_DENORM) ? PARITY_DENORMALS_PRESERVED : PARITY_DENORMALS_FLUSHED;
  snprintf(info->math, sizeof info->math, "f32 f16 bf16: OpenCL C built-ins, pmathf gelu%s; f64: %s",
           s->lib_div ? ", div, sqrt" : "", s->has_fp64 ? "OpenCL C built-ins" : "none (no cl_khr_fp64)");
  psup_kit_slot_ready(&ocl_kit, &s->kit);
  s->kit.caps.missing[PARITY_DTYPE_F64] = "cl_khr_fp64";
  ocl_log(PARITY_LOG_DEBUG, "device %u: %s, %s, fp64 %s, denormals %s", ocl_kit.slot_count - 1, info->name,
          info->driver, s->has_fp64 ? "yes" : "no", (single & CL_FP_DENORM) ? "preserved" : "flushed");
}

static int32_t ocl_init(void) {
  psup_kit_slots_reset(&ocl_kit);
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, NULL, &np);
  if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0))
    return ocl_fail(PARITY_STATUS_UNAVAILABLE, "no OpenCL platform found; install an ICD such as pocl-opencl-icd");
  OCL_CHECK(e, "clGetPlatformIDs", "listing platforms");
  cl_platform_id plats[16];
  if (np > 16) np = 16;
  OCL_CHECK(clGetPlatformIDs(np, plats, NULL), "clGetPlatformIDs", "listing platforms");
  for (cl_uint i = 0; i < np; i++) {
    cl_uint nd = 0;
    e = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (e == CL_DEVICE_NOT_FOUND || nd == 0) continue;
    if (e != CL_SUCCESS) {
      char pname[128];
      plat_str(plats[i], CL_PLATFORM_NAME, pname, sizeof pname);
      ocl_log(PARITY_LOG_WARNING, "platform '%s': clGetDeviceIDs: %s", pname,
              ocl_error_name(e) ? ocl_error_name(e) : "unknown error");
      continue;
    }
    cl_device_id devs[OCL_MAX_DEVICES];
    if (nd > OCL_MAX_DEVICES) nd = OCL_MAX_DEVICES;
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, nd, devs, NULL) != CL_SUCCESS) continue;
    for (cl_uint k = 0; k < nd; k++) add_device(plats[i], devs[k]);
  }
  if (ocl_kit.slot_count == 0)
    return ocl_fail(PARITY_STATUS_UNAVAILABLE,
                    "%u OpenCL platform(s) but no usable device (none available with a "
                    "compiler); install a driver such as pocl-opencl-icd",
                    (unsigned)np);
  return PARITY_STATUS_OK;
}

static void ocl_shutdown(void) { psup_kit_slots_reset(&ocl_kit); }

static const psup_kit_slot_t *slot_of(const parity_plugin_device_t *dev) { return &dev->slot->kit; }
static uint64_t buffer_size(const parity_plugin_buffer_t *b) { return b->size; }

psup_kit_t ocl_kit = {
    .backend = "opencl",
    PSUP_KIT_SLOTS(slots),
    .slot_of = slot_of,
    PSUP_KIT_DEVICES(ocl),
    PSUP_KIT_FAMILIES(ocl, NULL, NULL, ocl_matmul_supports, NULL, NULL),
    .buffers = PSUP_KIT_TRANSFERS(ocl, buffer_size),
    .plans = {ocl_plan_begin, ocl_plan_end, ocl_plan_run, ocl_plan_release}, /* cl_plan.c */
};

PSUP_KIT_ENTRIES(ocl_kit)
PSUP_KIT_PLAN_ENTRIES(ocl_kit)
PSUP_KIT_API_PLANS(ocl_api, ocl);

const parity_plugin_api_t *ocl_plugin_api(void) { return &ocl_api; }
