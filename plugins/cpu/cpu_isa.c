/* cpu_isa.c — choosing the instruction-set path once, at plugin init (see cpu_isa.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_kernels.h"
#include "parity_support/env.h"

static const char *const isa_names[CPU_ISA_COUNT] = {"portable", "avx2", "avx512"};

const char *cpu_isa_name(int isa) { return isa >= 0 && isa < CPU_ISA_COUNT ? isa_names[isa] : "?"; }

int cpu_isa_available(int isa, const char **why) {
  const char *missing = NULL;
  if (isa == CPU_ISA_PORTABLE) return 1;
#if PARITY_CPU_X86_ISAS
  __builtin_cpu_init();
  static const char *const avx2_set[] = {"avx2", "fma", "f16c"};
  static const char *const avx512_set[] = {"avx512f", "avx512bw", "avx512vl", "avx512dq"};
  if (isa == CPU_ISA_AVX2 || isa == CPU_ISA_AVX512) {
    /* __builtin_cpu_supports needs string literals */
    if (!__builtin_cpu_supports("avx2")) missing = avx2_set[0];
    else if (!__builtin_cpu_supports("fma")) missing = avx2_set[1];
    else if (!__builtin_cpu_supports("f16c")) missing = avx2_set[2];
  }
  if (!missing && isa == CPU_ISA_AVX512) {
    if (!__builtin_cpu_supports("avx512f")) missing = avx512_set[0];
    else if (!__builtin_cpu_supports("avx512bw")) missing = avx512_set[1];
    else if (!__builtin_cpu_supports("avx512vl")) missing = avx512_set[2];
    else if (!__builtin_cpu_supports("avx512dq")) missing = avx512_set[3];
  }
  if (isa < 0 || isa >= CPU_ISA_COUNT) missing = "a known path";
  if (!missing) return 1;
  if (why) {
    static _Thread_local char buf[64];
    snprintf(buf, sizeof buf, "this CPU lacks %s", missing);
    *why = buf;
  }
  return 0;
#else
  (void)missing;
  if (why) *why = "this build has no x86 paths (not x86-64 GCC or Clang)";
  return 0;
#endif
}

static int best_available(void) {
  for (int isa = CPU_ISA_COUNT - 1; isa > 0; isa--)
    if (cpu_isa_available(isa, NULL)) return isa;
  return CPU_ISA_PORTABLE;
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
  int isa = best_available();
  if (req && *req && strcmp(req, "auto") != 0) {
    int want = -1;
    for (int i = 0; i < CPU_ISA_COUNT; i++)
      if (strcmp(req, isa_names[i]) == 0) want = i;
    char avail[64] = "";
    for (int i = CPU_ISA_COUNT - 1; i >= 0; i--)
      if (cpu_isa_available(i, NULL))
        snprintf(avail + strlen(avail), sizeof avail - strlen(avail), "%s%s", avail[0] ? ", " : "", isa_names[i]);
    if (want < 0)
      return cpu_fail(PARITY_STATUS_UNAVAILABLE,
                      "cpu: PARITY_CPU_ISA=%.40s is not a kernel path (avx512, avx2, portable or auto; "
                      "this machine can run: %s)", req, avail);
    const char *why = NULL;
    if (!cpu_isa_available(want, &why))
      return cpu_fail(PARITY_STATUS_UNAVAILABLE, "cpu: PARITY_CPU_ISA=%s cannot run here: %s (available: %s)",
                      req, why, avail);
    isa = want;
  }
  atomic_store(&active, table_of(isa));
  if (cpu_host && cpu_host->log) {
    char msg[96];
    snprintf(msg, sizeof msg, "cpu: %s kernels%s", isa_names[isa], req && *req ? " (PARITY_CPU_ISA)" : "");
    cpu_host->log(cpu_host->host_data, PARITY_LOG_DEBUG, msg);
  }
  return PARITY_STATUS_OK;
}

const cpu_kernels_t *cpu_kernels(void) {
  const cpu_kernels_t *k = atomic_load_explicit(&active, memory_order_acquire);
  return k ? k : table_of(best_available()); /* before init (wrappers that skip it) */
}

int cpu_isa_active(void) { return cpu_kernels()->isa; }
