/* figures.c — the figure records and their text table (figures.h). */
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

bench_figure *bench_add(bench_results *r, const char *section, const char *name, const char *backend, const char *shape,
                        double size, int threads, double value, const char *unit) {
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    bench_figure *m = realloc(r->fig, cap * sizeof *m);
    if (!m) return NULL;
    r->fig = m;
    r->cap = cap;
  }
  bench_figure *f = &r->fig[r->n++];
  memset(f, 0, sizeof *f);
  copy(f->section, sizeof f->section, section);
  copy(f->name, sizeof f->name, name);
  copy(f->backend, sizeof f->backend, backend);
  copy(f->dtype, sizeof f->dtype, "f32");
  copy(f->shape, sizeof f->shape, shape);
  f->size = size;
  f->threads = threads;
  f->value = value;
  f->unit = unit;
  f->lower_better = !strcmp(unit, "us");
  return f;
}

static bench_ref *slot(bench_figure *f, const char *name) {
  for (int i = 0; i < f->nrefs; i++)
    if (!strcmp(f->refs[i].name, name)) return &f->refs[i];
  if (f->nrefs == BENCH_MAX_REFS) return NULL;
  bench_ref *r = &f->refs[f->nrefs++];
  memset(r, 0, sizeof *r);
  copy(r->name, sizeof r->name, name);
  return r;
}

void bench_ref_value(bench_figure *f, const char *name, double value) {
  bench_ref *r = slot(f, name);
  if (!r) return;
  if (!(value > 0) || !isfinite(value)) {
    bench_ref_missing(f, name, "measured no time");
    return;
  }
  r->value = value;
  r->available = 1;
  r->note[0] = 0;
}

void bench_ref_missing(bench_figure *f, const char *name, const char *note) {
  bench_ref *r = slot(f, name);
  if (!r) return;
  r->value = 0;
  r->available = 0;
  copy(r->note, sizeof r->note, note);
}

const bench_ref *bench_primary(const bench_figure *f) {
  for (int i = 0; i < f->nrefs; i++)
    if (f->refs[i].available) return &f->refs[i];
  return NULL;
}

double bench_ratio(const bench_figure *f, const bench_ref *ref) {
  if (!ref || !ref->available || !(ref->value > 0) || !(f->value > 0)) return NAN;
  return f->lower_better ? ref->value / f->value : f->value / ref->value;
}

void bench_key(char *out, size_t n, const char *section, const char *name, const char *backend, const char *dtype,
               const char *shape, int threads) {
  snprintf(out, n, "%s/%s/%s/%s/%s/%dt", section, name, backend, dtype, shape, threads);
}

static const char *fmt_value(char *buf, size_t n, double v) {
  if (v >= 100)
    snprintf(buf, n, "%.1f", v);
  else if (v >= 1)
    snprintf(buf, n, "%.2f", v);
  else
    snprintf(buf, n, "%.4f", v);
  return buf;
}

void bench_print_row(void *file, const bench_figure *f) {
  FILE *out = file;
  char v[32], rv[32];
  fprintf(out, "  %-16s %-7s %-24s %10s %-8s", f->name, f->backend, f->shape, fmt_value(v, sizeof v, f->value),
          f->unit);
  if (!f->nrefs) fputs(" (no reference)", out);
  for (int k = 0; k < f->nrefs; k++) {
    const bench_ref *ref = &f->refs[k];
    if (ref->available)
      fprintf(out, " %s %s = %.3gx%s", ref->name, fmt_value(rv, sizeof rv, ref->value), bench_ratio(f, ref),
              k + 1 < f->nrefs ? ";" : "");
    else
      fprintf(out, " %s unavailable (%s)%s", ref->name, ref->note, k + 1 < f->nrefs ? ";" : "");
  }
  fputc('\n', out);
  fflush(out);
}

void bench_print_header(void *file, const char *section) {
  fprintf(file, "\n%s (ratio = parity's speed / the reference's; > 1: parity faster)\n", section);
  fprintf(file, "  %-16s %-7s %-24s %10s %-8s %s\n", "figure", "backend", "shape", "value", "unit", "references");
}

void bench_results_free(bench_results *r) {
  free(r->fig);
  r->fig = NULL;
  r->n = r->cap = 0;
}
