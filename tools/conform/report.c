/* report.c — results, the per-backend table on stdout, reproduce commands, JSON and Markdown. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "parity_support/atomic_file.h"

const char *cf_status_name(int32_t status) {
  switch (status) {
    case CF_PASS: return "pass";
    case CF_FAIL: return "FAIL";
    case CF_UNSUPPORTED: return "unsupported";
    default: return "skipped";
  }
}

void cf_result_init(cf_result_t *r, const char *id, const char *op, const char *dtype, const char *direction,
                    const char *variant) {
  memset(r, 0, sizeof *r);
  snprintf(r->id, sizeof r->id, "%s", id);
  snprintf(r->op, sizeof r->op, "%s", op);
  snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
  snprintf(r->direction, sizeof r->direction, "%s", direction);
  snprintf(r->variant, sizeof r->variant, "%s", variant);
  r->status = CF_PASS;
  r->worst_ratio = r->max_ulp = r->cosine = r->norm_ratio = NAN;
}

static void vnote(cf_result_t *r, const char *fmt, va_list ap) {
  size_t used = strlen(r->message);
  if (used + 4 >= sizeof r->message) return;
  if (used) used += (size_t)snprintf(r->message + used, sizeof r->message - used, "; ");
  vsnprintf(r->message + used, sizeof r->message - used, fmt, ap);
}

void cf_result_note(cf_result_t *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote(r, fmt, ap);
  va_end(ap);
}

void cf_result_fail(cf_result_t *r, const char *fmt, ...) {
  if (r->status != CF_FAIL) r->message[0] = 0; /* failures lead the message */
  r->status = CF_FAIL;
  va_list ap;
  va_start(ap, fmt);
  vnote(r, fmt, ap);
  va_end(ap);
}

cf_result_t *cf_report_add(cf_report_t *rep) {
  if (rep->count == rep->cap) {
    size_t cap = rep->cap ? rep->cap * 2 : 1024;
    cf_result_t *p = realloc(rep->results, cap * sizeof *p);
    if (!p) return NULL;
    rep->results = p;
    rep->cap = cap;
  }
  return &rep->results[rep->count++];
}

void cf_backend_count(cf_backend_summary_t *b, const cf_result_t *r) {
  switch (r->status) {
    case CF_PASS: b->pass++; break;
    case CF_FAIL: b->fail++; break;
    case CF_UNSUPPORTED: b->unsupported++; break;
    default: b->skipped++; break;
  }
  b->count++;
}

cf_backend_summary_t *cf_report_add_backend(cf_report_t *rep) {
  if (rep->backend_count == rep->backend_cap) {
    size_t cap = rep->backend_cap ? rep->backend_cap * 2 : 8;
    cf_backend_summary_t *p = realloc(rep->backends, cap * sizeof *p);
    if (!p) return NULL;
    rep->backends = p;
    rep->backend_cap = cap;
  }
  cf_backend_summary_t *b = &rep->backends[rep->backend_count++];
  memset(b, 0, sizeof *b);
  return b;
}

void cf_report_free(cf_report_t *rep) {
  free(rep->results);
  free(rep->backends);
  memset(rep, 0, sizeof *rep);
}

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

void cf_reproduce_command(const cf_report_t *rep, const cf_result_t *r, char *buf, size_t n) {
  if (!strncmp(r->id, "device.", 7)) /* the device itself: the backend alone reproduces it */
    snprintf(buf, n, "%s --backend %s", rep->command, r->backend);
  else
    snprintf(buf, n, "%s --backend %s --case '%s'%s", rep->command, r->backend, r->id, r->full_only ? " --full" : "");
  if (rep->seed != 0) {
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, " --seed %llu", (unsigned long long)rep->seed);
  }
}

/* ---- JSON --------------------------------------------------------------------------------- */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* Numbers JSON can hold; NaN (not applicable) is null, infinity the string "inf". */
static void json_num(FILE *f, double v) {
  if (isnan(v))
    fputs("null", f);
  else if (isinf(v))
    fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
  else
    fprintf(f, "%.17g", v);
}

int cf_write_json(const cf_report_t *rep, const char *path) {
  psup_atomic_file af; /* a crash or a full disk leaves the previous report */
  if (psup_atomic_open(&af, path, 0, NULL, 0) != 0) return -1;
  FILE *f = af.f;
  fprintf(f, "{\"tool\":\"parity-conform\",\"seed\":%llu,\"full\":%s,\"backends\":[", (unsigned long long)rep->seed,
          rep->full ? "true" : "false");
  for (size_t i = 0; i < rep->backend_count; i++) {
    const cf_backend_summary_t *b = &rep->backends[i];
    fprintf(f, "%s{\"backend\":", i ? "," : "");
    json_str(f, b->backend);
    fprintf(f, ",\"device\":");
    json_str(f, b->device);
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    char text[1024];
    cf_verdict_text(b, &cov, text, sizeof text);
    fprintf(f,
            ",\"verdict\":\"%s\",\"pass\":%zu,\"fail\":%zu,\"unsupported\":%zu,\"skipped\":%zu,\"seconds\":%.3f,"
            "\"ran\":%zu,\"total\":%zu,\"ops_ran\":%zu,\"ops_selected\":%zu,\"dtype_mask\":%u,\"summary\":",
            cov.verdict == CF_VERDICT_FAIL      ? "fail"
            : cov.verdict == CF_VERDICT_NOTHING ? "nothing checked"
                                                : "pass",
            b->pass, b->fail, b->unsupported, b->skipped, b->seconds, cov.ran, cov.total, cov.ops_ran, cov.ops_total,
            b->dtype_mask);
    json_str(f, text);
    fprintf(f, ",\"note\":");
    json_str(f, b->note);
    fputc('}', f);
  }
  fprintf(f, "],\"results\":[\n");
  for (size_t i = 0; i < rep->count; i++) {
    const cf_result_t *r = &rep->results[i];
    fprintf(f, "%s{\"backend\":", i ? ",\n" : "");
    json_str(f, r->backend);
    fprintf(f, ",\"device\":");
    json_str(f, r->device);
    fprintf(f, ",\"case\":");
    json_str(f, r->id);
    fprintf(f, ",\"op\":");
    json_str(f, r->op);
    fprintf(f, ",\"dtype\":");
    json_str(f, r->dtype);
    fprintf(f, ",\"direction\":");
    json_str(f, r->direction);
    fprintf(f, ",\"status\":\"%s\",\"worst_ratio\":", r->status == CF_FAIL ? "fail" : cf_status_name(r->status));
    json_num(f, r->worst_ratio);
    fprintf(f, ",\"max_ulp\":");
    json_num(f, r->max_ulp);
    fprintf(f, ",\"cosine\":");
    json_num(f, r->cosine);
    fprintf(f, ",\"norm_ratio\":");
    json_num(f, r->norm_ratio);
    fprintf(f, ",\"seconds\":%.4f,\"message\":", r->seconds);
    json_str(f, r->message);
    if (r->status == CF_FAIL) {
      char cmd[1536];
      cf_reproduce_command(rep, r, cmd, sizeof cmd);
      fprintf(f, ",\"reproduce\":");
      json_str(f, cmd);
      fprintf(f, ",\"operands\":");
      json_str(f, r->operands);
    }
    fputc('}', f);
  }
  fprintf(f, "\n]}\n");
  return psup_atomic_commit(&af, NULL, 0) == 0 ? 0 : -1;
}

/* ---- Markdown ----------------------------------------------------------------------------- */
static void md_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '|')
      fputs("\\|", f);
    else if (*s == '\n')
      fputc(' ', f);
    else
      fputc(*s, f);
  }
}

int cf_write_markdown(const cf_report_t *rep, const char *path) {
  psup_atomic_file af; /* a crash or a full disk leaves the previous report */
  if (psup_atomic_open(&af, path, 0, NULL, 0) != 0) return -1;
  FILE *f = af.f;
  fprintf(f,
          "# parity conformance report\n\nOracle: the CPU plugin in float64, fed the inputs after rounding "
          "to the tested dtype. Seed %llu; %s sweep. Rules: docs/conformance.md.\n\n",
          (unsigned long long)rep->seed, rep->full ? "full" : "default (quick)");
  fprintf(
      f,
      "| backend | device | verdict | pass | FAIL | unsupported | skipped | seconds |\n|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < rep->backend_count; i++) {
    const cf_backend_summary_t *b = &rep->backends[i];
    fprintf(f, "| %s | ", b->backend);
    md_text(f, b->device);
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    fprintf(f, " | %s | %zu | %zu | %zu | %zu | %.1f |\n",
            cov.verdict == CF_VERDICT_FAIL      ? "**FAIL**"
            : cov.verdict == CF_VERDICT_NOTHING ? "**NOTHING CHECKED**"
                                                : "pass",
            b->pass, b->fail, b->unsupported, b->skipped, b->seconds);
  }
  for (size_t i = 0; i < rep->backend_count; i++) {
    const cf_backend_summary_t *b = &rep->backends[i];
    fprintf(f, "\n## %s\n\n", b->backend);
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    char text[1024];
    cf_verdict_text(b, &cov, text, sizeof text);
    md_text(f, text);
    fprintf(f, "\n\n");
    if (b->note[0]) fprintf(f, "%s\n\n", b->note);
    if (b->fail) {
      fprintf(f, "### Failures\n\n");
      for (size_t j = b->first; j < b->first + b->count; j++) {
        const cf_result_t *r = &rep->results[j];
        if (r->status != CF_FAIL) continue;
        char cmd[1536];
        cf_reproduce_command(rep, r, cmd, sizeof cmd);
        fprintf(f, "- **%s**: ", r->id);
        md_text(f, r->message);
        if (r->operands[0]) {
          fprintf(f, "\n  operands: ");
          md_text(f, r->operands);
        }
        fprintf(f, "\n  `%s`\n", cmd);
      }
      fprintf(f, "\n");
    }
    /* worst ratio and max ULP per op and dtype, over every case that ran */
    fprintf(
        f,
        "### Per op and dtype\n\n| op | dtype | pass | FAIL | unsupported | skipped | worst ratio | max ULP | min cosine |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    for (size_t j = b->first; j < b->first + b->count; j++) {
      const cf_result_t *r = &rep->results[j];
      int seen = 0;
      for (size_t k = b->first; k < j && !seen; k++)
        seen = !strcmp(rep->results[k].op, r->op) && !strcmp(rep->results[k].dtype, r->dtype);
      if (seen) continue;
      size_t n[4] = {0};
      double worst = NAN, ulp = NAN, cs = NAN;
      for (size_t k = j; k < b->first + b->count; k++) {
        const cf_result_t *q = &rep->results[k];
        if (strcmp(q->op, r->op) || strcmp(q->dtype, r->dtype)) continue;
        n[q->status]++;
        if (!isnan(q->worst_ratio)) worst = isnan(worst) ? q->worst_ratio : fmax(worst, q->worst_ratio);
        if (!isnan(q->max_ulp)) ulp = isnan(ulp) ? q->max_ulp : fmax(ulp, q->max_ulp);
        if (!isnan(q->cosine)) cs = isnan(cs) ? q->cosine : fmin(cs, q->cosine);
      }
      char a[32], u[32], c[32];
      fprintf(f, "| %s | %s | %zu | %zu | %zu | %zu | %s | %s | %s |\n", r->op, r->dtype, n[CF_PASS], n[CF_FAIL],
              n[CF_UNSUPPORTED], n[CF_SKIPPED], num(worst, a, sizeof a), num(ulp, u, sizeof u),
              isnan(cs) ? "-" : (snprintf(c, sizeof c, "%.6f", cs), c));
    }
  }
  return psup_atomic_commit(&af, NULL, 0) == 0 ? 0 : -1;
}
