/* console.c — what a person reads on stdout. By default: one progress line while a backend runs
 * (only on a terminal), then per backend a table of op family × dtype, every failure with its
 * operands and the command that reproduces it, unsupported and skipped rows collapsed to one line
 * per op with the plugin's reason, and the verdict, once. --verbose adds the per-case table as it
 * runs (--failures-only keeps only its failing rows). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"

static const char *const families[] = {"unary",  "binary", "compare", "where",   "cast",  "reduce",
                                       "matmul", "conv2d", "pool2d",  "softmax", "checks"};
enum { FAMILY_COUNT = sizeof families / sizeof families[0], DTYPE_COLUMNS = PARITY_DTYPE_BOOL + 1 };

static int family_index(const cf_result_t *r) {
  if (!r->is_case || !psup_op_info(r->op_id)) return FAMILY_COUNT - 1;
  switch (psup_op_info(r->op_id)->kind) {
    case PARITY_OP_KIND_UNARY: return 0;
    case PARITY_OP_KIND_BINARY: return 1;
    case PARITY_OP_KIND_COMPARE: return 2;
    case PARITY_OP_KIND_SELECT: return 3;
    case PARITY_OP_KIND_CAST: return 4;
    case PARITY_OP_KIND_REDUCE: return 5;
    case PARITY_OP_KIND_MATMUL: return 6;
    case PARITY_OP_KIND_CONV2D: return 7;
    case PARITY_OP_KIND_POOL2D: return 8;
    default: return 9;
  }
}

const char *cf_result_family(const cf_result_t *r) { return families[family_index(r)]; }

static const char *num(double v, char *buf, size_t n) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else if (isinf(v))
    snprintf(buf, n, "inf");
  else if (v == 0)
    snprintf(buf, n, "0");
  else
    snprintf(buf, n, "%.3g", v);
  return buf;
}

static void clear_progress(const cf_console_t *con) {
  if (con->progress && !con->verbose) {
    printf("\r\033[K");
    fflush(stdout);
  }
}

void cf_console_begin(const cf_console_t *con, const cf_report_t *rep, const cf_backend_summary_t *b) {
  printf("\n== %s: %s [%s]; seed %llu, %s ==\n", b->backend, b->device, b->type, (unsigned long long)rep->seed,
         rep->full ? "--full" : "default subset");
  if (con->verbose)
    printf("%-44s %-12s %-10s %-9s %-11s %8s %8s %9s %8s\n", "case", "op", "dtype", "direction", "status", "worst",
           "max_ulp", "cosine", "norm");
  fflush(stdout);
}

static void print_failure(const cf_report_t *rep, const cf_result_t *r, const char *indent) {
  char cmd[1536];
  cf_reproduce_command(rep, r, cmd, sizeof cmd);
  printf("%s%s\n", indent, r->message);
  if (r->operands[0]) printf("%soperands: %s\n", indent, r->operands);
  printf("%sreproduce: %s\n", indent, cmd);
}

void cf_console_result(const cf_console_t *con, const cf_report_t *rep, const cf_result_t *r, size_t done,
                       size_t total) {
  if (!con->verbose) {
    if (con->progress) {
      printf("\r\033[K[%s] %zu/%zu %s", r->backend, done, total, r->id);
      fflush(stdout);
    }
    return;
  }
  if (con->failures_only && r->status != CF_FAIL) return;
  char a[32], b[32], c[32], d[32];
  printf("%-44s %-12s %-10s %-9s %-11s %8s %8s %9s %8s\n", r->id, r->op, r->dtype, r->direction,
         cf_status_name(r->status), num(r->worst_ratio, a, sizeof a), num(r->max_ulp, b, sizeof b),
         isnan(r->cosine) ? "-" : (snprintf(c, sizeof c, "%.6f", r->cosine), c), num(r->norm_ratio, d, sizeof d));
  if (r->status == CF_FAIL) print_failure(rep, r, "    ");
  fflush(stdout);
}

typedef struct cell_t {
  size_t rows, ran, fail;
  double worst;
} cell_t;

static void print_cell(const cell_t *c) {
  char txt[64] = "", fails[24] = "";
  if (c && !c->rows) snprintf(txt, sizeof txt, ".");
  if (c && c->fail) snprintf(fails, sizeof fails, "%zuF ", c->fail);
  if (c && c->rows && c->ran == c->rows)
    snprintf(txt, sizeof txt, "%s%zu", fails, c->ran);
  else if (c && c->rows)
    snprintf(txt, sizeof txt, "%s%zu/%zu", fails, c->ran, c->rows);
  printf(" %10s", txt);
}

/* op family × dtype: "ran/rows" (just "ran" when every row ran), "nF " in front when n failed. */
static void print_table(const cf_report_t *rep, const cf_backend_summary_t *b) {
  cell_t cells[FAMILY_COUNT][DTYPE_COLUMNS];
  memset(cells, 0, sizeof cells);
  double worst[FAMILY_COUNT];
  int used_dtype[DTYPE_COLUMNS] = {0};
  for (int f = 0; f < FAMILY_COUNT; f++) worst[f] = NAN;
  for (size_t i = b->first; i < b->first + b->count; i++) {
    const cf_result_t *r = &rep->results[i];
    int f = family_index(r), dt = r->is_case && r->dtype_id > 0 && r->dtype_id < DTYPE_COLUMNS ? r->dtype_id : 0;
    cell_t *c = &cells[f][dt];
    c->rows++;
    used_dtype[dt] = 1;
    if (r->status != CF_PASS && r->status != CF_FAIL) continue;
    c->ran++;
    c->fail += r->status == CF_FAIL;
    if (!isnan(r->worst_ratio)) worst[f] = isnan(worst[f]) ? r->worst_ratio : fmax(worst[f], r->worst_ratio);
  }
  printf("%-9s", "family");
  for (int dt = 1; dt < DTYPE_COLUMNS; dt++)
    if (used_dtype[dt]) printf(" %10s", psup_dtype_name(dt));
  printf(" %10s  %s\n", "checks", "worst err/bound");
  for (int f = 0; f < FAMILY_COUNT; f++) {
    size_t rows = 0;
    for (int dt = 0; dt < DTYPE_COLUMNS; dt++) rows += cells[f][dt].rows;
    if (!rows) continue;
    printf("%-9s", families[f]);
    int checks_row = f == FAMILY_COUNT - 1;
    for (int dt = 1; dt < DTYPE_COLUMNS; dt++)
      if (used_dtype[dt]) print_cell(checks_row ? NULL : &cells[f][dt]);
    print_cell(checks_row ? &cells[f][0] : NULL);
    char w[32];
    printf("  %s\n", num(worst[f], w, sizeof w));
  }
  printf("(cells: cases run, /selected when some did not run, nF = n failed; '.' none selected)\n");
}

/* One line per op for rows with `status`: its dtypes, how many, and the first reason; at most
 * `limit` ops (0: all), then one line saying how many more. */
static void print_collapsed(const cf_report_t *rep, const cf_backend_summary_t *b, int32_t status, const char *label,
                            size_t limit) {
  size_t lines = 0, more = 0;
  for (int pass = 0; pass < 2; pass++) { /* ops of the case table first, then the checks */
    for (size_t i = b->first; i < b->first + b->count; i++) {
      const cf_result_t *r = &rep->results[i];
      if (r->status != status || r->is_case != (pass == 0)) continue;
      int seen = 0;
      for (size_t k = b->first; k < i && !seen; k++)
        seen = rep->results[k].status == status && !strcmp(rep->results[k].op, r->op);
      if (seen) continue;
      char dtypes[160] = "";
      size_t n = 0, listed = 0;
      for (size_t k = i; k < b->first + b->count; k++) {
        const cf_result_t *q = &rep->results[k];
        if (q->status != status || strcmp(q->op, r->op)) continue;
        n++;
        int dup = 0;
        for (size_t j = i; j < k && !dup; j++)
          dup = rep->results[j].status == status && !strcmp(rep->results[j].op, r->op) &&
                !strcmp(rep->results[j].dtype, q->dtype);
        if (dup) continue;
        size_t len = strlen(dtypes);
        if (listed++ < 8)
          snprintf(dtypes + len, sizeof dtypes - len, "%s%s", len ? " " : "", q->dtype);
        else if (listed == 9)
          snprintf(dtypes + len, sizeof dtypes - len, " ...");
      }
      if (limit && lines >= limit) {
        more++;
        continue;
      }
      lines++;
      printf("%s %s (%s; %zu case%s): %.200s\n", label, r->op, dtypes, n, n == 1 ? "" : "s",
             r->message[0] ? r->message : "no reason given");
    }
  }
  if (more) printf("%s %zu more ops (--verbose lists them all; --support gives every reason)\n", label, more);
}

void cf_console_end(const cf_console_t *con, const cf_report_t *rep, const cf_backend_summary_t *b) {
  clear_progress(con);
  if (b->count) print_table(rep, b);
  for (size_t i = b->first; i < b->first + b->count; i++) {
    const cf_result_t *r = &rep->results[i];
    if (r->status != CF_FAIL) continue;
    printf("FAIL %s\n", r->id);
    print_failure(rep, r, "    ");
  }
  size_t limit = con->verbose ? 0 : 12; /* `make conform` stays short on a plugin that runs little yet */
  print_collapsed(rep, b, CF_UNSUPPORTED, "unsupported:", limit);
  print_collapsed(rep, b, CF_SKIPPED, "skipped:", limit);
  cf_coverage_t cov;
  cf_coverage(rep, b, &cov);
  char text[1024];
  cf_verdict_text(b, &cov, text, sizeof text);
  printf("verdict %s: %s%s%s\n", b->backend, text, b->note[0] ? "; " : "", b->note);
  fflush(stdout);
}
