/* coverage.c — what one backend's run covered, and the verdict that states it. A verdict never
 * reads as "done" when little ran: it says how many of the selected rows ran (pass or FAIL; not
 * unsupported or skipped), which ops and dtypes that covered, and which dtypes the device claims
 * in dtype_mask without running any selected case in them. A backend on which no selected case
 * of the op table ran (or, with only checks selected, no check ran) is NOTHING CHECKED. */
#include <stdio.h>
#include <string.h>

#include "conform.h"

enum { OP_SLOTS = 256 };

static const int32_t all_ops[] = {
#define PARITY_OP(id, N, s, K, f) PARITY_OP_##N,
#include "parity_ops.def"
#undef PARITY_OP
};
enum { OP_COUNT = sizeof all_ops / sizeof all_ops[0] };

const char *cf_thousands(size_t v, char *buf, size_t n) {
  char digits[32];
  int len = snprintf(digits, sizeof digits, "%zu", v);
  size_t o = 0;
  for (int i = 0; i < len && o + 2 < n; i++) {
    if (i && (len - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = 0;
  return buf;
}

const char *cf_verdict_name(int32_t verdict) {
  return verdict == CF_VERDICT_FAIL ? "FAIL" : verdict == CF_VERDICT_NOTHING ? "NOTHING CHECKED" : "PASS";
}

static void append(char *buf, size_t n, const char *fmt, const char *s) {
  size_t used = strlen(buf);
  if (used < n) snprintf(buf + used, n - used, fmt, s);
}

/* the dtypes a row is in: its dtype ("f64"), or both sides of a cast ("f32->f64") */
static uint32_t row_dtypes(const cf_result_t *r) {
  uint32_t m = r->dtype_id > 0 ? PARITY_DTYPE_BIT(r->dtype_id) : 0;
  char from[16];
  snprintf(from, sizeof from, "%s", r->dtype);
  char *arrow = strstr(from, "->");
  if (arrow) {
    int32_t to = psup_dtype_from_name(arrow + 2);
    if (to > 0) m |= PARITY_DTYPE_BIT(to);
    *arrow = 0;
  }
  int32_t dt = psup_dtype_from_name(from);
  if (dt > 0) m |= PARITY_DTYPE_BIT(dt);
  return m;
}

static void dtype_list(uint32_t mask, char *buf, size_t n) {
  buf[0] = 0;
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++)
    if (mask & PARITY_DTYPE_BIT(dt)) append(buf, n, buf[0] ? ", %s" : "%s", psup_dtype_name(dt));
}

void cf_coverage(const cf_report_t *rep, const cf_backend_summary_t *b, cf_coverage_t *cov) {
  memset(cov, 0, sizeof *cov);
  unsigned char selected[OP_SLOTS] = {0}, ran[OP_SLOTS] = {0};
  uint32_t dtypes_selected = 0, dtypes_other = 0; /* other: a case neither unsupported nor run */
  for (size_t i = b->first; i < b->first + b->count && i < rep->count; i++) {
    const cf_result_t *r = &rep->results[i];
    int did = r->status == CF_PASS || r->status == CF_FAIL;
    cov->total++;
    cov->ran += (size_t)did;
    if (!r->is_case) {
      cov->checks++;
      cov->checks_ran += (size_t)did;
      continue;
    }
    cov->cases++;
    int slot = r->op_id >= 0 && r->op_id < OP_SLOTS ? r->op_id : 0;
    selected[slot] = 1;
    if (r->dtype_id > 0) dtypes_selected |= PARITY_DTYPE_BIT(r->dtype_id);
    if (r->dtype_id > 0 && r->status != CF_UNSUPPORTED) dtypes_other |= PARITY_DTYPE_BIT(r->dtype_id);
    if (!did) continue;
    cov->cases_ran++;
    if (r->refusal) continue; /* refused as required: the op did not run */
    ran[slot] = 1;
    if (r->dtype_id > 0) cov->dtypes_ran |= PARITY_DTYPE_BIT(r->dtype_id);
  }
  for (int i = 0; i < OP_COUNT; i++) {
    cov->ops_total += selected[all_ops[i]];
    cov->ops_ran += ran[all_ops[i]];
  }
  cov->claimed_not_run = b->dtype_mask & dtypes_selected & ~cov->dtypes_ran;
  cov->dtypes_unsupported = dtypes_selected & ~dtypes_other;
  for (size_t i = b->first; i < b->first + b->count && i < rep->count; i++) {
    const cf_result_t *r = &rep->results[i];
    if (r->status == CF_UNSUPPORTED && !(row_dtypes(r) & cov->dtypes_unsupported)) cov->unsupported_other++;
  }
  dtype_list(cov->dtypes_ran, cov->dtypes, sizeof cov->dtypes);
  if (cov->ops_ran && cov->ops_ran == cov->ops_total && cov->ops_total == OP_COUNT) {
    snprintf(cov->ops, sizeof cov->ops, "all %zu ops", cov->ops_ran);
  } else {
    size_t listed = 0;
    for (int i = 0; i < OP_COUNT; i++) {
      if (!ran[all_ops[i]]) continue;
      if (listed++ == 16) {
        char more[32];
        snprintf(more, sizeof more, " and %zu more", cov->ops_ran - 16);
        append(cov->ops, sizeof cov->ops, "%s", more);
        break;
      }
      append(cov->ops, sizeof cov->ops, cov->ops[0] ? ", %s" : "%s", psup_op_name(all_ops[i]));
    }
  }
  if (b->fail)
    cov->verdict = CF_VERDICT_FAIL;
  else if (cov->cases ? cov->cases_ran == 0 : cov->checks_ran == 0)
    cov->verdict = CF_VERDICT_NOTHING;
  else
    cov->verdict = CF_VERDICT_PASS;
}

static const char *share(size_t part, size_t whole, char *buf, size_t n) {
  double p = whole ? 100.0 * (double)part / (double)whole : 0;
  if (part == whole)
    snprintf(buf, n, "100 %%");
  else if (part && p < 0.1)
    snprintf(buf, n, "<0.1 %%");
  else
    snprintf(buf, n, "%.1f %%", p);
  return buf;
}

void cf_verdict_text(const cf_backend_summary_t *b, const cf_coverage_t *cov, char *buf, size_t n) {
  char ran[32], total[32], pct[32], k[32];
  cf_thousands(cov->ran, ran, sizeof ran);
  cf_thousands(cov->total, total, sizeof total);
  share(cov->ran, cov->total, pct, sizeof pct);
  size_t used;
  if (cov->verdict == CF_VERDICT_NOTHING) {
    used = (size_t)snprintf(buf, n, "NOTHING CHECKED: %s of %s %s ran",
                            cf_thousands(cov->cases ? cov->cases_ran : cov->checks_ran, k, sizeof k), total,
                            cov->cases ? "cases" : "checks");
    if (cov->cases) {
      char c[32];
      used += (size_t)snprintf(buf + used, used < n ? n - used : 0, " (%s of the op table; %zu device check(s) ran)",
                               cf_thousands(cov->cases, c, sizeof c), cov->checks_ran);
    }
  } else {
    if (cov->verdict == CF_VERDICT_FAIL)
      used = (size_t)snprintf(buf, n, "FAIL: %s of %s cases failed; ran %s (%s)", cf_thousands(b->fail, k, sizeof k),
                              total, ran, pct);
    else
      used = (size_t)snprintf(buf, n, "PASS on %s of %s cases (%s)", ran, total, pct);
    if (cov->cases_ran && used < n) used += (size_t)snprintf(buf + used, n - used, ": %s in %s", cov->ops, cov->dtypes);
  }
  if (b->unsupported && used < n) {
    used += (size_t)snprintf(buf + used, n - used, "; %s unsupported", cf_thousands(b->unsupported, k, sizeof k));
    if (cov->dtypes_unsupported && used < n) { /* "(every f64 case, and 2 more)" */
      char d[96];
      dtype_list(cov->dtypes_unsupported, d, sizeof d);
      used += (size_t)snprintf(buf + used, n - used, " (every %s case", d);
      if (cov->unsupported_other && used < n)
        used +=
            (size_t)snprintf(buf + used, n - used, ", and %s more", cf_thousands(cov->unsupported_other, k, sizeof k));
      if (used < n) used += (size_t)snprintf(buf + used, n - used, ")");
    }
  }
  if (b->skipped && used < n)
    used += (size_t)snprintf(buf + used, n - used, "; %s skipped", cf_thousands(b->skipped, k, sizeof k));
  if (cov->claimed_not_run && used < n) {
    char d[96];
    dtype_list(cov->claimed_not_run, d, sizeof d);
    used += (size_t)snprintf(buf + used, n - used, "; claims %s (dtype_mask) but ran no case in it", d);
  }
  if (used < n) snprintf(buf + used, n - used, " (%.1f s)", b->seconds);
}
