/* test_check.c — the checking executor on check_test_kernels.cpp: each planted bug (a missing
 * barrier, a widened loop bound over global and over shared memory, a read of an unwritten shared
 * word, a barrier some threads never reach, blocks writing one word, overlapping partials) is
 * reported with kernel, block, threads and the planted line; the sound kernels are clean with
 * several seeds; seeds change the interleaving; bad settings are refused with a message. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 64
enum { L_RACE, L_RACE_READ, L_OOB_GLOBAL, L_OOB_SHARED, L_UNINIT, L_DIVERGENT, L_BLOCKS, L_OVERLAP, L_COUNT };
extern const chk_kernel_t chk_test_kernels[];
extern int chk_test_lines[L_COUNT];

static const chk_kernel_t *kernel(const char *name) {
  for (const chk_kernel_t *k = chk_test_kernels; k->name; k++)
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

/* launches name over blocks x N threads with the arguments; returns the report count */
static int run(const char *name, unsigned blocks, void **args) {
  unsigned grid[3] = {blocks, 1, 1}, block[3] = {N, 1, 1};
  return chk_launch(kernel(name), grid, block, args);
}

static void seed(unsigned long long s) {
  char v[32], msg[256];
  snprintf(v, sizeof v, "%llu", s);
  setenv("PARITY_CUDA_CHECK_SEED", v, 1);
  setenv("PARITY_CUDA_CHECK_SWITCH", "1", 1);
  cr_assert_eq(chk_configure(msg, sizeof msg), 0, "%s", msg);
}

/* the message names the kernel, the planted line and every fragment given */
static void expect(const char *kernel_name, int line, const char *const *parts) {
  const char *m = chk_message();
  char where[64];
  snprintf(where, sizeof where, "check_test_kernels.cpp:%d", line);
  cr_expect(strstr(m, kernel_name) != NULL, "kernel %s not named in:\n%s", kernel_name, m);
  cr_expect(strstr(m, where) != NULL, "line %s not named in:\n%s", where, m);
  for (; *parts; parts++) cr_expect(strstr(m, *parts) != NULL, "'%s' not in:\n%s", *parts, m);
}

Test(check, sound_kernels_are_clean_under_several_seeds) {
  float *in = dev(4 * N * sizeof(float)), *out = dev(4 * N * sizeof(float));
  for (unsigned long long s = 1; s <= 4; s++) {
    seed(s);
    void *a1[] = {&out};
    cr_expect_eq(run("rotate_ok", 3, a1), 0, "seed %llu:\n%s", s, chk_message());
    for (int i = 0; i < N; i++) cr_expect_eq(out[i], (float)((i + 1) % N));
    for (int i = 0; i < 4 * N; i++) in[i] = (float)(i % 7);
    void *a2[] = {&in, &out};
    cr_expect_eq(run("tree_sum", 4, a2), 0, "seed %llu:\n%s", s, chk_message());
    for (int b = 0; b < 4; b++) {
      float want = 0;
      for (int i = 0; i < N; i++) want += (float)((b * N + i) % 7);
      cr_expect_eq(out[b], want);
    }
  }
}

Test(check, a_missing_barrier_is_a_race_between_two_threads) {
  seed(1);
  float *out = dev(2 * N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("rotate_no_barrier", 2, a), 0);
  const char *parts[] = {"data race in rotate_no_barrier", "block ", "shared rotate_no_barrier::s + byte ",
                         "with no barrier between", NULL};
  expect("rotate_no_barrier", chk_test_lines[L_RACE], parts);
  expect("rotate_no_barrier", chk_test_lines[L_RACE_READ], parts);
}

Test(check, a_widened_loop_bound_reads_past_the_buffer) {
  seed(2);
  long n = 100;
  float *in = dev((size_t)n * sizeof(float)), *out = dev(N * sizeof(float));
  void *a[] = {&in, &out, &n};
  cr_assert_gt(run("copy_widened", 1, a), 0);
  const char *parts[] = {
      "out-of-bounds read in copy_widened, block 0, thread 36: 4 bytes at argument 0 + byte 400, past "
      "the end of its 400 bytes",
      NULL};
  expect("copy_widened", chk_test_lines[L_OOB_GLOBAL], parts);
}

Test(check, a_shared_index_past_the_array_is_out_of_bounds) {
  seed(3);
  float *out = dev(N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("shift_oob", 1, a), 0);
  const char *parts[] = {
      "out-of-bounds write in shift_oob, block 0, thread 63: 4 bytes at shared shift_oob::s + byte 256, "
      "past the end of its 256 bytes",
      NULL};
  expect("shift_oob", chk_test_lines[L_OOB_SHARED], parts);
}

Test(check, a_read_of_an_unwritten_shared_word_is_uninitialised) {
  seed(4);
  float *out = dev(2 * N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("read_unwritten", 2, a), 0);
  const char *parts[] = {
      "uninitialised shared read in read_unwritten, block 0, thread 62: shared read_unwritten::s + byte 252", NULL};
  expect("read_unwritten", chk_test_lines[L_UNINIT], parts);
}

Test(check, a_barrier_some_threads_never_reach_is_divergent) {
  seed(5);
  float *out = dev(N * sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("early_exit", 1, a), 0);
  const char *parts[] = {"divergent barrier in early_exit, block 0: thread ", "exited without reaching it", NULL};
  expect("early_exit", chk_test_lines[L_DIVERGENT], parts);
}

Test(check, blocks_of_one_launch_are_not_ordered) {
  seed(6);
  float *out = dev(sizeof(float));
  void *a[] = {&out};
  cr_assert_gt(run("blocks_write_one", 3, a), 0);
  const char *parts[] = {
      "data race in blocks_write_one, block 1: thread 0 writes argument 0 + byte 0 (a buffer of 4 bytes)",
      "thread 0 of block 0 wrote it", "blocks of one launch are not ordered", NULL};
  expect("blocks_write_one", chk_test_lines[L_BLOCKS], parts);
}

Test(check, overlapping_partials_race_between_neighbours) {
  seed(7);
  unsigned char *part = dev(4 * N + 4);
  void *a[] = {&part};
  cr_assert_gt(run("overlapping_partials", 1, a), 0);
  const char *parts[] = {"data race in overlapping_partials", "writes argument 0 + byte ", "wrote it at", NULL};
  expect("overlapping_partials", chk_test_lines[L_OVERLAP], parts);
}

/* the order threads ran in, as the kernel saw it: each thread's two tickets, from 0 */
static void order_of(unsigned long long s, int *got) {
  seed(s);
  int *out = dev(3 * N * sizeof(int));
  void *a[] = {&out};
  cr_assert_eq(run("order", 1, a), 0, "%s", chk_message());
  int low = out[N];
  for (int i = 0; i < 2 * N; i++) low = out[N + i] < low ? out[N + i] : low;
  for (int i = 0; i < 2 * N; i++) got[i] = out[N + i] - low;
}

Test(check, seeds_choose_the_interleaving) {
  int a[2 * N], b[2 * N], in_order = 1;
  order_of(1, a);
  order_of(2, b);
  cr_expect(memcmp(a, b, sizeof a) != 0, "seeds 1 and 2 ran the threads in the same order");
  for (int i = 0; i < N; i++) in_order &= a[i] == i && a[N + i] == N + i;
  cr_expect(!in_order, "seed 1 ran the threads one after another in index order");
}

Test(check, bad_settings_and_launches_are_refused_with_a_message) {
  char msg[256];
  setenv("PARITY_CUDA_CHECK_SEED", "12x", 1);
  cr_expect_eq(chk_configure(msg, sizeof msg), -1);
  cr_expect(strstr(msg, "PARITY_CUDA_CHECK_SEED='12x' is not a whole number") != NULL, "%s", msg);
  setenv("PARITY_CUDA_CHECK_SEED", "1", 1);
  setenv("PARITY_CUDA_CHECK_SWITCH", "0", 1);
  cr_expect_eq(chk_configure(msg, sizeof msg), -1);
  cr_expect(strstr(msg, "PARITY_CUDA_CHECK_SWITCH='0'") != NULL, "%s", msg);
  unsigned grid[3] = {1, 1, 1}, block[3] = {2048, 1, 1};
  float *out = dev(sizeof(float));
  void *a[] = {&out};
  cr_expect_eq(chk_launch(kernel("rotate_ok"), grid, block, a), -1);
  cr_expect(strstr(chk_failure(), "1 to 1024 threads") != NULL, "%s", chk_failure());
  cr_expect_eq(chk_mem_free((void *)16), -1);
}
