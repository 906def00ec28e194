/* cpu_isa.c — choosing the instruction-set path once, at plugin init (see cpu_isa.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "parity_support/desc.h"
#include "cpu_features.h"
#include "cpu_internal.h"
#include "cpu_kernels.h"
#include "parity_support/env.h"

/* The paths this build has, a bit per CPU_ISA_* (-DPARITY_CPU_PATHS_BUILT from CMake's
 * PARITY_CPU_PATHS; every path when compiled without it). */
#ifndef PARITY_CPU_PATHS_BUILT
#define PARITY_CPU_PATHS_BUILT 7 /* portable, avx2, avx512 */
#endif
#define BUILT(isa) (built >> (isa)&1u)

const char *cpu_isa_name(int isa) { return isa >= 0 && isa < CPU_ISA_COUNT ? cpu_isa_names[isa] : "?"; }

unsigned cpu_isa_built(void) { return PARITY_CPU_PATHS_BUILT; }

unsigned cpu_isa_features(void) { return cpu_features_detect(); }

/* The paths this build has, as "avx512, portable". */
static void built_names(unsigned built, char *out, size_t n) {
  size_t len = 0;
  out[0] = 0;
  for (int i = CPU_ISA_COUNT - 1; i >= 0; i--)
    if (BUILT(i) && len < n) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", cpu_isa_names[i]);
}

/* Append " name" for each CPU_FEAT_* bit of `missing` to out[len..n); returns the new length. */
static size_t append_missing(char *out, size_t n, size_t len, unsigned missing) {
  for (unsigned b = 0; b < sizeof cpu_feat_names / sizeof *cpu_feat_names; b++)
    if ((missing >> b & 1u) && len < n) len += (size_t)snprintf(out + len, n - len, " %s", cpu_feat_names[b]);
  return len;
}

/* Whether `isa` is built and runs with `features`; when not, why goes to why[n]. */
static int runs(unsigned built, int isa, unsigned features, char *why, size_t n) {
  if (!BUILT(isa)) {
    char names[40];
    built_names(built, names, sizeof names);
    snprintf(why, n, "this build lacks it (PARITY_CPU_PATHS built: %s)", names);
    return 0;
  }
  unsigned missing = cpu_isa_needs[isa] & ~features;
  if (!missing) return 1;
  append_missing(why, n, (size_t)snprintf(why, n, "this CPU lacks"), missing);
  return 0;
}

int32_t cpu_isa_choose_from(unsigned built, const char *request, unsigned features, int *out, char *msg, size_t n) {
  char why[96], avail[64] = "";
  int best = -1, lowest_built = CPU_ISA_PORTABLE;
  for (int i = CPU_ISA_COUNT - 1; i >= 0; i--) {
    if (BUILT(i)) lowest_built = i;
    if (runs(built, i, features, why, sizeof why)) {
      if (best < 0) best = i;
      size_t len = strlen(avail);
      snprintf(avail + len, sizeof avail - len, "%s%s", len ? ", " : "", cpu_isa_names[i]);
    }
  }
  *out = best >= 0 ? best : lowest_built;
  if (!*avail) snprintf(avail, sizeof avail, "none");
  if (best < 0) { /* a narrowed build (PARITY_CPU_PATHS) moved to a CPU that runs none of its paths */
    char names[40];
    built_names(built, names, sizeof names);
    unsigned missing = cpu_isa_needs[lowest_built] & ~features;
    size_t len = (size_t)snprintf(msg, n, "no kernel path of this build runs on this CPU (built: %s; it lacks", names);
    len = append_missing(msg, n, len, missing);
    if (len < n) snprintf(msg + len, n - len, "); rebuild with -DPARITY_CPU_PATHS=all");
    return PARITY_STATUS_UNAVAILABLE;
  }
  if (!request || !*request || strcmp(request, "auto") == 0) return PARITY_STATUS_OK;
  int want = -1;
  for (int i = 0; i < CPU_ISA_COUNT; i++)
    if (strcmp(request, cpu_isa_names[i]) == 0) want = i;
  if (want < 0) {
    snprintf(msg, n,
             "PARITY_CPU_ISA=%.40s is not a kernel path (avx512, avx2, portable or auto; this machine "
             "runs: %s)",
             request, avail);
    return PARITY_STATUS_UNAVAILABLE;
  }
  if (!runs(built, want, features, why, sizeof why)) {
    snprintf(msg, n, "PARITY_CPU_ISA=%s cannot run here: %s (this machine runs: %s)", request, why, avail);
    return PARITY_STATUS_UNAVAILABLE;
  }
  *out = want;
  return PARITY_STATUS_OK;
}

int32_t cpu_isa_choose(const char *request, unsigned features, int *out, char *msg, size_t n) {
  return cpu_isa_choose_from(PARITY_CPU_PATHS_BUILT, request, features, out, msg, n);
}

/* The table of a built path (cpu_isa_choose never answers another). */
static const cpu_kernels_t *table_of(int isa) {
#if PARITY_CPU_X86_ISAS && (PARITY_CPU_PATHS_BUILT) >> 2 & 1
  if (isa == CPU_ISA_AVX512) return &cpu_kernels_avx512;
#endif
#if PARITY_CPU_X86_ISAS && (PARITY_CPU_PATHS_BUILT) >> 1 & 1
  if (isa == CPU_ISA_AVX2) return &cpu_kernels_avx2;
#endif
#if (PARITY_CPU_PATHS_BUILT) & 1
  if (isa == CPU_ISA_PORTABLE) return &cpu_kernels_portable;
#endif
  (void)isa;
  return NULL;
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
    snprintf(msg, sizeof msg, "cpu: %s kernels%s", cpu_isa_names[isa], req && *req ? " (PARITY_CPU_ISA)" : "");
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
