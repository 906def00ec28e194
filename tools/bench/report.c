/* report.c — the header and the JSON writer (report.h). */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "stream_ref.h"

static void cpu_model(char *out, size_t n) {
  snprintf(out, n, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!strncmp(line, "model name", 10) && colon) {
      colon++;
      while (*colon == ' ' || *colon == '\t') colon++;
      colon[strcspn(colon, "\n")] = 0;
      snprintf(out, n, "%s", colon);
      break;
    }
  }
  fclose(f);
}

/* The source tree's revision now (the build may be newer than the last configure), else the one
 * recorded at configure time. */
static void git_rev(char *out, size_t n) {
  snprintf(out, n, "%s", PARITY_BENCH_GIT_REV);
  FILE *p = popen("git -C '" PARITY_BENCH_SOURCE_DIR "' describe --always --dirty --abbrev=10 2>/dev/null", "r");
  if (!p) return;
  char line[64] = "";
  if (fgets(line, sizeof line, p)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0]) snprintf(out, n, "%s", line);
  }
  pclose(p);
}

double bench_loadavg(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

void bench_header_init(bench_header *h, int argc, char **argv) {
  memset(h, 0, sizeof *h);
  h->load_start = bench_loadavg();
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(h->date, sizeof h->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (gethostname(h->host, sizeof h->host - 1)) snprintf(h->host, sizeof h->host, "unknown");
  cpu_model(h->cpu, sizeof h->cpu);
  snprintf(h->isa, sizeof h->isa, "%s", ref_isa());
  h->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(h->version, sizeof h->version, "%s", PARITY_BENCH_VERSION);
  git_rev(h->git_rev, sizeof h->git_rev);
  snprintf(h->build_type, sizeof h->build_type, "%s", PARITY_BENCH_BUILD_TYPE);
  size_t k = 0;
  for (int i = 0; i < argc && k < sizeof h->command; i++)
    k += (size_t)snprintf(h->command + k, sizeof h->command - k, "%s%s", i ? " " : "", argv[i]);
}

static void str_field(FILE *f, const char *indent, const char *key, const char *v, int comma) {
  fprintf(f, "%s\"%s\": ", indent, key);
  json_write_string(f, v);
  fputs(comma ? ",\n" : "\n", f);
}

static void num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
}

void bench_write_json(FILE *f, const bench_header *h, const bench_results *r) {
  fputs("{\n  \"format\": \"parity-bench/1\",\n  \"header\": {\n", f);
  str_field(f, "    ", "date", h->date, 1);
  str_field(f, "    ", "host", h->host, 1);
  str_field(f, "    ", "cpu", h->cpu, 1);
  str_field(f, "    ", "reference_isa", h->isa, 1);
  fprintf(f, "    \"cores\": %d,\n", h->cores);
  str_field(f, "    ", "cpus", h->cpus, 1);
  str_field(f, "    ", "parity_version", h->version, 1);
  str_field(f, "    ", "git_rev", h->git_rev, 1);
  str_field(f, "    ", "build_type", h->build_type, 1);
  fprintf(f,
          "    \"threads\": %d,\n    \"threads_requested\": %d,\n    \"reps\": %d,\n    \"min_rep_s\": %g,\n"
          "    \"quick\": %s,\n",
          h->threads, h->threads_requested, h->reps, h->min_rep_s, h->quick ? "true" : "false");
  fputs("    \"load_start\": ", f), num(f, h->load_start);
  fputs(",\n    \"load_end\": ", f), num(f, h->load_end);
  fputs(",\n", f);
  str_field(f, "    ", "devices", h->devices, 1);
  str_field(f, "    ", "openblas", h->blas, 1);
  str_field(f, "    ", "torch", h->torch, 1);
  str_field(f, "    ", "command", h->command, 0);
  fputs("  },\n  \"figures\": [", f);
  for (size_t i = 0; i < r->n; i++) {
    const bench_figure *g = &r->fig[i];
    const bench_ref *p = bench_primary(g);
    fputs(i ? ",\n    {" : "\n    {", f);
    fputs("\"section\": ", f), json_write_string(f, g->section);
    fputs(", \"name\": ", f), json_write_string(f, g->name);
    fputs(", \"backend\": ", f), json_write_string(f, g->backend);
    fputs(", \"dtype\": ", f), json_write_string(f, g->dtype);
    fputs(", \"shape\": ", f), json_write_string(f, g->shape);
    fputs(", \"size\": ", f), num(f, g->size);
    fprintf(f, ", \"threads\": %d, \"value\": ", g->threads), num(f, g->value);
    fputs(", \"unit\": ", f), json_write_string(f, g->unit);
    if (g->spread > 0) fputs(", \"spread\": ", f), num(f, g->spread);
    fprintf(f, ", \"better\": \"%s\",\n     \"reference\": ", g->lower_better ? "lower" : "higher");
    if (p)
      json_write_string(f, p->name);
    else
      fputs("null", f);
    fputs(", \"reference_value\": ", f);
    if (p)
      num(f, p->value);
    else
      fputs("null", f);
    fputs(", \"ratio\": ", f);
    if (p)
      num(f, bench_ratio(g, p));
    else
      fputs("null", f);
    fputs(", \"references\": [", f);
    for (int k = 0; k < g->nrefs; k++) {
      const bench_ref *ref = &g->refs[k];
      fputs(k ? ", {\"name\": " : "{\"name\": ", f);
      json_write_string(f, ref->name);
      if (ref->available) {
        fputs(", \"value\": ", f), num(f, ref->value);
        fputs(", \"ratio\": ", f), num(f, bench_ratio(g, ref));
        fputs("}", f);
      } else {
        fputs(", \"value\": null, \"ratio\": null, \"unavailable\": ", f);
        json_write_string(f, ref->note);
        fputs("}", f);
      }
    }
    fputs("]}", f);
  }
  fputs("\n  ]\n}\n", f);
}
