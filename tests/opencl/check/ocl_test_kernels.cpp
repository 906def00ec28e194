/* ocl_test_kernels.cpp — tiny kernels in OpenCL C for test_ocl_check.c, compiled as the OpenCL
 * checking executor compiles the plugin's kernels (ocl_shim.h, -fsanitize=thread): sound ones
 * (a local-memory tree sum, the vector types) and one planted bug each (a missing barrier, a local
 * index past its array, a read of an unwritten local word, a barrier some work-items never reach,
 * a global word handed between work-items across a barrier with only CLK_LOCAL_MEM_FENCE) and its
 * sound twin (the same across CLK_GLOBAL_MEM_FENCE).
 * ocl_test_lines[] holds the line of each planted bug, so the test can require it in the report.
 * Vector literals are written as ocl_src.cmake rewrites them (chk_vlit). */
#include "ocl_shim.h"

#define N 64 /* work-items per work-group in the tests */

enum { L_RACE, L_RACE_READ, L_OOB_LOCAL, L_UNINIT, L_DIVERGENT, L_FENCE_WRITE, L_FENCE_READ, L_COUNT };
extern "C" int ocl_test_lines[L_COUNT];
int ocl_test_lines[L_COUNT];
#define MARK(k) (ocl_test_lines[k] = __LINE__ + 1)

/* a tree sum of each work-group's N inputs in local memory, barriers where they belong */
kernel void tree_sum(const global float *in, global float *out) {
  local float s[N];
  int t = (int)get_local_id(0);
  s[t] = in[get_global_id(0)];
  for (int h = N / 2; h > 0; h >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < h) s[t] = s[t] + s[t + h];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t == 0) out[get_group_id(0)] = s[0];
}

/* the vector types: literals, components, lo/hi, masks, select, any, vload4/vstore4 (work-item t
 * writes out[4t .. 4t + 3]) */
kernel void vectors(const global float *in, global float *out, global int *flags) {
  size_t t = get_global_id(0);
  float4 v = vload4(t, in), k = chk_vlit<float4>(1.0f, 2.0f, 3.0f, 4.0f), one = chk_vlit<float4>(1.0f);
  int4 big = v > k; /* -1 where v > k */
  float4 r = select(v * k + one, -v, big);
  float2 h = r.lo + r.hi;
  vstore4(r, t, out);
  flags[2 * t] = any(big);
  flags[2 * t + 1] = (int)(h.x + h.y == r.x + r.y + r.z + r.w);
}

/* each work-item writes its slot and reads its neighbour's, with no barrier between */
kernel void rotate_no_barrier(global float *out) {
  local float s[N];
  int t = (int)get_local_id(0);
  MARK(L_RACE);
  s[t] = (float)t;
  MARK(L_RACE_READ);
  out[get_global_id(0)] = s[(t + 1) % N];
}

/* a 2-D work-group shifting its tile one column too far */
kernel void tile_oob(global float *out) {
  local float tile[8][8];
  int x = (int)get_local_id(0), y = (int)get_local_id(1);
  MARK(L_OOB_LOCAL);
  tile[y][x + 1 + (y == 7 ? 0 : -1)] = (float)x;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[y * 8 + x] = tile[y][x > 0 ? x : 1];
}

/* the last slot is never written, and work-item N - 2 reads it */
kernel void read_unwritten(global float *out) {
  local float s[N];
  int t = (int)get_local_id(0);
  if (t < N - 1) s[t] = (float)t;
  barrier(CLK_LOCAL_MEM_FENCE);
  MARK(L_UNINIT);
  out[get_global_id(0)] = s[t + 1 < N ? t + 1 : 0];
}

/* half the work-items return before the barrier the others wait at */
kernel void early_exit(global float *out) {
  int t = (int)get_local_id(0);
  if (t >= N / 2) return;
  MARK(L_DIVERGENT);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = 1.0f;
}

/* work-item 0 writes a global word, work-item 1 reads it after a barrier: ordered only when the
 * barrier's flags hold CLK_GLOBAL_MEM_FENCE (a local fence orders local memory only). Every
 * work-item stores after the barrier, so the barrier is no tail call (its address stays the line) */
kernel void handoff_local_fence(global float *g) {
  int t = (int)get_local_id(0);
  float v = 0.0f;
  MARK(L_FENCE_WRITE);
  if (t == 0) g[0] = 1.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  MARK(L_FENCE_READ);
  if (t == 1) v = g[0];
  g[2 + t] = v;
}
kernel void handoff_global_fence(global float *g) {
  int t = (int)get_local_id(0);
  float v = 0.0f;
  if (t == 0) g[0] = 1.0f;
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (t == 1) v = g[0];
  g[2 + t] = v;
}

extern "C" const chk_kernel_t ocl_test_kernels[] = {
    // clang-format off
    OCL_ENTRY(tree_sum, 1) OCL_ENTRY(vectors, 0) OCL_ENTRY(rotate_no_barrier, 1) OCL_ENTRY(tile_oob, 1)
    OCL_ENTRY(read_unwritten, 1) OCL_ENTRY(early_exit, 1)
    OCL_ENTRY(handoff_local_fence, 1) OCL_ENTRY(handoff_global_fence, 1){nullptr, nullptr, 0, 0, 0, nullptr}};
// clang-format on
