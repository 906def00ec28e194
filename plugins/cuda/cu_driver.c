/* cu_driver.c — the CUDA driver, opened at run time. libcuda.so.1 is the driver's own soname;
 * libcuda.so (no version) is often the toolkit's stub, which fails every call with
 * CUDA_ERROR_STUB_LIBRARY, so it is never opened. Entry points come from cuGetProcAddress with
 * the ABI version of each typedef (cudaTypedefs.h), so a newer driver keeps giving the signature
 * this file was written against. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "cu_internal.h"

cu_driver_t cu_drv;

const char *cu_driver_library(void) {
  const char *lib = psup_getenv("PARITY_CUDA_DRIVER_LIBRARY"); /* tests: a fake driver */
  return lib && *lib ? lib : "libcuda.so.1";
}

void cu_driver_unload(void) {
  if (cu_drv.lib) dlclose(cu_drv.lib);
  memset(&cu_drv, 0, sizeof cu_drv);
}

int32_t cu_driver_load(char *msg, size_t n) {
  cu_driver_unload();
  const char *name = cu_driver_library();
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (strcmp(name, "libcuda.so.1") == 0)
      snprintf(msg, n, "no NVIDIA driver (libcuda.so.1 not found)");
    else
      snprintf(msg, n, "no NVIDIA driver (%s not found)", name);
    return PARITY_STATUS_UNAVAILABLE;
  }
  /* cuGetProcAddress_v2 (CUDA 12+) reports whether the symbol exists in the requested version;
   * the CUDA 11.3 form has no such argument. */
  PFN_cuGetProcAddress_v12000 get2 = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  PFN_cuGetProcAddress_v11030 get1 = (PFN_cuGetProcAddress_v11030)dlsym(lib, "cuGetProcAddress");
  if (!get2 && !get1) {
    dlclose(lib);
    snprintf(msg, n,
             "the NVIDIA driver in %s is too old: it has no cuGetProcAddress (CUDA 11.3 or "
             "newer needed)",
             name);
    return PARITY_STATUS_UNAVAILABLE;
  }
  cu_drv.lib = lib;
#define CU_RESOLVE_(sym, name, ver, required)                                                                   \
  {                                                                                                             \
    void *fn = NULL;                                                                                            \
    int version = atoi(#ver + 1);                                                                               \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;                                         \
    CUresult r = get2 ? get2(sym, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found)                            \
                      : get1(sym, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT);                                   \
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS) fn = NULL;                                   \
    if (!fn && (required)) {                                                                                    \
      if (r == CUDA_ERROR_STUB_LIBRARY)                                                                         \
        snprintf(msg, n,                                                                                        \
                 "no NVIDIA driver (%s is the CUDA toolkit's stub library: "                                    \
                 "CUDA_ERROR_STUB_LIBRARY)",                                                                    \
                 name_of_lib);                                                                                  \
      else                                                                                                      \
        snprintf(msg, n, "the NVIDIA driver in %s lacks %s (version %d of its ABI): too old", name_of_lib, sym, \
                 version);                                                                                      \
      cu_driver_unload();                                                                                       \
      return PARITY_STATUS_UNAVAILABLE;                                                                         \
    }                                                                                                           \
    memcpy(&cu_drv.name, &fn, sizeof fn);                                                                       \
  }
  const char *name_of_lib = name;
  /* The symbol is stringized before expansion: cuda.h renames some entry points with macros
   * (cuMemAlloc -> cuMemAlloc_v2), but cuGetProcAddress takes the base name and the version. The
   * member name is expanded alike here and in cu_internal.h. */
#define CU_REQ_(name, ver) CU_RESOLVE_(#name, name, ver, 1)
#define CU_OPT_(name, ver) CU_RESOLVE_(#name, name, ver, 0)
  CU_DRIVER_LIST(CU_REQ_)
  CU_DRIVER_OPTIONAL_LIST(CU_OPT_)
#undef CU_REQ_
#undef CU_OPT_
#undef CU_RESOLVE_
  int v = 0;
  if (cu_drv.cuDriverGetVersion(&v) == CUDA_SUCCESS) cu_drv.version = v;
  return PARITY_STATUS_OK;
}
