/* cl_cache.c — kernels built on first use, one program per kernel and compute class, with an
 * on-disk cache of program binaries.
 *
 * Sources: a generated prelude (op and dtype codes from the X-macro lists, the compute class,
 * K_<kernel> set to 1 for the wanted kernel and 0 for the others) followed by kernel_common.k.h and
 * the kernel's own family file (plugins/kernels), whose other kernels the K_ guards leave out. The cache lives in
 * $PARITY_CACHE_DIR/opencl, else $XDG_CACHE_HOME/parity/opencl, else ~/.cache/parity/opencl.
 * A file is keyed by a hash of the device name, platform and driver versions, build options,
 * class, kernel and the full source, and carries a header with that key and a checksum of the
 * binary (parity_support/cachefile.h). Anything unreadable, truncated, stale or rejected by the
 * driver falls back to building from source. A program built from source is written after its
 * first launch has finished (ocl_cache_flush: at device close, or once many are pending), so
 * that drivers which compile the kernel at first launch (PoCL) store that code too and a warm
 * process compiles nothing. Cache trouble is logged, never fatal. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parity_support/cachefile.h"
#include "parity_support/env.h"
#include "parity_support/desc.h"
#include "cl_internal.h"
#include "ocl_kernel_sources.h" /* generated: ocl_sources[], OCL_SOURCE_COUNT */

#define CACHE_MAGIC "PARITYC3" /* format 3: one program per kernel and class */
#define CACHE_MAX_BINARY (1ull << 30)

static const int kernel_source[OCL_K_COUNT] = {
#define OCL_X_(n, src) OCL_SRC_##src,
    OCL_KERNEL_LIST(OCL_X_)
#undef OCL_X_
};

/* Whether the program includes pmathf (plugins/gpumath, OCL_SRC_PMATHF, after kernel_common.k.h): float
 * class elementwise programs always (gelu), and where the device lacks correctly rounded division
 * and sqrt (slot lib_div) the reduction, softmax and pooling programs too (their divisions; not
 * matmul and convolution, which divide nothing). */
static int uses_pmathf(const parity_plugin_device_t *dev, ocl_var_t v, int kid) {
  if (ocl_var_class(v) != OCL_CLASS_F) return 0;
  int src = kernel_source[kid];
  return src == OCL_SRC_EW || (dev->slot->lib_div && (src == OCL_SRC_RED || src == OCL_SRC_SMX || src == OCL_SRC_POOL));
}

static size_t make_prelude(const parity_plugin_device_t *dev, ocl_var_t v, int kid, char *buf, size_t n) {
  const ocl_slot_t *s = dev->slot;
  int cls = ocl_var_class(v);
  int pm = uses_pmathf(dev, v, kid);
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
  int partner = ocl_kernel_partner(kid, v);
  for (int k = 0; k < OCL_K_COUNT; k++)
    if (off < n)
      off += (size_t)snprintf(buf + off, n - off, "#define K_%s %d\n", ocl_kernel_name(k), k == kid || k == partner);
  if (off < n) off += (size_t)snprintf(buf + off, n - off, "#define OCL_CONTIG %d\n", dev->contiguous);
  /* pmathf's OpenCL dialect; OpenCL's fma() is correctly rounded by the spec (PF_FUSED_FMA true).
   * OCL_LIB_DIV: kernel_common.k.h's FDIV, FSQRT, FRSQRT, FRCP are pmathf's (else the built-ins). */
  if (off < n)
    off += (size_t)snprintf(buf + off, n - off, "#define OCL_PMATHF %d\n#define OCL_LIB_DIV %d\n%s", pm,
                            pm && s->lib_div, pm ? "#define PF_OPENCL 1\n#define PF_FUSED_FMA true\n" : "");
  if (ocl_var_op(v) && off < n) off += (size_t)snprintf(buf + off, n - off, "#define SPEC_OP (%d)\n", ocl_var_op(v));
  if (ocl_var_dt(v) && off < n) off += (size_t)snprintf(buf + off, n - off, "#define SPEC_DT %d\n", ocl_var_dt(v));
  if (ocl_var_dt2(v) && off < n) off += (size_t)snprintf(buf + off, n - off, "#define SPEC_DT2 %d\n", ocl_var_dt2(v));
  return off < n ? off : n - 1;
}

/* Write the program's binary to the cache (atomically, through cachefile.h). */
static void cache_write(cl_program prog, const char *path, uint64_t key) {
  size_t size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0) return;
  unsigned char *bin = malloc(size);
  if (!bin) return;
  unsigned char *bins[1] = {bin};
  const char *why = NULL;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS)
    why = "clGetProgramInfo failed";
  else
    psup_cache_write(path, CACHE_MAGIC, key, bin, size, &why);
  if (why) ocl_log(PARITY_LOG_DEBUG, "could not write the program cache %s: %s", path, why);
  free(bin);
}

/* clBuildProgram; on failure report with the head of the build log. */
static int32_t build(const parity_plugin_device_t *dev, cl_program prog, const char *options, int cls, int kid,
                     const char *how) {
  cl_int e = clBuildProgram(prog, 1, &dev->slot->id, options, NULL, NULL);
  char what[700];
  char log[512] = "";
  size_t len = 0;
  /* the head of the log (a longer log fails the query and leaves it empty) */
  if (clGetProgramBuildInfo(prog, dev->slot->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len) != CL_SUCCESS)
    log[0] = 0;
  log[sizeof log - 1] = 0;
  if (e == CL_SUCCESS) {
    if (strspn(log, " \t\r\n") < strlen(log))
      ocl_log(PARITY_LOG_DEBUG, "%s %s build log: %s", ocl_class_name(cls), ocl_kernel_name(kid), log);
    return PARITY_STATUS_OK;
  }
  for (char *p = log; *p; p++)
    if (*p == '\n') *p = ' ';
  snprintf(what, sizeof what, "%s %s for %s from %s, options '%s'%s%.400s", ocl_class_name(cls), ocl_kernel_name(kid),
           dev->slot->kit.info.name, how, options, log[0] ? ": " : "", log);
  return ocl_cl_fail(e, "clBuildProgram", what);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* PARITY_OPENCL_BUILD_LOG=file: one line per program built, for tests: how (source, cache), class,
 * kernel, what declared the builtins (builtins: builtins.cl; header: the driver's) and the tier
 * the options built (quick: -cl-opt-disable, else full). */
static void build_log(const char *how, int cls, int kid, int declared, const char *options) {
  const char *path = psup_getenv("PARITY_OPENCL_BUILD_LOG");
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s %s %s %s %s\n", how, ocl_class_name(cls), ocl_kernel_name(kid), declared ? "builtins" : "header",
          strstr(options, "-cl-opt-disable") ? "quick" : "full");
  fclose(f);
}

/* The kernel object of a built program, and its work-group size (a power of two, at most 64). */
int32_t ocl_make_kernel(parity_plugin_device_t *dev, ocl_prog_t *p) {
  int kid = p->kid;
  cl_int e;
  cl_kernel k = clCreateKernel(p->prog, ocl_kernel_name(kid), &e);
  OCL_CHECK(e, "clCreateKernel", ocl_kernel_name(kid));
  size_t wg = 1;
  e = clGetKernelWorkGroupInfo(k, dev->slot->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  if (e != CL_SUCCESS) {
    clReleaseKernel(k);
    return ocl_cl_fail(e, "clGetKernelWorkGroupInfo", ocl_kernel_name(kid));
  }
  size_t local = dev->contiguous ? 1 : 64; /* contiguous: each work-item is its own run anyway */
  while (local > 1 && (local > wg || local > dev->max_local)) local /= 2;
  p->kern = k;
  p->local = local;
  return PARITY_STATUS_OK;
}

static void cache_path(const parity_plugin_device_t *dev, const ocl_prog_t *p, char *out, size_t n) {
  int cls = ocl_var_class(p->var);
  snprintf(out, n, "%s/%016llx-%s-%s%s.bin", dev->cache_dir, (unsigned long long)p->key, ocl_class_name(cls),
           ocl_kernel_name(ocl_program_kernel(p->kid, p->var)), p->quick ? "-quick" : "");
}

/* p's program and kernel object from a binary: 1 when the driver took it, else 0. */
static int from_binary(parity_plugin_device_t *dev, ocl_prog_t *p, const char *options, const unsigned char *bin,
                       size_t size) {
  const ocl_slot_t *s = dev->slot;
  cl_int bst = CL_SUCCESS, e;
  const unsigned char *bins[1] = {bin};
  cl_program prog = clCreateProgramWithBinary(dev->ctx, 1, &s->id, &size, bins, &bst, &e);
  if (e != CL_SUCCESS) return 0;
  if (bst == CL_SUCCESS && clBuildProgram(prog, 1, &s->id, options, NULL, NULL) == CL_SUCCESS) {
    p->prog = prog;
    if (ocl_make_kernel(dev, p) == PARITY_STATUS_OK) return 1;
    p->prog = NULL;
  }
  clReleaseProgram(prog);
  return 0;
}

/* From the cache: 1 when loaded, 0 when absent or refused (logged). */
static int load_cached(parity_plugin_device_t *dev, ocl_prog_t *p, const char *options, int declared, int cache_only) {
  int cls = ocl_var_class(p->var), kid = p->kid;
  char path[1200];
  cache_path(dev, p, path, sizeof path);
  double t0 = now_ms();
  const char *why = NULL;
  size_t size = 0;
  unsigned char *bin = psup_cache_read(path, CACHE_MAGIC, p->key, CACHE_MAX_BINARY, &size, &why);
  if (bin) {
    int ok = from_binary(dev, p, options, bin, size);
    free(bin);
    if (ok) {
      ocl_log(PARITY_LOG_DEBUG, "%s %s loaded from cache %s in %.1f ms", ocl_class_name(cls), ocl_kernel_name(kid),
              path, now_ms() - t0);
      build_log("cache", cls, kid, declared, options);
      return 1;
    }
    why = "rejected by the driver";
  }
  ocl_log(PARITY_LOG_DEBUG, "cache %s: %s%s", path, why, cache_only ? "" : "; building from source");
  return 0;
}

/* The declarations that stand in for the driver's opencl-c.h: kernels/builtins.cl, or the file
 * PARITY_OPENCL_BUILTINS names (NULL when it cannot be read; *owned: the caller frees it). */
static const char *builtins_source(int *owned) {
  const char *path = psup_getenv("PARITY_OPENCL_BUILTINS");
  *owned = 0;
  if (!path || !*path || strcmp(path, "0") == 0 || strcmp(path, "1") == 0) return ocl_sources[OCL_SRC_BUILTINS];
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n >= 0 && n < (1l << 24) && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
    if (fread(buf, 1, (size_t)n, f) == (size_t)n)
      buf[n] = 0, *owned = 1;
    else
      free(buf), buf = NULL;
  }
  fclose(f);
  return buf;
}

/* A program's source, options and cache key: with the builtins declared by the program itself
 * (`declared`: builtins.cl first, -D_OPENCL_H_ keeping PoCL from including its header), or with
 * the driver's header. */
typedef struct ocl_text_t {
  char prelude[6144], options[560];
  const char *srcs[5];
  cl_uint nsrc;
  int owned; /* srcs[1] is a malloc'd PARITY_OPENCL_BUILTINS file */
  uint64_t key;
} ocl_text_t;

static int32_t program_text(const parity_plugin_device_t *dev, ocl_var_t v, int kid, int quick, int declared,
                            ocl_text_t *t) {
  const ocl_slot_t *s = dev->slot;
  make_prelude(dev, v, kid, t->prelude, sizeof t->prelude);
  const char *extra = psup_getenv("PARITY_OPENCL_BUILD_OPTIONS");
  /* the quick tier differs only in -cl-opt-disable: the same floating-point options */
  snprintf(t->options, sizeof t->options, "%s%s%s%s%s%s", s->c12 ? "-cl-std=CL1.2 " : "",
           s->correct_divide ? "-cl-fp32-correctly-rounded-divide-sqrt" : "", declared ? " -D_OPENCL_H_" : "",
           quick ? " -cl-opt-disable" : "", extra && *extra ? " " : "", extra ? extra : "");
  t->owned = 0;
  const char *decl = declared ? builtins_source(&t->owned) : NULL;
  if (declared && !decl)
    return ocl_cl_fail(CL_INVALID_VALUE, "PARITY_OPENCL_BUILTINS", "the file it names cannot be read");
  /* prelude, [builtins.cl], common.cl, [pmathf: after common.cl's FP_CONTRACT OFF and float64
   * poisoning, so both cover it], the kernel's family file */
  t->nsrc = 0;
  t->srcs[t->nsrc++] = t->prelude;
  if (declared) t->srcs[t->nsrc++] = decl;
  t->srcs[t->nsrc++] = ocl_sources[0];
  if (uses_pmathf(dev, v, kid)) t->srcs[t->nsrc++] = ocl_sources[OCL_SRC_PMATHF];
  t->srcs[t->nsrc++] = ocl_sources[kernel_source[kid]];
  /* the key: device, platform and driver (cache_key), build options, class, kernel, full source */
  uint64_t key = psup_fnv1a(PSUP_FNV_SEED, s->cache_key, strlen(s->cache_key) + 1);
  key = psup_fnv1a(key, t->options, strlen(t->options) + 1);
  key = psup_fnv1a(key, &v, sizeof v);
  const char *pname = ocl_kernel_name(ocl_program_kernel(kid, v)); /* a pair: the same program */
  key = psup_fnv1a(key, pname, strlen(pname) + 1);
  for (cl_uint i = 0; i < t->nsrc; i++) key = psup_fnv1a(key, t->srcs[i], strlen(t->srcs[i]) + 1);
  t->key = key;
  return PARITY_STATUS_OK;
}

static void text_free(ocl_text_t *t) {
  if (t->owned) free((void *)t->srcs[1]);
  t->owned = 0;
}

/* One way to build p, from the cache or from source (program_text). */
static int32_t build_with(parity_plugin_device_t *dev, ocl_prog_t *p, int declared, int cache_only) {
  int cls = ocl_var_class(p->var), kid = p->kid;
  ocl_text_t t;
  int32_t st = program_text(dev, p->var, kid, p->quick, declared, &t);
  if (st != PARITY_STATUS_OK) return st;
  p->key = t.key;
  p->declared = declared;
  const char *options = t.options;
  if ((dev->cache_dir[0] && load_cached(dev, p, options, declared, cache_only)) || cache_only) {
    text_free(&t);
    return PARITY_STATUS_OK;
  }

  double t0 = now_ms(), c0 = (double)clock() * 1e3 / CLOCKS_PER_SEC;
  cl_int e;
  cl_program prog = clCreateProgramWithSource(dev->ctx, t.nsrc, t.srcs, NULL, &e);
  text_free(&t);
  OCL_CHECK(e, "clCreateProgramWithSource", ocl_kernel_name(kid));
  st = build(dev, prog, t.options, cls, kid, "source");
  if (st == PARITY_STATUS_OK) {
    p->prog = prog;
    st = ocl_make_kernel(dev, p);
  }
  if (st != PARITY_STATUS_OK) {
    clReleaseProgram(prog);
    p->prog = NULL;
    return st;
  }
  ocl_log(PARITY_LOG_DEBUG, "%s %s (%s) built from source (%s) in %.1f ms (process CPU %.1f ms)", ocl_class_name(cls),
          ocl_kernel_name(kid), p->quick ? "quick" : "optimised", declared ? "builtins.cl" : "the driver's header",
          now_ms() - t0, (double)clock() * 1e3 / CLOCKS_PER_SEC - c0);
  build_log("source", cls, kid, declared, t.options);
  p->save_pending = dev->cache_dir[0] != 0; /* counted by the caller (cl_programs.c) */
  return PARITY_STATUS_OK;
}

int32_t ocl_build_kernel(parity_plugin_device_t *dev, ocl_prog_t *p, int cache_only) {
  if (dev->slot->builtins) {
    if (build_with(dev, p, 1, cache_only) == PARITY_STATUS_OK && (p->prog || !cache_only)) return PARITY_STATUS_OK;
    if (cache_only) return build_with(dev, p, 0, 1); /* a header build's file, if there is one */
    /* a builtin builtins.cl lacks (tools/gen_ocl_builtins.py), or an unreadable override: the
     * driver's header declares them all */
    ocl_log(PARITY_LOG_DEBUG, "%s %s: building with builtins.cl failed; using the driver's header",
            ocl_class_name(ocl_var_class(p->var)), ocl_kernel_name(p->kid));
  }
  return build_with(dev, p, 0, cache_only);
}

void ocl_cache_flush(parity_plugin_device_t *dev, int force) {
  if (!dev->saves_pending || (!force && dev->saves_pending < OCL_SAVE_BATCH)) return;
  for (uint32_t i = 0; i < dev->prog_cap; i++) {
    ocl_prog_t *p = &dev->progs[i];
    if (!p->prog || !p->save_pending) continue;
    char path[1200];
    cache_path(dev, p, path, sizeof path);
    cache_write(p->prog, path, p->key);
    p->save_pending = 0;
  }
  dev->saves_pending = 0;
}
