/* parity-bench — parity's speed beside references measured in the same run (docs/benchmarks.md).
 * main.c: the command line, the thread count, the devices, the sections, the report. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parity_support/atomic_file.h"
#include "args.h"
#include "blas_ref.h"
#include "compare.h"
#include "report.h"
#include "sections.h"
#include "stream_ref.h"

/* OpenMP reads OMP_NUM_THREADS once, when libgomp loads (at the start of this process, which
 * links it for the reference loops). So --threads N sets it and re-executes the program. */
static void set_threads(int threads, char **argv) {
  char want[16];
  snprintf(want, sizeof want, "%d", threads);
  const char *cur = getenv("OMP_NUM_THREADS");
  if (cur && !strcmp(cur, want)) return;
  if (getenv("PARITY_BENCH_REEXEC")) return; /* already tried; the check after loading reports it */
  setenv("OMP_NUM_THREADS", want, 1);
  setenv("OPENBLAS_NUM_THREADS", want, 1);
  setenv("PARITY_BENCH_REEXEC", "1", 1);
  fflush(NULL);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "parity-bench: warning: could not re-execute to set OMP_NUM_THREADS=%s\n", want);
}

/* Confine the run to the first `threads` CPUs it may use, before any worker thread starts (threads
 * and child processes inherit the mask): the CPU plugin, the in-process reference loops and
 * torch's process then run on the same cores. The cores of a shared machine are not equal: on the
 * 2-core VM one vCPU ran conv2d 12 % slower than the other for parity and torch alike, so a figure
 * from one core beside a reference from the other was off by that much, either way. `taskset`
 * picks which cores. Writes the CPUs the process then has, read back, as a list ("0", "0,1"). */
static void pin_cpus(int threads, char *out, size_t n) {
  cpu_set_t have, want;
  out[0] = 0;
  if (sched_getaffinity(0, sizeof have, &have) != 0) {
    snprintf(out, n, "unknown");
    return;
  }
  CPU_ZERO(&want);
  for (int c = 0, k = 0; c < CPU_SETSIZE && k < threads; c++)
    if (CPU_ISSET(c, &have)) CPU_SET(c, &want), k++;
  if (threads > 0 && CPU_COUNT(&want) < CPU_COUNT(&have) && sched_setaffinity(0, sizeof want, &want) != 0)
    fprintf(stderr, "parity-bench: warning: could not confine the run to %d CPUs\n", threads);
  sched_getaffinity(0, sizeof have, &have);
  size_t k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < n; c++)
    if (CPU_ISSET(c, &have)) k += (size_t)snprintf(out + k, n - k, "%s%d", k ? "," : "", c);
}

/* The threads the CPU plugin's OpenMP runtime will use, read back from the loaded libgomp (1 when
 * no OpenMP runtime is loaded: a plugin built without it). */
static int plugin_threads(void) {
  void *gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!gomp) return 1;
  int (*max_threads)(void) = (int (*)(void))(void (*)(void))dlsym(gomp, "omp_get_max_threads");
  int t = max_threads ? max_threads() : 1;
  dlclose(gomp);
  return t;
}

static void run_device(bench_run *run, parity_device_t *dev, bench_header *h) {
  const char *backend = parity_device_backend(dev);
  parity_device_info_t info = {.struct_size = sizeof info};
  parity_device_get_info(dev, &info);
  size_t k = strlen(h->devices);
  snprintf(h->devices + k, sizeof h->devices - k, "%s%s: %s", k ? "; " : "", backend, info.name);
  fprintf(run->log, "== %s — %s\n", backend, info.name);
  unsigned s = run->o->sections;
  if (s & SEC_KERNELS) section_kernels(run, dev, backend);
  if (s & SEC_SCALING) section_scaling(run, dev, backend);
  if (s & SEC_PREPARED) section_prepared(run, dev, backend);
  if (s & SEC_PREPARED) section_prepared_mlp(run, dev, backend);
  if (s & SEC_TRAIN) section_train(run, dev, backend);
}

/* The thread counts into the header, warnings where they differ from what was asked, and the run's
 * first line. */
static void report_threads(const bench_options *o, bench_run *run, bench_header *h) {
  run->threads = plugin_threads();
  h->threads = run->threads;
  h->threads_requested = o->threads;
  h->reps = o->reps;
  h->min_rep_s = o->min_rep_s;
  h->quick = o->quick;
  if (o->threads && run->threads != o->threads)
    fprintf(stderr, "parity-bench: warning: --threads %d did not take effect: the CPU plugin runs %d threads\n",
            o->threads, run->threads);
  if (ref_threads() != run->threads)
    fprintf(stderr, "parity-bench: warning: the reference loops run %d threads, the CPU plugin %d\n", ref_threads(),
            run->threads);
  torch_ref_config(o->torch, run->threads, &run->timing);
  fprintf(run->log, "parity-bench: %s, %d cores, %d threads on CPUs %s, parity %s (%s, %s), median of %d\n", h->cpu,
          h->cores, run->threads, h->cpus, h->version, h->git_rev, h->build_type, o->reps);
}

/* The sections on the default device, or on device 0 of every backend --backend names (all: every
 * loaded one). 0, or 2 when a named backend does not exist (nothing run). */
static int run_backends(parity_context_t *ctx, const bench_options *o, bench_run *run, bench_header *h) {
  int all = 0;
  for (int k = 0; k < o->nb; k++) all |= !strcmp(o->backends[k], "all");
  if (!o->nb) {
    parity_device_t *dev;
    if (parity_context_default_device(ctx, &dev) != PARITY_STATUS_OK) {
      fprintf(stderr, "parity-bench: %s\n", parity_last_error());
      run->failures++;
    } else {
      run_device(run, dev, h);
    }
    return 0;
  }
  for (int k = 0; k < o->nb && !all; k++) { /* every named backend must exist */
    uint32_t p;
    if (parity_context_find_plugin(ctx, o->backends[k], &p) != PARITY_STATUS_OK) {
      fprintf(stderr, "parity-bench: --backend %s: %s\n", o->backends[k], parity_last_error());
      return 2;
    }
  }
  for (uint32_t p = 0; p < parity_context_plugin_count(ctx); p++) {
    parity_plugin_record_t rec;
    parity_context_plugin(ctx, p, &rec);
    if (rec.state != PARITY_PLUGIN_STATE_LOADED) continue;
    int wanted = all;
    for (int k = 0; k < o->nb; k++) wanted |= !strcmp(o->backends[k], rec.name) || !strcmp(o->backends[k], rec.backend);
    if (!wanted) continue;
    parity_device_t *dev;
    if (parity_context_open_device(ctx, p, 0, &dev) != PARITY_STATUS_OK) {
      fprintf(stderr, "parity-bench: %s: %s\n", rec.name, parity_last_error());
      run->failures++;
      continue;
    }
    run_device(run, dev, h);
  }
  return 0;
}

/* --json: the results to the file (written atomically) or to stdout ('-'); a failure counts. */
static void write_json(const bench_options *o, bench_run *run, const bench_header *h, const bench_results *results) {
  char msg[300];
  psup_atomic_file af;
  int to_stdout = !strcmp(o->json_path, "-");
  FILE *f = to_stdout ? stdout : psup_atomic_open(&af, o->json_path, 0, msg, sizeof msg) == 0 ? af.f : NULL;
  if (!f) {
    fprintf(stderr, "parity-bench: %s\n", msg);
    run->failures++;
  } else {
    bench_write_json(f, h, results);
    if (!to_stdout && psup_atomic_commit(&af, msg, sizeof msg) != 0)
      fprintf(stderr, "parity-bench: %s\n", msg), run->failures++;
    else if (!to_stdout)
      fprintf(run->log, "\nwrote %s\n", o->json_path);
  }
}

int main(int argc, char **argv) {
  bench_options o;
  int rc = bench_parse_args(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : 2;
  json *baseline = NULL;
  if (o.compare_path && !(baseline = bench_baseline_load(o.compare_path))) return 2;
  char msg[300]; /* the target checked now; written atomically at the end */
  if (o.json_path && strcmp(o.json_path, "-") && psup_atomic_check(o.json_path, msg, sizeof msg) != 0) {
    fprintf(stderr, "parity-bench: %s\n", msg);
    json_free(baseline);
    return 2;
  }
  if (o.threads) set_threads(o.threads, argv);

  bench_header h;
  bench_header_init(&h, argc, argv);
  pin_cpus(o.threads ? o.threads : plugin_threads(), h.cpus, sizeof h.cpus);
  bench_results results = {0};
  bench_run run = {&o, {o.reps, o.min_rep_s}, &results, 1, stdout, 0};
  if (o.json_path && !strcmp(o.json_path, "-")) run.log = stderr;
  parity_context_t *ctx;
  if (parity_context_create(NULL, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-bench: %s\n", parity_last_error());
    json_free(baseline);
    return 2;
  }
  report_threads(&o, &run, &h);
  if (run_backends(ctx, &o, &run, &h) != 0) {
    parity_context_destroy(ctx);
    json_free(baseline);
    return 2;
  }
  snprintf(h.torch, sizeof h.torch, "%s", torch_ref_finish());
  h.load_end = bench_loadavg();
  fprintf(run.log, "\nload average %.2f at the start, %.2f at the end (%d cores)\n", h.load_start, h.load_end, h.cores);
  snprintf(h.blas, sizeof h.blas, "%s", blas_config()[0] ? blas_config() : "not used or unavailable");

  if (o.json_path) write_json(&o, &run, &h, &results);
  int exit_code = run.failures ? 1 : 0;
  if (baseline) {
    int regressions = bench_compare(run.log, baseline, &results, o.tolerance);
    if (regressions < 0)
      exit_code = 2;
    else if (regressions > 0)
      exit_code = 3;
    json_free(baseline);
  }
  bench_results_free(&results);
  parity_context_destroy(ctx);
  return exit_code;
}
