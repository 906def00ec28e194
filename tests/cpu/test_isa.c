/* test_isa.c — the CPU plugin's instruction-set paths (plugins/cpu/cpu_isa.h,
 * docs/cpu-kernels.md): PARITY_CPU_ISA refuses what cannot run with a message, and every path
 * this machine runs gives results that do not depend on the thread count and that equal the
 * portable path's bit for bit (reductions, softmax, elementwise, casts) or the other SIMD
 * path's (matmul and conv2d on avx2 and avx512). Each path runs in its own child process, since
 * the plugin chooses its path once, at init. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dense_test_util.h"
#include "parity/parity.h"

enum { ISAS = 3 };
static const char *const isa_names[ISAS] = {"portable", "avx2", "avx512"};

/* ---- the battery: every kernel family through the public API ---------------------------- */
typedef struct blob {
  unsigned char *p;
  size_t n, cap;
} blob;

static void put(blob *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

/* Append t's bytes to b, then release t. Any failure ends the child with status 2. */
static void take(blob *b, parity_tensor_t *t) {
  if (!t) _exit(2);
  uint64_t bytes = (uint64_t)parity_tensor_numel(t) * 8; /* enough for every dtype */
  void *tmp = malloc(bytes ? bytes : 1);
  if (parity_tensor_to_host(t, tmp, bytes) != PARITY_STATUS_OK) _exit(2);
  uint64_t used = (uint64_t)parity_tensor_numel(t);
  parity_dtype_t dt = parity_tensor_dtype(t);
  used *= dt == PARITY_DTYPE_F64 || dt == PARITY_DTYPE_I64 ? 8 : dt == PARITY_DTYPE_F32 ? 4 : 2;
  put(b, tmp, used);
  free(tmp);
  parity_tensor_release(t);
}

#define OK(call) ((call) != PARITY_STATUS_OK ? _exit(2) : (void)0)

static parity_tensor_t *randt(parity_device_t *dev, parity_dtype_t dt, uint32_t rank, const int64_t *shape,
                              uint64_t seed) {
  parity_tensor_t *t;
  OK(parity_tensor_rand_normal(dev, dt, rank, shape, 0.5, 2.0, seed, 0, &t));
  return t;
}

/* Reductions, softmax and elementwise ops (ex) and gemm-based ops (gm). */
static void battery(parity_device_t *dev, blob *ex, blob *gm) {
  const parity_dtype_t dts[3] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  parity_tensor_t *y;
  for (int d = 0; d < 3; d++) {
    /* long sums (several thread groups), column and row reductions */
    parity_tensor_t *v = randt(dev, dts[d], 1, (int64_t[]){300007}, 11 + d);
    parity_tensor_t *m = randt(dev, dts[d], 2, (int64_t[]){513, 1031}, 21 + d);
    const parity_op_t rops[] = {PARITY_OP_SUM, PARITY_OP_MEAN,   PARITY_OP_MAX,
                                PARITY_OP_MIN, PARITY_OP_ARGMAX, PARITY_OP_ARGMIN};
    for (int r = 0; r < 6; r++) {
      OK(parity_reduce(rops[r], v, 1, 0, &y)), take(ex, y);
      OK(parity_reduce(rops[r], m, 1, 0, &y)), take(ex, y);
      OK(parity_reduce(rops[r], m, 2, 0, &y)), take(ex, y);
    }
    /* softmax and log_softmax, short and long rows, forward and backward */
    parity_tensor_t *s1 = randt(dev, dts[d], 2, (int64_t[]){300, 37}, 31 + d);
    parity_tensor_t *s2 = randt(dev, dts[d], 2, (int64_t[]){16, 5000}, 41 + d);
    parity_tensor_t *ss[2] = {s1, s2};
    for (int k = 0; k < 2; k++)
      for (int op = 0; op < 2; op++) {
        parity_tensor_t *x = ss[k], *w = randt(dev, dts[d], 2, (int64_t[]){k ? 16 : 300, k ? 5000 : 37}, 51);
        parity_tensor_t *p, *loss;
        OK(parity_tensor_set_requires_grad(x, 1));
        OK(parity_softmax(op ? PARITY_OP_LOG_SOFTMAX : PARITY_OP_SOFTMAX, x, 1, &y));
        OK(parity_binary(PARITY_OP_MUL, y, w, &p));
        OK(parity_reduce(PARITY_OP_SUM, p, 3, 0, &loss));
        OK(parity_backward(loss, NULL, 0));
        take(ex, y), take(ex, p), take(ex, loss);
        parity_tensor_t *g;
        OK(parity_detach(parity_tensor_grad(x), &g));
        take(ex, g);
        parity_tensor_zero_grad(x);
        OK(parity_tensor_set_requires_grad(x, 0));
        parity_tensor_release(w);
      }
    /* elementwise and casts */
    const parity_op_t uops[] = {PARITY_OP_EXP, PARITY_OP_TANH, PARITY_OP_SIGMOID, PARITY_OP_GELU, PARITY_OP_SQRT};
    for (int u = 0; u < 5; u++) OK(parity_unary(uops[u], m, &y)), take(ex, y);
    OK(parity_binary(PARITY_OP_ADD, m, m, &y)), take(ex, y);
    for (int c = 0; c < 3; c++) OK(parity_cast(m, dts[c], &y)), take(ex, y);
    /* matmul and conv2d, forward and both backward */
    parity_tensor_t *a = randt(dev, dts[d], 2, (int64_t[]){200, 300}, 61),
                    *b = randt(dev, dts[d], 2, (int64_t[]){300, 150}, 62);
    parity_tensor_t *x = randt(dev, dts[d], 4, (int64_t[]){2, 8, 20, 20}, 63),
                    *w = randt(dev, dts[d], 4, (int64_t[]){16, 8, 3, 3}, 64);
    parity_tensor_t *lead[4] = {a, b, x, w}, *loss, *z;
    for (int k = 0; k < 4; k++) OK(parity_tensor_set_requires_grad(lead[k], 1));
    parity_conv2d_options_t o = {.stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
    OK(parity_matmul(a, b, &y));
    OK(parity_conv2d(x, w, NULL, &o, &z));
    parity_tensor_t *l1, *l2, *sq;
    OK(parity_unary(PARITY_OP_SQUARE, y, &sq)), OK(parity_reduce(PARITY_OP_SUM, sq, 3, 0, &l1));
    parity_tensor_release(sq);
    OK(parity_unary(PARITY_OP_SQUARE, z, &sq)), OK(parity_reduce(PARITY_OP_SUM, sq, 15, 0, &l2));
    parity_tensor_release(sq);
    OK(parity_binary(PARITY_OP_ADD, l1, l2, &loss));
    OK(parity_backward(loss, NULL, 0));
    take(gm, y), take(gm, z);
    for (int k = 0; k < 4; k++) {
      parity_tensor_t *g;
      OK(parity_detach(parity_tensor_grad(lead[k]), &g));
      take(gm, g);
      parity_tensor_release(lead[k]);
    }
    parity_tensor_release(l1), parity_tensor_release(l2), parity_tensor_release(loss);
    parity_tensor_release(v), parity_tensor_release(m), parity_tensor_release(s1), parity_tensor_release(s2);
    /* shapes that take the other gemm and conv routes: a long k split into chunks with 600 rows
     * (8 or more tiles of 72 rows, fewer of 144: the split must not depend on the path), a C written in place (rows % 4 == 0, columns % 32 == 0), and a grouped,
     * dilated, asymmetrically padded conv whose weight gradient splits its long k */
    parity_tensor_t *a2 = randt(dev, dts[d], 2, (int64_t[]){600, 9000}, 71),
                    *b2 = randt(dev, dts[d], 2, (int64_t[]){9000, 64}, 72);
    parity_tensor_t *a3 = randt(dev, dts[d], 2, (int64_t[]){96, 300}, 73),
                    *b3 = randt(dev, dts[d], 2, (int64_t[]){300, 64}, 74);
    OK(parity_matmul(a2, b2, &y)), take(gm, y);
    OK(parity_matmul(a3, b3, &y)), take(gm, y);
    parity_tensor_t *x2 = randt(dev, dts[d], 4, (int64_t[]){4, 6, 40, 40}, 75),
                    *w2 = randt(dev, dts[d], 4, (int64_t[]){8, 3, 3, 3}, 76);
    OK(parity_tensor_set_requires_grad(x2, 1)), OK(parity_tensor_set_requires_grad(w2, 1));
    parity_conv2d_options_t o2 = {.stride = {1, 1}, .padding = {2, 0, 1, 3}, .dilation = {1, 2}, .groups = 2};
    OK(parity_conv2d(x2, w2, NULL, &o2, &z));
    OK(parity_unary(PARITY_OP_SQUARE, z, &sq)), OK(parity_reduce(PARITY_OP_SUM, sq, 15, 0, &l2));
    OK(parity_backward(l2, NULL, 0));
    take(gm, z);
    parity_tensor_t *g2;
    OK(parity_detach(parity_tensor_grad(x2), &g2)), take(gm, g2);
    OK(parity_detach(parity_tensor_grad(w2), &g2)), take(gm, g2);
    parity_tensor_release(sq), parity_tensor_release(l2);
    /* a forward conv whose 24 output channels are one block of 16 stored through the transpose
     * and 8 element by element, over 195 origins per image (blocks of 16 that cross images) */
    parity_tensor_t *x4 = randt(dev, dts[d], 4, (int64_t[]){3, 5, 15, 13}, 77),
                    *w4 = randt(dev, dts[d], 4, (int64_t[]){24, 5, 3, 3}, 78);
    OK(parity_conv2d(x4, w4, NULL, &o, &z)), take(gm, z);
    parity_tensor_release(x4), parity_tensor_release(w4);
    /* convs whose padded image is cut into bands of rows (16 channels × 212 padded columns: 19
     * rows per band): both gradients of a stride-1 conv, a forward with stride 2 and dilation 2;
     * and one image of one band, shared by the threads */
    parity_tensor_t *x5 = randt(dev, dts[d], 4, (int64_t[]){1, 16, 70, 210}, 79),
                    *w5 = randt(dev, dts[d], 4, (int64_t[]){16, 16, 3, 3}, 80);
    OK(parity_tensor_set_requires_grad(x5, 1)), OK(parity_tensor_set_requires_grad(w5, 1));
    OK(parity_conv2d(x5, w5, NULL, &o, &z));
    OK(parity_unary(PARITY_OP_SQUARE, z, &sq)), OK(parity_reduce(PARITY_OP_SUM, sq, 15, 0, &l2));
    OK(parity_backward(l2, NULL, 0));
    take(gm, z);
    OK(parity_detach(parity_tensor_grad(x5), &g2)), take(gm, g2);
    OK(parity_detach(parity_tensor_grad(w5), &g2)), take(gm, g2);
    parity_tensor_release(sq), parity_tensor_release(l2);
    parity_conv2d_options_t o5 = {.stride = {2, 2}, .padding = {2, 2, 1, 1}, .dilation = {2, 2}, .groups = 1};
    OK(parity_conv2d(x5, w5, NULL, &o5, &z)), take(gm, z);
    parity_tensor_t *x6 = randt(dev, dts[d], 4, (int64_t[]){1, 32, 30, 30}, 81),
                    *w6 = randt(dev, dts[d], 4, (int64_t[]){32, 32, 3, 3}, 82);
    OK(parity_conv2d(x6, w6, NULL, &o, &z)), take(gm, z);
    /* a weight gradient whose 56 output channels pack dyᵀ as 32 + 16 through the transpose and 8
     * element by element, over output rows of 23 (16 transposed, 7 not) cut by the k blocks */
    parity_tensor_t *x7 = randt(dev, dts[d], 4, (int64_t[]){2, 5, 9, 23}, 83),
                    *w7 = randt(dev, dts[d], 4, (int64_t[]){56, 5, 3, 3}, 84);
    OK(parity_tensor_set_requires_grad(w7, 1));
    OK(parity_conv2d(x7, w7, NULL, &o, &z));
    OK(parity_unary(PARITY_OP_SQUARE, z, &sq)), OK(parity_reduce(PARITY_OP_SUM, sq, 15, 0, &l2));
    OK(parity_backward(l2, NULL, 0));
    parity_tensor_release(z);
    OK(parity_detach(parity_tensor_grad(w7), &g2)), take(gm, g2);
    parity_tensor_release(sq), parity_tensor_release(l2), parity_tensor_release(x7), parity_tensor_release(w7);
    parity_tensor_release(x5), parity_tensor_release(w5), parity_tensor_release(x6), parity_tensor_release(w6);
    parity_tensor_release(a2), parity_tensor_release(b2), parity_tensor_release(a3), parity_tensor_release(b3);
    parity_tensor_release(x2), parity_tensor_release(w2);
  }
}

/* ---- one path in a child process --------------------------------------------------------- */
typedef struct run {
  int status; /* 0 ok, 1 path unavailable here, 2 an op failed, 3 thread counts differ */
  blob ex, gm;
} run;

static void write_all(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) _exit(4);
    p = (const char *)p + w, n -= (size_t)w;
  }
}

static void child(const char *isa, int fd) {
  setenv("PARITY_CPU_ISA", isa, 1);
  setenv("PARITY_LOG", "quiet", 1);
  setenv("PARITY_BACKEND", "cpu", 1);
  parity_context_t *ctx;
  parity_device_t *dev;
  if (parity_context_create(NULL, &ctx) != PARITY_STATUS_OK) _exit(2);
  if (parity_context_default_device(ctx, &dev) != PARITY_STATUS_OK) _exit(1); /* unavailable here */
  blob ex[2] = {{0}}, gm[2] = {{0}};
  int threads = PARITY_CPU_OPENMP && dt_set_threads(1);
  battery(dev, &ex[0], &gm[0]);
  if (threads) {
    dt_set_threads(2);
    battery(dev, &ex[1], &gm[1]);
    if (ex[0].n != ex[1].n || memcmp(ex[0].p, ex[1].p, ex[0].n) || gm[0].n != gm[1].n ||
        memcmp(gm[0].p, gm[1].p, gm[0].n))
      _exit(3);
  }
  uint64_t sizes[2] = {ex[0].n, gm[0].n};
  write_all(fd, sizes, sizeof sizes);
  write_all(fd, ex[0].p, ex[0].n);
  write_all(fd, gm[0].p, gm[0].n);
  _exit(0);
}

static int read_all(int fd, void *p, size_t n) {
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return 0;
    p = (char *)p + r, n -= (size_t)r;
  }
  return 1;
}

static run run_path(const char *isa) {
  run r = {0};
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child(isa, fds[1]);
  }
  close(fds[1]);
  uint64_t sizes[2];
  int got = read_all(fds[0], sizes, sizeof sizes);
  if (got) {
    r.ex.n = sizes[0], r.gm.n = sizes[1];
    r.ex.p = malloc(r.ex.n + 1), r.gm.p = malloc(r.gm.n + 1);
    got = read_all(fds[0], r.ex.p, r.ex.n) && read_all(fds[0], r.gm.p, r.gm.n);
  }
  close(fds[0]);
  int st;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 5;
  if (r.status == 0 && !got) r.status = 4;
  return r;
}

/* whether this build has path `isa` and this CPU runs it */
static int cpu_runs(int isa) {
  __builtin_cpu_init();
#ifdef PARITY_CPU_PATHS_BUILT
  if (!(PARITY_CPU_PATHS_BUILT >> isa & 1)) return 0; /* not built (PARITY_CPU_PATHS) */
#endif
  if (isa == 0) return 1;
  unsigned a, b, c, d; /* F16C: CPUID leaf 1, ECX bit 29 */
  int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
  int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  if (isa == 1) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

Test(cpu_isa, every_path_is_thread_count_independent_and_bitwise_equal_to_its_peers, .timeout = 600) {
  run r[ISAS];
  for (int i = 0; i < ISAS; i++) {
    r[i] = run_path(isa_names[i]);
    if (r[i].status == 1) {
      cr_assert(!cpu_runs(i), "%s: the plugin refused a path this CPU runs", isa_names[i]);
      cr_log_info("%s: not available on this machine", isa_names[i]);
      continue;
    }
    cr_assert_eq(r[i].status, 0, "%s: %s", isa_names[i],
                 r[i].status == 3 ? "1 and 2 threads give different bits" : "an op failed or the child died");
    cr_assert(r[i].ex.n > 0 && r[i].gm.n > 0);
    if (i > 0) {
      cr_assert_eq(r[i].ex.n, r[0].ex.n);
      cr_assert(memcmp(r[i].ex.p, r[0].ex.p, r[0].ex.n) == 0,
                "%s: reductions, softmax or elementwise results differ from the portable path", isa_names[i]);
    }
  }
  cr_assert_eq(r[0].status, 0, "the portable path always runs");
  if (r[1].status == 0 && r[2].status == 0) {
    cr_assert_eq(r[1].gm.n, r[2].gm.n);
    cr_assert(memcmp(r[1].gm.p, r[2].gm.p, r[1].gm.n) == 0, "matmul/conv2d differ between avx2 and avx512");
  }
  for (int i = 0; i < ISAS; i++) free(r[i].ex.p), free(r[i].gm.p);
}

/* ---- PARITY_CPU_ISA refusals, through parity-info ----------------------------------------- */
static int info_with(const char *isa, char *out, size_t n) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "PARITY_LOG=quiet PARITY_BACKEND=cpu PARITY_CPU_ISA='%s' '%s/parity-info' 2>&1", isa,
           PARITY_BIN_DIR);
  FILE *f = popen(cmd, "r");
  cr_assert(f);
  size_t len = fread(out, 1, n - 1, f);
  out[len] = 0;
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cpu_isa, an_unknown_path_leaves_the_plugin_unavailable_with_the_choices) {
  char out[8192];
  int rc = info_with("sse9", out, sizeof out);
  cr_assert_neq(rc, 0, "parity-info selecting cpu must fail: %s", out);
  cr_assert(strstr(out, "PARITY_CPU_ISA=sse9 is not a kernel path (avx512, avx2, portable or auto"), "%s", out);
  cr_assert(strstr(out, "this machine runs:") && strstr(out, "portable)"), "%s", out);
}

Test(cpu_isa, the_driver_string_names_the_path_in_use) {
  char out[8192];
  for (int i = 0; i < ISAS; i++) {
    int rc = info_with(isa_names[i], out, sizeof out);
    if (!cpu_runs(i)) {
      cr_assert_neq(rc, 0, "%s: %s", isa_names[i], out);
      cr_assert(strstr(out, "cannot run here: this CPU lacks") ||
                    strstr(out, "cannot run here: this build lacks it (PARITY_CPU_PATHS built: "),
                "%s", out);
      continue;
    }
    char want[64];
    snprintf(want, sizeof want, "parity cpu plugin %u.%u, %s kernels", PARITY_ABI_MAJOR, PARITY_ABI_MINOR,
             isa_names[i]);
    cr_assert_eq(rc, 0, "%s: %s", isa_names[i], out);
    cr_assert(strstr(out, want), "%s: %s", isa_names[i], out);
  }
}
