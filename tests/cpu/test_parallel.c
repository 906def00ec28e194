/* test_parallel.c — the CPU plugin measures what an OpenMP fork/join costs once, at the first
 * reduction large enough to be split, and splits reductions only where that pays
 * (plugins/cpu/cpu_parallel.h; the rule itself: parallel_unit.c). PARITY_CPU_FORK_JOIN_NS
 * replaces the measurement; a malformed value is a warning and the cost is measured. The thread
 * count never changes a result. The plugin's messages are read from this process's stderr (each
 * test runs in its own process). The other tests run with PARITY_CPU_FORK_JOIN_NS=0 (CMake), so
 * their splits stay where they were; these unset or set it themselves. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parity/parity.h"
#include "rs_helpers.h"

#define OK(x) cr_assert_eq((x), PARITY_STATUS_OK, "%s: %s", #x, parity_last_error())

typedef struct capture {
  FILE *file;
  int saved;
} capture;

static capture capture_stderr(void) {
  fflush(stderr);
  capture c = {tmpfile(), dup(2)};
  cr_assert(c.file && c.saved >= 0);
  cr_assert(dup2(fileno(c.file), 2) >= 0);
  return c;
}

/* Everything written to stderr since capture_stderr (the caller frees it); stderr restored. */
static char *captured(capture *c) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  long n = ftell(c->file);
  char *s = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
  rewind(c->file);
  if (n > 0) cr_assert_eq(fread(s, 1, (size_t)n, c->file), (size_t)n);
  fclose(c->file);
  return s;
}

static int count(const char *s, const char *what) {
  int k = 0;
  for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) k++;
  return k;
}

static parity_context_t *debug_cpu(parity_device_t **dev) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpu";
  o.log_level = 2;
  parity_context_t *ctx;
  OK(parity_context_create(&o, &ctx));
  OK(parity_context_default_device(ctx, dev));
  return ctx;
}

/* The f32 sum of n values i % 1000 - 499.5 (and its max and argmax) on `threads` threads. */
static void reduce_n(parity_device_t *dev, int64_t n, int threads, double out[3]) {
  rs_set_threads(threads);
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(i % 1000) - 499.5f + (float)i * 1e-6f;
  parity_tensor_t *x, *y;
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, (int64_t[]){n}, v, &x));
  static const parity_op_t ops[3] = {PARITY_OP_SUM, PARITY_OP_MAX, PARITY_OP_ARGMAX};
  for (int k = 0; k < 3; k++) {
    OK(parity_reduce(ops[k], x, 0, 0, &y));
    OK(parity_tensor_to_f64(y, &out[k], 1));
    parity_tensor_release(y);
  }
  parity_tensor_release(x);
  free(v);
}

static const char measured[] = "OpenMP threads costs";

Test(cpu_parallel, the_cost_is_measured_once_at_the_first_large_reduction_and_changes_no_result) {
  unsetenv("PARITY_CPU_FORK_JOIN_NS");
  capture c = capture_stderr();
  parity_device_t *dev;
  parity_context_t *ctx = debug_cpu(&dev);
  if (!rs_set_threads(2)) {
    free(captured(&c));
    parity_context_destroy(ctx);
    cr_skip_test("the CPU plugin was built without OpenMP");
  }
  double small[3], one[3], two[3], big1[3], big2[3];
  reduce_n(dev, 4096, 2, small); /* below the element limit: nothing to weigh */
  fflush(stderr);
  const long before = ftell(c.file);
  reduce_n(dev, INT64_C(1) << 17, 2, two);
  reduce_n(dev, INT64_C(1) << 17, 1, one);
  reduce_n(dev, INT64_C(1) << 20, 2, big2);
  reduce_n(dev, INT64_C(1) << 20, 1, big1);
  parity_context_destroy(ctx);
  char *log = captured(&c);
  cr_assert(before >= 0);
  cr_assert_eq(count(log, measured), 1, "one measurement expected:\n%s", log);
  cr_assert(strstr(log, "a fork/join of 2 OpenMP threads costs") && strstr(log, "reductions run on 2 threads from"),
            "%s", log);
  char head[4096];
  snprintf(head, sizeof head, "%.*s", (int)before, log);
  cr_assert(!strstr(head, measured), "measured for a small reduction:\n%s", head);
  for (int k = 0; k < 3; k++) {
    cr_assert(rs_same(one[k], two[k]), "2^17, result %d: %.17g on one thread, %.17g on two", k, one[k], two[k]);
    cr_assert(rs_same(big1[k], big2[k]), "2^20, result %d: %.17g on one thread, %.17g on two", k, big1[k], big2[k]);
  }
  free(log);
}

/* The plugin's messages while a context sets PARITY_CPU_FORK_JOIN_NS to `value` and reduces 2^18
 * elements on two threads (the caller frees them); *omp: whether the plugin runs OpenMP. */
static char *log_with(const char *value, double r[3], int *omp) {
  setenv("PARITY_CPU_FORK_JOIN_NS", value, 1);
  capture c = capture_stderr();
  parity_device_t *dev;
  parity_context_t *ctx = debug_cpu(&dev);
  *omp = rs_set_threads(2);
  reduce_n(dev, INT64_C(1) << 18, 2, r);
  parity_context_destroy(ctx);
  return captured(&c);
}

Test(cpu_parallel, the_variable_replaces_the_measurement) {
  double r[3];
  int omp;
  char *log = log_with("2500", r, &omp);
  cr_assert_eq(count(log, measured), 0, "measured despite the variable:\n%s", log);
  cr_assert(strstr(log, "cpu: a fork/join costs 2500 ns (PARITY_CPU_FORK_JOIN_NS)"), "%s", log);
  free(log);
}

Test(cpu_parallel, a_malformed_value_is_a_warning_and_the_cost_is_measured) {
  double r[3];
  int omp;
  char *log = log_with("3us", r, &omp);
  cr_assert(strstr(log,
                   "cpu: PARITY_CPU_FORK_JOIN_NS='3us' is not a whole number of nanoseconds from 0 to "
                   "1000000000; measuring the cost instead"),
            "%s", log);
  if (omp) cr_assert_eq(count(log, measured), 1, "%s", log);
  cr_assert_eq(r[2], 261999.0, "argmax %g", r[2]); /* the largest i with i % 1000 == 999 */
  free(log);
}
