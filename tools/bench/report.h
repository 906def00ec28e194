/* report.h — the run's header (when, where, which build, how many threads) and the JSON file
 * --json writes (the format is in docs/benchmarks.md). */
#ifndef PARITY_BENCH_REPORT_H
#define PARITY_BENCH_REPORT_H

#include <stdio.h>

#include "figures.h"

typedef struct bench_header {
  char date[32]; /* UTC, ISO 8601 */
  char host[64];
  char cpu[128];    /* /proc/cpuinfo "model name" */
  char isa[16];     /* the reference loops' clone: avx512f, avx2, baseline */
  int cores;        /* online CPUs */
  char cpus[256];   /* the CPUs the run is confined to (main.c: pin_cpus), "0,1" */
  char version[32]; /* parity's project version */
  char git_rev[48]; /* at configure time; "unknown" outside a git checkout */
  char build_type[32];
  int threads;           /* the CPU plugin's OpenMP threads, read back after it loaded */
  int threads_requested; /* --threads, 0 when not given */
  int reps;
  double min_rep_s;
  int quick;
  char devices[256]; /* "cpu: <device name>; ..." */
  char blas[200];    /* OpenBLAS config or why unavailable */
  char torch[200];   /* torch version or why unavailable */
  char command[512];
  double load_start, load_end; /* 1-minute load average (/proc/loadavg) when the run began and ended */
} bench_header;

/* Fill date, host, cpu, isa, cores, version, git_rev, build_type and command. */
void bench_header_init(bench_header *h, int argc, char **argv);
/* The 1-minute load average, or -1 where /proc/loadavg cannot be read. */
double bench_loadavg(void);
void bench_write_json(FILE *f, const bench_header *h, const bench_results *r);

#endif
