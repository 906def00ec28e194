/* The operand table (parity_support/operands.h) is abi/parity_plugin.h's "OPERANDS by kind" as
 * data. The header's table is read here and compared with it name by name, so the two cannot
 * drift apart; the structure check (desc.c) takes counts, NULL-able slots and rank-1 slots from it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "parity_support/desc.h"
#include "parity_support/operands.h"

/* "x[N,C,H,W]" -> "x", "bool c" -> "c", "bias[O] or NULL" -> "bias" */
static void operand_name(const char *item, char *out, size_t n) {
  while (*item == ' ') item++;
  const char *sp = strchr(item, ' ');
  if (sp && strncmp(item, "bool ", 5) == 0) item = sp + 1;
  size_t len = strcspn(item, "[ }");
  snprintf(out, n, "%.*s", (int)len, item);
}

/* the names of one braced list, split at top-level commas */
static int list_names(const char *open, char names[][16], int max) {
  int count = 0, depth = 0;
  const char *start = open + 1;
  for (const char *p = open + 1; *p && count < max; p++) {
    if (*p == '[')
      depth++;
    else if (*p == ']')
      depth--;
    else if ((*p == ',' && depth == 0) || (*p == '}' && depth == 0)) {
      char item[64];
      snprintf(item, sizeof item, "%.*s", (int)(p - start), start);
      operand_name(item, names[count++], 16);
      start = p + 1;
      if (*p == '}') break;
    }
  }
  return count;
}

static const struct {
  const char *word;
  int32_t kind;
} kinds[] = {
    {"UNARY", PARITY_OP_KIND_UNARY},     {"BINARY", PARITY_OP_KIND_BINARY}, {"COMPARE", PARITY_OP_KIND_COMPARE},
    {"SELECT", PARITY_OP_KIND_SELECT},   {"CAST", PARITY_OP_KIND_CAST},     {"REDUCE", PARITY_OP_KIND_REDUCE},
    {"MATMUL", PARITY_OP_KIND_MATMUL},   {"CONV2D", PARITY_OP_KIND_CONV2D}, {"POOL2D", PARITY_OP_KIND_POOL2D},
    {"SOFTMAX", PARITY_OP_KIND_SOFTMAX},
};

Test(operands, the_table_is_the_headers_operands_comment) {
  FILE *f = fopen(PARITY_ABI_HEADER, "r");
  cr_assert(f, "cannot open %s", PARITY_ABI_HEADER);
  char line[256];
  int32_t kind = 0;
  int entries = 0, in_table = 0;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "OPERANDS by kind")) in_table = 1;
    if (!in_table) continue;
    if (strstr(line, "*/")) break;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
      const char *w = strstr(line, kinds[k].word);
      if (w && w < line + 6 && strstr(line, " fwd ")) kind = kinds[k].kind;
    }
    const char *fwd = strstr(line, " fwd "), *bwd = strstr(line, " bwd ");
    if (!fwd && !bwd) continue;
    int32_t dir = fwd ? PARITY_DIRECTION_FORWARD : PARITY_DIRECTION_BACKWARD;
    const psup_operands_t *ops = psup_operands(kind, dir);
    cr_assert(ops, "kind %d %s is in the header but not in the table", kind, fwd ? "fwd" : "bwd");
    char in[8][16], out[8][16];
    int nin = list_names(strchr(line, '{'), in, 8);
    int nout = list_names(strchr(strstr(line, " out ") ? strstr(line, " out ") : line, '{'), out, 8);
    cr_assert_eq((uint32_t)nin, ops->num_inputs, "kind %d dir %d: header has %d inputs", kind, dir, nin);
    cr_assert_eq((uint32_t)nout, ops->num_outputs, "kind %d dir %d: header has %d outputs", kind, dir, nout);
    for (int i = 0; i < nin; i++) cr_assert_str_eq(ops->in[i].name, in[i], "kind %d dir %d input %d", kind, dir, i);
    for (int i = 0; i < nout; i++) cr_assert_str_eq(ops->out[i].name, out[i], "kind %d dir %d output %d", kind, dir, i);
    entries++;
  }
  fclose(f);
  /* ten kinds, eight with a backward: every entry of the table was seen in the header */
  cr_assert_eq(entries, 18, "read %d entries of the header's OPERANDS table", entries);
  int table_entries = 0;
  for (int32_t k = PARITY_OP_KIND_UNARY; k <= PARITY_OP_KIND_SOFTMAX; k++)
    for (int32_t dir = 0; dir < 2; dir++) table_entries += psup_operands(k, dir) != NULL;
  cr_assert_eq(table_entries, 18);
  cr_assert_null(psup_operands(PARITY_OP_KIND_COMPARE, PARITY_DIRECTION_BACKWARD));
  cr_assert_null(psup_operands(0, PARITY_DIRECTION_FORWARD));
  cr_assert_null(psup_operands(PARITY_OP_KIND_SOFTMAX + 1, PARITY_DIRECTION_FORWARD));
}

Test(operands, optional_and_rank1_slots_drive_the_structure_check) {
  const psup_operands_t *cf = psup_operands(PARITY_OP_KIND_CONV2D, PARITY_DIRECTION_FORWARD);
  cr_assert_eq(psup_operand_slot(cf, 0, "bias"), 2);
  cr_assert(cf->in[2].flags & PSUP_OPERAND_OPTIONAL && cf->in[2].flags & PSUP_OPERAND_RANK1);
  cr_assert_eq(psup_operand_slot(cf, 1, "nothing"), -1);
  cr_assert_null(psup_operand(cf, 1, 1));
  /* conv2d backward: dy (input 2) shares x's rank (the old check exempted input 2 in both
   * directions); dbias (output 2) is rank 1 */
  parity_tensor_desc_t x = {sizeof x, PARITY_DTYPE_F32, 4, 0, {1, 1, 3, 3}, {9, 9, 3, 1}, NULL, 0};
  parity_tensor_desc_t w = {sizeof w, PARITY_DTYPE_F32, 4, 0, {1, 1, 1, 1}, {1, 1, 1, 1}, NULL, 0};
  parity_tensor_desc_t dy3 = {sizeof dy3, PARITY_DTYPE_F32, 3, 0, {1, 3, 3}, {9, 3, 1}, NULL, 0};
  parity_tensor_desc_t dbias = {sizeof dbias, PARITY_DTYPE_F32, 1, 0, {1}, {1}, NULL, 0};
  parity_op_desc_t d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = PARITY_OP_CONV2D;
  d.direction = PARITY_DIRECTION_BACKWARD;
  d.num_inputs = 3, d.num_outputs = 3;
  d.inputs[0] = &x, d.inputs[1] = &w, d.inputs[2] = &dy3;
  d.outputs[2] = &dbias; /* dx and dw not wanted */
  d.params.conv2d.stride[0] = d.params.conv2d.stride[1] = 1;
  d.params.conv2d.dilation[0] = d.params.conv2d.dilation[1] = 1;
  d.params.conv2d.groups = 1;
  char msg[256];
  cr_assert_eq(psup_check_op_structure(&d, msg, sizeof msg), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(msg, "input 2 has rank 3, expected 4"), "%s", msg);
  parity_tensor_desc_t dy = {sizeof dy, PARITY_DTYPE_F32, 4, 0, {1, 1, 3, 3}, {9, 9, 3, 1}, NULL, 0};
  d.inputs[2] = &dy;
  cr_assert_eq(psup_check_op_structure(&d, msg, sizeof msg), PARITY_STATUS_OK, "%s", msg);
  d.inputs[1] = NULL; /* w is not optional */
  cr_assert_eq(psup_check_op_structure(&d, msg, sizeof msg), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(msg, "input 1 is NULL"), "%s", msg);
}
