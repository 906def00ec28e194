/* The OpenCL plugin's programs and their cache: nothing is built at device open, each kernel
 * variant (or forward/backward pair) is built alone on first use, a gradient builds few
 * programs, binaries are cached and corrupt or foreign files rebuilt, and on PoCL the programs
 * declare their own builtins with the driver's header as the fallback. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv, truncate */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl_build_log.h"
#include "ocl_test.h"
#include "parity_support/cachefile.h"

static void logged_cache(char *dir, char *log, size_t n) { ot_logged_cache(dir, log, n); }

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

/* the test's folder, whatever the plugin wrote there, and the log (which may lie elsewhere) */
static void remove_cache_dir(const char *dir, const char *log) {
  if (log) unlink(log);
  pt_remove_tree(dir);
}

/* open the device in a fresh context and run add, mul and sub (three kernel variants, so three
 * programs) to prove the programs work */
static void open_and_add(void) {
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {3};
  double v[3] = {1, 2, 3}, got[3];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
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

/* The build log's lines that start with `how` and name `kernel` (NULL: any). */
static int count_builds(const char *log, const char *how, const char *kernel) {
  return ot_count_builds(log, how, kernel, NULL, NULL);
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
  logged_cache(dir, log, sizeof log);
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cache_file files[8];
  cr_assert_eq(count_builds(log, "source", NULL) + count_builds(log, "cache", NULL), 0,
               "opening the device built a program");
  cr_assert_eq(list_cache(dir, files, 8), 0);

  int64_t shape[1] = {5};
  double v[5] = {1, 2, 3, 4, 5}, got[5];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
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
  ctx = ot_fresh_context(&p);
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
  setenv("PARITY_OPENCL_PROGRAM_CACHE", "on", 1);
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
  logged_cache(dir, log, sizeof log);
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {6}, one[1] = {1};
  double va[6] = {-2.5, -1, 0, 0.5, 1, 3}, vb[6] = {4, 3, 2, 1, -1, -2}, vd[6] = {1, 2, 3, 4, 5, 6}, want[6];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, va),
            b = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vb);
  pt_tensor c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL),
            dc = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vd);
  pt_tensor da = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL),
            db = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  const pt_tensor *in2[] = {&a, &b}, *out1[] = {&c}, *bin[] = {&a, &b, &c, &dc}, *bout[] = {&da, &db};

  /* add forward: one program (ew_binary with ew_binary_bwd, add's variant) */
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = va[i] + vb[i];
  expect_values(&c, want, 6, "a + b");
  cr_assert_eq(count_builds(log, "source", NULL), 1);
  /* add backward: da = db = dc, buffer copies */
  cr_assert_eq(pt_run(dev, PARITY_OP_ADD, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  expect_values(&da, vd, 6, "add da");
  expect_values(&db, vd, 6, "add db");
  cr_assert_eq(count_builds(log, "source", NULL), 1, "add's backward built a program");
  /* mul backward builds mul's program, which holds mul forward too */
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = vd[i] * vb[i];
  expect_values(&da, want, 6, "mul da");
  cr_assert_eq(count_builds(log, "source", "ew_binary_bwd"), 1);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = va[i] * vb[i];
  expect_values(&c, want, 6, "a * b");
  cr_assert_eq(count_builds(log, "source", NULL), 2, "mul forward was not in mul backward's program");
  /* a same-dtype dense cast is a copy; to f16 it is a kernel */
  const pt_tensor *cin[] = {&a}, *cout[] = {&c};
  cr_assert_eq(pt_run(dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, cin, 1, cout, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  expect_values(&c, va, 6, "cast f32 -> f32");
  cr_assert_eq(count_builds(log, "source", NULL), 2, "a same-dtype cast built a program");
  pt_tensor h = pt_tensor_new(dev, PARITY_DTYPE_F16, 1, shape, NULL);
  const pt_tensor *hout[] = {&h};
  cr_assert_eq(pt_run(dev, PARITY_OP_CAST, PARITY_DIRECTION_FORWARD, cin, 1, hout, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  expect_values(&h, va, 6, "cast f32 -> f16");
  cr_assert_eq(count_builds(log, "source", "ew_cast"), 1);
  /* sum and mean: one red_pass; sum's and mean's backward are in its program */
  pt_tensor s = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, NULL),
            ds = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, one, (double[]){3});
  const pt_tensor *rin[] = {&a}, *rout[] = {&s}, *rbin[] = {&a, &s, &ds}, *rbout[] = {&da};
  parity_op_params_t rp;
  memset(&rp, 0, sizeof rp);
  rp.reduce.axes_mask = 1;
  double total = 0;
  for (int i = 0; i < 6; i++) total += va[i];
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, PARITY_DIRECTION_FORWARD, rin, 1, rout, 1, &rp), PARITY_STATUS_OK, "%s",
               parity_last_error());
  expect_values(&s, &total, 1, "sum");
  double mean = (double)((float)total / 6.0f);
  cr_assert_eq(pt_run(dev, PARITY_OP_MEAN, PARITY_DIRECTION_FORWARD, rin, 1, rout, 1, &rp), PARITY_STATUS_OK, "%s",
               parity_last_error());
  expect_values(&s, &mean, 1, "mean");
  cr_assert_eq(count_builds(log, "source", "red_pass"), 1, "sum and mean built two programs");
  cr_assert_eq(pt_run(dev, PARITY_OP_SUM, PARITY_DIRECTION_BACKWARD, rbin, 3, rbout, 1, &rp), PARITY_STATUS_OK, "%s",
               parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = 3;
  expect_values(&da, want, 6, "sum dx");
  cr_assert_eq(pt_run(dev, PARITY_OP_MEAN, PARITY_DIRECTION_BACKWARD, rbin, 3, rbout, 1, &rp), PARITY_STATUS_OK, "%s",
               parity_last_error());
  for (int i = 0; i < 6; i++) want[i] = (double)(3.0f / 6.0f);
  expect_values(&da, want, 6, "mean dx");
  cr_assert_eq(count_builds(log, "source", NULL), 4, "the reduction's backward built a program of its own");
  pt_tensor *all[] = {&a, &b, &c, &dc, &da, &db, &h, &s, &ds};
  for (int i = 0; i < 9; i++) pt_tensor_free(all[i]);
  parity_context_destroy(ctx);
  cache_file files[16];
  cr_assert_eq(list_cache(dir, files, 16), 4, "one cache file per program");

  /* another open loads the pairs from the cache: one file serves both kernels */
  ctx = ot_fresh_context(&p);
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, va), b = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vb);
  c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), dc = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, vd);
  da = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL), db = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_BACKWARD, bin, 4, bout, 2, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
  cr_assert_eq(pt_run(dev, PARITY_OP_MUL, PARITY_DIRECTION_FORWARD, in2, 2, out1, 1, NULL), PARITY_STATUS_OK, "%s",
               parity_last_error());
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
  setenv("PARITY_OPENCL_PROGRAM_CACHE", "on", 1);
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
  cr_assert_eq(psup_cache_write(before[2].path, "PARITYC3", key, garbage, sizeof garbage, &werr), 0, "%s",
               werr ? werr : "");
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

/* The build log's lines that say what declared the builtins ("builtins": kernels/builtins.cl,
 * "header": the driver's opencl-c.h). */
static int count_decl(const char *log, const char *mode) { return ot_count_builds(log, NULL, NULL, mode, NULL); }

/* add, mul and tanh in a fresh context with an empty cache; results checked */
static void run_three_ops(void) {
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  int64_t shape[1] = {5};
  double v[5] = {1, -2, 0.5, 4, -0.25}, got[5];
  pt_tensor a = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, v),
            c = pt_tensor_new(dev, PARITY_DTYPE_F32, 1, shape, NULL);
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
  logged_cache(dir, log, sizeof log);
  snprintf(empty, sizeof empty, "%s/declares-nothing.cl", dir);
  FILE *f = fopen(empty, "w");
  cr_assert_not_null(f);
  fputs("/* no declarations */\n", f);
  fclose(f);
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_info_t info = {.struct_size = sizeof info};
  cr_assert_eq(parity_context_device_info(ctx, p, 0, &info), PARITY_STATUS_OK);
  parity_context_destroy(ctx);
  int pocl = strstr(info.name, "Portable Computing Language") != NULL;

  unsetenv("PARITY_OPENCL_BUILTINS");
  run_three_ops();
  cr_assert_eq(count_decl(log, "builtins") + count_decl(log, "header"), 3, "three programs");
  if (pocl)
    cr_assert_eq(count_decl(log, "builtins"), 3, "PoCL parsed its header");
  else
    cr_assert_eq(count_decl(log, "header"), 3, "not PoCL: the driver's header");
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

/* PARITY_OPENCL_PROGRAM_CACHE: auto writes no file of its own on PoCL while PoCL keeps its kernel
 * cache (asking it for a binary compiles every kernel a second time), writes them where PoCL's
 * cache is off (POCL_KERNEL_CACHE=0); on and off decide it whatever the driver; a bad value fails
 * the device open with the knob's name. */
static int files_written_with(const char *mode, const char *pocl_cache) {
  char dir[] = "/tmp/parity-cl-mode-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("PARITY_CACHE_DIR", dir, 1);
  setenv("PARITY_OPENCL_PROGRAM_CACHE", mode, 1);
  if (pocl_cache)
    setenv("POCL_KERNEL_CACHE", pocl_cache, 1);
  else
    unsetenv("POCL_KERNEL_CACHE");
  open_and_add(); /* three programs */
  cache_file files[8];
  int n = list_cache(dir, files, 8);
  remove_cache_dir(dir, NULL);
  return n;
}

Test(ocl_device, the_program_cache_defers_to_a_driver_that_keeps_its_own, .timeout = 600) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  parity_context_t *ctx = pt_fresh_context();
  uint32_t p;
  parity_device_info_t info;
  cr_assert_eq(parity_context_find_plugin(ctx, "opencl", &p), PARITY_STATUS_OK);
  cr_assert_eq(parity_context_device_info(ctx, p, 0, &info), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_context_destroy(ctx);
  int pocl = strstr(info.name, "Portable Computing Language") != NULL;
  cr_assert_eq(files_written_with("on", NULL), 3);
  cr_assert_eq(files_written_with("off", "0"), 0);
  cr_assert_eq(files_written_with("auto", "0"), 3, "auto without the driver's cache must keep parity's");
  cr_assert_eq(files_written_with("auto", NULL), pocl ? 0 : 3, "%s: auto with the driver's cache on", info.name);
  cr_assert_eq(files_written_with("auto", "1"), pocl ? 0 : 3, "%s: auto with the driver's cache on", info.name);

  setenv("PARITY_OPENCL_PROGRAM_CACHE", "sometimes", 1);
  ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(parity_last_error(), "PARITY_OPENCL_PROGRAM_CACHE"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}
