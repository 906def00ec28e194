/* parity-conform — the conformance suite: every available backend (or --backend NAME) against
 * the CPU plugin computing in float64, per op, dtype and direction. Prints a table and a verdict
 * per backend; --json and --markdown write reports. Exit status: 0 when no supported case failed,
 * 1 when one did, 2 when the suite could not run (bad arguments, no oracle, unknown backend).
 * The rules are in docs/conformance.md; the pieces in tools/conform/. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conform/conform.h"
#include "conform/isolate.h"
#include "conform/jobs.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"
#include "parity_support/parse.h"
#include "parity_support/atomic_file.h"

extern char **environ;

typedef struct options_t {
  const char *backend, *ops, *dtypes, *direction, *cases, *json, *markdown, *junit, *html;
  int device, full, failures_only, list, verbose, support, in_process;
  int full_extra;         /* --full-extra: --full less the default subset's cases */
  int determinism_probe;  /* cap.determinism's child under another launch configuration */
  int jobs;               /* --jobs: backends tested at once (0: one by one, streamed) */
  int child_fd;           /* >= 0: a child of the isolating parent (isolate.h), results go there too */
  uint32_t shard, shards; /* --shard K/N: share K of N of the selection, dealt by work (shares.c); checks in 0 */
  uint32_t part, parts;   /* --part K/P (a child of --jobs): the K-th of P contiguous runs of the selection */
  uint64_t seed;
} options_t;

static void usage(FILE *f) {
  fprintf(f,
          "usage: parity-conform [options]\n"
          "  --backend NAME    test one plugin (its name or backend kind); default: every available one\n"
          "  --device N        only device N of each tested plugin (default: all)\n"
          "  --op LIST         comma-separated op names, e.g. add,softmax\n"
          "  --dtype LIST      comma-separated dtypes (f32,f64,f16,bf16,i32,i64,bool); a cast matches\n"
          "                    its source dtype or its label, e.g. f32->f16\n"
          "  --direction D     forward | backward\n"
          "  --case LIST       comma-separated case ids or variants, wildcards allowed\n"
          "                    (e.g. 'add.f32.forward.n33', 'ties', 'sum.*.large', 'cap.*')\n"
          "  --full            the complete sweep (default: the quick subset for CI)\n"
          "  --full-extra      --full less the default subset's cases (the same cases, seed and\n"
          "                    environment as a default run give the same results: CI runs this after\n"
          "                    make test ran the default subset); the checks run in their --full form\n"
          "  --seed N          input seed (default 0); every case reproduces alone with its seed\n"
          "  --shard K/N       share K (0-based) of N of the selection, the shares dealt by each case's\n"
          "                    size (about equal work); checks in shard 0: N jobs with K = 0..N-1\n"
          "                    together run the selection once (CI)\n"
          "  --env VAR=VALUE   set an environment variable before the plugins load (a launch\n"
          "                    configuration, e.g. PARITY_OPENCL_WORK_LAYOUT=strided); repeatable\n"
          "  --json FILE       machine-readable results\n"
          "  --markdown FILE   a report for people\n"
          "  --junit FILE      JUnit XML for CI systems (one testcase per case)\n"
          "  --html FILE       one self-contained HTML report (heatmap, error plots, commands)\n"
          "  --verbose         the per-case table as it runs\n"
          "  --failures-only   with --verbose: only failing rows\n"
          "  --support         per op x dtype x direction: supported or not, with the plugin's reason\n"
          "  --list            print the selected case ids and exit\n"
          "  --in-process      test every plugin in this process (default: each in a child process, so\n"
          "                    that a plugin that crashes is named and the others are still tested)\n"
          "  --jobs N          N child processes at once (default 1: one backend at a time, its results\n"
          "                    streamed); each backend is split into 2N parts (contiguous runs of its\n"
          "                    cases), a job taking the next as it ends, and its report is printed\n"
          "                    whole when its last part ends\n"
          "environment: PARITY_CONFORM_PLACEMENT=guarded|end|start: 64 guard bytes on both sides of\n"
          "                    every tensor (default), or none after (end) or before (start) it, so that\n"
          "                    a checking executor's allocation bounds are the tensor's\n"
          "exit status: 0 every backend passed; 1 a case failed, a device did not open, a plugin crashed,\n"
          "or nothing was checked; 2 the suite could not run\n");
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 when `item` is one of the comma-separated entries of list (wildcards allowed). */
static int in_list(const char *list, const char *item) {
  if (!list) return 1;
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    char pat[128];
    snprintf(pat, sizeof pat, "%.*s", (int)n, p);
    if (fnmatch(pat, item, 0) == 0) return 1;
    p += n + (p[n] == ',');
  }
  return 0;
}

static int case_selected(const options_t *o, const cf_case_list_t *cases, size_t index) {
  const cf_case_t *c = &cases->items[index];
  if (c->full_only && !o->full) return 0;
  if (o->full_extra && !c->full_only) return 0;
  if (!in_list(o->ops, psup_op_name(c->op))) return 0;
  if (o->dtypes && !in_list(o->dtypes, c->dtype_label) && !in_list(o->dtypes, psup_dtype_name(c->dtype))) return 0;
  if (o->direction && strcmp(o->direction, psup_direction_name(c->direction)) != 0) return 0;
  return !o->cases || in_list(o->cases, c->id) || in_list(o->cases, c->variant);
}

/* cf_cases_build's filter: the ops --op names (all without it) */
static int op_selected(int32_t op, const void *ctx) { return in_list(((const options_t *)ctx)->ops, psup_op_name(op)); }

static int check_selected(const options_t *o, const char *id) {
  if (o->ops || o->dtypes || o->direction || (o->shards > 1 && o->shard != 0) || (o->parts > 1 && o->part != 0))
    return 0;
  return !o->cases || in_list(o->cases, id);
}

/* argv[0] with every PARITY_* variable of the environment in front, shell-quoted. */
static void build_command(cf_report_t *rep, const char *argv0) {
  size_t used = 0, n = sizeof rep->command;
  rep->command[0] = 0;
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "PARITY_", 7) != 0) continue;
    const char *eq = strchr(*e, '=');
    if (!eq || !eq[1] || !strncmp(*e, "PARITY_BACKEND=", 15) || !strncmp(*e, "PARITY_DEVICE=", 14)) continue;
    used += (size_t)snprintf(rep->command + used, used < n ? n - used : 0, "%.*s'%s' ", (int)(eq - *e + 1), *e, eq + 1);
  }
  if (used < n) snprintf(rep->command + used, n - used, "%s", argv0);
}

static const char *type_name(int32_t t) {
  switch (t) {
    case PARITY_DEVICE_TYPE_CPU: return "cpu";
    case PARITY_DEVICE_TYPE_GPU: return "gpu";
    case PARITY_DEVICE_TYPE_SOFTWARE_GPU: return "software gpu";
    default: return "other";
  }
}

static void finish(const cf_console_t *con, cf_report_t *rep, cf_backend_summary_t *b, cf_result_t *r, size_t total) {
  cf_backend_count(b, r);
  cf_child_result(r);
  cf_console_result(con, rep, r, b->count, total);
}

static cf_result_t *next_result(cf_report_t *rep) {
  cf_result_t *r = cf_report_add(rep);
  if (!r) {
    fprintf(stderr, "parity-conform: out of memory\n");
    exit(2);
  }
  return r;
}

static const cf_check_t *const check_lists[2] = {cf_capability_checks, cf_hazard_checks};

static size_t selected_count(const cf_case_list_t *cases, const unsigned char *selected, const options_t *o) {
  size_t n = 0;
  size_t counts[2] = {cf_capability_check_count, cf_hazard_check_count};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < counts[l]; i++) n += (size_t)check_selected(o, check_lists[l][i].id);
  for (size_t i = 0; i < cases->count; i++) n += selected[i];
  return n;
}

static void run_backend(const cf_console_t *con, cf_report_t *rep, cf_env_t *env, const cf_case_list_t *cases,
                        const unsigned char *selected, const options_t *o, cf_backend_summary_t *b) {
  double t0 = now();
  size_t total = selected_count(cases, selected, o);
  b->first = rep->count;
  if (o->parts <= 1) cf_console_begin(con, rep, b); /* a part's header and table: the parent's (jobs.h) */
  size_t counts[2] = {cf_capability_check_count, cf_hazard_check_count};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < counts[l]; i++) {
      const cf_check_t *chk = &check_lists[l][i];
      if (!check_selected(o, chk->id)) continue;
      cf_result_t *r = next_result(rep);
      cf_result_init(r, chk->id, chk->op, "-", "-", chk->id);
      snprintf(r->backend, sizeof r->backend, "%s", env->backend);
      snprintf(r->device, sizeof r->device, "%s", env->info.name);
      cf_child_running(chk->id);
      double t = now();
      chk->fn(env, r);
      r->seconds = now() - t;
      finish(con, rep, b, r, total);
    }
  for (size_t i = 0; i < cases->count; i++) {
    const cf_case_t *c = &cases->items[i];
    if (!selected[i]) continue;
    cf_result_t *r = next_result(rep);
    cf_result_init(r, c->id, psup_op_name(c->op), c->dtype_label, psup_direction_name(c->direction), c->variant);
    snprintf(r->backend, sizeof r->backend, "%s", env->backend);
    snprintf(r->device, sizeof r->device, "%s", env->info.name);
    r->full_only = c->full_only;
    r->is_case = 1;
    r->refusal = c->expect_error;
    r->op_id = c->op;
    r->dtype_id = c->dtype;
    cf_child_running(c->id);
    double t = now();
    cf_run_case(env, c, r);
    r->seconds = now() - t;
    finish(con, rep, b, r, total);
  }
  b->seconds = now() - t0;
  if (o->parts <= 1) cf_console_end(con, rep, b);
}

/* Every wanted plugin in this process (--in-process, or a child of run_isolated: --child-fd). */
/* Device d of backend `name` did not open: one failed row in the report, with the host's message. */
static void report_open_failure(const options_t *o, const cf_console_t *con, cf_report_t *rep, cf_backend_summary_t *b,
                                const char *name, uint32_t d) {
  snprintf(b->device, sizeof b->device, "device %u", d);
  snprintf(b->type, sizeof b->type, "not opened");
  snprintf(b->note, sizeof b->note, "the device does not open");
  b->first = rep->count;
  if (o->parts <= 1) cf_console_begin(con, rep, b);
  cf_result_t *r = next_result(rep);
  cf_result_init(r, "device.open", "(device)", "-", "-", "open");
  snprintf(r->backend, sizeof r->backend, "%s", name);
  cf_result_fail(r, "%s", parity_last_error());
  finish(con, rep, b, r, 1);
  if (o->parts <= 1) cf_console_end(con, rep, b);
  cf_child_summary(b);
}

static int run_in_process(const options_t *o, const cf_console_t *con, cf_report_t *rep, const cf_case_list_t *cases,
                          const unsigned char *selected) {
  /* with --backend, the other plugins are identified only, never initialised (the loader defers them) */
  parity_context_options_t opts;
  parity_context_options_init(&opts);
  opts.backend = o->backend;
  parity_context_t *ctx;
  if (parity_context_create(&opts, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-conform: %s\n", parity_last_error());
    return 2;
  }

  parity_device_t *oracle = NULL;
  uint32_t oracle_plugin;
  if (parity_context_find_plugin(ctx, "cpu", &oracle_plugin) != PARITY_STATUS_OK ||
      parity_context_open_device(ctx, oracle_plugin, 0, &oracle) != PARITY_STATUS_OK) {
    fprintf(stderr,
            "parity-conform: no oracle: %s\n  the CPU plugin (parity-plugin-cpu.so) computes the "
            "float64 reference; build it or add its folder to PARITY_PLUGIN_PATH\n",
            parity_last_error());
    parity_context_destroy(ctx);
    return 2;
  }

  int exit_code = 0, matched = 0;
  uint32_t np = parity_context_plugin_count(ctx);
  for (uint32_t p = 0; p < np; p++) {
    parity_plugin_record_t rec;
    parity_context_plugin_peek(ctx, p, &rec); /* a plugin not wanted stays uninitialised */
    int wanted = !o->backend || !strcmp(o->backend, rec.name) || !strcmp(o->backend, rec.backend);
    if (!wanted) continue;
    parity_context_plugin(ctx, p, &rec);
    if (rec.state != PARITY_PLUGIN_STATE_LOADED) {
      if (o->part == 0) /* said once for a split backend */
        printf("\n== %s: %s, not tested: %s ==\n", rec.name[0] ? rec.name : rec.path,
               rec.state == PARITY_PLUGIN_STATE_UNAVAILABLE ? "unavailable" : "skipped", rec.reason);
      if (o->backend) exit_code = 2;
      cf_child_unavailable();
      continue;
    }
    for (uint32_t d = 0; d < rec.device_count; d++) {
      if (o->device >= 0 && (uint32_t)o->device != d) continue;
      matched++;
      cf_env_t env = {.ctx = ctx, .oracle = oracle, .backend = rec.name, .full = o->full};
      env.values.seed = o->seed;
      env.max_buffer_cap = o->full ? (1ull << 30) : (256ull << 20);
      env.device_index = d;
      env.info.struct_size = sizeof env.info;
      cf_backend_summary_t *b = cf_report_add_backend(rep);
      if (!b) return 2;
      snprintf(b->backend, sizeof b->backend, "%s", rec.name);
      cf_child_backend(b);
      cf_child_running("device.open");
      if (parity_context_open_device(ctx, p, d, &env.dev) != PARITY_STATUS_OK) {
        report_open_failure(o, con, rep, b, rec.name, d);
        exit_code = exit_code ? exit_code : 1;
        continue;
      }
      parity_device_get_info(env.dev, &env.info);
      if (o->determinism_probe) { /* internal: cap.determinism under another launch configuration */
        cf_determinism_probe(&env, stdout);
        fflush(stdout);
        parity_context_destroy(ctx);
        return 0;
      }
      env.cases = cases;
      b->dtype_mask = env.info.dtype_mask;
      b->flags = env.info.flags;
      env.values.no_denormals = env.info.denormals == PARITY_DENORMALS_FLUSHED;
      snprintf(b->device, sizeof b->device, "%s", env.info.name);
      snprintf(b->type, sizeof b->type, "%s", type_name(env.info.type));
      if (env.values.no_denormals) snprintf(b->note, sizeof b->note, "declares flushed denormals: inputs carry none");
      if (o->support) {
        cf_print_support(&env, cases, selected);
        cf_child_summary(b);
        continue;
      }
      run_backend(con, rep, &env, cases, selected, o, b);
      if (o->part == 0) cf_print_core_needs(&env);
      cf_child_summary(b);
      cf_coverage_t cov;
      cf_coverage(rep, b, &cov);
      if (cov.verdict != CF_VERDICT_PASS && exit_code == 0) exit_code = 1;
    }
  }
  if (o->backend && !matched && exit_code == 0) {
    fprintf(stderr, "parity-conform: no backend '%s' to test; available: %s\n", o->backend,
            parity_context_available(ctx));
    exit_code = 2;
  }
  parity_context_destroy(ctx);
  return exit_code;
}

/* The default: every wanted plugin in a child process of its own (isolate.h). This process
 * identifies the plugins without initialising any, then runs itself per plugin with --backend NAME
 * (the report options are this process's: the children stream their results here). */
static int run_isolated(int argc, char **argv, const options_t *o, const cf_console_t *con, size_t nselected,
                        cf_report_t *rep) {
  parity_context_options_t opts;
  parity_context_options_init(&opts);
  opts.backend = "-"; /* a backend no plugin is: every one is identified from its file, none initialised */
  parity_context_t *ctx;
  if (parity_context_create(&opts, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-conform: %s\n", parity_last_error());
    return 2;
  }
  char **args = calloc((size_t)argc + 8, sizeof *args);
  uint32_t np = parity_context_plugin_count(ctx);
  const char **tested = calloc(np ? np : 1, sizeof *tested);
  if (!args || !tested) {
    free(args);
    free(tested);
    parity_context_destroy(ctx);
    return 2;
  }
  int n = 0;
  args[n++] = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json") || !strcmp(a, "--markdown") || !strcmp(a, "--junit") || !strcmp(a, "--html") ||
        !strcmp(a, "--backend") || !strcmp(a, "--jobs") || !strcmp(a, "--part")) {
      i++;
      continue;
    }
    args[n++] = argv[i];
  }
  int exit_code = 0, matched = 0;
  uint32_t ntested = 0;
  for (uint32_t p = 0; p < np; p++) {
    parity_plugin_record_t rec;
    parity_context_plugin_peek(ctx, p, &rec);
    int wanted = !o->backend || !strcmp(o->backend, rec.name) || !strcmp(o->backend, rec.backend);
    if (!wanted) continue;
    if (!rec.name[0]) { /* it never said who it is: the loader already said why */
      printf("\n== %s: skipped, not tested: %s ==\n", rec.path, rec.reason);
      continue;
    }
    int seen = 0;
    for (uint32_t k = 0; k < ntested; k++) seen |= !strcmp(tested[k], rec.name);
    if (seen) continue; /* a second file of the same plugin: the loader uses the first */
    tested[ntested++] = rec.name;
    matched++;
  }
  int jobs = o->jobs > 0 ? o->jobs : 1;
  /* with several jobs every backend is split into parts (jobs.h): twice as many as jobs, so that a
   * job that ends early takes the next part instead of idling while the costliest part (a family
   * whose kernels compile slowly) goes on; fewer when there is too little to share (a part of fewer
   * than 64 cases), none when there is nothing to run (--support) */
  int parts = 1;
  if (jobs > 1 && !o->support)
    parts = nselected >= 128 * (size_t)jobs ? 2 * jobs : nselected >= 64 * (size_t)jobs ? jobs : 1;
  char parts_said[32] = "";
  if (parts > 1) snprintf(parts_said, sizeof parts_said, " in %d parts each", parts);
  if (jobs > 1 && (ntested > 1 || parts > 1))
    printf(
        "parity-conform: %u backend%s%s, %d processes at a time (--jobs); each backend's report is printed when "
        "it ends\n",
        ntested, ntested == 1 ? "" : "s", parts_said, jobs);
  if (jobs > 1 && (ntested > 1 || parts > 1)) {
    exit_code = cf_jobs_run(args, n, tested, ntested, jobs, parts, con, rep, o->backend != NULL);
  } else {
    for (uint32_t k = 0; k < ntested; k++) { /* one by one, streamed */
      int unavailable = 0;
      args[n] = "--backend";
      args[n + 1] = (char *)tested[k];
      int code = cf_isolate_exec(args, n + 2, rep, tested[k], &unavailable);
      exit_code = cf_jobs_exit_code(exit_code, code, unavailable, o->backend != NULL);
    }
  }
  if (o->backend && !matched) {
    fprintf(stderr, "parity-conform: no backend '%s' to test; available: %s\n", o->backend,
            parity_context_available(ctx));
    exit_code = 2;
  }
  free(args);
  free(tested);
  parity_context_destroy(ctx);
  return exit_code;
}

/* --env VAR=VALUE: set before any plugin loads, so a launch configuration applies to the whole
 * run and appears in every reproduce command (which carries the PARITY_* environment). */
static int set_env(const char *assignment) {
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment) {
    fprintf(stderr, "parity-conform: --env takes VAR=VALUE, not '%s'\n", assignment);
    return -1;
  }
  char name[128];
  snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
  return setenv(name, eq + 1, 1);
}

/* Every comma-separated name in list must be an op (dtypes: a dtype); unknown ones are named with
 * the list of valid ones. */
static int check_names(const char *list, const char *flag, int dtypes) {
  if (!list) return 0;
  char copy[1024], *save = NULL;
  snprintf(copy, sizeof copy, "%s", list);
  for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
    int known = 0;
    char *arrow = dtypes ? strstr(n, "->") : NULL; /* a cast label: f32->f16 */
    if (arrow) {
      *arrow = 0;
      known = psup_dtype_from_name(n) != 0 && psup_dtype_from_name(arrow + 2) != 0;
      *arrow = '-';
    } else if (dtypes)
      known = psup_dtype_from_name(n) != 0;
    else
      for (uint32_t i = 0; i < psup_op_count() && !known; i++) known = strcmp(psup_ops[i].name, n) == 0;
    if (known) continue;
    const char *names[256];
    size_t count = 0;
    if (dtypes) {
      for (int32_t d = 1; d < 64 && count < 256; d++)
        if (psup_dtype_size(d)) names[count++] = psup_dtype_name(d);
    } else {
      for (uint32_t i = 0; i < psup_op_count() && count < 256; i++) names[count++] = psup_ops[i].name;
    }
    const char *near = psup_closest(n, names, count);
    if (near)
      fprintf(stderr, "parity-conform: %s: unknown %s '%s'; did you mean %s?\n", flag, dtypes ? "dtype" : "op", n,
              near);
    fprintf(stderr, "parity-conform: %s: unknown %s '%s'; known:", flag, dtypes ? "dtype" : "op", n);
    if (dtypes) {
      for (int32_t d = 1; d < 64; d++)
        if (psup_dtype_size(d)) fprintf(stderr, " %s", psup_dtype_name(d));
    } else {
      for (uint32_t i = 0; i < psup_op_count(); i++) fprintf(stderr, " %s", psup_ops[i].name);
    }
    fputc('\n', stderr);
    return -1;
  }
  return 0;
}

static int parse(int argc, char **argv, options_t *o) {
  memset(o, 0, sizeof *o);
  o->device = -1;
  o->child_fd = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    const char **target = !strcmp(a, "--backend")     ? &o->backend
                          : !strcmp(a, "--op")        ? &o->ops
                          : !strcmp(a, "--dtype")     ? &o->dtypes
                          : !strcmp(a, "--direction") ? &o->direction
                          : !strcmp(a, "--case")      ? &o->cases
                          : !strcmp(a, "--json")      ? &o->json
                          : !strcmp(a, "--markdown")  ? &o->markdown
                          : !strcmp(a, "--junit")     ? &o->junit
                          : !strcmp(a, "--html")      ? &o->html
                                                      : NULL;
    if (target || !strcmp(a, "--device") || !strcmp(a, "--seed") || !strcmp(a, "--env") || !strcmp(a, "--shard") ||
        !strcmp(a, "--child-fd") || !strcmp(a, "--jobs") || !strcmp(a, "--part")) {
      if (!v) {
        fprintf(stderr, "parity-conform: %s needs a value\n", a);
        return -1;
      }
      i++;
      if (target)
        *target = v;
      else if (!strcmp(a, "--child-fd"))
        o->child_fd = atoi(v);
      else if (!strcmp(a, "--jobs")) {
        char *end = NULL;
        errno = 0;
        long j = strtol(v, &end, 10);
        if (errno || end == v || *end || j < 1 || j > 64) {
          fprintf(stderr, "parity-conform: --jobs takes a number of backends to test at once (1 to 64), not '%s'\n", v);
          return -1;
        }
        o->jobs = (int)j;
      } else if (!strcmp(a, "--device")) {
        char *end = NULL;
        errno = 0;
        long d = strtol(v, &end, 10);
        if (errno || end == v || *end || d < 0 || d > 1000000) {
          fprintf(stderr, "parity-conform: --device takes a device index (0, 1, ...), not '%s'\n", v);
          return -1;
        }
        o->device = (int)d;
      } else if (!strcmp(a, "--seed")) {
        char *end = NULL;
        errno = 0;
        o->seed = strtoull(v, &end, 0);
        if (errno || end == v || *end || v[0] == '-') {
          fprintf(stderr, "parity-conform: --seed takes a non-negative integer, not '%s'\n", v);
          return -1;
        }
      } else if (!strcmp(a, "--part")) { /* internal: a child of --jobs (jobs.h) */
        if (sscanf(v, "%u/%u", &o->part, &o->parts) != 2 || o->parts == 0 || o->part >= o->parts) {
          fprintf(stderr, "parity-conform: --part takes K/P with 0 <= K < P, not '%s'\n", v);
          return -1;
        }
      } else if (!strcmp(a, "--shard")) {
        if (sscanf(v, "%u/%u", &o->shard, &o->shards) != 2 || o->shards == 0 || o->shard >= o->shards) {
          fprintf(stderr, "parity-conform: --shard takes K/N with 0 <= K < N, not '%s'\n", v);
          return -1;
        }
      } else if (set_env(v) != 0)
        return -1;
    } else if (!strcmp(a, "--full"))
      o->full = 1;
    else if (!strcmp(a, "--full-extra"))
      o->full = o->full_extra = 1;
    else if (!strcmp(a, "--failures-only"))
      o->failures_only = 1;
    else if (!strcmp(a, "--list"))
      o->list = 1;
    else if (!strcmp(a, "--in-process"))
      o->in_process = 1;
    else if (!strcmp(a, "--determinism-probe"))
      o->determinism_probe = 1;
    else if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
      o->verbose = 1;
    else if (!strcmp(a, "--support"))
      o->support = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else {
      fprintf(stderr, "parity-conform: unknown argument '%s'\n", a);
      return -1;
    }
  }
  if (o->direction && strcmp(o->direction, "forward") && strcmp(o->direction, "backward")) {
    fprintf(stderr, "parity-conform: --direction is forward or backward, not '%s'\n", o->direction);
    return -1;
  }
  if (check_names(o->ops, "--op", 0) != 0 || check_names(o->dtypes, "--dtype", 1) != 0) return -1;
  /* every report's target is checked before any work, so a bad path fails in a second, not at the
   * end; the reports are written atomically at the end (parity_support/atomic_file.h) */
  const char *outs[4] = {o->json, o->markdown, o->junit, o->html};
  for (int k = 0; k < 4; k++) {
    char msg[300];
    if (outs[k] && psup_atomic_check(outs[k], msg, sizeof msg) != 0) {
      fprintf(stderr, "parity-conform: %s\n", msg);
      return -1;
    }
  }
  return 0;
}

/* The --full sweep allocates and frees host copies, guarded images and device buffers of
 * 64-128 MiB many times per case. glibc maps each block that large afresh and unmaps it on free,
 * so every reuse page-faults again per 4 KiB: 60 % of a 2^24-element case's time on this VM
 * (2.7x slower). Freed blocks stay in the heap instead; the process keeps its peak. */
static void keep_freed_memory(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv) {
  options_t o;
  keep_freed_memory();
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr, "parity-conform: --help lists the options\n");
    return 2;
  }
  char placement_msg[300];
  int placement = cf_placement_configure(placement_msg, sizeof placement_msg);
  if (placement < 0) {
    fprintf(stderr, "parity-conform: %s\n", placement_msg);
    return 2;
  }
  if (placement > 0 && o.child_fd < 0)
    printf(
        "parity-conform: no guard bytes %s each tensor (PARITY_CONFORM_PLACEMENT=%s): a checking executor's "
        "allocation bounds are the tensor's\n",
        placement == 1 ? "after" : "before", placement == 1 ? "end" : "start");
  cf_case_list_t cases;
  if (cf_cases_build(&cases, op_selected, &o) != 0) {
    fprintf(stderr, "parity-conform: out of memory building the case table\n");
    return 2;
  }
  unsigned char *selected = calloc(cases.count ? cases.count : 1, 1);
  if (!selected) return 2;
  for (size_t i = 0; i < cases.count; i++) selected[i] = (unsigned char)case_selected(&o, &cases, i);
  if (cf_cases_keep_share(&cases, selected, o.shard, o.shards) != 0) {
    fprintf(stderr, "parity-conform: out of memory dealing the shards\n");
    return 2;
  }
  if (o.list) {
    for (size_t i = 0; i < cases.count; i++)
      if (selected[i]) printf("%s\n", cases.items[i].id);
    free(selected);
    cf_cases_free(&cases);
    return 0;
  }
  size_t nselected = 0;
  for (size_t i = 0; i < cases.count; i++) nselected += selected[i];
  if (o.parts > 1) { /* --part K/P: the K-th of P contiguous runs of the selected cases */
    size_t lo = nselected * o.part / o.parts, hi = nselected * (o.part + 1) / o.parts, rank = 0;
    for (size_t i = 0; i < cases.count; i++)
      if (selected[i]) {
        selected[i] = rank >= lo && rank < hi;
        rank++;
      }
  }
  cf_console_t con = {.verbose = o.verbose, .failures_only = o.failures_only, .progress = isatty(STDOUT_FILENO)};
  cf_report_t rep;
  memset(&rep, 0, sizeof rep);
  rep.seed = o.seed;
  rep.full = o.full;
  build_command(&rep, argv[0]);
  if (o.child_fd >= 0) cf_child_attach(o.child_fd);
  int exit_code = o.child_fd < 0 && !o.in_process && !o.determinism_probe
                      ? run_isolated(argc, argv, &o, &con, nselected, &rep)
                      : run_in_process(&o, &con, &rep, &cases, selected);
  if (o.json && cf_write_json(&rep, o.json) != 0) {
    fprintf(stderr, "parity-conform: cannot write %s\n", o.json);
    exit_code = 2;
  }
  if (o.markdown && cf_write_markdown(&rep, o.markdown) != 0) {
    fprintf(stderr, "parity-conform: cannot write %s\n", o.markdown);
    exit_code = 2;
  }
  if (o.junit && cf_write_junit(&rep, o.junit) != 0) {
    fprintf(stderr, "parity-conform: cannot write %s\n", o.junit);
    exit_code = 2;
  }
  if (o.html && cf_write_html(&rep, o.html) != 0) {
    fprintf(stderr, "parity-conform: cannot write %s\n", o.html);
    exit_code = 2;
  }
  free(selected);
  cf_report_free(&rep);
  cf_cases_free(&cases);
  return exit_code;
}
