/* The OpenCL plugin's device, queue, program cache and error reporting: truthful capabilities,
 * every OpenCL error code named and mapped, a clear message without any platform, binary cache
 * hits and the fallback from corrupted cache files, buffers, sizes past the work-group and grid
 * limits, zero-element tensors and run-to-run determinism. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv, truncate */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl_test.h"
#include "parity_support/cachefile.h"

/* The plugin's error table, compiled into this test (it calls no OpenCL function); needs the
 * OpenCL headers, which machines without the plugin may lack. */
#if defined(__has_include)
#if __has_include(<CL/cl.h>)
#define OT_HAVE_CL_HEADERS 1
#include "../../plugins/opencl/cl_errors.c"
#endif
#endif

/* A context of our own (environment changes take effect), and its OpenCL plugin index. */
static parity_context_t *fresh_context(uint32_t *out_plugin) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = "";
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_context_find_plugin(ctx, "opencl", out_plugin), PARITY_STATUS_OK, "%s", parity_last_error());
  return ctx;
}

Test(ocl_device, every_opencl_error_code_has_its_name_and_a_status) {
#ifndef OT_HAVE_CL_HEADERS
  cr_skip_test("no OpenCL headers here");
#else
  for (cl_int e = -1; e >= -72; e--) {
    if (e < -19 && e > -30) continue; /* unassigned */
    cr_assert_not_null(ocl_error_name(e), "code %d has no name", e);
    cr_assert_neq(ocl_error_status(e), PARITY_STATUS_OK, "code %d maps to OK", e);
  }
  cr_assert_str_eq(ocl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  cr_assert_eq(ocl_error_status(CL_OUT_OF_RESOURCES), PARITY_STATUS_DEVICE_ERROR);
  cr_assert_eq(ocl_error_status(CL_MEM_OBJECT_ALLOCATION_FAILURE), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert_eq(ocl_error_status(CL_OUT_OF_HOST_MEMORY), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert_eq(ocl_error_status(CL_INVALID_BUILD_OPTIONS), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_str_eq(ocl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  cr_assert_eq(ocl_error_status(-1001), PARITY_STATUS_UNAVAILABLE);
  cr_assert_eq(ocl_error_status(CL_DEVICE_NOT_FOUND), PARITY_STATUS_UNAVAILABLE);
  cr_assert_null(ocl_error_name(-9999));
  cr_assert_eq(ocl_error_status(-9999), PARITY_STATUS_DEVICE_ERROR);
  cr_assert_eq(ocl_error_status(CL_SUCCESS), PARITY_STATUS_OK);
#endif
}

Test(ocl_device, without_any_platform_the_plugin_is_unavailable_with_a_remedy) {
  char dir[] = "/tmp/parity-no-icd-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("OCL_ICD_VENDORS", dir, 1);     /* ocl-icd */
  setenv("OPENCL_VENDOR_PATH", dir, 1);  /* Khronos loader */
  setenv("OCL_ICD_FILENAMES", "", 1);
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = "";
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK);
  int seen = 0;
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    cr_assert_eq(parity_context_plugin(ctx, i, &r), PARITY_STATUS_OK);
    if (strcmp(r.name, "opencl") != 0) continue;
    seen = 1;
    cr_assert_eq(r.state, PARITY_PLUGIN_STATE_UNAVAILABLE, "state %d: %s", r.state, r.reason);
    cr_assert(strstr(r.reason, "no OpenCL platform found; install an ICD such as pocl-opencl-icd"), "%s", r.reason);
    cr_assert(!strstr(r.reason, "-1001"), "%s", r.reason);
  }
  parity_context_destroy(ctx);
  rmdir(dir);
  if (!seen) cr_skip_test("the OpenCL plugin is not built");
}

Test(ocl_device, capabilities_are_truthful) {
  parity_device_t *dev = ot_device();
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert(strchr(info.name, '('), "the name carries the platform: %s", info.name);
  cr_assert(info.type == PARITY_DEVICE_TYPE_GPU || info.type == PARITY_DEVICE_TYPE_SOFTWARE_GPU ||
            info.type == PARITY_DEVICE_TYPE_OTHER);
  if (strstr(info.name, "Portable Computing Language") && strstr(info.name, "pthread"))
    cr_assert_eq(info.type, PARITY_DEVICE_TYPE_SOFTWARE_GPU, "PoCL's CPU device is a software GPU");
  cr_assert(info.flags & PARITY_DEVICE_FLAG_DETERMINISTIC);
  int f64 = (info.flags & PARITY_DEVICE_FLAG_FLOAT64) != 0;
  cr_assert_eq(f64, (info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64)) != 0);
  cr_assert(info.max_buffer_bytes > 0 && info.max_buffer_bytes <= info.memory_bytes);
  cr_log_info("%s | %s | f64 %s | denormals %s", info.name, info.driver, f64 ? "yes" : "no",
              info.denormals == PARITY_DENORMALS_PRESERVED ? "preserved" : "flushed");

  /* denormals: 2^-70 * 2^-70 = 2^-140 is an f32 subnormal */
  int64_t shape[1] = {1};
  double a = 0x1p-70;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, &a), y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&x, &x}, *out[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  double got;
  pt_tensor_read(&y, &got);
  if (info.denormals == PARITY_DENORMALS_PRESERVED) cr_assert_eq(got, 0x1p-140);
  else cr_assert_eq(got, 0.0);

  /* f64 runs iff declared */
  parity_tensor_desc_t t;
  psup_tensor_init(&t, PARITY_DTYPE_F64, 1, shape, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_EXP;
  d.num_inputs = d.num_outputs = 1;
  d.inputs[0] = d.outputs[0] = &t;
  cr_assert_eq(parity_device_supports(dev, &d) == PARITY_STATUS_OK, f64, "%s", parity_last_error());

  /* the largest buffer is refused with the limit named */
  parity_buffer_t *b = NULL;
  cr_assert_eq(parity_buffer_alloc(dev, info.max_buffer_bytes + 1, &b), PARITY_STATUS_OUT_OF_MEMORY);
  cr_assert(strstr(parity_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"), "%s", parity_last_error());
}

Test(ocl_device, supports_names_what_is_wrong) {
  parity_device_t *dev = ot_device();
  int64_t s3[1] = {3}, s4[1] = {4};
  parity_tensor_desc_t a, b, c;
  psup_tensor_init(&a, PARITY_DTYPE_F32, 1, s3, NULL, 0);
  psup_tensor_init(&b, PARITY_DTYPE_F32, 1, s4, NULL, 0);
  psup_tensor_init(&c, PARITY_DTYPE_F32, 1, s3, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_ADD;
  d.num_inputs = 2, d.num_outputs = 1;
  d.inputs[0] = &a, d.inputs[1] = &b, d.outputs[0] = &c;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "[4]") && strstr(parity_last_error(), "[3]"), "%s", parity_last_error());
  b = a;
  b.dtype = PARITY_DTYPE_F16;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "f16"), "%s", parity_last_error());
  a.dtype = b.dtype = c.dtype = PARITY_DTYPE_I32;
  d.op = PARITY_OP_DIV;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "div") && strstr(parity_last_error(), "i32"), "%s", parity_last_error());
  d.op = PARITY_OP_ADD;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_OK, "%s", parity_last_error());
  a.offset_bytes = 2;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "offset"), "%s", parity_last_error());
}

Test(ocl_device, a_build_failure_names_the_opencl_call_and_error) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  setenv("PARITY_OPENCL_BUILD_OPTIONS", "-cl-no-such-option", 1);
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_t *dev = NULL;
  /* opening compiles nothing, so it succeeds; the first op builds its kernel and fails */
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {3};
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_neq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  cr_assert(strstr(parity_last_error(), "clBuildProgram: CL_"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "ew_binary"), "names the kernel: %s", parity_last_error());
  /* and again: still a clear failure, not a crash */
  cr_assert_neq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx);
}

/* ---- the program cache ------------------------------------------------------------------------ */
typedef struct cache_file {
  char path[1024];
  struct stat st;
} cache_file;

static int list_cache(const char *dir, cache_file *out, int max) {
  char sub[512];
  snprintf(sub, sizeof sub, "%s/opencl", dir);
  DIR *d = opendir(sub);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    if (!strstr(e->d_name, ".bin") || strstr(e->d_name, ".tmp")) continue;
    snprintf(out[n].path, sizeof out[n].path, "%s/%s", sub, e->d_name);
    cr_assert_eq(stat(out[n].path, &out[n].st), 0);
    n++;
  }
  closedir(d);
  return n;
}

static void remove_cache_dir(const char *dir, const char *log) {
  cache_file files[16];
  int n = list_cache(dir, files, 16);
  for (int i = 0; i < n; i++) unlink(files[i].path);
  if (log) unlink(log);
  char sub[512];
  snprintf(sub, sizeof sub, "%s/opencl", dir);
  rmdir(sub);
  rmdir(dir);
}

/* open the device in a fresh context and run add, mul and sub (three kernel variants, so three
 * programs) to prove the programs work */
static void open_and_add(void) {
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {3};
  double v[3] = {1, 2, 3}, got[3];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  static const int32_t ops[3] = {PARITY_OP_ADD, PARITY_OP_MUL, PARITY_OP_SUB};
  static const double want[3][3] = {{2, 4, 6}, {1, 4, 9}, {0, 0, 0}};
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(pt_run(dev, ops[k], 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
    pt_tensor_read(&c, got);
    for (int i = 0; i < 3; i++) cr_assert_eq(got[i], want[k][i], "op %d element %d: %g", ops[k], i, got[i]);
  }
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx);
}

/* The lines of the plugin's build log (PARITY_OPENCL_BUILD_LOG) that start with `how` and name
 * `kernel` (NULL: any). */
static int count_builds(const char *log, const char *how, const char *kernel) {
  FILE *f = fopen(log, "r");
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char h[32], cls[32], k[64];
    if (sscanf(line, "%31s %31s %63s", h, cls, k) != 3) continue;
    if (strcmp(h, how) == 0 && (!kernel || strcmp(k, kernel) == 0)) n++;
  }
  fclose(f);
  return n;
}

/* a + a -> c, queued without waiting (pt_run synchronizes) */
static void add_nosync(parity_device_t *dev, const pt_tensor *a, const pt_tensor *c) {
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_ADD;
  d.num_inputs = 2, d.num_outputs = 1;
  d.inputs[0] = d.inputs[1] = &a->desc;
  d.outputs[0] = &c->desc;
  cr_assert_eq(parity_device_run(dev, &d), PARITY_STATUS_OK, "%s", parity_last_error());
}

Test(ocl_device, opening_compiles_nothing_kernels_build_alone_on_first_use_and_load_from_cache_after, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-lazy-XXXXXX", log[600];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(log, sizeof log, "%s/builds.log", dir);
  setenv("PARITY_CACHE_DIR", dir, 1);
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cache_file files[8];
  cr_assert_eq(count_builds(log, "source", NULL) + count_builds(log, "cache", NULL), 0, "opening the device built a program");
  cr_assert_eq(list_cache(dir, files, 8), 0);

  int64_t shape[1] = {5};
  double v[5] = {1, 2, 3, 4, 5}, got[5];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  add_nosync(dev, &a, &c);
  /* the add built its own kernel and nothing else */
  cr_assert_eq(count_builds(log, "source", "ew_binary"), 1);
  cr_assert_eq(count_builds(log, "source", NULL), 1);
  /* the binary is written after the first launch has run, at device close (asking PoCL for a
   * binary compiles every kernel in it once more, so it stays off the path to the results) */
  pt_tensor_read(&c, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 2 * v[i]);
  cr_assert_eq(list_cache(dir, files, 8), 0, "the binary was written before the device closed");
  /* the same op again builds nothing; another op is another variant */
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(count_builds(log, "source", NULL), 1);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(count_builds(log, "source", "ew_binary"), 2);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx); /* closing writes what is pending */
  cr_assert_eq(list_cache(dir, files, 8), 2);

  /* a second device open (as a second process would) loads both from the cache */
  ctx = fresh_context(&p);
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], v[i] * v[i]);
  cr_assert_eq(count_builds(log, "source", NULL), 2, "the second open compiled again");
  cr_assert_eq(count_builds(log, "cache", "ew_binary"), 2);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx);
  remove_cache_dir(dir, log);
}

Test(ocl_device, program_binaries_are_cached_and_corrupt_files_rebuilt, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-cache-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("PARITY_CACHE_DIR", dir, 1);
  open_and_add(); /* builds from source, writes the cache */
  cache_file before[8], after[8];
  int n = list_cache(dir, before, 8);
  cr_assert_eq(n, 3, "expected a cache file per program (add, mul, sub), found %d in %s/opencl", n, dir);

  open_and_add(); /* hit: nothing rewritten */
  cr_assert_eq(list_cache(dir, after, 8), n);
  for (int i = 0; i < n; i++) {
    cr_assert_eq(after[i].st.st_ino, before[i].st.st_ino, "%s was rewritten on a hit", after[i].path);
    cr_assert_eq(after[i].st.st_mtime, before[i].st.st_mtime);
  }

  /* corrupt: truncate one file, scribble over another, empty a third */
  cr_assert_eq(truncate(before[0].path, before[0].st.st_size / 2), 0);
  FILE *f = fopen(before[1].path, "r+b");
  cr_assert_not_null(f);
  fseek(f, before[1].st.st_size / 2, SEEK_SET);
  for (int i = 0; i < 4096; i++) fputc(i * 7 + 1, f);
  fclose(f);
  cr_assert_eq(truncate(before[2].path, 0), 0);
  open_and_add(); /* falls back to source and rewrites the files */
  cr_assert_eq(list_cache(dir, after, 8), n);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < n; j++)
      if (strcmp(after[j].path, before[i].path) == 0) {
        cr_assert_neq(after[j].st.st_ino, before[i].st.st_ino, "%s was not replaced (atomically)", after[j].path);
        /* a whole file again: magic, and the header's binary size matches the file */
        unsigned char head[32];
        FILE *g = fopen(after[j].path, "rb");
        cr_assert_not_null(g);
        cr_assert_eq(fread(head, 1, sizeof head, g), sizeof head);
        fclose(g);
        uint64_t size;
        memcpy(&size, head + 16, 8); /* cachefile.h: magic, key, size, checksum */
        cr_assert_eq(memcmp(head, "PARITYC3", 8), 0, "%s", after[j].path);
        cr_assert_eq((long long)size + 32, (long long)after[j].st.st_size, "%s", after[j].path);
      }
  open_and_add(); /* and the rebuilt files are hits: nothing rewritten */
  cache_file again[8];
  cr_assert_eq(list_cache(dir, again, 8), n);
  for (int i = 0; i < n; i++) cr_assert_eq(again[i].st.st_ino, after[i].st.st_ino, "%s rewritten", again[i].path);
  remove_cache_dir(dir, NULL);
}

static void expect_values(const pt_tensor *t, const double *want, int n, const char *what) {
  double got[16];
  pt_tensor_read(t, got);
  for (int i = 0; i < n; i++) cr_assert_eq(got[i], want[i], "%s element %d: %.9g, want %.9g", what, i, got[i], want[i]);
}


/* What a gradient builds: a forward kernel and the backward one of the same variant share one
 * program, sum and mean one variant (with sum's backward in it), and dense same-dtype copies (a
 * cast to the same dtype, add's backward) need no program at all. Fails if any of these builds
 * a program of its own. */
Test(ocl_device, a_gradient_builds_few_programs_pairs_share_one_and_dense_copies_none, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-pairs-XXXXXX", log[600];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(log, sizeof log, "%s/builds.log", dir);
  setenv("PARITY_CACHE_DIR", dir, 1);
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {6}, one[1] = {1};
  double va[6] = {-2.5, -1, 0, 0.5, 1, 3}, vb[6] = {4, 3, 2, 1, -1, -2}, vd[6] = {1, 2, 3, 4, 5, 6}, want[6];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, va), b = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vb);
  pt_tensor c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), dc = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vd);
  pt_tensor da = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), db = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in2[] = {&a, &b}, *out1[] = {&c}, *bin[] = {&a, &b, &c, &dc}, *bout[] = {&da, &db};

  /* add forward: one program (ew_binary with ew_binary_bwd, add's variant) */
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = va[i] + vb[i];
  expect_values(&c, want, 6, "a + b");
  cr_assert_eq(count_builds(log, "source", NULL), 1);
  /* add backward: da = db = dc, buffer copies */
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  expect_values(&da, vd, 6, "add da");
  expect_values(&db, vd, 6, "add db");
  cr_assert_eq(count_builds(log, "source", NULL), 1, "add's backward built a program");
  /* mul backward builds mul's program, which holds mul forward too */
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = vd[i] * vb[i];
  expect_values(&da, want, 6, "mul da");
  cr_assert_eq(count_builds(log, "source", "ew_binary_bwd"), 1);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = va[i] * vb[i];
  expect_values(&c, want, 6, "a * b");
  cr_assert_eq(count_builds(log, "source", NULL), 2, "mul forward was not in mul backward's program");
  /* a same-dtype dense cast is a copy; to f16 it is a kernel */
  const pt_tensor *cin[] = {&a}, *cout[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, cin, 1, cout, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  expect_values(&c, va, 6, "cast f32 -> f32");
  cr_assert_eq(count_builds(log, "source", NULL), 2, "a same-dtype cast built a program");
  pt_tensor h = pt_tensor_new(dev, PARITY_DTYPE_F16, 1, shape, NULL);
  const pt_tensor *hout[] = {&h};
  cr_assert_eq(pt_run(dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, cin, 1, hout, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  expect_values(&h, va, 6, "cast f32 -> f16");
  cr_assert_eq(count_builds(log, "source", "ew_cast"), 1);
  /* sum and mean: one red_pass; sum's and mean's backward are in its program */
  pt_tensor s = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL), ds = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, (double[]){3});
  const pt_tensor *rin[] = {&a}, *rout[] = {&s}, *rbin[] = {&a, &s, &ds}, *rbout[] = {&da};
  parity_op_params_t rp;
  memset(&rp, 0, sizeof rp);
  rp.reduce.axes_mask = 1;
  double total = 0;
  for (int i = 0; i < 6; i++) total += va[i];
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, PARITY_DIRECTION_FORWARD, rin, 1, rout, 1, &rp), PARITY_STATUS_OK, "%s", parity_last_error());
  expect_values(&s, &total, 1, "sum");
  double mean = (double)((float)total / 6.0f);
  cr_assert_eq(pt_run(dev, PARITY_OP_MEAN, PARITY_DIRECTION_FORWARD, rin, 1, rout, 1, &rp), PARITY_STATUS_OK, "%s", parity_last_error());
  expect_values(&s, &mean, 1, "mean");
  cr_assert_eq(count_builds(log, "source", "red_pass"), 1, "sum and mean built two programs");
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, PARITY_DIRECTION_BACKWARD, rbin, 3, rbout, 1, &rp), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = 3;
  expect_values(&da, want, 6, "sum dx");
  cr_assert_eq(pt_run(dev, PARITY_OP_MEAN, PARITY_DIRECTION_BACKWARD, rbin, 3, rbout, 1, &rp), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = (double)(3.0f / 6.0f);
  expect_values(&da, want, 6, "mean dx");
  cr_assert_eq(count_builds(log, "source", NULL), 4, "the reduction's backward built a program of its own");
  pt_tensor *all[] = {&a, &b, &c, &dc, &da, &db, &h, &s, &ds};
  for (int i = 0; i < 9; i++) pt_tensor_free(all[i]);
  parity_context_destroy(ctx);
  cache_file files[16];
  cr_assert_eq(list_cache(dir, files, 16), 4, "one cache file per program");

  /* another open loads the pairs from the cache: one file serves both kernels */
  ctx = fresh_context(&p);
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, va), b = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vb);
  c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), dc = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vd);
  da = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), db = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = va[i] * vb[i];
  expect_values(&c, want, 6, "a * b from the cache");
  cr_assert_eq(count_builds(log, "source", NULL), 4, "the second open compiled again");
  cr_assert_eq(count_builds(log, "cache", NULL), 1);
  pt_tensor *again[] = {&a, &b, &c, &dc, &da, &db};
  for (int i = 0; i < 6; i++) pt_tensor_free(again[i]);
  parity_context_destroy(ctx);
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  remove_cache_dir(dir, log);
}

/* Cache files are untrusted input: a whole, well-formed file of another program (its key is not
 * this program's) and a file with this program's key and a correct checksum around bytes the
 * driver rejects are both rebuilt from source, and rewritten. */
Test(ocl_device, a_cache_file_of_another_program_or_with_a_rejected_binary_is_rebuilt, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-untrusted-XXXXXX", log[600];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(log, sizeof log, "%s/builds.log", dir);
  setenv("PARITY_CACHE_DIR", dir, 1);
  open_and_add(); /* add, mul, sub: three programs, three files */
  cache_file before[8], after[8];
  cr_assert_eq(list_cache(dir, before, 8), 3);
  /* file 1 becomes a copy of file 0 */
  FILE *f = fopen(before[0].path, "rb");
  cr_assert_not_null(f);
  unsigned char *bytes = malloc((size_t)before[0].st.st_size);
  cr_assert_eq(fread(bytes, 1, (size_t)before[0].st.st_size, f), (size_t)before[0].st.st_size);
  fclose(f);
  f = fopen(before[1].path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(bytes, 1, (size_t)before[0].st.st_size, f), (size_t)before[0].st.st_size);
  fclose(f);
  free(bytes);
  /* file 2 keeps its key, with a checksummed binary of garbage */
  unsigned char head[32];
  f = fopen(before[2].path, "rb");
  cr_assert_not_null(f);
  cr_assert_eq(fread(head, 1, sizeof head, f), sizeof head);
  fclose(f);
  uint64_t key;
  memcpy(&key, head + 8, 8);
  unsigned char garbage[4096];
  for (int i = 0; i < 4096; i++) garbage[i] = (unsigned char)(i * 131 + 7);
  const char *werr = NULL;
  cr_assert_eq(psup_cache_write(before[2].path, "PARITYC3", key, garbage, sizeof garbage, &werr), 0, "%s", werr ? werr : "");
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
  open_and_add(); /* right results, from source for the two bad files */
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  cr_assert_eq(count_builds(log, "source", NULL), 2, "a bad cache file was loaded");
  cr_assert_eq(count_builds(log, "cache", NULL), 1);
  cr_assert_eq(list_cache(dir, after, 8), 3);
  for (int i = 1; i < 3; i++)
    for (int j = 0; j < 3; j++)
      if (strcmp(after[j].path, before[i].path) == 0) {
        FILE *g = fopen(after[j].path, "rb");
        cr_assert_not_null(g);
        cr_assert_eq(fread(head, 1, sizeof head, g), sizeof head);
        fclose(g);
        uint64_t size;
        memcpy(&size, head + 16, 8);
        cr_assert_neq(size, (uint64_t)sizeof garbage, "%s was not rewritten", after[j].path);
        cr_assert_eq((long long)size + 32, (long long)after[j].st.st_size, "%s", after[j].path);
      }
  remove_cache_dir(dir, log);
}

/* ---- buffers and the queue ---------------------------------------------------------------------- */
Test(ocl_device, buffers_write_read_copy_fill_including_overlap_and_odd_offsets) {
  parity_device_t *dev = ot_device();
  parity_buffer_t *a, *b, *z;
  unsigned char src[64], dst[64];
  for (int i = 0; i < 64; i++) src[i] = (unsigned char)i;
  cr_assert_eq(parity_buffer_alloc(dev, 64, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, 64, &b), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, 0, &z), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_write(a, 0, src, 64), PARITY_STATUS_OK);
  memset(src, 0xee, sizeof src); /* write copied the host memory before returning */
  cr_assert_eq(parity_buffer_read(a, 0, dst, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 64; i++) cr_assert_eq(dst[i], i);
  /* overlapping copy within one buffer behaves like memmove */
  cr_assert_eq(parity_buffer_copy(a, 0, a, 8, 32), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(a, 0, dst, 64), PARITY_STATUS_OK);
  for (int i = 0; i < 32; i++) cr_assert_eq(dst[8 + i], i);
  /* fill at an offset that is not a multiple of the pattern */
  uint32_t pat = 0xdeadbeef;
  cr_assert_eq(parity_buffer_fill(b, 0, 64, &pat, 4), PARITY_STATUS_OK);
  uint16_t pat2 = 0x1234;
  cr_assert_eq(parity_buffer_fill(b, 3, 8, &pat2, 2), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, dst, 64), PARITY_STATUS_OK);
  cr_assert(dst[3] == 0x34 && dst[4] == 0x12 && dst[9] == 0x34 && dst[10] == 0x12 && dst[11] == 0xde);
  cr_assert_eq(parity_buffer_read(z, 0, dst, 0), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(a, 60, dst, 8), PARITY_STATUS_OUT_OF_RANGE);
  parity_buffer_free(a);
  parity_buffer_free(b);
  parity_buffer_free(z);
}

/* Writes queue without waiting for earlier work, from a copy: the caller's memory may be freed
 * or overwritten as soon as write returns (AddressSanitizer sees a write that still reads it),
 * and the queue keeps the order of writes, copies and kernels. */
Test(ocl_device, writes_copy_the_callers_memory_and_keep_queue_order) {
  parity_device_t *dev = ot_device();
  enum { N = 4096, ROUNDS = 64 };
  parity_buffer_t *a, *b;
  cr_assert_eq(parity_buffer_alloc(dev, N * 4, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, N * 4, &b), PARITY_STATUS_OK);
  for (int r = 0; r < ROUNDS; r++) {
    uint32_t *src = malloc(N * 4);
    cr_assert_not_null(src);
    for (int i = 0; i < N; i++) src[i] = (uint32_t)(r * N + i);
    cr_assert_eq(parity_buffer_write(a, 0, src, N * 4), PARITY_STATUS_OK);
    memset(src, 0xee, N * 4);
    free(src);
    /* b[r] = a[r]: each copy sees the write just before it */
    cr_assert_eq(parity_buffer_copy(a, (uint64_t)r * 4, b, (uint64_t)r * 4, 4), PARITY_STATUS_OK);
  }
  uint32_t got[N];
  cr_assert_eq(parity_buffer_read(b, 0, got, ROUNDS * 4), PARITY_STATUS_OK);
  for (int r = 0; r < ROUNDS; r++) cr_assert_eq(got[r], (uint32_t)(r * N + r), "round %d", r);
  cr_assert_eq(parity_buffer_read(a, 0, got, N * 4), PARITY_STATUS_OK);
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], (uint32_t)((ROUNDS - 1) * N + i));
  /* a write larger than the staging limit blocks instead, with the same result */
  size_t big = (size_t)20 << 20;
  parity_buffer_t *c;
  cr_assert_eq(parity_buffer_alloc(dev, big, &c), PARITY_STATUS_OK);
  unsigned char *host = malloc(big), *back = malloc(big);
  cr_assert(host && back);
  for (size_t i = 0; i < big; i++) host[i] = (unsigned char)(i * 31 + 7);
  cr_assert_eq(parity_buffer_write(c, 0, host, big), PARITY_STATUS_OK);
  memset(host, 0, big);
  cr_assert_eq(parity_buffer_read(c, 0, back, big), PARITY_STATUS_OK);
  for (size_t i = 0; i < big; i++) cr_assert_eq(back[i], (unsigned char)(i * 31 + 7), "byte %zu", i);
  free(host);
  free(back);
  parity_buffer_free(a);
  parity_buffer_free(b);
  parity_buffer_free(c);
}

static void check_big_add_and_sum(parity_device_t *dev, int64_t n) {
  int64_t shape[1] = {n}, one[1] = {1};
  double *v = malloc(sizeof(double) * (size_t)n), *got = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i % 1000);
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  pt_tensor s = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c}, *rin[] = {&a}, *rout[] = {&s};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(got[i], 2.0 * (double)(i % 1000), "element %lld", (long long)i);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, rin, 1, rout, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  double sum, want = 0;
  for (int64_t i = 0; i < n; i++) want += v[i];
  pt_tensor_read(&s, &sum);
  cr_assert(fabs(sum - want) <= psup_accum_bound(PARITY_DTYPE_F32, want, want, n), "%.17g vs %.17g", sum, want);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  pt_tensor_free(&s);
  free(v);
  free(got);
}

Test(ocl_device, sizes_past_the_work_group_limit) {
  parity_device_t *dev = ot_device();
  check_big_add_and_sum(dev, (1 << 20) + 37); /* far more than the 4096 work-items of a group */
}

Test(ocl_device, tiny_grids_and_the_strided_layout_loop_over_everything) {
  setenv("PARITY_OPENCL_MAX_GROUPS", "1", 1);
  setenv("PARITY_OPENCL_WORK_LAYOUT", "strided", 1);
  parity_device_t *dev = ot_device(), *cpu = pt_device("cpu");
  check_big_add_and_sum(dev, 300001);
  int64_t shape[3] = {5, 7, 9001}, ys[3] = {5, 1, 9001};
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = "max over axis 1, strided layout";
  c.op = PARITY_OP_MAX;
  c.params.reduce.axes_mask = 2;
  c.nin = c.nout = 1;
  c.in[0] = ot_contig(PARITY_DTYPE_F16, 3, shape), c.out[0] = ot_contig(PARITY_DTYPE_F16, 3, ys);
  c.lo = -5, c.hi = 5;
  ot_check(dev, cpu, &c);
}

Test(ocl_device, zero_element_tensors_launch_nothing_and_write_nothing) {
  parity_device_t *dev = ot_device();
  int64_t zs[2] = {0, 5}, ones[2] = {1, 5};
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, zs, NULL), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, zs, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.softmax.axis = 1;
  const pt_tensor *in1[] = {&a};
  cr_assert_eq(pt_run(dev, PARITY_OP_SOFTMAX, 0, in1, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  /* sum over the empty axis 0 writes zeros into a real output */
  double sentinel[5] = {9, 9, 9, 9, 9}, got[5];
  pt_tensor y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, ones, sentinel);
  p.reduce.axes_mask = 1;
  const pt_tensor *out1[] = {&y};
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, in1, 1, out1, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&y, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 0.0);
  /* matmul with k = 0 gives zeros */
  int64_t as[2] = {2, 0}, bs[2] = {0, 3}, cs[2] = {2, 3};
  double cinit[6] = {7, 7, 7, 7, 7, 7}, cg[6];
  pt_tensor ma = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, as, NULL), mb = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, bs, NULL);
  pt_tensor mc = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, cs, cinit);
  const pt_tensor *min[] = {&ma, &mb}, *mout[] = {&mc};
  cr_assert_eq(pt_run(dev, PARITY_OP_MATMUL, 0, min, 2, mout, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&mc, cg);
  for (int i = 0; i < 6; i++) cr_assert_eq(cg[i], 0.0);
}

Test(ocl_device, large_reductions_are_bitwise_reproducible) {
  parity_device_t *dev = ot_device();
  int64_t n = 1 << 22, shape[1] = {n}, one[1] = {1};
  double *v = malloc(sizeof(double) * (size_t)n);
  uint64_t seed = 42;
  for (int64_t i = 0; i < n; i++) v[i] = ot_rand(&seed) * 2 - 1;
  pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), y = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = 1;
  const pt_tensor *in[] = {&x}, *out[] = {&y};
  uint32_t first = 0, again = 0;
  for (int r = 0; r < 3; r++) {
    cr_assert_eq(pt_run(dev, PARITY_OP_SUM, 0, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(parity_buffer_read(y.buf, 0, r ? &again : &first, 4), PARITY_STATUS_OK);
    if (r) cr_assert_eq(again, first, "run %d: 0x%08x vs 0x%08x", r, again, first);
  }
  free(v);
}

Test(ocl_device, without_fp64_f64_is_refused_and_leaky_relu_still_rounds_once) {
  setenv("PARITY_OPENCL_NO_FP64", "1", 1);
  parity_device_t *dev = ot_device(), *cpu = pt_device("cpu");
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert_eq(info.flags & PARITY_DEVICE_FLAG_FLOAT64, 0u);
  cr_assert_eq(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64), 0u);
  int64_t shape[1] = {1000};
  parity_tensor_desc_t t;
  psup_tensor_init(&t, PARITY_DTYPE_F64, 1, shape, NULL, 0);
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_ADD;
  d.num_inputs = 2, d.num_outputs = 1;
  d.inputs[0] = d.inputs[1] = d.outputs[0] = &t;
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "cl_khr_fp64"), "%s", parity_last_error());
  /* the f64 slope travels as three floats; the product still rounds once */
  for (int k = 0; k < 3; k++) {
    static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
    ot_case c;
    memset(&c, 0, sizeof c);
    c.name = "leaky_relu without fp64";
    c.op = PARITY_OP_LEAKY_RELU;
    c.params.unary.alpha = 0.0123456789012345;
    c.nin = c.nout = 1;
    c.in[0] = c.out[0] = ot_contig(dts[k], 1, shape);
    c.lo = -1e3, c.hi = 10;
    static const double sp[] = {-INFINITY, INFINITY, NAN, -0.0, -3e38, -1e-40};
    c.specials = sp;
    c.nspecials = 6;
    ot_check(dev, cpu, &c);
  }
}

/* The build log's lines that say what declared the builtins ("builtins": kernels/builtins.cl,
 * "header": the driver's opencl-c.h). */
static int count_decl(const char *log, const char *mode) {
  FILE *f = fopen(log, "r");
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char h[32], cls[32], k[64], m[32];
    if (sscanf(line, "%31s %31s %63s %31s", h, cls, k, m) == 4 && strcmp(m, mode) == 0) n++;
  }
  fclose(f);
  return n;
}

/* add, mul and tanh in a fresh context with an empty cache; results checked */
static void run_three_ops(void) {
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {5};
  double v[5] = {1, -2, 0.5, 4, -0.25}, got[5];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v), c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in[] = {&a, &a}, *out[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 2 * v[i]);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, 0, in, 2, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int i = 0; i < 5; i++) cr_assert_eq(got[i], v[i] * v[i]);
  cr_assert_eq(pt_run(dev, PARITY_OP_TANH, 0, in, 1, out, 1, NULL), PARITY_STATUS_OK, "%s", parity_last_error());
  pt_tensor_read(&c, got);
  for (int i = 0; i < 5; i++) cr_assert(fabs(got[i] - tanh(v[i])) <= 1e-6, "tanh(%g) = %g", v[i], got[i]);
  pt_tensor_free(&a);
  pt_tensor_free(&c);
  parity_context_destroy(ctx);
}

/* On PoCL every program declares its builtins (kernels/builtins.cl) instead of parsing the
 * driver's 900 KB header; a program that fails so (here: an override file declaring nothing) is
 * built with the header, with the same results; PARITY_OPENCL_BUILTINS=0 turns it off. */
Test(ocl_device, pocl_programs_declare_their_builtins_and_fall_back_to_the_header, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-builtins-XXXXXX", log[600], empty[600];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(log, sizeof log, "%s/builds.log", dir);
  snprintf(empty, sizeof empty, "%s/declares-nothing.cl", dir);
  FILE *f = fopen(empty, "w");
  cr_assert_not_null(f);
  fputs("/* no declarations */\n", f);
  fclose(f);
  setenv("PARITY_CACHE_DIR", dir, 1);
  setenv("PARITY_OPENCL_BUILD_LOG", log, 1);
  uint32_t p;
  parity_context_t *ctx = fresh_context(&p);
  parity_device_info_t info = {.struct_size = sizeof info};
  cr_assert_eq(parity_context_device_info(ctx, p, 0, &info), PARITY_STATUS_OK);
  parity_context_destroy(ctx);
  int pocl = strstr(info.name, "Portable Computing Language") != NULL;

  unsetenv("PARITY_OPENCL_BUILTINS");
  run_three_ops();
  cr_assert_eq(count_decl(log, "builtins") + count_decl(log, "header"), 3, "three programs");
  if (pocl) cr_assert_eq(count_decl(log, "builtins"), 3, "PoCL parsed its header");
  else cr_assert_eq(count_decl(log, "header"), 3, "not PoCL: the driver's header");
  unlink(log);

  setenv("PARITY_OPENCL_BUILTINS", empty, 1); /* every program fails with it: the header builds them */
  run_three_ops();
  cr_assert_eq(count_decl(log, "header"), 3);
  cr_assert_eq(count_decl(log, "builtins"), 0);
  unlink(log);

  setenv("PARITY_OPENCL_BUILTINS", "0", 1);
  run_three_ops();
  cr_assert_eq(count_decl(log, "header"), 3, "cache hits or builds with the header only");
  cr_assert_eq(count_decl(log, "builtins"), 0);
  unsetenv("PARITY_OPENCL_BUILTINS");
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  unlink(empty);
  remove_cache_dir(dir, log);
}
