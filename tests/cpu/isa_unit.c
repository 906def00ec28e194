/* isa_unit.c — cpu_isa_choose (plugins/cpu/cpu_isa.c) with made-up CPU feature sets: the best
 * path by default, a named path only when the features allow it, and a message naming the
 * request, what is missing and the paths that would run. */
#include <criterion/criterion.h>
#include <string.h>

#include "cpu_isa.h"
#include "parity_plugin.h"

#define AVX2_SET (CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C)
#define AVX512_SET (AVX2_SET | CPU_FEAT_AVX512F | CPU_FEAT_AVX512BW | CPU_FEAT_AVX512VL | CPU_FEAT_AVX512DQ)

Test(cpu_isa_choose, picks_the_best_path_the_features_allow_by_default) {
  int isa = -1;
  char msg[256] = "";
  const char *defaults[] = {NULL, "", "auto"};
  for (int d = 0; d < 3; d++) {
    cr_assert_eq(cpu_isa_choose(defaults[d], 0, &isa, msg, sizeof msg), PARITY_STATUS_OK);
    cr_assert_eq(isa, CPU_ISA_PORTABLE);
    cr_assert_eq(cpu_isa_choose(defaults[d], AVX2_SET | CPU_FEAT_AVX512F, &isa, msg, sizeof msg), PARITY_STATUS_OK);
    cr_assert_eq(isa, PARITY_CPU_X86_ISAS ? CPU_ISA_AVX2 : CPU_ISA_PORTABLE);
    cr_assert_eq(cpu_isa_choose(defaults[d], AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_OK);
    cr_assert_eq(isa, PARITY_CPU_X86_ISAS ? CPU_ISA_AVX512 : CPU_ISA_PORTABLE);
  }
}

Test(cpu_isa_choose, a_named_path_runs_only_where_the_features_allow) {
  int isa = -1;
  char msg[256] = "";
  cr_assert_eq(cpu_isa_choose("portable", AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_OK);
  cr_assert_eq(isa, CPU_ISA_PORTABLE);
  if (!PARITY_CPU_X86_ISAS) return;
  cr_assert_eq(cpu_isa_choose("avx2", AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_OK);
  cr_assert_eq(isa, CPU_ISA_AVX2);
  cr_assert_eq(cpu_isa_choose("avx512", AVX512_SET & ~CPU_FEAT_AVX512BW & ~CPU_FEAT_AVX512DQ, &isa, msg, sizeof msg),
               PARITY_STATUS_UNAVAILABLE);
  cr_assert_str_eq(msg,
                   "PARITY_CPU_ISA=avx512 cannot run here: this CPU lacks avx512bw avx512dq (this machine "
                   "runs: avx2, portable)");
  cr_assert_eq(cpu_isa_choose("avx2", CPU_FEAT_AVX2 | CPU_FEAT_F16C, &isa, msg, sizeof msg), PARITY_STATUS_UNAVAILABLE);
  cr_assert_str_eq(msg, "PARITY_CPU_ISA=avx2 cannot run here: this CPU lacks fma (this machine runs: portable)");
}

Test(cpu_isa_choose, an_unknown_name_is_refused_with_the_choices) {
  int isa = -1;
  char msg[256] = "";
  cr_assert_eq(cpu_isa_choose("AVX512", AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_UNAVAILABLE);
  cr_assert(strstr(msg, "PARITY_CPU_ISA=AVX512 is not a kernel path (avx512, avx2, portable or auto;"), "%s", msg);
  cr_assert_eq(cpu_isa_choose("avx512 ", 0, &isa, msg, sizeof msg), PARITY_STATUS_UNAVAILABLE);
  cr_assert(strstr(msg, "this machine runs: portable)"), "%s", msg);
}
