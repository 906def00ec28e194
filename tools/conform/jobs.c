/* jobs.c — see jobs.h. */
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit_t {
  const char *backend;
  int part;
  char part_arg[24];
  cf_isolate_job_t job;
  cf_report_t rep; /* this part's records, merged into the caller's report when its backend ends */
  int code, unavailable, started, collected;
} unit_t;

/* Append part report `src`'s device d (its d-th summary, with its results) to `dst`'s summary b. */
static int append_device(cf_report_t *dst, cf_backend_summary_t *b, const cf_report_t *src, size_t d) {
  const cf_backend_summary_t *s = &src->backends[d];
  for (size_t i = s->first; i < s->first + s->count && i < src->count; i++) {
    cf_result_t *r = cf_report_add(dst);
    if (!r) return -1;
    *r = src->results[i];
    cf_backend_count(b, r);
  }
  if (s->seconds > b->seconds) b->seconds = s->seconds;
  if (s->note[0] && !strstr(b->note, s->note)) { /* a crash or a device note of any part */
    size_t len = strlen(b->note);
    snprintf(b->note + len, sizeof b->note - len, "%s%s", len ? "; " : "", s->note);
  }
  return 0;
}

/* The parts of one backend have ended: their device summaries merged by index into rep (device d
 * of every part into one summary, results contiguous), each printed as one run would print it, and
 * the backend's exit code (as a child's: 0, 1, 2, or -1 for a crash). A backend run whole (one
 * part) printed its own header and table: its output is printed as it is. */
static int merge(unit_t *u, int parts, cf_report_t *rep, const cf_console_t *con, int *unavailable) {
  size_t devices = 0;
  int code = 0, crashed = 0, all_unavailable = 1;
  for (int k = 0; k < parts; k++) {
    if (u[k].rep.backend_count > devices) devices = u[k].rep.backend_count;
    if (u[k].code < 0) crashed = 1;
    if (u[k].code >= 2 && !u[k].unavailable) code = 2;
    all_unavailable &= u[k].unavailable;
  }
  *unavailable = all_unavailable;
  if (all_unavailable) code = u[0].code; /* the first part said why (the others print nothing) */
  if (parts == 1) code = u[0].code;
  size_t first_backend = rep->backend_count;
  for (size_t d = 0; d < devices; d++) {
    cf_backend_summary_t *b = cf_report_add_backend(rep);
    if (!b) return 2;
    for (int k = 0; k < parts; k++) /* the device's name and claims: the first part that has them */
      if (d < u[k].rep.backend_count && !b->backend[0]) {
        *b = u[k].rep.backends[d];
        b->count = b->pass = b->fail = b->unsupported = b->skipped = 0;
        b->seconds = 0;
        b->note[0] = 0;
      }
    b->first = rep->count;
    for (int k = 0; k < parts; k++)
      if (d < u[k].rep.backend_count && append_device(rep, b, &u[k].rep, d) != 0) return 2;
  }
  if (parts == 1) {
    cf_isolate_print(&u[0].job);
    return code;
  }
  if (devices) cf_console_begin(con, rep, &rep->backends[first_backend]);
  for (int k = 0; k < parts; k++) cf_isolate_print(&u[k].job); /* their own lines: core needs, driver messages */
  for (size_t d = 0; d < devices; d++) {
    const cf_backend_summary_t *b = &rep->backends[first_backend + d];
    if (d) cf_console_begin(con, rep, b);
    cf_console_end(con, rep, b);
    cf_coverage_t cov;
    cf_coverage(rep, b, &cov);
    if (cov.verdict != CF_VERDICT_PASS && code == 0) code = 1;
  }
  return crashed && code != 2 ? -1 : code;
}

/* Start unit v (backend v->backend, part v->part of parts); one that cannot start is collected at
 * once (a crash-like -1, said why). */
static void start(unit_t *v, char **args, int nargs, int parts, const cf_report_t *rep) {
  int n = nargs;
  args[n++] = "--backend";
  args[n++] = (char *)v->backend;
  if (parts > 1) {
    snprintf(v->part_arg, sizeof v->part_arg, "%d/%d", v->part, parts);
    args[n++] = "--part";
    args[n++] = v->part_arg;
  }
  v->rep.seed = rep->seed;
  v->rep.full = rep->full;
  memcpy(v->rep.command, rep->command, sizeof rep->command);
  v->started = cf_isolate_start(args, n, v->backend, &v->job) == 0;
  if (!v->started) {
    v->job.pid = -1;
    v->code = cf_isolate_collect(&v->job, &v->rep, &v->unavailable);
    v->collected = 1;
  }
}

int cf_jobs_run(char **args, int nargs, const char *const *backends, uint32_t nbackends, int jobs, int parts,
                const cf_console_t *con, cf_report_t *rep, int named) {
  size_t nunits = (size_t)nbackends * (size_t)parts;
  unit_t *u = calloc(nunits ? nunits : 1, sizeof *u);
  cf_isolate_job_t **running = calloc((size_t)jobs, sizeof *running);
  size_t *running_unit = calloc((size_t)jobs, sizeof *running_unit);
  if (!u || !running || !running_unit) {
    free(u);
    free(running);
    free(running_unit);
    return 2;
  }
  for (size_t k = 0; k < nunits; k++) {
    u[k].backend = backends[k / (size_t)parts];
    u[k].part = (int)(k % (size_t)parts);
  }
  int exit_code = 0;
  size_t next = 0, flushed = 0; /* the next unit to start; the backends printed so far */
  int nrunning = 0;
  while (flushed < nbackends) {
    /* keep `jobs` children running; when one ends, the next unit starts, whichever ended */
    while (nrunning < jobs && next < nunits) {
      unit_t *v = &u[next];
      start(v, args, nargs, parts, rep);
      if (v->started) {
        running[nrunning] = &v->job;
        running_unit[nrunning++] = next;
      }
      next++;
    }
    int i = cf_isolate_wait_any(running, (size_t)nrunning);
    if (i >= 0 || nrunning > 0) {
      if (i < 0) i = 0; /* it cannot be waited for: collect says how it ended */
      unit_t *w = &u[running_unit[i]];
      w->code = cf_isolate_collect(&w->job, &w->rep, &w->unavailable);
      w->collected = 1;
      running[i] = running[nrunning - 1];
      running_unit[i] = running_unit[nrunning - 1];
      nrunning--;
    }
    /* the backends print in order, each once all its parts have ended */
    while (flushed < nbackends) {
      unit_t *first = &u[flushed * (size_t)parts];
      int ready = 1;
      for (int p = 0; p < parts; p++) ready &= first[p].collected;
      if (!ready) break;
      int unavailable = 0;
      int code = merge(first, parts, rep, con, &unavailable);
      for (int p = 0; p < parts; p++) {
        cf_isolate_drop(&first[p].job);
        cf_report_free(&first[p].rep);
      }
      exit_code = cf_jobs_exit_code(exit_code, code, unavailable, named);
      flushed++;
    }
  }
  for (size_t k = 0; k < nunits; k++) { /* all dropped above already, unless merge ran out of memory */
    cf_isolate_drop(&u[k].job);
    cf_report_free(&u[k].rep);
  }
  free(u);
  free(running);
  free(running_unit);
  return exit_code;
}

int cf_jobs_exit_code(int exit_code, int code, int unavailable, int named) {
  if (code < 0 || code == 1) return exit_code == 2 ? 2 : 1;
  if (code >= 2 && !(unavailable && !named)) return 2;
  return exit_code;
}
