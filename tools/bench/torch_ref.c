/* torch_ref.c — the torch_ref.py subprocess (torch_ref.h). */
#define _POSIX_C_SOURCE 200809L
#include "torch_ref.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"

static struct {
  int configured, enabled, threads, started, failed;
  bench_timing timing;
  pid_t pid;
  FILE *to, *from;
  long next_id;
  char status[400]; /* version, or why unavailable */
} T = {.status = "not used"};

void torch_ref_config(int enabled, int threads, const bench_timing *t) {
  T.configured = 1;
  T.enabled = enabled;
  T.threads = threads;
  T.timing = *t;
  if (!enabled) snprintf(T.status, sizeof T.status, "turned off (--no-torch)");
}

/* PARITY_BENCH_TORCH_SCRIPT, else share/parity/torch_ref.py beside an installed bin/, else the
 * source tree's copy (a build tree). */
static const char *script_path(void) {
  static char installed[4096];
  const char *env = getenv("PARITY_BENCH_TORCH_SCRIPT");
  if (env && *env) return env;
  char exe[4000];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(installed, sizeof installed, "%s/../%s", exe, PARITY_BENCH_TORCH_SCRIPT_REL);
    if (access(installed, R_OK) == 0) return installed;
  }
  return PARITY_BENCH_TORCH_SCRIPT_SRC;
}

static void stop(void) {
  if (T.to) fclose(T.to);
  if (T.from) fclose(T.from);
  T.to = T.from = NULL;
  if (T.pid > 0) waitpid(T.pid, NULL, 0);
  T.pid = 0;
}

/* Start `python script`; 1 with T.to / T.from set. */
static int spawn(const char *python, const char *script) {
  int in[2], out[2];
  if (pipe(in)) return 0;
  if (pipe(out)) {
    close(in[0]), close(in[1]);
    return 0;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execlp(python, python, script, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  T.pid = pid;
  T.to = fdopen(in[1], "w");
  T.from = fdopen(out[0], "r");
  return T.to && T.from;
}

/* One request line out, one answer line back, parsed; NULL when the subprocess is gone. */
static json *ask(const char *line) {
  if (fputs(line, T.to) < 0 || fflush(T.to)) return NULL;
  static char buf[4096];
  if (!fgets(buf, sizeof buf, T.from)) return NULL;
  char err[200];
  return json_parse(buf, err, sizeof err);
}

static void start(void) {
  T.started = 1;
  signal(SIGPIPE, SIG_IGN); /* a subprocess that dies shows as a failed write, not a signal */
  const char *env = getenv("PARITY_BENCH_PYTHON"), *script = script_path();
  const char *pythons[] = {env && *env ? env : "/usr/bin/python3", env && *env ? NULL : "python3", NULL};
  char why[300] = "python3 not found";
  if (access(script, R_OK) != 0) {
    snprintf(T.status, sizeof T.status, "unavailable: %.300s not found", script);
    T.failed = 1;
    return;
  }
  char cfg[160];
  snprintf(cfg, sizeof cfg, "{\"threads\": %d, \"min_rep_s\": %g}\n", T.threads, T.timing.min_rep_s);
  for (int p = 0; pythons[p]; p++) {
    if (!spawn(pythons[p], script)) {
      stop();
      continue;
    }
    json *j = ask(cfg);
    const json *avail = json_get(j, "available");
    if (avail && avail->type == JSON_BOOL && avail->number) {
      snprintf(T.status, sizeof T.status, "torch %s (%d threads on CPUs %s, %s)", json_str(j, "torch", "?"),
               (int)json_num(j, "threads", 0), json_str(j, "cpus", "?"), pythons[p]);
      json_free(j);
      return;
    }
    if (j)
      snprintf(why, sizeof why, "%s: %s", pythons[p], json_str(j, "reason", "torch unavailable"));
    else
      snprintf(why, sizeof why, "%.60s did not run %.200s", pythons[p], script);
    json_free(j);
    stop();
  }
  snprintf(T.status, sizeof T.status, "unavailable: %s", why);
  T.failed = 1;
}

static void shape_json(char *out, size_t n, int r, const int64_t *s) {
  size_t k = (size_t)snprintf(out, n, "[");
  for (int i = 0; i < r && k < n; i++) k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? "," : "", (long long)s[i]);
  if (k < n) snprintf(out + k, n - k, "]");
}

/* The subprocess stopped answering: no more torch references in this run. */
static void lost(torch_ref *r) {
  snprintf(T.status, sizeof T.status, "unavailable: the torch subprocess stopped answering");
  T.failed = 1;
  stop();
  r->prepared = 0;
  snprintf(r->why, sizeof r->why, "%s", T.status);
}

/* One timed repetition in the subprocess: its seconds per call, or -1 with the reason in r. */
static double rep(void *ctx) {
  torch_ref *r = ctx;
  if (T.failed || !r->prepared) return -1;
  char line[64];
  snprintf(line, sizeof line, "{\"id\": %ld, \"rep\": true}\n", r->id);
  json *j = ask(line);
  if (!j) {
    lost(r);
    return -1;
  }
  double s = json_num(j, "seconds", -1);
  if (s <= 0) snprintf(r->why, sizeof r->why, "%s", json_str(j, "error", "no time"));
  json_free(j);
  return s > 0 ? s : -1;
}

int torch_ref_job(torch_ref *r, bench_job *job, const char *op, int ra, const int64_t *a, int rb, const int64_t *b) {
  *r = (torch_ref){.id = -1, .seconds = -1};
  snprintf(r->name, sizeof r->name, "torch.%s", op);
  if (!T.configured || !T.enabled) {
    snprintf(r->why, sizeof r->why, "turned off (--no-torch)");
    return 0;
  }
  if (!T.started) start();
  if (T.failed) {
    snprintf(r->why, sizeof r->why, "%s", T.status);
    return 0;
  }
  char sa[80], sb[80], line[256];
  shape_json(sa, sizeof sa, ra, a);
  shape_json(sb, sizeof sb, rb, b);
  r->id = T.next_id++;
  snprintf(line, sizeof line, "{\"id\": %ld, \"op\": \"%s\", \"a\": %s, \"b\": %s}\n", r->id, op, sa, sb);
  json *j = ask(line);
  if (!j) {
    lost(r);
    return 0;
  }
  const json *err = json_get(j, "error");
  if (err)
    snprintf(r->why, sizeof r->why, "%s", json_str(j, "error", "failed"));
  else
    r->prepared = 1;
  json_free(j);
  *job = (bench_job){NULL, NULL, r, -1, 0, rep};
  return r->prepared;
}

void torch_ref_done(torch_ref *r, const bench_job *job) {
  r->seconds = r->prepared && job->seconds > 0 ? job->seconds : -1;
  if (!r->prepared || T.failed) return;
  char line[64];
  snprintf(line, sizeof line, "{\"id\": %ld, \"release\": true}\n", r->id);
  json *j = ask(line);
  if (!j) lost(r);
  json_free(j);
  r->prepared = 0;
}

void torch_ref_attach(const torch_ref *r, bench_figure *f) {
  if (r->seconds > 0)
    bench_ref_value(f, r->name, f->work / r->seconds / 1e9);
  else
    bench_ref_missing(f, r->name, r->why[0] ? r->why : "no time");
}

const char *torch_ref_finish(void) {
  stop();
  return T.status;
}
