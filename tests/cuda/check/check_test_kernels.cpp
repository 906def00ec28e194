/* check_test_kernels.cpp — tiny kernels in the CUDA dialect for test_check.c, each with one planted
 * bug the checker must report (or none), compiled as the checking executor compiles the plugin's
 * kernels (emu_shim.h, check_shim.h, -fsanitize=thread). chk_test_lines[] holds the line of each
 * planted bug, so the test can require it in the message. */
#include "emu_shim.h"
#include "check_shim.h"

#define N 64 /* threads per block in the tests */

enum { L_RACE, L_RACE_READ, L_OOB_GLOBAL, L_OOB_SHARED, L_UNINIT, L_DIVERGENT, L_BLOCKS, L_OVERLAP, L_COUNT };
extern "C" int chk_test_lines[L_COUNT];
int chk_test_lines[L_COUNT];
#define MARK(k) (chk_test_lines[k] = __LINE__ + 1)

/* each thread writes its slot and reads its neighbour's; with the barrier this is a rotation (no
 * template: GCC ignores the section of a template's static locals, see README.md) */
static void rotate_ok(float *out) {
  __shared__ float s[N];
  int t = (int)threadIdx.x;
  s[t] = (float)t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[(t + 1) % N];
}
static void rotate_no_barrier(float *out) {
  __shared__ float s[N];
  int t = (int)threadIdx.x;
  MARK(L_RACE);
  s[t] = (float)t;
  MARK(L_RACE_READ);
  out[blockIdx.x * N + t] = s[(t + 1) % N];
}

/* a tree sum in shared memory, barriers everywhere they belong */
static void tree_sum(const float *in, float *out) {
  __shared__ float s[N];
  int t = (int)threadIdx.x;
  s[t] = in[blockIdx.x * N + t];
  for (int h = N / 2; h > 0; h >>= 1) {
    __syncthreads();
    if (t < h) s[t] = s[t] + s[t + h];
  }
  __syncthreads();
  if (t == 0) out[blockIdx.x] = s[0];
}

/* sums a thread's share of n elements, the loop bound widened by one */
static void copy_widened(const float *in, float *out, long n) {
  float acc = 0;
  for (long i = threadIdx.x; i <= n; i += blockDim.x) {
    MARK(L_OOB_GLOBAL);
    acc += in[i];
  }
  out[threadIdx.x] = acc;
}

/* shifts through shared memory, one slot too far */
static void shift_oob(float *out) {
  __shared__ float s[N];
  int t = (int)threadIdx.x;
  MARK(L_OOB_SHARED);
  s[t + 1] = (float)t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[t > 0 ? t : 1];
}

/* the last slot is never written, and thread N - 2 reads it */
static void read_unwritten(float *out) {
  __shared__ float s[N];
  int t = (int)threadIdx.x;
  if (t < N - 1) s[t] = (float)t;
  __syncthreads();
  MARK(L_UNINIT);
  out[blockIdx.x * N + t] = s[t + 1 < N ? t + 1 : 0];
}

/* half the threads leave before the barrier the others wait at */
static void early_exit(float *out) {
  int t = (int)threadIdx.x;
  if (t >= N / 2) return;
  MARK(L_DIVERGENT);
  __syncthreads();
  out[blockIdx.x * N + t] = 1.0f;
}

/* every block writes the first element: blocks of a launch are not ordered */
static void blocks_write_one(float *out) {
  MARK(L_BLOCKS);
  if (threadIdx.x == 0) out[0] = (float)blockIdx.x;
}

/* 8-byte partials at a 4-byte stride: neighbours overlap (f64 partials sized for f32) */
static void overlapping_partials(unsigned char *part) {
  MARK(L_OVERLAP);
  *(double *)(part + 4 * threadIdx.x) = (double)threadIdx.x;
}

/* the order threads run in, through a counter outside device memory (not checked) */
static int ticket;
static void order(int *out) {
  int t = (int)threadIdx.x;
  out[t] = 0;
  out[N + t] = ticket++;
  out[2 * N + t] = ticket++;
}

extern "C" const chk_kernel_t chk_test_kernels[] = {
    // clang-format off
    EMU_ENTRY(rotate_ok, 1) EMU_ENTRY(rotate_no_barrier, 1) EMU_ENTRY(tree_sum, 1) EMU_ENTRY(copy_widened, 0)
    EMU_ENTRY(shift_oob, 1) EMU_ENTRY(read_unwritten, 1) EMU_ENTRY(early_exit, 1) EMU_ENTRY(blocks_write_one, 0)
    EMU_ENTRY(overlapping_partials, 0) EMU_ENTRY(order, 0){nullptr, nullptr, 0, 0, 0}};
// clang-format on
