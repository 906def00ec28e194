/* cpu_features.h — what each instruction-set path needs and what this CPU has: one statement,
 * used by the plugin's path chooser (cpu_isa.c) and by the configure-time probe that finds the
 * path a `-DPARITY_CPU_PATHS=native` build keeps (cpu_native_path.c). */
#ifndef PARITY_CPU_FEATURES_H
#define PARITY_CPU_FEATURES_H

#include "cpu_isa.h"
#if PARITY_CPU_X86_ISAS
#include <cpuid.h>
#endif

/* The paths' names, as PARITY_CPU_ISA and PARITY_CPU_PATHS spell them. */
static const char *const cpu_isa_names[CPU_ISA_COUNT] = {"portable", "avx2", "avx512"};

/* The features each path needs, as CPU_FEAT_* bits. */
static const unsigned cpu_isa_needs[CPU_ISA_COUNT] = {
    0,
    CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C,
    CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C | CPU_FEAT_AVX512F | CPU_FEAT_AVX512BW | CPU_FEAT_AVX512VL |
        CPU_FEAT_AVX512DQ,
};

/* The CPU_FEAT_* bits' names, bit by bit. */
static const char *const cpu_feat_names[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"};

/* This CPU's features (0 where the x86 paths cannot be built). */
static inline unsigned cpu_features_detect(void) {
  unsigned f = 0;
#if PARITY_CPU_X86_ISAS
  __builtin_cpu_init(); /* __builtin_cpu_supports also checks that the OS saves the registers */
  if (__builtin_cpu_supports("avx2")) f |= CPU_FEAT_AVX2;
  if (__builtin_cpu_supports("fma")) f |= CPU_FEAT_FMA;
  unsigned a, b, c, d; /* F16C: CPUID leaf 1, ECX bit 29 (not every compiler's cpu_supports knows it) */
  if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u)) f |= CPU_FEAT_F16C;
  if (__builtin_cpu_supports("avx512f")) f |= CPU_FEAT_AVX512F;
  if (__builtin_cpu_supports("avx512bw")) f |= CPU_FEAT_AVX512BW;
  if (__builtin_cpu_supports("avx512vl")) f |= CPU_FEAT_AVX512VL;
  if (__builtin_cpu_supports("avx512dq")) f |= CPU_FEAT_AVX512DQ;
#endif
  return f;
}

#endif
