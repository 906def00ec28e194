/* html.c — `--html FILE`: one self-contained HTML file (inline CSS and SVG; no script, fonts or
 * network) for people: per backend the verdict, a heatmap of the worst error-to-bound ratio per
 * op × direction (rows) and dtype (columns; a cast under its source dtype), the capability and
 * hazard checks, and per failing case its message, operands, reproduce command and an SVG plot of
 * how its compared elements spread over error/bound bands (cf_result_t.hist). The seed is in the
 * header and in every reproduce command that needs it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "parity_support/atomic_file.h"

enum { DTYPES = PARITY_DTYPE_BOOL + 1 };

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

/* Green (ratio 1e-6 or less) through yellow to orange (ratio 1): how much of the bound was used. */
static void ratio_color(double ratio, char *buf, size_t n) {
  double t = ratio > 0 ? (log10(ratio) + 6.0) / 6.0 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  static const double stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {252, 141, 89}};
  int k = t < 0.5 ? 0 : 1;
  double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  int c[3];
  for (int i = 0; i < 3; i++) c[i] = (int)(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * u);
  snprintf(buf, n, "#%02x%02x%02x", c[0], c[1], c[2]);
}

typedef struct hm_cell_t {
  size_t rows, ran, fail;
  double worst;
} hm_cell_t;

static void heatmap(FILE *f, const cf_report_t *rep, const cf_backend_summary_t *b) {
  fprintf(
      f, "<h3>Worst error / bound per op, direction and dtype</h3>\n<table class=hm><tr><th>op</th><th>direction</th>");
  for (int dt = 1; dt < DTYPES; dt++) fprintf(f, "<th>%s</th>", psup_dtype_name(dt));
  fprintf(f, "</tr>\n");
  for (size_t i = b->first; i < b->first + b->count; i++) {
    const cf_result_t *r = &rep->results[i];
    if (!r->is_case) continue;
    int seen = 0;
    for (size_t k = b->first; k < i && !seen; k++)
      seen = rep->results[k].is_case && rep->results[k].op_id == r->op_id &&
             !strcmp(rep->results[k].direction, r->direction);
    if (seen) continue;
    hm_cell_t cells[DTYPES];
    memset(cells, 0, sizeof cells);
    for (size_t k = i; k < b->first + b->count; k++) {
      const cf_result_t *q = &rep->results[k];
      if (!q->is_case || q->op_id != r->op_id || strcmp(q->direction, r->direction)) continue;
      hm_cell_t *c = &cells[q->dtype_id > 0 && q->dtype_id < DTYPES ? q->dtype_id : 0];
      c->rows++;
      if (q->status != CF_PASS && q->status != CF_FAIL) continue;
      c->ran++;
      c->fail += q->status == CF_FAIL;
      double w = isnan(q->worst_ratio) ? 0 : q->worst_ratio;
      if (c->ran == 1 || w > c->worst) c->worst = w;
    }
    fprintf(f, "<tr><td>%s</td><td>%s</td>", r->op, r->direction);
    for (int dt = 1; dt < DTYPES; dt++) {
      const hm_cell_t *c = &cells[dt];
      char color[16], title[96];
      snprintf(title, sizeof title, "%zu of %zu cases ran, %zu failed", c->ran, c->rows, c->fail);
      if (!c->rows)
        fprintf(f, "<td class=none></td>");
      else if (!c->ran)
        fprintf(f, "<td class=unsup title=\"%s\">unsupported</td>", title);
      else if (c->fail)
        fprintf(f, "<td class=fail title=\"%s\">%zu FAIL</td>", title, c->fail);
      else {
        ratio_color(c->worst, color, sizeof color);
        fprintf(f, "<td style=\"background:%s\" title=\"%s\">%.2g</td>", color, title, c->worst);
      }
    }
    fprintf(f, "</tr>\n");
  }
  fprintf(f,
          "</table>\n<p class=legend>Cell: the largest error/bound ratio of any element of any case "
          "(pass ≤ 1); green = far inside the bound, orange = close to it; grey = unsupported.</p>\n");
}

/* Bar chart of r->hist: compared elements per error/bound band, log-scaled heights, the bands at
 * or past the bound in red. */
static void histogram_svg(FILE *f, const cf_result_t *r) {
  const int W = 640, H = 170, left = 40, bottom = 30, bw = (W - left - 10) / CF_HIST_BINS;
  uint32_t peak = 1;
  for (int b = 0; b < CF_HIST_BINS; b++) peak = r->hist[b] > peak ? r->hist[b] : peak;
  double top = log10((double)peak + 1);
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
          "aria-label=\"error distribution\">\n",
          W, H);
  fprintf(f, "<text x=\"4\" y=\"12\" font-size=\"11\">elements (log scale) per band of |error| / bound</text>\n");
  int plot_h = H - bottom - 20;
  for (int b = 0; b < CF_HIST_BINS; b++) {
    double h = r->hist[b] ? plot_h * log10((double)r->hist[b] + 1) / top : 0;
    int x = left + b * bw;
    fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s: %u</title></rect>\n",
            x + 2, (double)(H - bottom) - h, bw - 4, h, b >= CF_HIST_FIRST_BAD ? "#d73027" : "#4575b4",
            cf_hist_label(b), r->hist[b]);
    if (r->hist[b])
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%u</text>\n", x + bw / 2,
              (double)(H - bottom) - h - 2, r->hist[b]);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%s</text>\n", x + bw / 2,
            H - bottom + 12, cf_hist_label(b));
  }
  int xb = left + CF_HIST_FIRST_BAD * bw;
  fprintf(f, "<line x1=\"%d\" y1=\"16\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>\n", xb, xb,
          H - bottom);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">bound</text>\n", xb + 3, 26);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", left, H - bottom, W - 10, H - bottom);
  fprintf(f, "</svg>\n");
}

static void failures(FILE *f, const cf_report_t *rep, const cf_backend_summary_t *b) {
  if (!b->fail) return;
  fprintf(f, "<h3>Failures</h3>\n");
  for (size_t i = b->first; i < b->first + b->count; i++) {
    const cf_result_t *r = &rep->results[i];
    if (r->status != CF_FAIL) continue;
    char cmd[1536];
    cf_reproduce_command(rep, r, cmd, sizeof cmd);
    fprintf(f, "<div class=failure><h4>");
    esc(f, r->id);
    fprintf(f, "</h4><p>");
    esc(f, r->message);
    fprintf(f, "</p>");
    if (r->operands[0]) {
      fprintf(f, "<p class=ops>operands: ");
      esc(f, r->operands);
      fprintf(f, "</p>");
    }
    fprintf(f, "<pre>");
    esc(f, cmd);
    fprintf(f, "</pre>\n");
    uint32_t total = 0;
    for (int k = 0; k < CF_HIST_BINS; k++) total += r->hist[k];
    if (total)
      histogram_svg(f, r);
    else
      fprintf(f, "<p class=legend>no element comparison (the run itself failed)</p>\n");
    fprintf(f, "</div>\n");
  }
}

static void checks(FILE *f, const cf_report_t *rep, const cf_backend_summary_t *b) {
  size_t n = 0;
  for (size_t i = b->first; i < b->first + b->count; i++) n += !rep->results[i].is_case;
  if (!n) return;
  fprintf(f, "<h3>Capability and hazard checks</h3>\n<table><tr><th>check</th><th>status</th><th>message</th></tr>\n");
  for (size_t i = b->first; i < b->first + b->count; i++) {
    const cf_result_t *r = &rep->results[i];
    if (r->is_case) continue;
    fprintf(f, "<tr><td>");
    esc(f, r->id);
    fprintf(f, "</td><td class=\"%s\">%s</td><td>", r->status == CF_FAIL ? "fail" : "", cf_status_name(r->status));
    esc(f, r->message);
    fprintf(f, "</td></tr>\n");
  }
  fprintf(f, "</table>\n");
}

int cf_write_html(const cf_report_t *rep, const char *path) {
  psup_atomic_file af; /* a crash or a full disk leaves the previous report */
  if (psup_atomic_open(&af, path, 0, NULL, 0) != 0) return -1;
  FILE *f = af.f;
  fprintf(
      f,
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=\"utf-8\"><title>parity conformance report</title>\n"
      "<style>body{font:14px sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
      "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}th{background:#f3f3f3}"
      ".hm td{text-align:center;min-width:4.5em}.none{background:#fafafa}.unsup{background:#ddd;color:#666}"
      ".fail{background:#d73027;color:#fff;font-weight:bold}.verdict{font-size:15px;padding:.4em;border-left:6px solid}"
      ".PASS{border-color:#1a9850}.FAIL{border-color:#d73027}.NOTHING{border-color:#888}"
      "pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}.legend{color:#666;font-size:12px}"
      ".failure{border-top:1px solid #ddd;margin-top:1em}.ops{font-family:monospace;font-size:12px}</style>\n"
      "</head><body>\n<h1>parity conformance report</h1>\n");
  fprintf(f,
          "<p>Oracle: the CPU plugin in float64, fed the inputs after rounding to the tested dtype. Seed "
          "<b>%llu</b> (<code>--seed</code> overrides); %s. Rules: docs/conformance.md.</p>\n",
          (unsigned long long)rep->seed, rep->full ? "full sweep (<code>--full</code>)" : "default subset");
  for (size_t i = 0; i < rep->backend_count; i++) {
    const cf_backend_summary_t *b = &rep->backends[i];
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    char text[1024];
    cf_verdict_text(b, &cov, text, sizeof text);
    fprintf(f, "<h2>");
    esc(f, b->backend);
    fprintf(f, ": ");
    esc(f, b->device);
    fprintf(f, " [%s]</h2>\n<p class=\"verdict %s\">", b->type,
            cov.verdict == CF_VERDICT_FAIL      ? "FAIL"
            : cov.verdict == CF_VERDICT_NOTHING ? "NOTHING"
                                                : "PASS");
    esc(f, text);
    if (b->note[0]) {
      fprintf(f, "; ");
      esc(f, b->note);
    }
    fprintf(f, "</p>\n");
    failures(f, rep, b);
    heatmap(f, rep, b);
    checks(f, rep, b);
  }
  fprintf(f, "</body></html>\n");
  return psup_atomic_commit(&af, NULL, 0) == 0 ? 0 : -1;
}
