/* isa_unit.c — the path chooser (plugins/cpu/cpu_isa.c) with made-up CPU feature sets and
 * made-up builds: the best path by default, a named path only when the features allow it and the
 * build has it, and a message naming the request, what is missing and the paths that would run;
 * a narrowed build (PARITY_CPU_PATHS=native) on a CPU that runs none of its paths is refused. */
#include <criterion/criterion.h>
#include <string.h>

#include "cpu_isa.h"
#include "parity_plugin.h"

#define AVX2_SET (CPU_FEAT_AVX2 | CPU_FEAT_FMA | CPU_FEAT_F16C)
#define AVX512_SET (AVX2_SET | CPU_FEAT_AVX512F | CPU_FEAT_AVX512BW | CPU_FEAT_AVX512VL | CPU_FEAT_AVX512DQ)
/* every path this compiler targets (PARITY_CPU_PATHS=all), whatever this build narrowed to */
#define ALL (PARITY_CPU_X86_ISAS ? 7u : 1u)
#define cpu_isa_choose(...) cpu_isa_choose_from(ALL, __VA_ARGS__)

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

#undef cpu_isa_choose

Test(cpu_isa_choose, a_narrowed_build_runs_only_its_paths) {
  if (!PARITY_CPU_X86_ISAS) return;
  int isa = -1;
  char msg[256] = "";
  const unsigned avx512_only = 1u << CPU_ISA_AVX512, avx2_only = 1u << CPU_ISA_AVX2;
  cr_assert_eq(cpu_isa_choose_from(avx512_only, NULL, AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_OK);
  cr_assert_eq(isa, CPU_ISA_AVX512);
  cr_assert_eq(cpu_isa_choose_from(avx2_only, "auto", AVX512_SET, &isa, msg, sizeof msg), PARITY_STATUS_OK);
  cr_assert_eq(isa, CPU_ISA_AVX2);
  /* a path the CPU runs but the build lacks */
  cr_assert_eq(cpu_isa_choose_from(avx512_only, "portable", AVX512_SET, &isa, msg, sizeof msg),
               PARITY_STATUS_UNAVAILABLE);
  cr_assert_str_eq(msg,
                   "PARITY_CPU_ISA=portable cannot run here: this build lacks it (PARITY_CPU_PATHS built: "
                   "avx512) (this machine runs: avx512)");
  /* the build moved to an older CPU: refused, never a path that would fault */
  cr_assert_eq(cpu_isa_choose_from(avx512_only, NULL, AVX2_SET, &isa, msg, sizeof msg), PARITY_STATUS_UNAVAILABLE);
  cr_assert_str_eq(msg,
                   "no kernel path of this build runs on this CPU (built: avx512; it lacks avx512f avx512bw "
                   "avx512vl avx512dq); rebuild with -DPARITY_CPU_PATHS=all");
  cr_assert_eq(isa, CPU_ISA_AVX512);
}

Test(cpu_isa_choose, this_build_chooses_among_the_paths_it_has) {
  unsigned built = cpu_isa_built();
  cr_assert(built != 0 && built <= ALL, "built paths 0x%x", built);
  int isa = -1;
  char msg[256] = "";
  int32_t st = cpu_isa_choose(NULL, cpu_isa_features(), &isa, msg, sizeof msg);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s", msg); /* built here, for this machine */
  cr_assert(built >> isa & 1u, "chose %s, which this build lacks", cpu_isa_name(isa));
}
