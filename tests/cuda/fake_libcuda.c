/* fake_libcuda.c — a fake NVIDIA driver for the CUDA plugin's host tests: built as
 * tests/fake_cuda/libcuda.so.1 and found through LD_LIBRARY_PATH, so the plugin's real dlopen of
 * "libcuda.so.1" and its cuGetProcAddress table run on a machine without a GPU. Device memory is
 * host memory; kernels do not run (launches are recorded). FAKE_CUDA_MODE (or
 * fake_cuda_set_mode) picks a behaviour:
 *   ok        one device "Fake GPU", CUDA 13.0 driver, every call succeeds
 *   nodevice  cuInit returns CUDA_ERROR_NO_DEVICE
 *   oldptx    a CUDA 12.2 driver: cuModuleLoadDataEx returns CUDA_ERROR_UNSUPPORTED_PTX_VERSION
 *   illegal   the next kernel launch fails with CUDA_ERROR_ILLEGAL_ADDRESS, and, as with a real
 *             sticky error, every later call fails with it too
 *   nopools   no stream-ordered allocator (cuMemAlloc / cuMemFree)
 *   badjit    cuModuleLoadDataEx fails with CUDA_ERROR_INVALID_PTX and a line in the error log
 * and the graph modes of fake_graph.h (stream capture and graphs: nographs, hide:<entry>,
 * fail:<entry>). */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and PTHREAD_MUTEX_RECURSIVE */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static char mode[64];
static int sticky;      /* a sticky error happened: every call returns it */
static int allocations; /* live allocations */

EXPORT struct {
  int launches;
  unsigned grid[3], block[3];
  char kernel[64];
  int module_loads;
  int jit_log_options; /* the error and info log options were passed */
} fake_cuda_stats;

EXPORT void fake_cuda_set_mode(const char *m) {
  strncpy(mode, m, sizeof mode - 1);
  sticky = 0;
}
EXPORT int fake_cuda_allocations(void) { return allocations; }

static int is(const char *m) {
  if (!mode[0]) {
    const char *e = getenv("FAKE_CUDA_MODE");
    strncpy(mode, e && *e ? e : "ok", sizeof mode - 1);
  }
  return strcmp(mode, m) == 0;
}

/* The context current on this thread (cuCtxSetCurrent). As in the driver, a call that works in a
 * context fails with CUDA_ERROR_INVALID_CONTEXT where none is current: parity's entries may be
 * called from any thread, so the plugin makes its context current in every one (cu_enter), and a
 * missing one shows here when an entry runs on a thread that never had it (cuda_plan_fake). */
static _Thread_local CUcontext cur_ctx;
static CUresult no_context(const char *fn) {
  fprintf(stderr, "fake libcuda: %s: no context is current on this thread\n", strncmp(fn, "f_", 2) ? fn : fn + 2);
  return CUDA_ERROR_INVALID_CONTEXT;
}
/* A driver is thread-safe; this one's state (streams, allocations, modules, captures, and the
 * emulated and checking drivers' kernel execution) is global, so every call that works in a
 * context holds one process-wide lock until it returns (recursive: a graph launch runs its nodes
 * through the same paths). parity's devices may be used from several threads at once (the ABI's
 * threading rule; core_threads_cuda). */
static pthread_mutex_t fake_lock;
static pthread_once_t fake_lock_once = PTHREAD_ONCE_INIT;
static void fake_lock_init(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&fake_lock, &a);
  pthread_mutexattr_destroy(&a);
}
static pthread_mutex_t *fake_lock_take(void) {
  pthread_once(&fake_lock_once, fake_lock_init);
  pthread_mutex_lock(&fake_lock);
  return &fake_lock;
}
static void fake_lock_drop(pthread_mutex_t **m) { pthread_mutex_unlock(*m); }
/* the lock held until the enclosing function returns, whichever return it takes */
#define FAKE_LOCKED pthread_mutex_t *fake_held_ __attribute__((cleanup(fake_lock_drop), unused)) = fake_lock_take()
#define NEEDS_CONTEXT \
  FAKE_LOCKED;        \
  if (!cur_ctx) return no_context(__func__)
#define GUARD    \
  NEEDS_CONTEXT; \
  if (sticky) return CUDA_ERROR_ILLEGAL_ADDRESS

/* stream capture (fake_graph.h) */
static int capture_of(CUstream s);
static int failing(const char *entry);
static CUresult stream_failed(CUstream s, CUresult r);
static CUresult stream_op(CUstream s, const char *entry);
static CUresult unsafe_op(void);
static CUresult capture_memset(CUstream s, CUdeviceptr d, size_t pitch, unsigned v, unsigned esize, size_t w, size_t h);

#ifdef FAKE_CUDA_CHECK
#include "check/check.h"
#endif
#ifdef FAKE_CUDA_EMULATE
#include "emu/emu_driver.h"
#endif
#ifdef FAKE_CUDA_CHECK
#include "check/check_driver.h"
#endif

static CUresult f_cuInit(unsigned flags) {
  (void)flags;
#ifdef FAKE_CUDA_CHECK
  if (check_init() != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
#endif
  return is("nodevice") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
static CUresult f_cuDriverGetVersion(int *v) {
  *v = is("oldptx") ? 12020 : 13000;
  return CUDA_SUCCESS;
}
static CUresult f_cuGetErrorName(CUresult e, const char **s) {
  (void)e;
  *s = "fake";
  return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGet(CUdevice *d, int i) {
  if (i != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetName(char *s, int n, CUdevice d) {
  (void)d;
#ifdef FAKE_CUDA_CHECK
  check_name(s, n);
#else
  strncpy(s, "Fake GPU", (size_t)n);
#endif
  return CUDA_SUCCESS;
}
/* 1 GiB, or FAKE_CUDA_TOTAL_MEM_GIB (1..64) for the --full cases past 2^31 elements */
static CUresult f_cuDeviceTotalMem(size_t *b, CUdevice d) {
  (void)d;
  const char *e = getenv("FAKE_CUDA_TOTAL_MEM_GIB");
  char *end = NULL;
  unsigned long gib = e ? strtoul(e, &end, 10) : 1;
  if (!e || end == e || *end || gib < 1 || gib > 64) gib = 1;
  *b = (size_t)gib << 30;
  return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = !is("nopools"); break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
static int ctx_refs;
static CUresult f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d;
  FAKE_LOCKED;
  ctx_refs++;
  *c = (CUcontext)(uintptr_t)0x1000;
  return CUDA_SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRelease(CUdevice d) {
  (void)d;
  FAKE_LOCKED;
  ctx_refs--;
  return CUDA_SUCCESS;
}
static CUresult f_cuCtxSetCurrent(CUcontext c) {
  if (sticky) return CUDA_ERROR_ILLEGAL_ADDRESS;
  if (c && (c != (CUcontext)(uintptr_t)0x1000 || ctx_refs < 1)) return CUDA_ERROR_INVALID_CONTEXT;
  cur_ctx = c;
  return CUDA_SUCCESS;
}
/* The streams the caller created and has not destroyed. Every stream-ordered call must name one:
 * the plugin's stream is non-blocking (CU_STREAM_NON_BLOCKING), so on a GPU the NULL (legacy)
 * stream and the per-thread default stream are not ordered with it, and work put there races the
 * plugin's own. Here every call runs when it is made, so without this check such a bug would pass. */
#define FAKE_MAX_STREAMS 256
static unsigned char stream_live[FAKE_MAX_STREAMS];
static CUresult f_cuStreamCreate(CUstream *s, unsigned flags) {
  NEEDS_CONTEXT;
  for (unsigned i = 0; i < FAKE_MAX_STREAMS; i++)
    if (!stream_live[i]) {
      stream_live[i] = 1;
      *s = (CUstream)(uintptr_t)(0x2000 + 0x10 * i + (flags & 0xf));
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_OUT_OF_MEMORY;
}
static int stream_index(CUstream s) {
  uintptr_t v = (uintptr_t)s;
  if (v < 0x2000 || v >= 0x2000 + 0x10 * FAKE_MAX_STREAMS) return -1;
  unsigned i = (unsigned)((v - 0x2000) / 0x10);
  return stream_live[i] ? (int)i : -1;
}
/* CUDA_SUCCESS when s is a live stream of the caller's; else CUDA_ERROR_INVALID_HANDLE, said on stderr */
static CUresult stream_check(CUstream s, const char *entry) {
  if (stream_index(s) >= 0) return CUDA_SUCCESS;
  fprintf(stderr,
          "fake libcuda: %s: stream %#lx is not a live stream of the caller's (the NULL or per-thread stream is not "
          "ordered with a non-blocking one)\n",
          entry, (unsigned long)(uintptr_t)s);
  return CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuStreamDestroy(CUstream s) {
  NEEDS_CONTEXT;
  int i = stream_index(s);
  if (i < 0) return stream_check(s, "cuStreamDestroy");
  stream_live[i] = 0;
  return CUDA_SUCCESS;
}
static CUresult f_cuStreamSynchronize(CUstream s) {
  GUARD;
  return stream_op(s, "cuStreamSynchronize");
}
static CUresult f_cuEventCreate(CUevent *e, unsigned flags) {
  (void)flags;
  NEEDS_CONTEXT;
  *e = (CUevent)(uintptr_t)0x3000;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventRecord(CUevent e, CUstream s) {
  (void)e;
  GUARD;
  return stream_op(s, "cuEventRecord");
}
static CUresult f_cuEventSynchronize(CUevent e) {
  (void)e;
  GUARD;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventDestroy(CUevent e) {
  (void)e;
  NEEDS_CONTEXT;
  return CUDA_SUCCESS;
}
/* The emulation's freed allocations, until an allocation gets the address again: a kernel launched
 * with one as a pointer argument would use freed memory (a stale pointer, such as a graph replaying
 * an address its capture saw and that was freed since), and the launch fails as the GPU's illegal
 * address would. The checking executor tracks every access itself. */
#if defined(FAKE_CUDA_EMULATE) && !defined(FAKE_CUDA_CHECK)
#define FAKE_FREED 64
static CUdeviceptr fake_freed[FAKE_FREED];
static unsigned fake_nfreed;
static int fake_is_freed(CUdeviceptr p) {
  for (unsigned i = 0; i < FAKE_FREED; i++)
    if (p && fake_freed[i] == p) return 1;
  return 0;
}
static void fake_reused(CUdeviceptr p) {
  for (unsigned i = 0; i < FAKE_FREED; i++)
    if (fake_freed[i] == p) fake_freed[i] = 0;
}
#endif
static CUresult alloc(CUdeviceptr *p, size_t n) {
  GUARD;
#ifdef FAKE_CUDA_CHECK
  void *m = NULL;
  if (chk_mem_alloc(n ? n : 1, &m) != 0) m = NULL;
#else
  void *m = malloc(n ? n : 1);
#endif
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  allocations++;
  *p = (CUdeviceptr)(uintptr_t)m;
#if defined(FAKE_CUDA_EMULATE) && !defined(FAKE_CUDA_CHECK)
  fake_reused(*p);
#endif
  return CUDA_SUCCESS;
}
static CUresult f_cuMemAlloc(CUdeviceptr *p, size_t n) {
  NEEDS_CONTEXT;
  CUresult r = unsafe_op();
  return r != CUDA_SUCCESS ? r : alloc(p, n);
}
static CUresult f_cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
  NEEDS_CONTEXT;
  CUresult r = stream_op(s, "cuMemAllocAsync");
  return r != CUDA_SUCCESS ? r : alloc(p, n);
}
static CUresult free_(CUdeviceptr p) {
  GUARD;
#ifdef FAKE_CUDA_CHECK
  if (chk_mem_free((void *)(uintptr_t)p) != 0) return CUDA_ERROR_INVALID_VALUE;
#else
  free((void *)(uintptr_t)p);
#ifdef FAKE_CUDA_EMULATE
  fake_freed[fake_nfreed++ % FAKE_FREED] = p;
#endif
#endif
  allocations--;
  return CUDA_SUCCESS;
}
static CUresult f_cuMemFree(CUdeviceptr p) {
  NEEDS_CONTEXT;
  CUresult r = unsafe_op();
  return r != CUDA_SUCCESS ? r : free_(p);
}
static CUresult f_cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  NEEDS_CONTEXT;
  CUresult r = stream_op(s, "cuMemFreeAsync");
  return r != CUDA_SUCCESS ? r : free_(p);
}
static CUresult f_cuDeviceGetDefaultMemPool(CUmemoryPool *p, CUdevice d) {
  (void)d;
  *p = (CUmemoryPool)(uintptr_t)0x4000;
  return CUDA_SUCCESS;
}
static CUresult f_cuMemPoolSetAttribute(CUmemoryPool p, CUmemPool_attribute a, void *v) {
  (void)p, (void)a, (void)v;
  return CUDA_SUCCESS;
}
static CUresult f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  GUARD;
  CUresult r = stream_op(st, "cuMemcpyHtoDAsync");
  if (r != CUDA_SUCCESS) return r;
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult f_cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st) {
  GUARD;
  CUresult r = stream_op(st, "cuMemcpyDtoHAsync");
  if (r != CUDA_SUCCESS) return r;
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  GUARD;
  CUresult r = stream_op(st, "cuMemcpyDtoDAsync");
  if (r != CUDA_SUCCESS) return r;
  /* overlapping ranges are undefined in CUDA (a GPU copies them in parallel): refused here, since
   * memcpy (glibc's is a memmove) would copy them right and hide the caller's bug */
  if (n && d < s + n && s < d + n) {
    fprintf(stderr, "fake libcuda: cuMemcpyDtoDAsync: overlapping ranges (%zu bytes from %#llx to %#llx)\n", n,
            (unsigned long long)s, (unsigned long long)d);
    return stream_failed(st, CUDA_ERROR_INVALID_VALUE);
  }
  memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult f_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
  GUARD;
  if (stream_check(st, "cuMemsetD8Async") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuMemsetD8Async")) return stream_failed(st, CUDA_ERROR_OUT_OF_MEMORY);
  if (capture_of(st) >= 0) return capture_memset(st, d, 0, v, 1, n, 1);
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
static CUresult f_cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream st) {
  GUARD;
  if (stream_check(st, "cuMemsetD16Async") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuMemsetD16Async")) return stream_failed(st, CUDA_ERROR_OUT_OF_MEMORY);
  if (d % 2) return stream_failed(st, CUDA_ERROR_INVALID_VALUE);
  if (capture_of(st) >= 0) return capture_memset(st, d, 0, v, 2, n, 1);
  for (size_t i = 0; i < n; i++) ((unsigned short *)(uintptr_t)d)[i] = v;
  return CUDA_SUCCESS;
}
static CUresult f_cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream st) {
  GUARD;
  if (stream_check(st, "cuMemsetD32Async") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuMemsetD32Async")) return stream_failed(st, CUDA_ERROR_OUT_OF_MEMORY);
  if (d % 4) return stream_failed(st, CUDA_ERROR_INVALID_VALUE);
  if (capture_of(st) >= 0) return capture_memset(st, d, 0, v, 4, n, 1);
  for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)d)[i] = v;
  return CUDA_SUCCESS;
}
static CUresult f_cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned v, size_t w, size_t h, CUstream st) {
  GUARD;
  if (stream_check(st, "cuMemsetD2D32Async") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuMemsetD2D32Async")) return stream_failed(st, CUDA_ERROR_OUT_OF_MEMORY);
  if (d % 4 || pitch < w * 4) return stream_failed(st, CUDA_ERROR_INVALID_VALUE);
  if (capture_of(st) >= 0) return capture_memset(st, d, pitch, v, 4, w, h);
  for (size_t r = 0; r < h; r++)
    for (size_t c = 0; c < w; c++) ((unsigned *)(uintptr_t)(d + r * pitch))[c] = v;
  return CUDA_SUCCESS;
}
/* Each entry's .maxntid (CUDA's __launch_bounds__: in the PTX between the entry's parameter list
 * and its body), by name, as the modules declared them: a driver refuses a launch whose block has
 * more threads. A name has one bound in every module (the kernels' source fixes it). */
static struct {
  char name[64];
  unsigned threads;
} fake_bounds[256];
static int fake_nbounds;

static void note_bounds(const char *ptx) {
  for (const char *p = ptx; (p = strstr(p, ".entry ")) != NULL;) {
    p += strlen(".entry ");
    size_t len = strcspn(p, "( \t\n");
    const char *close = strchr(p, ')'), *body = close ? strchr(close, '{') : NULL;
    if (!body) return;
    const char *m = strstr(close, ".maxntid");
    unsigned x = 1, y = 1, z = 1;
    int known = 0;
    for (int i = 0; i < fake_nbounds; i++)
      known |= strlen(fake_bounds[i].name) == len && !strncmp(fake_bounds[i].name, p, len);
    if (m && m < body && sscanf(m, ".maxntid %u, %u, %u", &x, &y, &z) >= 1 && !known &&
        len < sizeof fake_bounds[0].name && fake_nbounds < (int)(sizeof fake_bounds / sizeof fake_bounds[0])) {
      snprintf(fake_bounds[fake_nbounds].name, sizeof fake_bounds[0].name, "%.*s", (int)len, p);
      fake_bounds[fake_nbounds++].threads = x * y * z;
    }
    p = body;
  }
}

static unsigned bound_of(const char *name) {
  for (int i = 0; i < fake_nbounds; i++)
    if (!strcmp(fake_bounds[i].name, name)) return fake_bounds[i].threads;
  return 0;
}

typedef struct fake_mod_t {
  CUmodule inner; /* the emulated module of this image (FAKE_CUDA_EMULATE), else a constant */
} fake_mod_t;
static CUresult f_cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v) {
  GUARD;
  fake_cuda_stats.module_loads++;
  int logs = 0;
  for (unsigned i = 0; i < n; i++) logs += o[i] == CU_JIT_ERROR_LOG_BUFFER || o[i] == CU_JIT_INFO_LOG_BUFFER;
  fake_cuda_stats.jit_log_options = logs == 2;
  if (strncmp((const char *)image, "//", 2) != 0 || !strstr((const char *)image, ".entry"))
    return CUDA_ERROR_INVALID_PTX;
  if (is("oldptx")) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  if (is("badjit")) { /* what the JIT says goes into the error log buffer the caller passed */
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
      if (o[i] == CU_JIT_ERROR_LOG_BUFFER) log = v[i];
      if (o[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) size = (size_t)(uintptr_t)v[i];
    }
    if (log && size) snprintf(log, size, "ptxas fatal   : fake JIT error in line 42");
    return CUDA_ERROR_INVALID_PTX;
  }
  note_bounds((const char *)image);
#ifdef FAKE_CUDA_EMULATE
  CUmodule inner = emu_module((const char *)image);
  if (!inner) return CUDA_ERROR_INVALID_PTX;
#else
  CUmodule inner = (CUmodule)(uintptr_t)0x5000;
#endif
  /* a handle of its own per load, as a driver gives: two devices (or contexts) loading the same
   * image each unload only their own functions */
  fake_mod_t *mod = calloc(1, sizeof *mod);
  if (!mod) return CUDA_ERROR_OUT_OF_MEMORY;
  mod->inner = inner;
  *m = (CUmodule)mod;
  return CUDA_SUCCESS;
}
/* a function handle: the kernel's name, and with FAKE_CUDA_EMULATE its host-compiled body */
typedef struct fake_fn_t {
  char name[64];
  unsigned max_threads; /* its .maxntid; 0: none */
  const void *emu;
  CUmodule module;
  struct fake_fn_t *next; /* every live handle, so unloading its module frees it, as a driver does */
} fake_fn_t;
static fake_fn_t *fake_fns;

static CUresult f_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  GUARD;
  fake_fn_t *fn = calloc(1, sizeof *fn);
  if (!fn) return CUDA_ERROR_OUT_OF_MEMORY;
  strncpy(fn->name, name, sizeof fn->name - 1);
  fn->max_threads = bound_of(fn->name);
#ifdef FAKE_CUDA_EMULATE
  fn->emu = emu_find(((fake_mod_t *)m)->inner, name);
  if (!fn->emu) {
    free(fn);
    return CUDA_ERROR_NOT_FOUND;
  }
#else
  (void)m;
#endif
  fn->module = m;
  fn->next = fake_fns;
  fake_fns = fn;
  *f = (CUfunction)fn;
  return CUDA_SUCCESS;
}
static CUresult f_cuModuleUnload(CUmodule m) {
  NEEDS_CONTEXT;
  for (fake_fn_t **p = &fake_fns; *p;) {
    fake_fn_t *fn = *p;
    if (fn->module == m) {
      *p = fn->next;
      free(fn);
    } else {
      p = &fn->next;
    }
  }
  free(m);
  return CUDA_SUCCESS;
}
/* a kernel runs (a launch, or a graph's launch node): recorded, and run where it is emulated */
static CUresult run_kernel(const void *emu, const char *name, const unsigned *g, const unsigned *b, void **params) {
  fake_cuda_stats.launches++;
  memcpy(fake_cuda_stats.grid, g, sizeof fake_cuda_stats.grid);
  memcpy(fake_cuda_stats.block, b, sizeof fake_cuda_stats.block);
  snprintf(fake_cuda_stats.kernel, sizeof fake_cuda_stats.kernel, "%s", name);
  if (is("illegal")) {
    sticky = 1;
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
#if defined(FAKE_CUDA_CHECK)
  return check_launch(emu, g, b, params);
#elif defined(FAKE_CUDA_EMULATE)
  const emu_kernel_t *k = emu;
  for (int i = 0; i < k->nargs; i++) {
    CUdeviceptr v = 0;
    if (k->psizes[i] != sizeof v) continue;
    memcpy(&v, params[i], sizeof v);
    if (fake_is_freed(v)) {
      fprintf(stderr, "fake libcuda: %s: argument %d is freed device memory (%#llx)\n", name, i, (unsigned long long)v);
      sticky = 1;
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
  }
  emu_launch(emu, g, b, params);
#else
  (void)emu, (void)params;
#endif
  return CUDA_SUCCESS;
}
static CUresult capture_kernel(CUstream s, const fake_fn_t *fn, const unsigned *g, const unsigned *b, void **params);
static CUresult f_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra) {
  (void)shmem, (void)extra;
  GUARD;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  const fake_fn_t *fn = (const fake_fn_t *)f;
  if (stream_check(s, "cuLaunchKernel") != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
  if (failing("cuLaunchKernel")) return stream_failed(s, CUDA_ERROR_OUT_OF_MEMORY);
  if (!fn || gx == 0 || gy != 1 || gz != 1 || gx > 0x7fffffffu || bx * by * bz > 1024)
    return stream_failed(s, CUDA_ERROR_INVALID_VALUE);
  if (fn->max_threads && bx * by * bz > fn->max_threads) {
    fprintf(stderr, "fake libcuda: cuLaunchKernel: %s: a block of %u x %u x %u threads, but its .maxntid allows %u\n",
            fn->name, bx, by, bz, fn->max_threads);
    return stream_failed(s, CUDA_ERROR_INVALID_VALUE);
  }
  if (capture_of(s) >= 0) return capture_kernel(s, fn, g, b, params);
  return run_kernel(fn->emu, fn->name, g, b, params);
}

#include "fake_graph.h"

static const struct {
  const char *name;
  void *fn;
} table[] = {
#define F_(n) {#n, (void *)f_##n},
    // clang-format off
    F_(cuInit) F_(cuDriverGetVersion) F_(cuGetErrorName) F_(cuDeviceGetCount) F_(cuDeviceGet) F_(cuDeviceGetName)
    F_(cuDeviceTotalMem) F_(cuDeviceGetAttribute) F_(cuDevicePrimaryCtxRetain) F_(cuDevicePrimaryCtxRelease)
    F_(cuCtxSetCurrent) F_(cuStreamCreate) F_(cuStreamDestroy) F_(cuStreamSynchronize) F_(cuEventCreate)
    F_(cuEventRecord) F_(cuEventSynchronize) F_(cuEventDestroy) F_(cuMemAlloc) F_(cuMemFree) F_(cuMemAllocAsync)
    F_(cuMemFreeAsync) F_(cuDeviceGetDefaultMemPool) F_(cuMemPoolSetAttribute) F_(cuMemcpyHtoDAsync)
    F_(cuMemcpyDtoHAsync) F_(cuMemcpyDtoDAsync) F_(cuMemsetD8Async) F_(cuMemsetD16Async) F_(cuMemsetD32Async)
    F_(cuMemsetD2D32Async) F_(cuModuleLoadDataEx) F_(cuModuleGetFunction) F_(cuModuleUnload) F_(cuLaunchKernel)
    FAKE_GRAPH_ENTRIES(F_)
// clang-format on
#undef F_
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status) {
  (void)version, (void)flags;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, symbol) == 0 && !hidden(symbol)) {
      *pfn = table[i].fn;
      if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = NULL;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
