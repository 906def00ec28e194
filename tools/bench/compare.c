/* compare.c — --compare (compare.h). */
#include "compare.h"

#include <math.h>
#include <string.h>

json *bench_baseline_load(const char *path) {
  char err[300];
  json *j = json_parse_file(path, err, sizeof err);
  if (!j) {
    fprintf(stderr, "parity-bench: --compare: %s\n", err);
    return NULL;
  }
  const char *format = json_str(j, "format", "");
  const json *figs = json_get(j, "figures");
  if (strncmp(format, "parity-bench/", 13) || !figs || figs->type != JSON_ARRAY) {
    fprintf(stderr,
            "parity-bench: --compare: '%s' is not a parity-bench --json file (no \"format\": "
            "\"parity-bench/1\" and \"figures\" list)\n",
            path);
    json_free(j);
    return NULL;
  }
  return j;
}

static void key_of(char *out, size_t n, const json *f) {
  bench_key(out, n, json_str(f, "section", "?"), json_str(f, "name", "?"), json_str(f, "backend", "?"),
            json_str(f, "dtype", "?"), json_str(f, "shape", "?"), (int)json_num(f, "threads", 0));
}

int bench_compare(FILE *out, const json *baseline, const bench_results *r, double tolerance) {
  const json *figs = json_get(baseline, "figures");
  const json *hdr = json_get(baseline, "header");
  int matched = 0, regressions = 0, noisy_worse = 0;
  fprintf(out, "\ncompare with the baseline of %s (git %s, threads %d, load average %.2f to %.2f); tolerance %.0f %%\n",
          json_str(hdr, "date", "?"), json_str(hdr, "git_rev", "?"), (int)json_num(hdr, "threads", 0),
          json_num(hdr, "load_start", -1), json_num(hdr, "load_end", -1), tolerance * 100);
  fprintf(out, "  %-52s %11s %11s %8s  %-22s %8s  %s\n", "figure", "baseline", "now", "now/base", "ratio to reference",
          "change", "verdict");
  for (size_t i = 0; i < r->n; i++) {
    const bench_figure *f = &r->fig[i];
    char key[200], bkey[200];
    bench_key(key, sizeof key, f->section, f->name, f->backend, f->dtype, f->shape, f->threads);
    const json *b = NULL;
    for (const json *e = figs->child; e && !b; e = e->next) {
      key_of(bkey, sizeof bkey, e);
      if (!strcmp(key, bkey)) b = e;
    }
    if (!b) {
      fprintf(out, "  %-52s %11s %11.4g %8s  %-22s %8s  new (not in the baseline)\n", key, "-", f->value, "-", "-",
              "-");
      continue;
    }
    matched++;
    double bv = json_num(b, "value", NAN);
    double speed = f->lower_better ? bv / f->value : f->value / bv;
    const bench_ref *p = bench_primary(f);
    const char *bref = json_str(b, "reference", NULL);
    double bratio = json_num(b, "ratio", NAN), change = speed;
    char ratio_text[64] = "-";
    if (p && bref && !strcmp(bref, p->name) && bratio > 0) {
      double now = bench_ratio(f, p);
      change = now / bratio;
      snprintf(ratio_text, sizeof ratio_text, "%.3g -> %.3g", bratio, now);
    }
    /* A figure whose repetitions spread more than the tolerance (in either run) is allowed that
     * much, up to a halving: a change within its own noise is reported, not counted. */
    double spread = json_num(b, "spread", 0), allowed = tolerance;
    if (f->spread > spread) spread = f->spread;
    if (spread > allowed) allowed = spread < 0.5 ? spread : (tolerance > 0.5 ? tolerance : 0.5);
    const char *verdict = "ok";
    if (!(change >= 1 - allowed))
      verdict = "REGRESSION", regressions++;
    else if (change < 1 - tolerance)
      verdict = "worse, within its noise", noisy_worse++;
    else if (change > 1 + tolerance)
      verdict = "better";
    char noisy[64] = "";
    if (spread > tolerance) snprintf(noisy, sizeof noisy, " (repetitions spread %.0f %%)", spread * 100);
    fprintf(out, "  %-52s %11.4g %11.4g %8.3f  %-22s %8.3f  %s%s%s\n", key, bv, f->value, speed, ratio_text, change,
            verdict, strcmp(ratio_text, "-") ? "" : " (absolute)", noisy);
  }
  for (const json *e = figs->child; e; e = e->next) {
    char bkey[200], key[200];
    key_of(bkey, sizeof bkey, e);
    int found = 0;
    for (size_t i = 0; i < r->n && !found; i++) {
      const bench_figure *f = &r->fig[i];
      bench_key(key, sizeof key, f->section, f->name, f->backend, f->dtype, f->shape, f->threads);
      found = !strcmp(key, bkey);
    }
    if (!found) fprintf(out, "  %-52s not measured in this run\n", bkey);
  }
  if (!matched) {
    fprintf(stderr,
            "parity-bench: --compare: no figure of this run is in the baseline (run it with the options of "
            "the baseline: %s)\n",
            json_str(hdr, "command", "?"));
    return -1;
  }
  fprintf(out, "%d figures compared, %d regression%s beyond %.0f %% (or a noisy figure's own spread, up to 50 %%)",
          matched, regressions, regressions == 1 ? "" : "s", tolerance * 100);
  if (noisy_worse) fprintf(out, "; %d worse by less than their noise, not counted", noisy_worse);
  fputc('\n', out);
  return regressions;
}
