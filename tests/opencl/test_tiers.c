/* The OpenCL plugin's compile tiers (PARITY_OPENCL_TIER, plugins/opencl/cl_programs.c): programs
 * built with -cl-opt-disable (quick) and optimised ones compute the same bits (on finite values:
 * which NaN two NaNs give is left open, plugins/opencl/README.md); the tiered mode
 * starts a kernel quick and swaps the optimised program in once the kernel is in use (or at once
 * for a big launch), and a warm start loads the optimised program from the cache; many variants of
 * a kernel share one generic quick program; an unknown tier is refused at device open. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv */
#include <unistd.h>

#include "ocl_build_log.h"
#include "ocl_test.h"
#include "parity/parity.h"

#define CK(x) cr_assert_eq((x), PARITY_STATUS_OK, "%s: %s", #x, parity_last_error())

static void drop_cache(const char *dir) { pt_remove_tree(dir); }

/* Lines of the build log with `how` (source, cache) and `tier` (quick, full), of `kernel` (NULL:
 * any). */
static int count_log(const char *log, const char *how, const char *kernel, const char *tier) {
  return ot_count_builds(log, how, kernel, NULL, tier);
}

static parity_device_t *open_opencl(parity_context_t **ctx) {
  uint32_t p;
  *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  CK(parity_context_open_device(*ctx, p, 0, &dev));
  return dev;
}

#define NOUT 12
#define MAXN 4096

/* A small CNN's forward and backward, plus reductions, softmax, casts and elementwise ops, on the
 * OpenCL device of a fresh context; every result and gradient goes to out[k] (f32 bits). */
static void run_net(float out[NOUT][MAXN], int64_t count[NOUT]) {
  parity_context_t *ctx;
  parity_device_t *dev = open_opencl(&ctx);
  CK(parity_scope_begin());
  parity_tensor_t *x, *w, *b, *w2, *b2, *y, *p, *a, *f, *o, *ob, *ls, *loss;
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){2, 3, 8, 8}, 0, 1, 11, 0, &x));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){4, 3, 3, 3}, 0, 0.3, 12, 0, &w));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){4}, 0, 0.1, 13, 0, &b));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){64, 10}, 0, 0.2, 14, 0, &w2));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){10}, 0, 0.1, 15, 0, &b2));
  parity_tensor_t *params[] = {x, w, b, w2, b2};
  for (int i = 0; i < 5; i++) CK(parity_tensor_set_requires_grad(params[i], 1));
  parity_conv2d_options_t co = {.struct_size = sizeof co, .padding = {1, 1, 1, 1}};
  parity_pool2d_options_t po = {.struct_size = sizeof po, .kernel = {2, 2}};
  CK(parity_conv2d(x, w, b, &co, &y));
  CK(parity_pool2d(PARITY_OP_MAX_POOL2D, y, &po, &p));
  CK(parity_unary(PARITY_OP_TANH, p, &a));
  CK(parity_reshape(a, 2, (int64_t[]){2, 64}, &f));
  CK(parity_matmul(f, w2, &o));
  CK(parity_binary(PARITY_OP_ADD, o, b2, &ob));
  CK(parity_softmax(PARITY_OP_LOG_SOFTMAX, ob, 1, &ls));
  CK(parity_reduce(PARITY_OP_MEAN, ls, 3, 0, &loss));
  CK(parity_backward(loss, NULL, 0));
  /* more kernels, forward only */
  parity_tensor_t *e, *s, *sm, *mx, *am, *h, *hf, *dv, *ap;
  CK(parity_unary(PARITY_OP_EXP, y, &e));
  CK(parity_reduce(PARITY_OP_SUM, e, 1u << 1, 0, &s));
  CK(parity_softmax(PARITY_OP_SOFTMAX, y, 3, &sm));
  CK(parity_reduce(PARITY_OP_MAX, y, 1u << 3, 0, &mx));
  CK(parity_reduce(PARITY_OP_ARGMAX, y, 1u << 3, 0, &am));
  CK(parity_cast(e, PARITY_DTYPE_F16, &h));
  CK(parity_cast(h, PARITY_DTYPE_F32, &hf));
  CK(parity_binary(PARITY_OP_DIV, y, e, &dv));
  parity_pool2d_options_t avg = {.struct_size = sizeof avg, .kernel = {3, 3}, .stride = {1, 1}};
  CK(parity_pool2d(PARITY_OP_AVG_POOL2D, y, &avg, &ap));
  parity_tensor_t *res[NOUT] = {loss,
                                ob,
                                parity_tensor_grad(x),
                                parity_tensor_grad(w),
                                parity_tensor_grad(b),
                                parity_tensor_grad(w2),
                                s,
                                sm,
                                mx,
                                hf,
                                dv,
                                ap};
  for (int k = 0; k < NOUT; k++) {
    cr_assert_not_null(res[k], "result %d", k);
    count[k] = parity_tensor_numel(res[k]);
    cr_assert_leq(count[k], MAXN);
    CK(parity_tensor_to_host(res[k], out[k], (size_t)count[k] * sizeof(float)));
  }
  int64_t idx[2 * 4 * 8];
  CK(parity_tensor_to_host(am, idx, sizeof idx)); /* arg max: i64, checked by running at all */
  CK(parity_scope_end());
  parity_context_destroy(ctx);
}

static float got[2][NOUT][MAXN];
static int64_t cnt[2][NOUT];

Test(ocl_tiers, quick_and_optimised_programs_compute_the_same_bits, .timeout = 900) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  static const char *const tiers[2] = {"quick", "full"};
  for (int t = 0; t < 2; t++) {
    char dir[] = "/tmp/parity-cl-tier-XXXXXX", log[600];
    ot_logged_cache(dir, log, sizeof log);
    setenv("PARITY_OPENCL_TIER", tiers[t], 1);
    run_net(got[t], cnt[t]);
    /* the tier asked for is the one that built: the comparison below is quick against optimised */
    cr_assert_gt(count_log(log, "source", NULL, tiers[t]), 8, "%s: %d programs", tiers[t],
                 count_log(log, "source", NULL, tiers[t]));
    cr_assert_eq(count_log(log, "source", NULL, tiers[1 - t]), 0, "%s built %s programs", tiers[t], tiers[1 - t]);
    drop_cache(dir);
  }
  unsetenv("PARITY_OPENCL_TIER");
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  unsetenv("PARITY_CACHE_DIR");
  for (int k = 0; k < NOUT; k++) {
    cr_assert_eq(cnt[0][k], cnt[1][k]);
    for (int64_t i = 0; i < cnt[0][k]; i++) {
      uint32_t q, o;
      memcpy(&q, &got[0][k][i], 4);
      memcpy(&o, &got[1][k][i], 4);
      cr_assert_eq(q, o, "result %d element %lld: quick %a, optimised %a", k, (long long)i, (double)got[0][k][i],
                   (double)got[1][k][i]);
    }
  }
}

/* 100-element f32 adds a + a on dev (fresh tensors each time, so every call launches) */
static void add_n(parity_device_t *dev, int times) {
  int64_t n = 100;
  for (int i = 0; i < times; i++) {
    parity_tensor_t *a, *c;
    CK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, &n, 1.5, &a));
    CK(parity_binary(PARITY_OP_ADD, a, a, &c));
    float v[100];
    CK(parity_tensor_to_host(c, v, sizeof v));
    for (int j = 0; j < 100; j++) cr_assert_eq(v[j], 3.0f);
    parity_tensor_release(a);
    parity_tensor_release(c);
  }
}

Test(ocl_tiers, tiered_starts_quick_and_swaps_in_the_optimised_program_then_loads_it_from_the_cache, .timeout = 900) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-tiered-XXXXXX", log[600];
  ot_logged_cache(dir, log, sizeof log);
  setenv("PARITY_OPENCL_TIER", "tiered", 1);
  parity_context_t *ctx;
  parity_device_t *dev = open_opencl(&ctx);
  add_n(dev, 1);
  cr_assert_eq(count_log(log, "source", "ew_binary", "quick"), 1, "a small add did not build the quick program");
  cr_assert_eq(count_log(log, "source", "ew_binary", "full"), 0);
  add_n(dev, 254); /* 255 launches */
  cr_assert_eq(count_log(log, "source", "ew_binary", "full"), 0, "swapped before the 256th launch");
  add_n(dev, 1);
  cr_assert_eq(count_log(log, "source", "ew_binary", "full"), 1, "the 256th launch did not swap");
  add_n(dev, 40);
  cr_assert_eq(count_log(log, "source", NULL, "full"), 1, "the optimised program was built again");
  /* a big launch of a new variant (a mul) builds the optimised program at once */
  int64_t big = 1 << 18;
  parity_tensor_t *a, *c;
  CK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, &big, 3, &a));
  CK(parity_binary(PARITY_OP_MUL, a, a, &c));
  float *v = malloc((size_t)big * sizeof *v);
  cr_assert_not_null(v);
  CK(parity_tensor_to_host(c, v, (size_t)big * sizeof *v));
  cr_assert_eq(v[big - 1], 9.0f);
  free(v);
  cr_assert_eq(count_log(log, "source", NULL, "quick"), 1);
  cr_assert_eq(count_log(log, "source", NULL, "full"), 2, "the big mul was not built optimised at once");
  parity_tensor_release(a);
  parity_tensor_release(c);
  parity_context_destroy(ctx); /* writes the cache */

  /* a warm start: the small add loads the optimised program the first process cached */
  dev = open_opencl(&ctx);
  add_n(dev, 1);
  cr_assert_eq(count_log(log, "cache", "ew_binary", "full"), 1, "a warm start did not load the optimised program");
  cr_assert_eq(count_log(log, "source", NULL, "quick"), 1, "a warm start compiled");
  parity_context_destroy(ctx);
  unsetenv("PARITY_OPENCL_TIER");
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  unsetenv("PARITY_CACHE_DIR");
  drop_cache(dir);
}

/* Past the first two variants of a kernel and class, quick variants share the class's generic
 * program (cl_programs.c, build_quick): eight unary ops in f32 build three quick ew_unary programs,
 * not eight, and each still computes its own op. */
Test(ocl_tiers, many_variants_of_a_kernel_share_one_generic_quick_program, .timeout = 900) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  char dir[] = "/tmp/parity-cl-generic-XXXXXX", log[600];
  ot_logged_cache(dir, log, sizeof log);
  setenv("PARITY_OPENCL_TIER", "quick", 1);
  parity_context_t *ctx;
  parity_device_t *dev = open_opencl(&ctx);
  static const parity_op_t ops[] = {PARITY_OP_EXP,  PARITY_OP_LOG,    PARITY_OP_SIN,  PARITY_OP_COS,
                                    PARITY_OP_TANH, PARITY_OP_SQUARE, PARITY_OP_SQRT, PARITY_OP_SIGMOID};
  static const double want[] = {7.38905609893065,    0.6931471805599453, 0.9092974268256817,
                                -0.4161468365471424, 0.9640275800758169, 4.0,
                                1.4142135623730951,  0.8807970779778823};
  parity_tensor_t *x;
  CK(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, (int64_t[]){4}, 2, &x));
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    parity_tensor_t *y;
    CK(parity_unary(ops[i], x, &y));
    float v[4];
    CK(parity_tensor_to_host(y, v, sizeof v));
    cr_assert_float_eq(v[3], (float)want[i], 2e-6 * fabs(want[i]), "op %zu gave %.9g", i, v[3]);
    parity_tensor_release(y);
  }
  int quick = count_log(log, "source", "ew_unary", "quick");
  cr_assert_eq(quick, 3, "%d quick ew_unary programs for 8 ops: the generic program is not shared", quick);
  parity_tensor_release(x);
  parity_context_destroy(ctx);
  unsetenv("PARITY_OPENCL_TIER");
  unsetenv("PARITY_OPENCL_BUILD_LOG");
  unsetenv("PARITY_CACHE_DIR");
  drop_cache(dir);
}

Test(ocl_tiers, an_unknown_tier_is_refused_at_device_open) {
  char why[512];
  if (!ot_have_opencl(why, sizeof why)) cr_skip_test("no OpenCL device here (%s)", why);
  setenv("PARITY_OPENCL_TIER", "fastest", 1);
  uint32_t p;
  parity_context_t *ctx = ot_fresh_context(&p);
  parity_device_t *dev = NULL;
  parity_status_t st = parity_context_open_device(ctx, p, 0, &dev);
  unsetenv("PARITY_OPENCL_TIER");
  cr_assert_eq(st, PARITY_STATUS_INVALID_ARGUMENT, "status %d", st);
  cr_assert_not_null(strstr(parity_last_error(), "PARITY_OPENCL_TIER"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}
