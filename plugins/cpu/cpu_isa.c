/* cpu_isa.c — choosing the instruction-set path once, at plugin init (see cpu_isa.h). */
#include <stdatomic.h>
#if PARITY_CPU_X86_ISAS
#include <cpuid.h>
#endif
#include <stdio.h>
#include <string.h>

#include "parity_support/desc.h"
#include "cpu_internal.h"
#include "cpu_kernels.h"
#include "parity_support/env.h"

static const char *const isa_names[CPU_ISA_COUNT] = {"portable", "avx2", "avx512"};

const char *cpu_isa_name(int isa) { return isa >= 0 && isa < CPU_ISA_COUNT ? isa_names[isa] : "?"; }

/* The features each path needs, as CPU_FEAT_* bits. */
static const unsigned isa_needs[CPU_ISA_COUNT] = {
    0,
    CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C,
    CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C | CPU_FEAT_AVX512F | CPU_FEAT_AVX512BW | CPU_FEAT_AVX512VL |
        CPU_FEAT_AVX512DQ,
};
static const char *const feat_names[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"};

unsigned cpu_isa_features(void) {
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

/* Whether `isa` runs with `features`; when not, what it lacks goes to why[n]. */
static int runs(int isa, unsigned features, char *why, size_t n) {
#if !PARITY_CPU_X86_ISAS
  if (isa != CPU_ISA_PORTABLE) {
    snprintf(why, n, "this build has only the portable path (PARITY_CPU_X86_PATHS=OFF, or not x86-64 GCC/Clang)");
    return 0;
  }
#endif
  unsigned missing = isa_needs[isa] & ~features;
  if (!missing) return 1;
  size_t len = (size_t)snprintf(why, n, "this CPU lacks");
  for (unsigned b = 0; b < sizeof feat_names / sizeof *feat_names; b++)
    if ((missing >> b & 1u) && len < n) len += (size_t)snprintf(why + len, n - len, " %s", feat_names[b]);
  return 0;
}

int32_t cpu_isa_choose(const char *request, unsigned features, int *out, char *msg, size_t n) {
  char why[96], avail[64] = "";
  int best = CPU_ISA_PORTABLE;
  for (int i = CPU_ISA_COUNT - 1; i >= 0; i--)
    if (runs(i, features, why, sizeof why)) {
      if (best == CPU_ISA_PORTABLE) best = i;
      size_t len = strlen(avail);
      snprintf(avail + len, sizeof avail - len, "%s%s", len ? ", " : "", isa_names[i]);
    }
  *out = best;
  if (!request || !*request || strcmp(request, "auto") == 0) return PARITY_STATUS_OK;
  int want = -1;
  for (int i = 0; i < CPU_ISA_COUNT; i++)
    if (strcmp(request, isa_names[i]) == 0) want = i;
  if (want < 0) {
    snprintf(msg, n,
             "PARITY_CPU_ISA=%.40s is not a kernel path (avx512, avx2, portable or auto; this machine "
             "runs: %s)",
             request, avail);
    return PARITY_STATUS_UNAVAILABLE;
  }
  if (!runs(want, features, why, sizeof why)) {
    snprintf(msg, n, "PARITY_CPU_ISA=%s cannot run here: %s (this machine runs: %s)", request, why, avail);
    return PARITY_STATUS_UNAVAILABLE;
  }
  *out = want;
  return PARITY_STATUS_OK;
}

static const cpu_kernels_t *table_of(int isa) {
#if PARITY_CPU_X86_ISAS
  if (isa == CPU_ISA_AVX512) return &cpu_kernels_avx512;
  if (isa == CPU_ISA_AVX2) return &cpu_kernels_avx2;
#endif
  (void)isa;
  return &cpu_kernels_portable;
}

static _Atomic(const cpu_kernels_t *) active;

int32_t cpu_isa_init(void) {
  const char *req = psup_getenv("PARITY_CPU_ISA");
  char msg[256];
  int isa;
  int32_t st = cpu_isa_choose(req, cpu_isa_features(), &isa, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "cpu: %s", msg);
  atomic_store(&active, table_of(isa));
  if (cpu_host && cpu_host->log) {
    snprintf(msg, sizeof msg, "cpu: %s kernels%s", isa_names[isa], req && *req ? " (PARITY_CPU_ISA)" : "");
    psup_log(cpu_host, PARITY_LOG_DEBUG, "%s", msg);
  }
  return PARITY_STATUS_OK;
}

const cpu_kernels_t *cpu_kernels(void) {
  const cpu_kernels_t *k = atomic_load_explicit(&active, memory_order_acquire);
  if (k) return k;
  int isa; /* before init (a wrapper that skips it): the best path */
  char msg[8];
  cpu_isa_choose(NULL, cpu_isa_features(), &isa, msg, sizeof msg);
  return table_of(isa);
}

int cpu_isa_active(void) { return cpu_kernels()->isa; }
