/* emu_shim.h — compile the CUDA plugin's kernels (plugins/kernels/cuda_module.cu) as host C++, for the
 * emulated driver of tests/cuda (fake_libcuda.c built with FAKE_CUDA_EMULATE): the CUDA keywords
 * vanish, the built-in index variables are globals the emulator sets, __syncthreads() switches
 * fibers, and the conversion intrinsics are written out with the same rounding. Host math (libm)
 * stands in for CUDA's: the results meet the same bounds, not the same bits. */
#ifndef PARITY_EMU_SHIM_H
#define PARITY_EMU_SHIM_H

#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline /* pmathf.h (PF_FN): static, unused ones without a warning */
#define __shared__ static      /* blocks run one at a time; a block's threads are fibers of one thread */
#define __launch_bounds__(x)
#define KERNEL static void
/* internal linkage: the four compute classes define helpers with the same signatures and different
 * bodies (T is float in one, double in another), which inline linkage would merge */
#define DEV static inline

struct emu_dim3 {
  unsigned x, y, z;
};
extern "C" {
extern emu_dim3 emu_blockIdx, emu_blockDim, emu_threadIdx, emu_gridDim;
void emu_syncthreads(void);
}
#define blockIdx emu_blockIdx
#define blockDim emu_blockDim
#define threadIdx emu_threadIdx
#define gridDim emu_gridDim
#define __syncthreads() emu_syncthreads()

static inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float __uint2float_rn(unsigned u) { return (float)u; }
static inline float __ll2float_rn(long long v) { return (float)v; }
static inline double __ll2double_rn(long long v) { return (double)v; }
static inline float __double2float_rn(double d) { return (float)d; }
static inline float __ll2float_rz(long long v) {
  int mode = fegetround();
  fesetround(FE_TOWARDZERO);
  volatile long long vv = v;
  volatile float f = (float)vv;
  fesetround(mode);
  return f;
}
static inline float __double2float_rz(double d) {
  int mode = fegetround();
  fesetround(FE_TOWARDZERO);
  volatile double dd = d;
  volatile float f = (float)dd;
  fesetround(mode);
  return f;
}
/* cvt.rzi.s32/s64: truncate, saturate, NaN -> 0 */
template <typename I, typename F>
static inline I emu_sat(F f) {
  if (std::isnan(f)) return 0;
  if (f >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  if (f <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  return (I)f;
}
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); } /* fused, as on the GPU */
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __float2int_rz(float f) { return emu_sat<int>(f); }
static inline long long __float2ll_rz(float f) { return emu_sat<long long>(f); }
static inline int __double2int_rz(double d) { return emu_sat<int>(d); }
static inline long long __double2ll_rz(double d) { return emu_sat<long long>(d); }

/* a kernel called from its cuLaunchKernel parameter array */
typedef void (*emu_tramp_t)(void **params);
template <auto F, typename... A, size_t... I>
static void emu_call(void **p, void (*)(A...), std::index_sequence<I...>) {
  F(*static_cast<std::remove_cv_t<A> *>(p[I])...);
}
template <auto F, typename... A>
static void emu_tramp_of(void **p, void (*f)(A...)) {
  emu_call<F>(p, f, std::index_sequence_for<A...>{});
}
/* the size of each argument, 0-terminated: what a graph capture copies of a launch's arguments */
template <typename... A>
struct emu_psizes_t {
  static constexpr unsigned short v[sizeof...(A) + 1] = {(unsigned short)sizeof(A)..., 0};
};
template <typename... A>
constexpr const unsigned short *emu_psizes(void (*)(A...)) {
  return emu_psizes_t<A...>::v;
}
template <typename... A>
constexpr int emu_nargs(void (*)(A...)) {
  return (int)sizeof...(A);
}
#define EMU_ENTRY(name, barrier) \
  {#name, [](void **p) { emu_tramp_of<name>(p, name); }, barrier, emu_nargs(name), emu_psizes(name)},

extern "C" {
typedef struct emu_kernel_t {
  const char *name;
  emu_tramp_t run;
  int barrier; /* uses __syncthreads: the block's threads run as fibers */
  int nargs;
  const unsigned short *psizes; /* nargs sizes in bytes, then 0 */
} emu_kernel_t;
}

#endif
