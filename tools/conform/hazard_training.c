/* hazard_training.c — training through the tape.
 *
 * trajectory: 20 Adam steps on a small MLP with sin activation, on the device and on the CPU in
 * the same dtype (f32). The parameter divergence per step, ||p_dev - p_cpu|| / ||p_cpu||, is set
 * against a baseline: the CPU against itself with every initial weight moved by one ulp. At lr
 * 0.02 (convergent) a backend fails when its divergence exceeds 10x the baseline at any step. At
 * lr 2.0 (divergent) it is only reported: divergence within the baseline's order is chaos, not
 * a backend bug (the JAX jit-vs-eager lesson).
 *
 * eager-vs-replay: a captured forward+backward step replayed on new inputs must equal the eager
 * step on those inputs bit for bit, on every backend; eager-vs-replay.reductions: the same for a
 * plan of reductions split into partials (its scratch grows while it records). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hazard_tape.h"

#define STEPS 20
#define NP 4
static const uint32_t prank[NP] = {2, 1, 2, 1};
static const int64_t pshape[NP][2] = {{16, 4}, {16, 0}, {1, 16}, {1, 0}};
static const int64_t psize[NP] = {64, 16, 16, 1};

typedef struct mlp_data {
  double x[32 * 4], y[32], p[NP][64];
} mlp_data;

static void make_data(mlp_data *d, int perturb) {
  ht_values(d->x, 32 * 4, 101, 2.0, PARITY_DTYPE_F32);
  for (int i = 0; i < 32; i++) d->y[i] = sin(1.5 * d->x[i * 4]) * cos(d->x[i * 4 + 1]) + 0.3 * d->x[i * 4 + 2];
  for (int k = 0; k < NP; k++) {
    ht_values(d->p[k], psize[k], 200 + (uint64_t)k, 0.5, PARITY_DTYPE_F32);
    if (perturb)
      for (int64_t i = 0; i < psize[k]; i++) d->p[k][i] = nextafterf((float)d->p[k][i], INFINITY);
  }
}

/* Train; traj[s * total + j] holds every parameter after step s. */
static parity_status_t train(parity_device_t *dev, const mlp_data *d, double lr, double *traj, const char **what) {
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *p[NP] = {0}, *x = NULL, *y = NULL;
  parity_optimizer_t *opt = NULL;
  *what = "creating tensors";
  for (int k = 0; k < NP && st == PARITY_STATUS_OK; k++)
    p[k] = ht_tensor(dev, PARITY_DTYPE_F32, prank[k], pshape[k], d->p[k], 1, &st);
  if (st == PARITY_STATUS_OK) x = ht_tensor(dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 4}, d->x, 0, &st);
  if (st == PARITY_STATUS_OK) y = ht_tensor(dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 1}, d->y, 0, &st);
  if (st == PARITY_STATUS_OK) st = parity_adam_create(p, NP, lr, 0.9, 0.999, 1e-8, &opt);
  int64_t total = 0;
  for (int k = 0; k < NP; k++) total += psize[k];
  for (int s = 0; s < STEPS && st == PARITY_STATUS_OK; s++) {
    parity_tensor_t *t[4] = {0};
    *what = "training step";
    parity_optimizer_zero_grad(opt);
    st = parity_linear(x, p[0], p[1], &t[0]);
    if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SIN, t[0], &t[1]);
    if (st == PARITY_STATUS_OK) st = parity_linear(t[1], p[2], p[3], &t[2]);
    if (st == PARITY_STATUS_OK) st = parity_mse_loss(t[2], y, &t[3]);
    if (st == PARITY_STATUS_OK) st = parity_backward(t[3], NULL, 0);
    if (st == PARITY_STATUS_OK) st = parity_optimizer_step(opt);
    int64_t off = 0;
    for (int k = 0; k < NP && st == PARITY_STATUS_OK; k++) {
      st = parity_tensor_to_f64(p[k], traj + s * total + off, (uint64_t)psize[k]);
      off += psize[k];
    }
    for (int i = 0; i < 4; i++) parity_tensor_release(t[i]);
  }
  parity_optimizer_destroy(opt);
  for (int k = 0; k < NP; k++) parity_tensor_release(p[k]);
  parity_tensor_release(x);
  parity_tensor_release(y);
  return st;
}

static double rel_dist(const double *a, const double *b, int64_t n) {
  double dd = 0, bb = 0;
  for (int64_t i = 0; i < n; i++) {
    dd += (a[i] - b[i]) * (a[i] - b[i]);
    bb += b[i] * b[i];
  }
  return isfinite(dd) ? sqrt(dd / (bb > 0 ? bb : 1)) : INFINITY;
}

static void trajectory(cf_env_t *env, cf_result_t *r, double lr, int convergent) {
  ht_set_dtype(r, PARITY_DTYPE_F32);
  if (!env->oracle) {
    r->status = CF_SKIPPED;
    cf_result_note(r, "no CPU oracle");
    return;
  }
  int64_t total = 0;
  for (int k = 0; k < NP; k++) total += psize[k];
  mlp_data *d = malloc(sizeof *d), *dp = malloc(sizeof *dp);
  double *dev = malloc(sizeof(double) * STEPS * total), *cpu = malloc(sizeof(double) * STEPS * total),
         *base = malloc(sizeof(double) * STEPS * total);
  make_data(d, 0);
  make_data(dp, 1);
  const char *what;
  parity_status_t st = train(env->dev, d, lr, dev, &what);
  if (st != PARITY_STATUS_OK)
    ht_call_failed(r, st, what);
  else if (train(env->oracle, d, lr, cpu, &what) != PARITY_STATUS_OK ||
           train(env->oracle, dp, lr, base, &what) != PARITY_STATUS_OK)
    cf_result_fail(r, "CPU reference %s failed: %s", what, parity_last_error());
  else {
    double worst = 0, dmax = 0, bmax = 0;
    int worst_step = 0;
    for (int s = 0; s < STEPS; s++) {
      double dv = rel_dist(dev + s * total, cpu + s * total, total);
      double bv = rel_dist(base + s * total, cpu + s * total, total);
      double ratio = dv / fmax(bv, 1e-300);
      if (dv == 0) ratio = 0;
      if (ratio > worst) worst = ratio, worst_step = s;
      dmax = fmax(dmax, dv);
      bmax = fmax(bmax, bv);
    }
    r->worst_ratio = convergent ? worst / 10.0 : worst;
    if (convergent && worst > 10)
      cf_result_fail(r,
                     "parameter divergence %.3g x the one-ulp baseline at step %d (limit 10x): a backend "
                     "difference, not chaos",
                     worst, worst_step);
    else if (convergent)
      cf_result_note(r, "divergence at most %.3g x the one-ulp baseline (max %.3g vs baseline %.3g)", worst, dmax,
                     bmax);
    else
      cf_result_note(r, "divergent run: divergence %.3g x the one-ulp baseline (max %.3g vs %.3g): %s", worst, dmax,
                     bmax, worst <= 10 ? "chaos, not a backend bug" : "larger than chaos explains; inspect");
  }
  free(d), free(dp), free(dev), free(cpu), free(base);
}

void cf_hazard_trajectory_convergent(cf_env_t *env, cf_result_t *r) { trajectory(env, r, 0.02, 1); }
void cf_hazard_trajectory_divergent(cf_env_t *env, cf_result_t *r) { trajectory(env, r, 2.0, 0); }

/* ---- eager vs replay ------------------------------------------------------------------------ */
/* Values that differ, bit for bit, between the replay's reads rep[k] (n[k] values each) and the
 * eager step's eag[k] (m[k]); a read that failed or came back another size counts as one. */
static int64_t replay_mismatches(double *const *rep, const int64_t *n, double *const *eag, const int64_t *m,
                                 int count) {
  int64_t mismatches = 0;
  for (int k = 0; k < count; k++) {
    if (!rep[k] || !eag[k] || n[k] != m[k]) mismatches++;
    for (int64_t i = 0; rep[k] && eag[k] && i < n[k] && i < m[k]; i++)
      if (memcmp(&rep[k][i], &eag[k][i], sizeof(double)) != 0) mismatches++;
  }
  return mismatches;
}

static parity_status_t step(parity_tensor_t **p, parity_tensor_t *x, parity_tensor_t *y, parity_tensor_t **loss) {
  parity_tensor_t *t[3] = {0};
  parity_status_t st = parity_linear(x, p[0], p[1], &t[0]);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SIN, t[0], &t[1]);
  if (st == PARITY_STATUS_OK) st = parity_linear(t[1], p[2], p[3], &t[2]);
  if (st == PARITY_STATUS_OK) st = parity_mse_loss(t[2], y, loss);
  if (st == PARITY_STATUS_OK) st = parity_backward(*loss, NULL, 0);
  for (int i = 0; i < 3; i++) parity_tensor_release(t[i]);
  return st;
}

void cf_hazard_eager_vs_replay(cf_env_t *env, cf_result_t *r) {
  ht_set_dtype(r, PARITY_DTYPE_F32);
  mlp_data *d = malloc(sizeof *d);
  make_data(d, 0);
  double x2[32 * 4];
  ht_values(x2, 32 * 4, 102, 2.0, PARITY_DTYPE_F32);
  float x2f[32 * 4];
  for (int i = 0; i < 32 * 4; i++) x2f[i] = (float)x2[i];
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *p[NP] = {0}, *x = NULL, *y = NULL, *loss_cap = NULL, *loss_e = NULL, *g_cap[NP] = {0};
  parity_plan_t *plan = NULL;
  const char *what = "creating tensors";
  for (int k = 0; k < NP && st == PARITY_STATUS_OK; k++)
    p[k] = ht_tensor(env->dev, PARITY_DTYPE_F32, prank[k], pshape[k], d->p[k], 1, &st);
  if (st == PARITY_STATUS_OK) x = ht_tensor(env->dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 4}, d->x, 0, &st);
  if (st == PARITY_STATUS_OK) y = ht_tensor(env->dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 1}, d->y, 0, &st);
  if (st == PARITY_STATUS_OK) {
    what = "capture";
    st = parity_plan_begin(env->dev, &plan);
  }
  if (st == PARITY_STATUS_OK) st = step(p, x, y, &loss_cap);
  if (plan && parity_plan_end(plan) != PARITY_STATUS_OK && st == PARITY_STATUS_OK) st = PARITY_STATUS_INTERNAL;
  for (int k = 0; k < NP && st == PARITY_STATUS_OK; k++) g_cap[k] = parity_tensor_retain(parity_tensor_grad(p[k]));
  if (st == PARITY_STATUS_OK) {
    what = "replay";
    st = parity_tensor_write(x, x2f, sizeof x2f);
  }
  if (st == PARITY_STATUS_OK) st = parity_plan_replay(plan);
  double *rep[NP + 1] = {0}, *eag[NP + 1] = {0};
  int64_t n[NP + 1] = {0}, m[NP + 1] = {0};
  if (st == PARITY_STATUS_OK) {
    rep[0] = ht_read(loss_cap, &n[0]);
    for (int k = 0; k < NP; k++) rep[k + 1] = ht_read(g_cap[k], &n[k + 1]);
    for (int k = 0; k < NP; k++) parity_tensor_zero_grad(p[k]);
    what = "eager step";
    st = step(p, x, y, &loss_e);
  }
  if (st != PARITY_STATUS_OK)
    ht_call_failed(r, st, what);
  else {
    eag[0] = ht_read(loss_e, &m[0]);
    for (int k = 0; k < NP; k++) eag[k + 1] = ht_read(parity_tensor_grad(p[k]), &m[k + 1]);
    int64_t mismatches = replay_mismatches(rep, n, eag, m, NP + 1);
    r->worst_ratio = mismatches ? INFINITY : 0;
    if (mismatches)
      cf_result_fail(r, "%lld loss/gradient values differ between replay and eager", (long long)mismatches);
    else
      cf_result_note(r, "loss and %d gradients bitwise equal after replay on new inputs (%llu commands)", NP,
                     (unsigned long long)parity_plan_command_count(plan));
  }
  for (int k = 0; k <= NP; k++) free(rep[k]), free(eag[k]);
  parity_plan_destroy(plan);
  for (int k = 0; k < NP; k++) parity_tensor_release(p[k]), parity_tensor_release(g_cap[k]);
  parity_tensor_release(x), parity_tensor_release(y), parity_tensor_release(loss_cap), parity_tensor_release(loss_e);
  free(d);
}

/* ---- eager vs replay: reductions split into partials ---------------------------------------- */
/* A plan whose reductions run in partials (more than 4096 terms: psup_reduce_partials), the
 * second with more partials than the first, and max's backward (Vulkan keeps its tie counts in
 * scratch too): a plan's scratch has to grow as eager's does. The checking runs size scratch
 * exactly (PARITY_<BACKEND>_SCRATCH=exact), so a plan that hands a later reduction the first one's
 * scratch writes past it, which the checking executors and GPU-assisted validation name. */
#define RA 8192
#define RB 65536

static parity_status_t red_step(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **loss) {
  parity_tensor_t *s[2] = {0};
  parity_status_t st = parity_reduce(PARITY_OP_SUM, a, 1, 0, &s[0]);
  if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_MAX, b, 1, 0, &s[1]);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_ADD, s[0], s[1], loss);
  if (st == PARITY_STATUS_OK) st = parity_backward(*loss, NULL, 0);
  for (int i = 0; i < 2; i++) parity_tensor_release(s[i]);
  return st;
}

void cf_hazard_eager_vs_replay_reductions(cf_env_t *env, cf_result_t *r) {
  ht_set_dtype(r, PARITY_DTYPE_F32);
  double *v = malloc(sizeof(double) * 2 * (RA + RB));
  float *nf = malloc(sizeof(float) * (RA + RB));
  if (!v || !nf) {
    free(v), free(nf);
    ht_call_failed(r, PARITY_STATUS_OUT_OF_MEMORY, "allocating the inputs");
    return;
  }
  double *va = v, *vb = v + RA, *na = v + RA + RB;
  ht_values(va, RA + RB, 301, 4.0, PARITY_DTYPE_F32);
  ht_values(na, RA + RB, 302, 4.0, PARITY_DTYPE_F32);
  for (int64_t i = 0; i < RA + RB; i++) nf[i] = (float)na[i];
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *a = ht_tensor(env->dev, PARITY_DTYPE_F32, 1, (int64_t[]){RA}, va, 1, &st), *b = NULL;
  if (st == PARITY_STATUS_OK) b = ht_tensor(env->dev, PARITY_DTYPE_F32, 1, (int64_t[]){RB}, vb, 1, &st);
  parity_tensor_t *in[2] = {a, b}, *loss_cap = NULL, *loss_e = NULL, *g_cap[2] = {0};
  parity_plan_t *plan = NULL;
  const char *what = "capture";
  if (st == PARITY_STATUS_OK) st = parity_plan_begin(env->dev, &plan);
  if (st == PARITY_STATUS_OK) st = red_step(a, b, &loss_cap);
  if (plan && parity_plan_end(plan) != PARITY_STATUS_OK && st == PARITY_STATUS_OK) st = PARITY_STATUS_INTERNAL;
  for (int k = 0; k < 2 && st == PARITY_STATUS_OK; k++) g_cap[k] = parity_tensor_retain(parity_tensor_grad(in[k]));
  if (st == PARITY_STATUS_OK) {
    what = "replay";
    st = parity_tensor_write(a, nf, sizeof(float) * RA);
  }
  if (st == PARITY_STATUS_OK) st = parity_tensor_write(b, nf + RA, sizeof(float) * RB);
  if (st == PARITY_STATUS_OK) st = parity_plan_replay(plan);
  double *rep[3] = {0}, *eag[3] = {0};
  int64_t n[3] = {0}, m[3] = {0};
  if (st == PARITY_STATUS_OK) {
    rep[0] = ht_read(loss_cap, &n[0]);
    for (int k = 0; k < 2; k++) rep[k + 1] = ht_read(g_cap[k], &n[k + 1]);
    for (int k = 0; k < 2; k++) parity_tensor_zero_grad(in[k]);
    what = "eager step";
    st = red_step(a, b, &loss_e);
  }
  if (st != PARITY_STATUS_OK)
    ht_call_failed(r, st, what);
  else {
    eag[0] = ht_read(loss_e, &m[0]);
    for (int k = 0; k < 2; k++) eag[k + 1] = ht_read(parity_tensor_grad(in[k]), &m[k + 1]);
    int64_t mismatches = replay_mismatches(rep, n, eag, m, 3);
    r->worst_ratio = mismatches ? INFINITY : 0;
    if (mismatches)
      cf_result_fail(r, "%lld loss/gradient values differ between replay and eager (sum of %d terms, max of %d)",
                     (long long)mismatches, RA, RB);
    else
      cf_result_note(r, "loss and both gradients bitwise equal after replay on new inputs (%llu commands)",
                     (unsigned long long)parity_plan_command_count(plan));
  }
  for (int k = 0; k < 3; k++) free(rep[k]), free(eag[k]);
  parity_plan_destroy(plan);
  for (int k = 0; k < 2; k++) parity_tensor_release(in[k]), parity_tensor_release(g_cap[k]);
  parity_tensor_release(loss_cap), parity_tensor_release(loss_e);
  free(v), free(nf);
}
