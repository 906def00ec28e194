/* cl_cache.c — program build at device open, with an on-disk cache of program binaries.
 *
 * Sources: a generated prelude (op and dtype codes from the X-macro lists, the compute class)
 * followed by the embedded .cl files. The cache lives in $PARITY_CACHE_DIR/opencl, else
 * $XDG_CACHE_HOME/parity/opencl, else ~/.cache/parity/opencl. A file is keyed by a hash of the
 * device name, platform and driver versions, build options and the full source, and carries a
 * header with that key and a checksum of the binary. Anything unreadable, truncated, stale or
 * rejected by the driver falls back to building from source, and the rebuilt binary replaces the
 * file atomically (temp file + rename). Cache trouble is logged, never fatal. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parity_support/cachefile.h"
#include "parity_support/env.h"
#include "cl_internal.h"
#include "ocl_kernel_sources.h" /* generated: ocl_sources[], OCL_SOURCE_COUNT */

#define CACHE_MAGIC "PARITYC2" /* format 2: the shared cachefile.h layout, class in the key */
#define CACHE_MAX_BINARY (1ull << 30)

static void logf_(int32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(int32_t level, const char *fmt, ...) {
  if (!ocl_host || !ocl_host->log) return;
  char buf[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ocl_host->log(ocl_host->host_data, level, buf);
}

static size_t make_prelude(const ocl_slot_t *s, int cls, char *buf, size_t n) {
  /* f32 accumulations fuse like the CPU plugin's f32 gemm; f64 ones do not, like its f64 path */
  int fma = cls == OCL_CLASS_F && s->fma32;
  size_t off = (size_t)snprintf(buf, n,
                                "#define CLASS_F %d\n#define CLASS_D %d\n#define CLASS_I %d\n"
                                "#define CLASS_L %d\n#define OCL_CLASS %d\n#define HAS_FP64 %d\n"
                                "#define HAS_FMA %d\n",
                                OCL_CLASS_F, OCL_CLASS_D, OCL_CLASS_I, OCL_CLASS_L, cls, s->has_fp64, fma);
#define PARITY_OP(id, N, s, K, f) \
  if (off < n) off += (size_t)snprintf(buf + off, n - off, "#define OP_" #N " %d\n", id);
#include "parity_ops.def"
#undef PARITY_OP
#define PARITY_X_(v, N, s, sz) \
  if (off < n) off += (size_t)snprintf(buf + off, n - off, "#define DT_" #N " %d\n", v);
  PARITY_DTYPE_LIST(PARITY_X_)
#undef PARITY_X_
  return off < n ? off : n - 1;
}

/* Write the program's binary to the cache (atomically, through cachefile.h). */
static void cache_write(cl_program prog, const char *path, uint64_t key) {
  size_t size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *bin = malloc(size);
  if (!bin) return;
  unsigned char *bins[1] = {bin};
  const char *why = NULL;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS)
    why = "clGetProgramInfo failed";
  else
    psup_cache_write(path, CACHE_MAGIC, key, bin, size, &why);
  if (why) logf_(PARITY_LOG_DEBUG, "opencl: could not write the program cache %s: %s", path, why);
  free(bin);
}

/* clBuildProgram; on failure report with the head of the build log. */
static int32_t build(parity_plugin_device_t *dev, cl_program prog, const char *options, int cls,
                     const char *how) {
  cl_int e = clBuildProgram(prog, 1, &dev->slot->id, options, NULL, NULL);
  char what[700];
  char log[512] = "";
  size_t len = 0;
  /* the head of the log (a longer log fails the query and leaves it empty) */
  if (clGetProgramBuildInfo(prog, dev->slot->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len) !=
      CL_SUCCESS)
    log[0] = 0;
  log[sizeof log - 1] = 0;
  if (e == CL_SUCCESS) {
    if (strspn(log, " \t\r\n") < strlen(log))
      logf_(PARITY_LOG_DEBUG, "opencl: %s program build log: %s", ocl_class_name(cls), log);
    return PARITY_STATUS_OK;
  }
  for (char *p = log; *p; p++)
    if (*p == '\n') *p = ' ';
  snprintf(what, sizeof what, "%s program for %s from %s, options '%s'%s%.400s", ocl_class_name(cls),
           dev->slot->info.name, how, options, log[0] ? ": " : "", log);
  return ocl_cl_fail(e, "clBuildProgram", what);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int32_t ocl_build_program(parity_plugin_device_t *dev, int cls, cl_program *out_prog) {
  const ocl_slot_t *s = dev->slot;
  char prelude[4096], options[512];
  make_prelude(s, cls, prelude, sizeof prelude);
  const char *extra = psup_getenv("PARITY_OPENCL_BUILD_OPTIONS");
  snprintf(options, sizeof options, "%s%s%s", s->correct_divide ? "-cl-fp32-correctly-rounded-divide-sqrt" : "",
           extra && *extra ? " " : "", extra ? extra : "");
  const char *srcs[1 + OCL_SOURCE_COUNT];
  srcs[0] = prelude;
  for (int i = 0; i < OCL_SOURCE_COUNT; i++) srcs[1 + i] = ocl_sources[i];
  /* the key: device, platform and driver (cache_key), build options, the class and the full source */
  uint64_t key = psup_fnv1a(PSUP_FNV_SEED, s->cache_key, strlen(s->cache_key) + 1);
  key = psup_fnv1a(key, options, strlen(options) + 1);
  key = psup_fnv1a(key, &cls, sizeof cls);
  for (int i = 0; i < 1 + OCL_SOURCE_COUNT; i++) key = psup_fnv1a(key, srcs[i], strlen(srcs[i]) + 1);

  char dir[900], path[1100];
  psup_cache_dir("opencl", dir, sizeof dir);
  if (dir[0]) snprintf(path, sizeof path, "%s/%016llx-%s.bin", dir, (unsigned long long)key, ocl_class_name(cls));
  cl_int e;
  double t0 = now_ms();
  if (dir[0]) {
    const char *why = NULL;
    size_t size = 0;
    unsigned char *bin = psup_cache_read(path, CACHE_MAGIC, key, CACHE_MAX_BINARY, &size, &why);
    if (bin) {
      cl_int bst = CL_SUCCESS;
      const unsigned char *bins[1] = {bin};
      cl_program p = clCreateProgramWithBinary(dev->ctx, 1, &s->id, &size, bins, &bst, &e);
      free(bin);
      if (e == CL_SUCCESS && bst == CL_SUCCESS &&
          clBuildProgram(p, 1, &s->id, options, NULL, NULL) == CL_SUCCESS) {
        logf_(PARITY_LOG_DEBUG, "opencl: %s program loaded from cache %s in %.0f ms", ocl_class_name(cls),
              path, now_ms() - t0);
        *out_prog = p;
        return PARITY_STATUS_OK;
      }
      if (e == CL_SUCCESS) clReleaseProgram(p);
      why = "rejected by the driver";
    }
    logf_(PARITY_LOG_DEBUG, "opencl: cache %s: %s; building from source", path, why);
  }
  cl_program p = clCreateProgramWithSource(dev->ctx, 1 + OCL_SOURCE_COUNT, srcs, NULL, &e);
  OCL_CHECK(e, "clCreateProgramWithSource", ocl_class_name(cls));
  int32_t st = build(dev, p, options, cls, "source");
  if (st != PARITY_STATUS_OK) {
    clReleaseProgram(p);
    return st;
  }
  logf_(PARITY_LOG_DEBUG, "opencl: %s program built from source in %.0f ms", ocl_class_name(cls),
        now_ms() - t0);
  if (dir[0]) cache_write(p, path, key);
  *out_prog = p;
  return PARITY_STATUS_OK;
}
