/* The embedded PTX (plugins/cuda/cu_ptx.c): every family and class is there, NUL-terminated,
 * for compute_75 with 64-bit addresses, with the kernels the plugin launches; it keeps the
 * floating-point promises (no approximate division or square root, no atomics, no tensor-core
 * or bf16 instructions) and ptxas from the toolkit assembles it for sm_90. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_internal.h"

static const char *const fam_names[CU_FAM_COUNT] = {"elementwise", "reduce", "softmax", "matmul", "conv"};

static const char *const expected[CU_FAM_COUNT][8] = {
    {"ew_unary", "ew_binary", "ew_compare", NULL},
    {"red_pass", "red_final", NULL},
    {"smx_fwd", "smx_bwd", NULL},
    {"mm_fwd", NULL},
    {"conv_fwd", "conv_bwd_data", "conv_bwd_weight", "conv_bwd_bias", "pool_fwd", "pool_bwd", NULL},
};
static const char *const float_only[] = {"ew_unary_bwd", "ew_binary_bwd", "ew_cast", "red_bwd_sum",
                                         "red_bwd_extreme", NULL};

static int has_entry(const char *ptx, const char *name) {
  char pat[96];
  snprintf(pat, sizeof pat, ".entry %s(", name);
  return strstr(ptx, pat) != NULL;
}

Test(cuda_ptx, every_family_and_class_is_embedded_and_well_formed) {
  int count = 0;
  for (int f = 0; f < CU_FAM_COUNT; f++)
    for (int c = 0; c < CU_CLASS_COUNT; c++) {
      const cu_ptx_t *p = cu_ptx(f, c);
      int want = f == CU_FAM_EW || f == CU_FAM_RED || c == CU_CLASS_F || c == CU_CLASS_D;
      cr_expect_eq(p != NULL, want, "%s class %d", fam_names[f], c);
      if (!p) continue;
      count++;
      cr_expect_eq(p->text[p->size - 1], '\0', "%s is NUL-terminated", p->name);
      cr_expect_eq(strlen(p->text), p->size - 1, "%s has no inner NUL", p->name);
      cr_expect(strncmp(p->name, fam_names[f], strlen(fam_names[f])) == 0, "%s", p->name);
      int maj, min;
      cr_expect(cu_ptx_isa_version(p->text, &maj, &min), "%s declares its PTX ISA version", p->name);
      cr_expect(strstr(p->text, "\n.target sm_75") != NULL, "%s targets compute_75", p->name);
      cr_expect(strstr(p->text, "\n.address_size 64") != NULL, "%s", p->name);
      for (int k = 0; expected[f][k]; k++)
        cr_expect(has_entry(p->text, expected[f][k]), "%s has %s", p->name, expected[f][k]);
      if (f == CU_FAM_EW || f == CU_FAM_RED)
        for (int k = 0; float_only[k]; k++)
          if (strncmp(float_only[k], f == CU_FAM_EW ? "ew_" : "red_", f == CU_FAM_EW ? 3 : 4) == 0)
            cr_expect_eq(has_entry(p->text, float_only[k]), c <= CU_CLASS_D, "%s: %s", p->name, float_only[k]);
    }
  cr_expect_eq(count, 14);
  cr_expect(has_entry(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "ew_select"));
  cr_expect(has_entry(cu_ptx(CU_FAM_EW, CU_CLASS_D)->text, "ew_cast"));
  cr_expect_eq(cu_ptx_toolkit_version(), CUDA_VERSION);
}

Test(cuda_ptx, floating_point_promises_hold_in_the_instructions) {
  /* div.approx / div.full / sqrt.approx: fast-math division and square root (user code is
   * compiled with -prec-div=true -prec-sqrt=true); atom./red.: atomics (no deterministic
   * reduction uses them); mma/wmma/tf32: tensor cores; cvt with bf16: an sm_80 instruction */
  const char *banned[] = {"div.approx.f32", "div.full.f32", "sqrt.approx.f32", "div.approx.ftz.f32",
                          "atom.", "red.global", "red.shared", "mma.", "wmma", ".tf32", ".bf16", NULL};
  for (int f = 0; f < CU_FAM_COUNT; f++)
    for (int c = 0; c < CU_CLASS_COUNT; c++) {
      const cu_ptx_t *p = cu_ptx(f, c);
      if (!p) continue;
      for (int b = 0; banned[b]; b++) cr_expect(strstr(p->text, banned[b]) == NULL, "%s contains %s", p->name, banned[b]);
    }
  /* IEEE division in the float classes */
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "div.rn.f32") != NULL);
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "sqrt.rn.f32") != NULL);
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_D)->text, "div.rn.f64") != NULL);
}

Test(cuda_ptx, ptxas_assembles_every_module_for_sm_90) {
  char dir[] = "/tmp/parity-cuda-ptx-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  for (int f = 0; f < CU_FAM_COUNT; f++)
    for (int c = 0; c < CU_CLASS_COUNT; c++) {
      const cu_ptx_t *p = cu_ptx(f, c);
      if (!p) continue;
      char path[256], cmd[1024];
      snprintf(path, sizeof path, "%s/%s.ptx", dir, p->name);
      FILE *fp = fopen(path, "wb");
      cr_assert_not_null(fp);
      cr_assert_eq(fwrite(p->text, 1, p->size - 1, fp), p->size - 1);
      fclose(fp);
      snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o '%s.cubin' '%s' 2>&1", PTXAS_PATH, path, path);
      int rc = system(cmd);
      cr_expect_eq(rc, 0, "ptxas -arch=sm_90 %s failed (%d)", p->name, rc);
      snprintf(cmd, sizeof cmd, "%s.cubin", path);
      FILE *cubin = fopen(cmd, "rb");
      cr_expect_not_null(cubin, "no cubin for %s", p->name);
      if (cubin) fclose(cubin);
      remove(cmd);
      remove(path);
    }
  rmdir(dir);
}
