/* The embedded PTX (plugins/cuda/cu_ptx.c): every family and class is there, NUL-terminated,
 * for compute_75 with 64-bit addresses, with the kernels the plugin launches; it keeps the
 * floating-point promises (no approximate division or square root, no atomics, no tensor-core
 * or bf16 instructions; the float class, which serves f32, f16 and bf16, without a single f64
 * register, literal or instruction) and ptxas from the toolkit assembles it for sm_90. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_internal.h"

static const char *const fam_names[CU_FAM_COUNT] = {"elementwise", "reduce", "softmax", "matmul", "conv", "pool"};

static const char *const expected[CU_FAM_COUNT][8] = {
    {"ew_unary", "ew_binary", "ew_compare", NULL},
    {"red_pass", "red_final", NULL},
    {"smx_fwd", "smx_bwd", NULL},
    {"mm_fwd", NULL},
    {"conv_fwd", "conv_bwd_data", "conv_bwd_weight", "conv_bwd_bias", NULL},
    {"pool_fwd", "pool_bwd", NULL},
};
static const char *const float_only[] = {"ew_unary_bwd", "ew_binary_bwd",   "ew_cast",
                                         "red_bwd_sum",  "red_bwd_extreme", NULL};

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
  cr_expect_eq(count, 16);
  cr_expect(has_entry(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "ew_select"));
  cr_expect(has_entry(cu_ptx(CU_FAM_EW, CU_CLASS_D)->text, "ew_cast"));
  cr_expect_eq(cu_ptx_toolkit_version(), CUDA_VERSION);
}

Test(cuda_ptx, floating_point_promises_hold_in_the_instructions) {
  /* div.approx / div.full / sqrt.approx: fast-math division and square root (user code is
   * compiled with -prec-div=true -prec-sqrt=true); atom./red.: atomics (no deterministic
   * reduction uses them); mma/wmma/tf32: tensor cores; cvt with bf16: an sm_80 instruction */
  const char *banned[] = {"div.approx.f32", "div.full.f32", "sqrt.approx.f32", "div.approx.ftz.f32",
                          "atom.",          "red.global",   "red.shared",      "mma.",
                          "wmma",           ".tf32",        ".bf16",           NULL};
  for (int f = 0; f < CU_FAM_COUNT; f++)
    for (int c = 0; c < CU_CLASS_COUNT; c++) {
      const cu_ptx_t *p = cu_ptx(f, c);
      if (!p) continue;
      for (int b = 0; banned[b]; b++)
        cr_expect(strstr(p->text, banned[b]) == NULL, "%s contains %s", p->name, banned[b]);
    }
  /* IEEE division in the float classes */
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "div.rn.f32") != NULL);
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_F)->text, "sqrt.rn.f32") != NULL);
  cr_expect(strstr(cu_ptx(CU_FAM_EW, CU_CLASS_D)->text, "div.rn.f64") != NULL);
}

/* The first f64 token of a PTX line, or NULL: a .f64 type (registers, parameters, loads, stores,
 * cvt, arithmetic), a %fd register (nvcc's f64 register names) or a 0d double literal. */
static const char *f64_token(const char *line, size_t len, size_t *tok_len) {
  for (size_t i = 0; i < len; i++) {
    const char *c = line + i;
    int word_start = i == 0 || !(isalnum((unsigned char)c[-1]) || c[-1] == '_');
    if (i + 4 <= len && strncmp(c, ".f64", 4) == 0 && (i + 4 == len || !isalnum((unsigned char)c[4]))) {
      *tok_len = 4;
      return c;
    }
    if (i + 4 <= len && strncmp(c, "%fd", 3) == 0 && (isdigit((unsigned char)c[3]) || c[3] == '<')) {
      *tok_len = 3;
      while (i + *tok_len < len && (isdigit((unsigned char)c[*tok_len]) || c[*tok_len] == '<' || c[*tok_len] == '>'))
        (*tok_len)++;
      return c;
    }
    if (word_start && i + 18 <= len && (c[0] == '0') && (c[1] == 'd' || c[1] == 'D')) {
      size_t h = 2;
      while (h < 18 && isxdigit((unsigned char)c[h])) h++;
      if (h == 18 && (i + 18 == len || !isalnum((unsigned char)c[18]))) {
        *tok_len = 18;
        return c;
      }
    }
  }
  return NULL;
}

/* Every f64 line of a PTX text: counts them and reports the first few by module, line and text. */
static int f64_lines(const char *name, const char *text, int report) {
  int hits = 0, lineno = 1;
  for (const char *line = text; *line; lineno++) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line), tok_len = 0;
    const char *tok = f64_token(line, len, &tok_len);
    if (tok) {
      if (report && hits < 20) {
        const char *ins = line;
        while (*ins == ' ' || *ins == '\t') ins++;
        cr_expect_fail("%s, PTX line %d: f64 (%.*s) in the float class: %.*s", name, lineno, (int)tok_len, tok,
                       (int)(len - (size_t)(ins - line)), ins);
      }
      hits++;
    }
    if (!nl) break;
    line = nl + 1;
  }
  if (report && hits > 20) cr_expect_fail("%s: %d PTX lines with f64 in all", name, hits);
  return hits;
}

/* The float class (f32 compute for f32, f16 and bf16 storage, and the casts among them, i32, i64
 * and bool) runs on 32-bit float and integer arithmetic only: a GPU with slow fp64 (most consumer
 * ones: 1/32 or 1/64 rate) never takes an fp64 path, and one without fp64 could run it. */
Test(cuda_ptx, float_class_modules_have_no_f64) {
  for (int f = 0; f < CU_FAM_COUNT; f++) {
    const cu_ptx_t *p = cu_ptx(f, CU_CLASS_F);
    cr_assert_not_null(p, "%s has a float class", fam_names[f]);
    f64_lines(p->name, p->text, 1);
  }
  /* the scanner sees what it looks for: the f64 class has f64 registers, instructions, literals */
  const char *probe =
      "\tld.param.f64 \t%fd1, [k_param_0];\n\tmul.rn.f64 \t%fd2, %fd1, 0d3FE0000000000000;\n"
      "\tadd.rn.f32 \t%f64, %f1, 0f3F000000;\n\tmov.u64 \t%rd1, 0d;\n";
  cr_expect_eq(f64_lines("probe", probe, 0), 2, "two f64 lines in the probe (%%f64 is an f32 register)");
  cr_expect_gt(f64_lines("elementwise.f64", cu_ptx(CU_FAM_EW, CU_CLASS_D)->text, 0), 0);
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
