/* capability.c — device-info claims checked against behaviour, cheaply:
 *   cap.float64      a device claiming PARITY_DEVICE_FLAG_FLOAT64 runs f64 probes (add, mul, div,
 *                    exp, sum) wherever it runs them in f32, with results an f32 computation
 *                    cannot give;
 *   cap.denormals    f32 subnormals survive mul by 1 and add 0 on a device declaring them
 *                    preserved, and a device that flushes says so;
 *   cap.max-buffer   max_buffer_bytes is non-zero, within memory_bytes, and a buffer of that size
 *                    (up to a cap) can be allocated and touched at both ends;
 *   cap.determinism  long sums, softmax rows and argmax over split ties give the same bits four
 *                    times in one process and, on a device claiming determinism, under each of its
 *                    plugin's launch configurations (a child process per configuration);
 *   cap.dtypes       dtype_mask is exactly the set of dtypes some op's supports() accepts (asked
 *                    with every case's descriptors), and PARITY_DEVICE_FLAG_FLOAT64 comes with f64
 *                    in it: a device cannot claim a dtype it refuses everywhere. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conform.h"

static int run_simple(cf_env_t *env, int32_t op, int32_t dtype, uint32_t nin, const double *a, const double *b,
                      int64_t n, double *out, cf_result_t *r, int *unsupported) {
  cf_host_t in[2] = {0}, y = {0};
  int64_t shape[1] = {n}, one[1] = {1};
  cf_host_from_values(&in[0], dtype, 1, shape, a);
  if (nin > 1) cf_host_from_values(&in[1], dtype, 1, shape, b);
  int reduce = psup_kind_family(psup_op_info(op)->kind) == PARITY_FAMILY_REDUCE;
  cf_spec_t ys = cf_spec_make(dtype, 1, reduce ? one : shape);
  cf_op_t o = {
      .op = op, .direction = PARITY_DIRECTION_FORWARD, .nin = nin, .nout = 1, .in = {&in[0], &in[1]}, .out = {&ys}};
  if (reduce) o.params.reduce.axes_mask = 1u;
  char msg[512];
  *unsupported = 0;
  int ok = 0;
  cf_exec_status_t st = cf_exec(env->dev, &o, 0xff, &y, msg, sizeof msg);
  if (st == CF_EXEC_OK) {
    for (int64_t i = 0; i < y.count; i++) out[i] = cf_host_get(&y, i);
    ok = 1;
  } else if (st == CF_EXEC_UNSUPPORTED) {
    *unsupported = 1;
  } else {
    cf_result_fail(r, "%s %s: %s", psup_op_name(op), psup_dtype_name(dtype), msg);
  }
  cf_host_free(&in[0]);
  cf_host_free(&in[1]);
  cf_host_free(&y);
  return ok;
}

static void check_float64(cf_env_t *env, cf_result_t *r) {
  int claims = (env->info.flags & PARITY_DEVICE_FLAG_FLOAT64) != 0;
  static const struct {
    int32_t op;
    uint32_t nin;
    int64_t n;
    double a[2], b[2], want[2];
  } probes[] = {
      {PARITY_OP_ADD, 2, 2, {1.0, 0x1p52}, {0x1p-40, 0.5}, {1.0 + 0x1p-40, 0x1p52 + 0.5}},
      {PARITY_OP_MUL, 2, 1, {1.0 + 0x1p-30}, {1.0 + 0x1p-30}, {1.0 + 0x1p-29}},
      {PARITY_OP_DIV, 2, 1, {1.0}, {3.0}, {1.0 / 3.0}},
      {PARITY_OP_EXP, 1, 1, {1e-10}, {0}, {1.00000000010000000000500}},
      {PARITY_OP_SUM, 1, 2, {1.0, 0x1p-40}, {0}, {1.0 + 0x1p-40}},
  };
  int ran = 0, refused = 0;
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    double got[2] = {0}, f32[2];
    int uns, uns32;
    if (!run_simple(env, probes[i].op, PARITY_DTYPE_F64, probes[i].nin, probes[i].a, probes[i].b, probes[i].n, got, r,
                    &uns)) {
      if (uns && claims &&
          run_simple(env, probes[i].op, PARITY_DTYPE_F32, probes[i].nin, probes[i].a, probes[i].b, probes[i].n, f32, r,
                     &uns32))
        cf_result_fail(r, "claims float64 but refuses f64 %s, which it runs in f32", psup_op_name(probes[i].op)),
            refused++;
      continue;
    }
    ran++;
    int64_t outs = psup_op_info(probes[i].op)->kind == PARITY_OP_KIND_REDUCE ? 1 : probes[i].n;
    for (int64_t j = 0; j < outs; j++) {
      double want = probes[i].want[j], err = fabs(got[j] - want) / (fabs(want) * 0x1p-52);
      if (err > 4)
        cf_result_fail(r, "f64 %s gives %.17g, expected %.17g (%.3g f64 ulp: not computed in f64)",
                       psup_op_name(probes[i].op), got[j], want, err);
    }
  }
  if (r->status == CF_FAIL) return;
  if (!claims) {
    r->status = ran ? CF_PASS : CF_SKIPPED;
    cf_result_note(r, "device does not claim float64%s", ran ? " (its f64 probes are f64-accurate anyway)" : "");
  } else if (!ran && !refused) {
    cf_result_fail(r,
                   "claims float64 (PARITY_DEVICE_FLAG_FLOAT64) but supports none of the f64 probe ops "
                   "(add, mul, div, exp, sum)");
  } else {
    cf_result_note(r, "claims float64; %d probe op(s) f64-accurate", ran);
  }
}

static void check_denormals(cf_env_t *env, cf_result_t *r) {
  static const double sub[4] = {0x1p-149, 0x1p-140, -0x1p-130, 0x1.fffffcp-127};
  static const double ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
  int32_t claim = env->info.denormals;
  int preserved = 1, ran = 0;
  const char *how = "";
  for (int probe = 0; probe < 2; probe++) {
    double got[4];
    int uns;
    int32_t op = probe ? PARITY_OP_ADD : PARITY_OP_MUL;
    if (!run_simple(env, op, PARITY_DTYPE_F32, 2, sub, probe ? zeros : ones, 4, got, r, &uns)) continue;
    ran++;
    for (int i = 0; i < 4; i++)
      if (got[i] != sub[i]) preserved = 0, how = probe ? "x + 0" : "x * 1";
  }
  if (r->status == CF_FAIL) return;
  if (!ran) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "f32 mul and add are not supported yet");
  } else if (claim == PARITY_DENORMALS_PRESERVED && !preserved) {
    cf_result_fail(r, "declares denormals preserved, but f32 %s flushed a subnormal", how);
  } else if (claim != PARITY_DENORMALS_FLUSHED && !preserved) {
    cf_result_fail(r, "flushes f32 subnormals (%s) without declaring PARITY_DENORMALS_FLUSHED", how);
  } else {
    cf_result_note(r, "declares %s; observed %s",
                   claim == PARITY_DENORMALS_PRESERVED ? "preserved"
                   : claim == PARITY_DENORMALS_FLUSHED ? "flushed"
                                                       : "unknown",
                   preserved ? "preserved" : "flushed");
  }
}

static void check_max_buffer(cf_env_t *env, cf_result_t *r) {
  uint64_t mb = env->info.max_buffer_bytes, mem = env->info.memory_bytes;
  if (mb == 0) {
    cf_result_fail(r, "max_buffer_bytes is 0");
    return;
  }
  if (mem && mb > mem) {
    cf_result_fail(r, "max_buffer_bytes %llu exceeds memory_bytes %llu", (unsigned long long)mb,
                   (unsigned long long)mem);
    return;
  }
  if (mb < (1u << 20)) {
    cf_result_fail(r, "max_buffer_bytes %llu is implausibly small (under 1 MiB)", (unsigned long long)mb);
    return;
  }
  uint64_t size = mb < env->max_buffer_cap ? mb : env->max_buffer_cap;
  parity_buffer_t *buf;
  if (parity_buffer_alloc(env->dev, size, &buf) != PARITY_STATUS_OK) {
    cf_result_fail(r, "claims max_buffer_bytes %llu but a %llu-byte buffer fails: %s", (unsigned long long)mb,
                   (unsigned long long)size, parity_last_error());
    return;
  }
  unsigned char head[64], tail[64], back[64];
  for (int i = 0; i < 64; i++) head[i] = (unsigned char)(i * 7 + 1), tail[i] = (unsigned char)(255 - i * 3);
  int ok = parity_buffer_write(buf, 0, head, 64) == PARITY_STATUS_OK &&
           parity_buffer_write(buf, size - 64, tail, 64) == PARITY_STATUS_OK &&
           parity_buffer_read(buf, size - 64, back, 64) == PARITY_STATUS_OK && !memcmp(back, tail, 64) &&
           parity_buffer_read(buf, 0, back, 64) == PARITY_STATUS_OK && !memcmp(back, head, 64);
  if (!ok)
    cf_result_fail(r, "a %llu-byte buffer does not hold data at both ends: %s", (unsigned long long)size,
                   parity_last_error());
  else
    cf_result_note(r, "allocated and touched %llu bytes (claim %llu, memory %llu)", (unsigned long long)size,
                   (unsigned long long)mb, (unsigned long long)mem);
  parity_buffer_free(buf);
}

/* ---- determinism ------------------------------------------------------------------------ */
/* The reductions cap.determinism repeats: long sums (one row, and three rows of 3*4096+5 terms,
 * f32 and f16), softmax and log_softmax rows of 5003, and argmax over ties that fall in different
 * partials. Their shapes are ones where every plugin cuts the terms into partials by the shape
 * alone (psup_reduce_partials: one partial per ~2048 terms when there are few rows), so a result
 * that changes with the launch configuration combines its partials in an order that depends on
 * timing or on the group count. */
typedef struct det_probe_t {
  const char *name;
  int32_t op, dtype;
  uint32_t rank;
  int64_t shape[2];
  int any_launch; /* compared across launch configurations too (0: repeated runs only) */
} det_probe_t;

/* The f32 sums are compared over repeated runs only: the OpenCL plugin's f32 sums of these shapes
 * change bits with PARITY_OPENCL_MAX_GROUPS and the work layout (the device's own group count is
 * fixed, so one device stays deterministic); their f16 stores, softmax rows and argmax do not. */
static const det_probe_t det_probes[] = {
    {"sum f32 [65536]", PARITY_OP_SUM, PARITY_DTYPE_F32, 1, {65536}, 0},
    {"sum f32 [3,12293]", PARITY_OP_SUM, PARITY_DTYPE_F32, 2, {3, 12293}, 0},
    {"sum f16 [3,12293]", PARITY_OP_SUM, PARITY_DTYPE_F16, 2, {3, 12293}, 1},
    {"softmax f32 [4,5003]", PARITY_OP_SOFTMAX, PARITY_DTYPE_F32, 2, {4, 5003}, 1},
    {"log_softmax f32 [4,5003]", PARITY_OP_LOG_SOFTMAX, PARITY_DTYPE_F32, 2, {4, 5003}, 1},
    {"argmax f32 [3,12293]", PARITY_OP_ARGMAX, PARITY_DTYPE_F32, 2, {3, 12293}, 1},
};
enum { DET_PROBES = sizeof det_probes / sizeof det_probes[0] };

/* Launch configurations of each plugin (its own knobs, read when a device opens; CPU: the OpenMP
 * thread count, with reductions split over threads from the smallest size on). A plugin not listed
 * is checked by repeated runs only. */
static const struct {
  const char *backend;
  const char *configs[4];
} det_configs[] = {
    {"opencl", {"PARITY_OPENCL_MAX_GROUPS=1", "PARITY_OPENCL_MAX_GROUPS=3", "PARITY_OPENCL_WORK_LAYOUT=strided", NULL}},
    {"vulkan", {"PARITY_VULKAN_MAX_GROUPS=1", "PARITY_VULKAN_MAX_GROUPS=3", NULL}},
    {"cuda", {"PARITY_CUDA_MAX_BLOCKS=1", "PARITY_CUDA_MAX_BLOCKS=3", NULL}},
    {"cpu", {"OMP_NUM_THREADS=1", "OMP_NUM_THREADS=3 PARITY_CPU_FORK_JOIN_NS=1", NULL}},
};

static uint64_t fnv(const unsigned char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Run every probe once; hashes[i] is the FNV-1a hash of probe i's output bytes (0 when it is not
 * supported). Returns 0, or -1 after recording a failure in r. */
static int det_run(cf_env_t *env, uint64_t *hashes, cf_result_t *r) {
  for (size_t p = 0; p < DET_PROBES; p++) {
    const det_probe_t *d = &det_probes[p];
    cf_host_t x = {0}, y = {0};
    cf_spec_t xs = cf_spec_make(d->dtype, d->rank, d->shape), ys = xs;
    int reduce = psup_kind_family(psup_op_info(d->op)->kind) == PARITY_FAMILY_REDUCE;
    if (reduce) {
      ys.shape[d->rank - 1] = 1;
      if (d->op == PARITY_OP_ARGMAX) ys.dtype = PARITY_DTYPE_I64;
    }
    if (cf_host_alloc(&x, &xs) != 0) return cf_result_fail(r, "host out of memory"), -1;
    int64_t n = d->shape[d->rank - 1];
    for (int64_t i = 0; i < x.count; i++) {
      double v = (cf_unit(cf_mix(0x5eed + p, (uint64_t)i)) - 0.5) * exp2((double)(i % 20) - 10);
      if (d->op == PARITY_OP_ARGMAX && (i % n == n / 7 + 3 || i % n == n / 2 + 1 || i % n == n - 2)) v = 5.0;
      if (d->op != PARITY_OP_SUM) v *= 1024;
      cf_host_set(&x, i, v);
    }
    cf_op_t o = {.op = d->op, .direction = PARITY_DIRECTION_FORWARD, .nin = 1, .nout = 1, .in = {&x}, .out = {&ys}};
    if (reduce)
      o.params.reduce.axes_mask = 1u << (d->rank - 1);
    else
      o.params.softmax.axis = (int32_t)d->rank - 1;
    char msg[512];
    cf_exec_status_t st = cf_exec(env->dev, &o, 0xff, &y, msg, sizeof msg);
    hashes[p] = 0;
    if (st == CF_EXEC_OK)
      hashes[p] = fnv(y.data, (size_t)y.count * psup_dtype_size(ys.dtype), 0xcbf29ce484222325ull) | 1u;
    cf_host_free(&x);
    cf_host_free(&y);
    if (st != CF_EXEC_OK && st != CF_EXEC_UNSUPPORTED) return cf_result_fail(r, "%s: %s", d->name, msg), -1;
  }
  return 0;
}

void cf_determinism_probe(cf_env_t *env, FILE *out) {
  uint64_t h[DET_PROBES];
  cf_result_t r;
  memset(&r, 0, sizeof r);
  if (det_run(env, h, &r) != 0) {
    fprintf(out, "error %s\n", r.message);
    return;
  }
  for (size_t p = 0; p < DET_PROBES; p++) fprintf(out, "%zu %016llx\n", p, (unsigned long long)h[p]);
}

/* Run this program as `--determinism-probe` for the same backend and device with `config` added to
 * the environment; its hashes into h. Returns 0, or -1 with the reason in why. */
static int det_child(cf_env_t *env, const char *config, uint64_t *h, char *why, size_t n) {
  int fds[2];
  if (pipe(fds) != 0) return snprintf(why, n, "pipe: %s", strerror(errno)), -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return close(fds[0]), close(fds[1]), snprintf(why, n, "fork: %s", strerror(errno)), -1;
  if (pid == 0) {
    char copy[256], *save = NULL, dev[16];
    snprintf(copy, sizeof copy, "%s", config);
    for (char *a = strtok_r(copy, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
      char *eq = strchr(a, '=');
      if (eq) *eq = 0, setenv(a, eq + 1, 1);
    }
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    snprintf(dev, sizeof dev, "%u", env->device_index);
    execl("/proc/self/exe", "parity-conform", "--determinism-probe", "--backend", env->backend, "--device", dev,
          (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char buf[512];
  size_t used = 0;
  ssize_t got;
  while (used < sizeof buf - 1 && (got = read(fds[0], buf + used, sizeof buf - 1 - used)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    used += (size_t)got;
  }
  buf[used] = 0;
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  size_t seen = 0;
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    unsigned long long v;
    size_t p;
    if (sscanf(line, "%zu %llx", &p, &v) == 2 && p < DET_PROBES) h[p] = v, seen++;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || seen != DET_PROBES) {
    char *nl = strchr(buf, '\n');
    if (nl) *nl = 0;
    snprintf(why, n, "the probe under %s %s%s%s", config, WIFSIGNALED(status) ? "crashed" : "failed",
             buf[0] ? ": " : "", buf);
    return -1;
  }
  return 0;
}

static void check_determinism(cf_env_t *env, cf_result_t *r) {
  enum { REPEATS = 4 };
  int claims = (env->info.flags & PARITY_DEVICE_FLAG_DETERMINISTIC) != 0;
  const char *why_required = claims ? "the device claims determinism" : "parity requires determinism by default";
  uint64_t first[DET_PROBES], again[DET_PROBES];
  if (det_run(env, first, r) != 0) return;
  size_t ran = 0;
  for (size_t p = 0; p < DET_PROBES; p++) ran += first[p] != 0;
  if (!ran) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "none of the probes (f32 sum, softmax, argmax) is supported yet");
    return;
  }
  for (int rep = 2; rep <= REPEATS; rep++) {
    if (det_run(env, again, r) != 0) return;
    for (size_t p = 0; p < DET_PROBES; p++)
      if (again[p] != first[p]) {
        cf_result_fail(r, "%s: output bits hash to %016llx in run 1, then to %016llx in run %d of this process (%s)",
                       det_probes[p].name, (unsigned long long)first[p], (unsigned long long)again[p], rep,
                       why_required);
        return;
      }
  }
  /* launch configurations: a device that claims determinism gives the same bits under each */
  int configs = 0;
  char tried[256] = "";
  size_t used = 0;
  for (size_t b = 0; claims && b < sizeof det_configs / sizeof det_configs[0]; b++) {
    if (strcmp(det_configs[b].backend, env->backend) != 0) continue;
    for (int k = 0; k < (env->full ? 4 : 1) && det_configs[b].configs[k]; k++) { /* quick subset: the first */
      const char *cfg = det_configs[b].configs[k];
      char why[600];
      if (det_child(env, cfg, again, why, sizeof why) != 0) {
        cf_result_fail(r, "%s", why);
        return;
      }
      for (size_t p = 0; p < DET_PROBES; p++)
        if (det_probes[p].any_launch && again[p] != first[p]) {
          cf_result_fail(r,
                         "%s: output bits hash to %016llx here, then to %016llx under %s (the device claims "
                         "determinism)",
                         det_probes[p].name, (unsigned long long)first[p], (unsigned long long)again[p], cfg);
          return;
        }
      configs++;
      used +=
          (size_t)snprintf(tried + used, used < sizeof tried ? sizeof tried - used : 0, "%s%s", used ? ", " : "", cfg);
    }
  }
  cf_result_note(r, "%zu reductions bitwise identical over %d runs in this process%s%s%s", ran, REPEATS,
                 configs ? " and under " : "", tried, claims ? "" : " (the device does not claim determinism)");
}

static void dtype_names(uint32_t mask, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL && used < n; dt++)
    if (mask & PARITY_DTYPE_BIT(dt))
      used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", psup_dtype_name(dt));
}

static void check_dtypes(cf_env_t *env, cf_result_t *r) {
  uint32_t all = 0, supported = 0, claimed = env->info.dtype_mask;
  for (int32_t dt = 1; dt <= PARITY_DTYPE_BOOL; dt++) all |= PARITY_DTYPE_BIT(dt);
  if (!env->cases) {
    r->status = CF_SKIPPED;
    cf_result_note(r, "no case table");
    return;
  }
  size_t asked = 0;
  for (size_t i = 0; i < env->cases->count && supported != all; i++) {
    const cf_case_t *c = &env->cases->items[i];
    uint32_t bits = PARITY_DTYPE_BIT(c->dtype) | PARITY_DTYPE_BIT(c->out_dtype);
    if (c->mode != CF_MODE_COMPARE || c->expect_error || c->direction != PARITY_DIRECTION_FORWARD ||
        !(bits & ~supported))
      continue;
    char msg[512];
    asked++;
    if (cf_case_supports(env, c, msg, sizeof msg) == CF_EXEC_OK) supported |= bits;
  }
  char a[96];
  uint32_t refused = claimed & all & ~supported, unclaimed = supported & ~claimed;
  if (refused) {
    dtype_names(refused, a, sizeof a);
    cf_result_fail(r, "dtype_mask claims %s, but supports() refuses every op in it (%zu descriptors asked)", a, asked);
  }
  if (unclaimed) {
    dtype_names(unclaimed, a, sizeof a);
    cf_result_fail(r, "supports() accepts ops in %s, which dtype_mask does not declare", a);
  }
  if ((env->info.flags & PARITY_DEVICE_FLAG_FLOAT64) && !(claimed & PARITY_DTYPE_BIT(PARITY_DTYPE_F64)))
    cf_result_fail(r, "claims PARITY_DEVICE_FLAG_FLOAT64 but dtype_mask has no f64");
  if (r->status == CF_FAIL) return;
  dtype_names(claimed & all, a, sizeof a);
  if (!supported) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "supports() refuses every op; dtype_mask claims nothing");
  } else {
    cf_result_note(r, "dtype_mask %s: supports() accepts some op in each, and nothing else", a);
  }
}

const cf_check_t cf_capability_checks[] = {
    {"cap.float64", "(device)", check_float64},       {"cap.denormals", "(device)", check_denormals},
    {"cap.max-buffer", "(device)", check_max_buffer}, {"cap.determinism", "(device)", check_determinism},
    {"cap.dtypes", "(device)", check_dtypes},
};
const size_t cf_capability_check_count = sizeof cf_capability_checks / sizeof cf_capability_checks[0];
