/* cpu_isa.h — the CPU plugin's instruction-set paths and which one runs.
 *
 * The hot kernels (reductions, softmax, elementwise rows and casts, the gemm engine) are
 * compiled once per path from the same sources (CMakeLists.txt: PARITY_CPU_ISA_SOURCES), each
 * copy with the compiler flags of its path and its exported names suffixed by the path
 * (CPU_ISA_FN). cpu_isa_init, called by the plugin's init, picks the best path the CPU
 * supports, or the one PARITY_CPU_ISA names (avx512 | avx2 | portable | auto); naming a path
 * this CPU or this build lacks makes init fail with a message. A build may have fewer paths
 * (CMake's PARITY_CPU_PATHS; `make conform` keeps only the one its machine runs). What each path guarantees is in
 * docs/cpu-kernels.md. */
#ifndef PARITY_CPU_ISA_H
#define PARITY_CPU_ISA_H

#include <stddef.h>
#include <stdint.h>

enum {
  CPU_ISA_PORTABLE = 0, /* baseline C, what the target's default flags allow (SSE2 on x86-64) */
  CPU_ISA_AVX2 = 1,     /* AVX2 + FMA + F16C */
  CPU_ISA_AVX512 = 2,   /* the AVX2 set + AVX-512 F, BW, VL, DQ, 512-bit vectors */
  CPU_ISA_COUNT = 3
};

/* Inside a per-path translation unit (compiled with -DCPU_ISA=portable|avx2|avx512),
 * CPU_ISA_FN(name) is name_<path>: the name that copy exports. */
#define CPU_ISA_CAT2_(a, b) a##_##b
#define CPU_ISA_CAT_(a, b) CPU_ISA_CAT2_(a, b)
#ifdef CPU_ISA
#define CPU_ISA_FN(name) CPU_ISA_CAT_(name, CPU_ISA)
#endif

/* "portable", "avx2", "avx512" */
const char *cpu_isa_name(int isa);

/* CPU features the paths need. */
enum {
  CPU_FEAT_AVX2 = 1u << 0,
  CPU_FEAT_FMA = 1u << 1,
  CPU_FEAT_F16C = 1u << 2,
  CPU_FEAT_AVX512F = 1u << 3,
  CPU_FEAT_AVX512BW = 1u << 4,
  CPU_FEAT_AVX512VL = 1u << 5,
  CPU_FEAT_AVX512DQ = 1u << 6,
};
/* This CPU's features (0 where the x86 paths cannot be built). */
unsigned cpu_isa_features(void);
/* The paths this build has, a bit per CPU_ISA_* (CMake's PARITY_CPU_PATHS: all, native or a list). */
unsigned cpu_isa_built(void);
/* The path for a PARITY_CPU_ISA value (NULL, "" or "auto": the best path `features` runs).
 * Returns PARITY_STATUS_OK with *out set, or PARITY_STATUS_UNAVAILABLE with msg[n] saying
 * why (an unknown name, or what the CPU lacks) and the paths that would run. */
int32_t cpu_isa_choose(const char *request, unsigned features, int *out, char *msg, size_t n);
/* The same for a build with the paths `built` (a bit per CPU_ISA_*): the rule cpu_isa_choose
 * applies to this build's cpu_isa_built(). When no built path runs (a narrowed build moved to
 * an older CPU), *out is the lowest built path and the status UNAVAILABLE. */
int32_t cpu_isa_choose_from(unsigned built, const char *request, unsigned features, int *out, char *msg, size_t n);
/* Choose the path at plugin init (PARITY_CPU_ISA through psup_getenv, this CPU's features);
 * on failure reports the message through the host and returns PARITY_STATUS_UNAVAILABLE. */
int32_t cpu_isa_init(void);
/* The path in use (cpu_isa_init's choice; the best available before init). */
int cpu_isa_active(void);

#endif
