/* test_ocl_check.c — the OpenCL checking executor's kernel compile (ocl_shim.h) on
 * ocl_test_kernels.cpp: the sound kernels (a local-memory tree sum, the vector types) compute what
 * OpenCL computes and are clean under several seeds; each planted bug (a missing barrier, a local
 * index past its array in a 2-D work-group, a read of an unwritten local word, a barrier some
 * work-items never reach, a global word handed between work-items across a barrier with only
 * CLK_LOCAL_MEM_FENCE) is reported in OpenCL's words with kernel, work-group, work-items and the
 * planted line; the same handoff across CLK_GLOBAL_MEM_FENCE is clean. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_check.h"

#define N 64
enum { L_RACE, L_RACE_READ, L_OOB_LOCAL, L_UNINIT, L_DIVERGENT, L_FENCE_WRITE, L_FENCE_READ, L_COUNT };
extern const chk_kernel_t ocl_test_kernels[];
extern int ocl_test_lines[L_COUNT];
int ocl_chk_spec[3]; /* ocl_shim.h declares it (the ICD defines it) */

static const chk_kernel_t *kernel(const char *name) {
  for (const chk_kernel_t *k = ocl_test_kernels; k->name; k++)
    if (!strcmp(k->name, name)) return k;
  cr_assert_fail("no test kernel %s", name);
  return NULL;
}

static void *dev(size_t bytes) {
  void *p = NULL;
  cr_assert_eq(chk_mem_alloc(bytes, &p), 0);
  memset(p, 0, bytes);
  return p;
}

/* groups work-groups of lx x ly work-items */
static int run(const char *name, unsigned groups, unsigned lx, unsigned ly, void **args) {
  unsigned grid[3] = {groups, 1, 1}, block[3] = {lx, ly, 1};
  return chk_launch(kernel(name), grid, block, args);
}

static void seed(unsigned long long s) {
  char v[32], msg[256];
  chk_words = OCL_CHK_WORDS;
  snprintf(v, sizeof v, "%llu", s);
  setenv("PARITY_OPENCL_CHECK_SEED", v, 1);
  setenv("PARITY_OPENCL_CHECK_SWITCH", "1", 1);
  cr_assert_eq(chk_configure(msg, sizeof msg), 0, "%s", msg);
}

/* the message names the kernel, the planted line and every fragment given */
static void expect(const char *kernel_name, int line, const char *const *parts) {
  const char *m = chk_message();
  char where[64];
  snprintf(where, sizeof where, "ocl_test_kernels.cpp:%d", line);
  cr_expect(strstr(m, kernel_name) != NULL, "kernel %s not named in:\n%s", kernel_name, m);
  cr_expect(strstr(m, where) != NULL, "line %s not named in:\n%s", where, m);
  for (; *parts; parts++) cr_expect(strstr(m, *parts) != NULL, "'%s' not in:\n%s", *parts, m);
}

Test(ocl_check, sound_kernels_are_clean_and_compute_what_opencl_does) {
  float *in = dev(4 * N * sizeof(float)), *out = dev(4 * N * sizeof(float));
  int *flags = dev(2 * N * sizeof(int));
  for (unsigned long long s = 1; s <= 4; s++) {
    seed(s);
    for (int i = 0; i < 4 * N; i++) in[i] = (float)(i % 7);
    void *a[] = {&in, &out};
    cr_expect_eq(run("tree_sum", 4, N, 1, a), 0, "seed %llu:\n%s", s, chk_message());
    for (int g = 0; g < 4; g++) {
      float want = 0;
      for (int i = 0; i < N; i++) want += (float)((g * N + i) % 7);
      cr_expect_eq(out[g], want);
    }
    void *v[] = {&in, &out, &flags};
    cr_expect_eq(run("vectors", 2, N / 2, 1, v), 0, "seed %llu:\n%s", s, chk_message());
    for (int t = 0; t < N; t++) {
      int any = 0;
      for (int c = 0; c < 4; c++) {
        float x = in[4 * t + c], k = (float)(c + 1);
        cr_expect_eq(out[4 * t + c], x > k ? -x : x * k + 1.0f, "component %d of %d", c, t);
        any |= x > k;
      }
      cr_expect_eq(flags[2 * t], any);
      cr_expect_eq(flags[2 * t + 1], 1);
    }
  }
}

Test(ocl_check, a_missing_barrier_is_a_race_between_two_work_items) {
  seed(1);
  float *out = dev(2 * N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("rotate_no_barrier", 2, N, 1, a), 0);
  const char *parts[] = {"opencl-check: data race in rotate_no_barrier, work-group ", "work-item ",
                         "local rotate_no_barrier::s + byte ", "with no barrier between", NULL};
  expect("rotate_no_barrier", ocl_test_lines[L_RACE], parts);
  expect("rotate_no_barrier", ocl_test_lines[L_RACE_READ], parts);
}

Test(ocl_check, a_local_index_past_the_array_is_out_of_bounds) {
  seed(3);
  float *out = dev(N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("tile_oob", 1, 8, 8, a), 0);
  const char *parts[] = {
      "out-of-bounds write in tile_oob, work-group 0, work-item (7,7,0): 4 bytes at local "
      "tile_oob::tile + byte 256, past the end of its 256 bytes",
      NULL};
  expect("tile_oob", ocl_test_lines[L_OOB_LOCAL], parts);
}

Test(ocl_check, a_read_of_an_unwritten_local_word_is_uninitialised) {
  seed(4);
  float *out = dev(2 * N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("read_unwritten", 2, N, 1, a), 0);
  const char *parts[] = {
      "uninitialised local read in read_unwritten, work-group 0, work-item 62: local "
      "read_unwritten::s + byte 252",
      "no work-item of the work-group wrote it before", NULL};
  expect("read_unwritten", ocl_test_lines[L_UNINIT], parts);
}

Test(ocl_check, a_barrier_some_work_items_never_reach_is_divergent) {
  seed(5);
  float *out = dev(N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("early_exit", 1, N, 1, a), 0);
  const char *parts[] = {"divergent barrier in early_exit, work-group 0: work-item ", "exited without reaching it",
                         NULL};
  expect("early_exit", ocl_test_lines[L_DIVERGENT], parts);
}

Test(ocl_check, a_local_fence_does_not_order_global_memory) {
  float *g = dev(4 * sizeof(float));
  void *a[] = {&g};
  for (unsigned long long s = 1; s <= 4; s++) {
    seed(s);
    cr_assert_gt(run("handoff_local_fence", 1, 2, 1, a), 0, "seed %llu: not reported", s);
    const char *parts[] = {"opencl-check: data race in handoff_local_fence, work-group 0: work-item ",
                           "work-item 0",
                           "work-item 1",
                           "argument 0 + byte 0",
                           "with no barrier between",
                           NULL};
    expect("handoff_local_fence", ocl_test_lines[L_FENCE_WRITE], parts);
    expect("handoff_local_fence", ocl_test_lines[L_FENCE_READ], parts);
    cr_expect_eq(run("handoff_global_fence", 1, 2, 1, a), 0, "seed %llu:\n%s", s, chk_message());
    cr_expect_eq(g[3], 1.0f);
  }
}
