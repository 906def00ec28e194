/* ocl_shim.h — OpenCL C on the host, for the OpenCL checking executor (README.md here): the kernels
 * of plugins/kernels compiled as host C++ in their OpenCL dialect (dialect.h's KD_OPENCL branch, as
 * the plugin's programs are), with -fsanitize=thread and no runtime (tests/cuda/check/check_hooks.c
 * sees every load and store). Here: the address-space words (global vanishes, local arrays go to
 * the section emu_shared behind a pad, as check_shim.h's __shared__), the work-item functions over
 * the executor's index variables, barrier(flags) as the executor's barrier fencing the memories its
 * flags name, the built-ins the kernels
 * call with OpenCL's rounding, saturation and results, and the vector types (float4, int4, ...:
 * components, lo/hi, element-wise operators, comparisons giving -1/0 masks, vloadN/vstoreN).
 * Vector literals ((float4)(a, b, c, d)), which C++ would read as a comma expression, `local` in a
 * parameter list and KERNEL_WG(x, y) name(, whose size the kernel table needs with the name, are
 * rewritten in the build's copy of the sources (ocl_src.cmake) into chk_vlit<float4>(a, b, c, d),
 * a plain pointer and OCL_KERNEL_WG(name, x, y) name(. Included first by ocl_module.cpp. */
#ifndef PARITY_OCL_SHIM_H
#define PARITY_OCL_SHIM_H

#include <cfenv>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <math.h>
#include <type_traits>
#include <utility>

#include "check.h"
#include "parity_plugin.h" /* before the macros below (a field is named kernel) */

#define __OPENCL_VERSION__ 120 /* dialect.h: the OpenCL branch */
#define __OPENCL_C_VERSION__ 120

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
static_assert(sizeof(long) == 8, "OpenCL's long is 64-bit: the host must be LP64");

/* ---- address spaces and qualifiers ---- */
#define global
#define __global
#define __constant static const
#define constant static const
#define kernel static /* internal linkage: each (family, class) object defines the same names */
/* a KERNEL_WG(x, y) kernel (reqd_work_group_size), which ocl_src.cmake rewrites as
 * OCL_KERNEL_WG(name, x, y): its size for the kernel table (OCL_ENTRY's OCL_REQD_WG: the overload
 * for its tag; the template answers 0, 0, 0 for every other kernel), then the kernel. A KERNEL_WG
 * the rewrite missed (not at a line's start) stops the compile: its size would be lost */
struct ocl_wg3 {
  unsigned x, y, z;
};
template <typename Tag>
static constexpr ocl_wg3 ocl_reqd_wg(Tag *) {
  return {0, 0, 0};
}
#define OCL_KERNEL_WG(name, x, y)                                                    \
  struct ocl_wg_of_##name;                                                           \
  static constexpr ocl_wg3 ocl_reqd_wg(ocl_wg_of_##name *) { return {(x), (y), 1}; } \
  kernel void
#define OCL_REQD_WG(name) ocl_reqd_wg((struct ocl_wg_of_##name *)nullptr)
#define reqd_work_group_size(x, y, z) unused)) ocl_KERNEL_WG_not_rewritten_by_ocl_src_cmake __attribute__((unused
#define CHK_SHARED_PAD 256
#define CHK_CAT2(a, b) a##b
#define CHK_CAT(a, b) CHK_CAT2(a, b)
/* a local array: one copy per work-group (groups run one after another), in the checked section */
#define local                                                                                                     \
  static __attribute__((section("emu_shared"), used)) char CHK_CAT(emu_shared_pad_, __COUNTER__)[CHK_SHARED_PAD]; \
  static __attribute__((section("emu_shared")))

/* ---- work-items: the executor's index variables (tests/cuda/check/check_sched.c) ---- */
extern "C" {
struct ocl_dim3 {
  unsigned x, y, z;
};
extern ocl_dim3 emu_blockIdx, emu_blockDim, emu_threadIdx, emu_gridDim;
/* the program's SPEC_OP, SPEC_DT, SPEC_DT2 (0: not fixed), set by the ICD before each launch */
extern int ocl_chk_spec[3];
}
static inline size_t ocl_dim(const ocl_dim3 &d, uint i) { return i == 0 ? d.x : i == 1 ? d.y : i == 2 ? d.z : 1; }
static inline size_t get_local_id(uint i) { return i < 3 ? ocl_dim(emu_threadIdx, i) : 0; }
static inline size_t get_group_id(uint i) { return i < 3 ? ocl_dim(emu_blockIdx, i) : 0; }
static inline size_t get_local_size(uint i) { return ocl_dim(emu_blockDim, i); }
static inline size_t get_num_groups(uint i) { return ocl_dim(emu_gridDim, i); }
static inline size_t get_global_id(uint i) { return get_group_id(i) * get_local_size(i) + get_local_id(i); }
static inline size_t get_global_size(uint i) { return get_num_groups(i) * get_local_size(i); }
/* a barrier orders the memories its flags fence, no more: across barrier(CLK_LOCAL_MEM_FENCE) two
 * work-items' accesses to one global word still race (check.h's chk_barrier) */
#define CLK_LOCAL_MEM_FENCE CHK_FENCE_SHARED
#define CLK_GLOBAL_MEM_FENCE CHK_FENCE_GLOBAL
#define barrier(flags) chk_barrier(flags) /* a macro: the barrier's address is the kernel's line */

/* ---- scalar built-ins ---- */
template <typename A, typename B>
static inline typename std::common_type<A, B>::type min(A a, B b) {
  return b < a ? b : a;
}
template <typename A, typename B>
static inline typename std::common_type<A, B>::type max(A a, B b) {
  return a < b ? b : a;
}
template <typename To, typename From>
static inline To ocl_bits(From f) {
  static_assert(sizeof(To) == sizeof(From), "as_type: sizes differ");
  To t;
  memcpy(&t, &f, sizeof t);
  return t;
}
template <typename F>
static inline float as_float(F f) {
  return ocl_bits<float>(f);
}
template <typename F>
static inline uint as_uint(F f) {
  return ocl_bits<uint>(f);
}
template <typename F>
static inline int as_int(F f) {
  return ocl_bits<int>(f);
}
template <typename F>
static inline double as_double(F f) {
  return ocl_bits<double>(f);
}
template <typename F>
static inline long as_long(F f) {
  return ocl_bits<long>(f);
}
template <typename F>
static inline ulong as_ulong(F f) {
  return ocl_bits<ulong>(f);
}
static inline uint clz(uint x) { return x ? (uint)__builtin_clz(x) : 32u; }
static inline uint mul_hi(uint a, uint b) { return (uint)(((unsigned long long)a * b) >> 32); }
static inline float mad(float a, float b, float c) { return a * b + c; }
static inline double mad(double a, double b, double c) { return a * b + c; }
static inline float select(float a, float b, int c) { return c ? b : a; }
static inline double select(double a, double b, long c) { return c ? b : a; }

/* conversions: round to nearest by default, _rtz toward zero, _sat saturating (NaN -> 0) */
template <typename I, typename F>
static inline I ocl_sat(F f) {
  if (std::isnan(f)) return 0;
  if (f >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  if (f <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  return (I)f;
}
template <typename F>
static inline float convert_float(F v) {
  return (float)v;
}
template <typename F>
static inline double convert_double(F v) {
  return (double)v;
}
template <typename F>
static inline long convert_long(F v) {
  return (long)v;
}
template <typename F>
static inline float convert_float_rtz(F v) {
  int mode = fegetround();
  fesetround(FE_TOWARDZERO);
  volatile F vv = v;
  volatile float f = (float)vv;
  fesetround(mode);
  return f;
}
template <typename F>
static inline int convert_int_sat_rtz(F v) {
  return ocl_sat<int>(v);
}
template <typename F>
static inline long convert_long_sat_rtz(F v) {
  return ocl_sat<long>(v);
}

/* ---- vector types ---- */
template <typename T, int N>
struct ocl_vec;
template <typename T, int N>
struct ocl_vstore {
  T s[N];
};
template <typename T>
struct ocl_vstore<T, 2> {
  union {
    T s[2];
    struct {
      T x, y;
    };
    struct {
      T lo, hi;
    };
  };
};
template <typename T>
struct ocl_vstore<T, 4> {
  union {
    T s[4];
    struct {
      T x, y, z, w;
    };
    struct {
      ocl_vec<T, 2> lo, hi;
    };
  };
};
template <typename T, int N>
struct ocl_vec : ocl_vstore<T, N> {
  typedef T elem;
  ocl_vec() = default;
  ocl_vec(T a) { /* a scalar where a vector is expected: every component */
    for (int i = 0; i < N; i++) this->s[i] = a;
  }
};
/* the mask type of a comparison: -1 (true) or 0 per component, integers of the element's size */
template <typename T>
struct ocl_mask_of {
  typedef typename std::conditional<sizeof(T) == 8, long, int>::type type;
};
#define OCL_VTYPES(T, name)      \
  typedef ocl_vec<T, 2> name##2; \
  typedef ocl_vec<T, 4> name##4; \
  typedef ocl_vec<T, 8> name##8; \
  typedef ocl_vec<T, 16> name##16;
OCL_VTYPES(float, float)
OCL_VTYPES(double, double)
OCL_VTYPES(int, int)
OCL_VTYPES(uint, uint)
OCL_VTYPES(long, long)
OCL_VTYPES(ulong, ulong)
OCL_VTYPES(short, short)
OCL_VTYPES(ushort, ushort)
OCL_VTYPES(char, char)
OCL_VTYPES(uchar, uchar)
#undef OCL_VTYPES

/* (float4)(a, b, c, d) and (float4)(s), rewritten by ocl_src.cmake */
template <typename V, typename... A>
static inline V chk_vlit(A... a) {
  typedef typename V::elem T;
  V v;
  if constexpr (sizeof...(A) == 1) {
    v = V((T)(a, ...));
  } else {
    static_assert(sizeof(v.s) / sizeof(T) == sizeof...(A), "a vector literal needs one value per component");
    T e[] = {(T)a...};
    for (size_t i = 0; i < sizeof...(A); i++) v.s[i] = e[i];
  }
  return v;
}

#define OCL_VBIN(op)                                                                              \
  template <typename T, int N>                                                                    \
  static inline ocl_vec<T, N> operator op(ocl_vec<T, N> a, ocl_vec<T, N> b) {                     \
    for (int i = 0; i < N; i++) a.s[i] = a.s[i] op b.s[i];                                        \
    return a;                                                                                     \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  static inline ocl_vec<T, N> operator op(ocl_vec<T, N> a, typename ocl_vec<T, N>::elem b) {      \
    return a op ocl_vec<T, N>(b);                                                                 \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  static inline ocl_vec<T, N> operator op(typename ocl_vec<T, N>::elem a, ocl_vec<T, N> b) {      \
    return ocl_vec<T, N>(a) op b;                                                                 \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  static inline ocl_vec<T, N> &operator op##=(ocl_vec<T, N> &a, ocl_vec<T, N> b) {                \
    return a = a op b;                                                                            \
  }                                                                                               \
  template <typename T, int N>                                                                    \
  static inline ocl_vec<T, N> &operator op##=(ocl_vec<T, N> &a, typename ocl_vec<T, N>::elem b) { \
    return a = a op ocl_vec<T, N>(b);                                                             \
  }
OCL_VBIN(+)
OCL_VBIN(-)
OCL_VBIN(*)
OCL_VBIN(/)
OCL_VBIN(|)
OCL_VBIN(&)
OCL_VBIN(^)
#undef OCL_VBIN
template <typename T, int N>
static inline ocl_vec<T, N> operator-(ocl_vec<T, N> a) {
  for (int i = 0; i < N; i++) a.s[i] = -a.s[i];
  return a;
}
#define OCL_VCMP(op)                                                                                      \
  template <typename T, int N>                                                                            \
  static inline ocl_vec<typename ocl_mask_of<T>::type, N> operator op(ocl_vec<T, N> a, ocl_vec<T, N> b) { \
    ocl_vec<typename ocl_mask_of<T>::type, N> m;                                                          \
    for (int i = 0; i < N; i++) m.s[i] = a.s[i] op b.s[i] ? -1 : 0;                                       \
    return m;                                                                                             \
  }                                                                                                       \
  template <typename T, int N>                                                                            \
  static inline ocl_vec<typename ocl_mask_of<T>::type, N> operator op(ocl_vec<T, N> a,                    \
                                                                      typename ocl_vec<T, N>::elem b) {   \
    return a op ocl_vec<T, N>(b);                                                                         \
  }
OCL_VCMP(==)
OCL_VCMP(!=)
OCL_VCMP(<)
OCL_VCMP(>)
OCL_VCMP(<=)
OCL_VCMP(>=)
#undef OCL_VCMP

/* component-wise math and tests */
#define OCL_VMAP1(fn)                                  \
  template <typename T, int N>                         \
  static inline ocl_vec<T, N> fn(ocl_vec<T, N> a) {    \
    for (int i = 0; i < N; i++) a.s[i] = ::fn(a.s[i]); \
    return a;                                          \
  }
OCL_VMAP1(exp)
OCL_VMAP1(log)
OCL_VMAP1(sqrt)
OCL_VMAP1(fabs)
#undef OCL_VMAP1
#define OCL_VMAP2(fn)                                                               \
  template <typename T, int N>                                                      \
  static inline ocl_vec<T, N> fn(ocl_vec<T, N> a, ocl_vec<T, N> b) {                \
    for (int i = 0; i < N; i++) a.s[i] = ::fn(a.s[i], b.s[i]);                      \
    return a;                                                                       \
  }                                                                                 \
  template <typename T, int N>                                                      \
  static inline ocl_vec<T, N> fn(ocl_vec<T, N> a, typename ocl_vec<T, N>::elem b) { \
    return fn(a, ocl_vec<T, N>(b));                                                 \
  }
OCL_VMAP2(fmax)
OCL_VMAP2(fmin)
#undef OCL_VMAP2
/* fma(a, b, c) component-wise: one rounding each, as OpenCL's (the CPU layout's register blocks) */
template <typename T, int N>
static inline ocl_vec<T, N> fma(ocl_vec<T, N> a, ocl_vec<T, N> b, ocl_vec<T, N> c) {
  for (int i = 0; i < N; i++) a.s[i] = ::fma(a.s[i], b.s[i], c.s[i]);
  return a;
}
#define OCL_VTEST(fn)                                                           \
  template <typename T, int N>                                                  \
  static inline ocl_vec<typename ocl_mask_of<T>::type, N> fn(ocl_vec<T, N> a) { \
    ocl_vec<typename ocl_mask_of<T>::type, N> m;                                \
    for (int i = 0; i < N; i++) m.s[i] = std::fn(a.s[i]) ? -1 : 0;              \
    return m;                                                                   \
  }
OCL_VTEST(isnan)
OCL_VTEST(isinf)
OCL_VTEST(isfinite)
#undef OCL_VTEST
template <typename T, int N>
static inline int any(ocl_vec<T, N> m) {
  for (int i = 0; i < N; i++)
    if (m.s[i] < 0) return 1;
  return 0;
}
template <typename T, int N, typename M>
static inline ocl_vec<T, N> select(ocl_vec<T, N> a, ocl_vec<T, N> b, ocl_vec<M, N> c) {
  for (int i = 0; i < N; i++)
    if (c.s[i] < 0) a.s[i] = b.s[i];
  return a;
}

/* vloadN(offset, p): p[offset * N .. offset * N + N - 1], element by element (each access checked) */
#define OCL_VLOAD(n)                                                \
  template <typename T>                                             \
  static inline ocl_vec<T, n> vload##n(size_t off, const T *p) {    \
    ocl_vec<T, n> v;                                                \
    for (int i = 0; i < n; i++) v.s[i] = p[off * n + i];            \
    return v;                                                       \
  }                                                                 \
  template <typename T>                                             \
  static inline void vstore##n(ocl_vec<T, n> v, size_t off, T *p) { \
    for (int i = 0; i < n; i++) p[off * n + i] = v.s[i];            \
  }
OCL_VLOAD(2)
OCL_VLOAD(4)
OCL_VLOAD(8)
OCL_VLOAD(16)
#undef OCL_VLOAD

/* ---- the kernel table (check.h's chk_kernel_t): a kernel called from its argument array, and its
 * reqd_work_group_size (OCL_KERNEL_WG) ---- */
template <auto F, typename... A, size_t... I>
static void ocl_call(void **p, void (*)(A...), std::index_sequence<I...>) {
  F(*static_cast<std::remove_cv_t<A> *>(p[I])...);
}
template <auto F, typename... A>
static void ocl_tramp_of(void **p, void (*f)(A...)) {
  ocl_call<F>(p, f, std::index_sequence_for<A...>{});
}
template <typename... A>
struct ocl_psizes_t {
  static constexpr unsigned short v[sizeof...(A) + 1] = {(unsigned short)sizeof(A)..., 0};
};
template <typename... A>
constexpr const unsigned short *ocl_psizes(void (*)(A...)) {
  return ocl_psizes_t<A...>::v;
}
template <typename... A>
constexpr unsigned ocl_ptr_mask(void (*)(A...)) {
  unsigned m = 0, i = 0;
  ((m |= (std::is_pointer<A>::value ? 1u : 0u) << i++), ...);
  return m;
}
template <typename... A>
constexpr int ocl_nargs(void (*)(A...)) {
  return (int)sizeof...(A);
}
#define OCL_ENTRY(name, barrier)                  \
  {#name,                                         \
   [](void **p) { ocl_tramp_of<name>(p, name); }, \
   barrier,                                       \
   ocl_nargs(name),                               \
   ocl_ptr_mask(name),                            \
   ocl_psizes(name),                              \
   {OCL_REQD_WG(name).x, OCL_REQD_WG(name).y, OCL_REQD_WG(name).z}},

#endif
