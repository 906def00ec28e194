/* prepared_mlp.c — the prepared section's training step: one step of parity-train's MLP
 * (tools/train/models.c: 784 -> 128 -> relu -> 10, cross-entropy against one-hot labels, Adam,
 * batch 64) run eagerly and replayed from a plan recorded once, with a new batch written before
 * every step either way, in microseconds per step (medians of RUNS runs, the two kinds taking
 * turns run by run after a warm-up of each). The reference of the replayed figure is the eager
 * one: their ratio is what a prepared step saves on this backend. Both kinds train their own
 * copy of the model from the same initial weights and batches, and their final losses are
 * compared: a replay that computes something else is reported as a failure, not a speed-up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "sections.h"

enum { RUNS = 5, BATCH = 64, IN = MODEL_IMAGE_SIDE * MODEL_IMAGE_SIDE };

typedef struct mlp_net {
  model m;
  parity_tensor_t *x, *target, *loss;
  parity_optimizer_t *opt;
} mlp_net;

static float batch_x[BATCH * IN], batch_t[BATCH * MODEL_CLASSES];

/* batch s, made on the host: pixels in [0, 1), one-hot labels */
static void make_batch(long s) {
  uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(s + 1);
  for (int i = 0; i < BATCH * IN; i++) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    batch_x[i] = (float)(z >> 40) / (float)(1 << 24);
  }
  memset(batch_t, 0, sizeof batch_t);
  for (int b = 0; b < BATCH; b++) batch_t[b * MODEL_CLASSES + (int)((z >> (b % 32)) % MODEL_CLASSES)] = 1;
}

static int net_init(mlp_net *n, parity_device_t *dev) {
  memset(n, 0, sizeof *n);
  model_init(&n->m, MODEL_MLP, dev, PARITY_DTYPE_F32, 7);
  return parity_tensor_zeros(dev, PARITY_DTYPE_F32, 4, (int64_t[]){BATCH, 1, MODEL_IMAGE_SIDE, MODEL_IMAGE_SIDE},
                             &n->x) == PARITY_STATUS_OK &&
         parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, MODEL_CLASSES}, &n->target) ==
             PARITY_STATUS_OK &&
         parity_adam_create(n->m.param, n->m.count, 1e-3, 0.9, 0.999, 1e-8, &n->opt) == PARITY_STATUS_OK;
}

static void net_release(mlp_net *n) {
  parity_optimizer_destroy(n->opt);
  parity_tensor_release(n->x);
  parity_tensor_release(n->target);
  parity_tensor_release(n->loss);
  model_release(&n->m);
}

static int feed(mlp_net *n, long s) {
  make_batch(s);
  return parity_tensor_write(n->x, batch_x, sizeof batch_x) == PARITY_STATUS_OK &&
         parity_tensor_write(n->target, batch_t, sizeof batch_t) == PARITY_STATUS_OK;
}

/* One eager step: zero the gradients, forward, loss, backward, Adam. The loss stays on the device. */
static int step(mlp_net *n) {
  parity_tensor_t *logits = NULL;
  parity_tensor_release(n->loss);
  n->loss = NULL;
  parity_optimizer_zero_grad(n->opt);
  int ok = model_forward(&n->m, n->x, &logits) == PARITY_STATUS_OK &&
           parity_cross_entropy(logits, n->target, &n->loss) == PARITY_STATUS_OK &&
           parity_backward(n->loss, NULL, 0) == PARITY_STATUS_OK && parity_optimizer_step(n->opt) == PARITY_STATUS_OK;
  parity_tensor_release(logits);
  return ok;
}

/* `steps` steps of kind k (0 eager, 1 replayed) from batch *s on; us per step, negative on failure. */
static double one_run(int k, mlp_net *n, parity_plan_t *plan, parity_device_t *dev, long *s, int steps) {
  double t0 = bench_now_s();
  int ok = 1;
  for (int i = 0; i < steps && ok; i++, (*s)++)
    ok = feed(n, *s) && (k == 0 ? step(n) : parity_plan_replay(plan) == PARITY_STATUS_OK);
  ok = ok && parity_device_synchronize(dev) == PARITY_STATUS_OK;
  return ok ? (bench_now_s() - t0) * 1e6 / steps : -1;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *t) {
  double s[RUNS];
  memcpy(s, t, sizeof s);
  qsort(s, RUNS, sizeof *s, cmp);
  return s[RUNS / 2];
}

/* Both copies after the same batches: the same loss, bit for bit, or the figures mean nothing. */
static int same_loss(mlp_net *e, mlp_net *r, char *why, size_t len) {
  float le = 0, lr = 0;
  if (parity_tensor_to_host(e->loss, &le, sizeof le) != PARITY_STATUS_OK ||
      parity_tensor_to_host(r->loss, &lr, sizeof lr) != PARITY_STATUS_OK) {
    snprintf(why, len, "reading the losses: %s", parity_last_error());
    return 0;
  }
  if (memcmp(&le, &lr, sizeof le) == 0) return 1;
  snprintf(why, len, "eager loss %.9g, replayed %.9g after the same batches", le, lr);
  return 0;
}

void section_prepared_mlp(bench_run *run, parity_device_t *dev, const char *backend) {
  if (!bench_wanted(run, "prepared")) return;
  int steps = run->o->quick ? 3 : 20;
  mlp_net e, r;
  parity_plan_t *plan = NULL;
  long se = 0, sr = 0;
  char why[512] = "";
  int ok = net_init(&e, dev) && net_init(&r, dev) && feed(&e, se++) && step(&e) && feed(&r, sr++);
  ok = ok && parity_plan_begin(dev, &plan) == PARITY_STATUS_OK;
  ok = ok && step(&r); /* recorded, and run once as it is recorded */
  if (plan && parity_plan_end(plan) != PARITY_STATUS_OK) ok = 0;
  if (!ok) snprintf(why, sizeof why, "%s", parity_last_error());
  double eager[RUNS], replay[RUNS];
  for (int i = -1; i < RUNS && ok; i++) { /* -1: the warm-up run of each kind */
    double te = one_run(0, &e, NULL, dev, &se, steps), tr = one_run(1, &r, plan, dev, &sr, steps);
    ok = te >= 0 && tr >= 0;
    if (!ok) snprintf(why, sizeof why, "%s", parity_last_error());
    if (i >= 0) eager[i] = te, replay[i] = tr;
  }
  if (ok && se != sr) ok = 0, snprintf(why, sizeof why, "the two copies saw %ld and %ld batches", se, sr);
  if (ok) ok = same_loss(&e, &r, why, sizeof why);
  if (ok) {
    double ve = median(eager), vr = median(replay);
    bench_figure *fe =
        bench_add(run->results, "prepared", "mlp-eager", backend, "64x784", BATCH, run->threads, ve, "us");
    bench_figure *fr =
        bench_add(run->results, "prepared", "mlp-replayed", backend, "64x784", BATCH, run->threads, vr, "us");
    if (fe) fe->spread = bench_spread(eager, RUNS);
    if (fr) {
      fr->spread = bench_spread(replay, RUNS);
      bench_ref_value(fr, "mlp-eager", ve);
    }
    for (size_t k = run->results->n - (fe && fr ? 2 : fe || fr ? 1 : 0); k < run->results->n; k++)
      bench_print_row(run->log, &run->results->fig[k]);
  } else {
    fprintf(run->log, "%s: mlp training step failed: %s\n", backend, why);
    run->failures++;
  }
  parity_plan_destroy(plan);
  net_release(&e);
  net_release(&r);
}
