/* distributed.c — parity-train --distributed: data-parallel training of parity-train's
 * generated-data MLP and CNN on MPI ranks (core/dist, docs/distributed.md).
 *
 * The global batch (MLP 64 samples, CNN 16) is cut into S equal slices (--slices, default 4).
 * Rank r of N owns slices [r*S/N, (r+1)*S/N). For every slice it runs forward and backward of the
 * slice's share of the global loss (the slice mean scaled by slice/global batch, so the shares add
 * up to the global mean), keeps the gradients, tree-sums its slices (parity_dist_tree_sum), and
 * the ranks all-reduce those partial sums with the same fixed tree (parity_dist_allreduce). Every
 * rank then takes the same optimizer step. The sum is the rank-order tree over the S slices
 * whenever S/N is a power of two, so 1, 2 and 4 ranks (and one process with --slices S, no MPI)
 * give bitwise the same gradients, parameters and loss curve. Against plain parity-train (one
 * backward over the whole batch) the curve differs only by how the batch sum is associated: the
 * bound is in docs/distributed.md and tested by tests/dist.
 *
 * Rank 0 prints the curve in parity-train's format. Test-only fault injection: --fault kill|stall
 * --fault-rank R --fault-step K (rank R raises SIGKILL, or stops taking part, at step K). */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "distributed.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "common.h"
#include "parity/parity.h"
#undef CHECK /* here a failure also takes the other ranks down (die) */
#ifdef PARITY_HAVE_DIST
#include "parity/dist.h"
#else
typedef struct parity_dist_t parity_dist_t;
#endif

typedef struct dopts_t {
  const char *model, *dtype, *fault;
  int steps, slices, distributed, fault_rank, fault_step, no_overlap, ckpt_every;
  const char *ckpt_dir, *resume;
  uint64_t seed, bucket_bytes;
  double lr;
  parity_dtype_t dt;
  int rank, size;
  parity_dist_t *dist;
} dopts_t;

static dopts_t *g_o;

static void die(const char *what, const char *msg) {
  fprintf(stderr, "parity-train: rank %d: %s: %s\n", g_o ? g_o->rank : 0, what, msg);
  fflush(stdout);
#ifdef PARITY_HAVE_DIST
  if (g_o && g_o->dist && g_o->size > 1) parity_dist_abort(g_o->dist, 1, "parity-train failed (message above)");
#endif
  exit(1);
}

#define CHECK(expr)                                                  \
  do {                                                               \
    if ((expr) != PARITY_STATUS_OK) die(#expr, parity_last_error()); \
  } while (0)
#define DCHECK(expr)                                 \
  do {                                               \
    if ((expr) != PARITY_STATUS_OK) dist_die(#expr); \
  } while (0)

#ifdef PARITY_HAVE_DIST
/* A failure that every rank sees alike (a signature mismatch): report it, leave together. */
static void dist_die(const char *what) {
  fprintf(stderr, "parity-train: rank %d: %s: %s\n", g_o->rank, what, parity_dist_last_error());
  parity_dist_finalize(g_o->dist);
  exit(1);
}
#endif

/* The same generator calls as tools/train/synthetic.c, so the models start from the same values. */
static parity_tensor_t *randn(parity_device_t *dev, parity_dtype_t dt, uint32_t rank, const int64_t *shape, double std,
                              uint64_t seed, uint64_t stream, int param) {
  parity_tensor_t *t;
  CHECK(train_randn(dev, dt, rank, shape, std, seed, stream, param, &t));
  return t;
}

/* One slice's forward: returns its share of the global loss (caller releases). */
typedef parity_tensor_t *(*forward_fn)(void *model, int64_t lo, int64_t hi, int64_t global);

typedef struct model_t {
  parity_tensor_t *p[4], *x, *target;
  parity_conv2d_options_t conv;
  parity_pool2d_options_t pool;
  int cnn;
} model_t;

static parity_tensor_t *share(parity_tensor_t *mean_loss, int64_t n, int64_t global) {
  parity_tensor_t *s;
  CHECK(parity_mul_scalar(mean_loss, (double)n / (double)global, &s));
  parity_tensor_release(mean_loss);
  return s;
}

static parity_tensor_t *forward(model_t *m, int64_t lo, int64_t hi, int64_t global) {
  parity_tensor_t *xs, *ts, *loss;
  CHECK(parity_slice(m->x, 0, lo, hi, 1, &xs));
  CHECK(parity_slice(m->target, 0, lo, hi, 1, &ts));
  if (!m->cnn) {
    parity_tensor_t *t[3];
    CHECK(parity_linear(xs, m->p[0], m->p[1], &t[0]));
    CHECK(parity_unary(PARITY_OP_TANH, t[0], &t[1]));
    CHECK(parity_linear(t[1], m->p[2], m->p[3], &t[2]));
    CHECK(parity_mse_loss(t[2], ts, &loss));
    train_release_all(t, 3);
  } else {
    parity_tensor_t *t[5];
    CHECK(parity_conv2d(xs, m->p[0], m->p[1], &m->conv, &t[0]));
    CHECK(parity_unary(PARITY_OP_RELU, t[0], &t[1]));
    CHECK(parity_pool2d(PARITY_OP_MAX_POOL2D, t[1], &m->pool, &t[2]));
    CHECK(parity_reshape(t[2], 2, (int64_t[]){hi - lo, 64}, &t[3]));
    CHECK(parity_linear(t[3], m->p[2], m->p[3], &t[4]));
    CHECK(parity_cross_entropy(t[4], ts, &loss));
    train_release_all(t, 5);
  }
  parity_tensor_release(xs);
  parity_tensor_release(ts);
  return share(loss, hi - lo, global);
}

static void maybe_fault(const dopts_t *o, int step) {
  if (!o->fault || o->rank != o->fault_rank || step != o->fault_step) return;
  fflush(stdout);
  if (!strcmp(o->fault, "kill")) {
    fprintf(stderr, "parity-train: rank %d: fault injection: SIGKILL at step %d\n", o->rank, step);
    raise(SIGKILL);
  }
  if (!strcmp(o->fault, "stall")) {
    fprintf(stderr, "parity-train: rank %d: fault injection: stops taking part at step %d\n", o->rank, step);
    for (;;) pause();
  }
}

/* FNV-1a over the parameters' bytes and `extra` (a resumed step): what the ranks compare, and the
 * final fingerprint rank 0 prints (a run resumed from a checkpoint prints the uninterrupted run's). */
static uint64_t params_hash(const dopts_t *o, parity_tensor_t **p, uint64_t extra) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 4; i++) {
    size_t bytes = (size_t)parity_tensor_numel(p[i]) * (o->dt == PARITY_DTYPE_F64   ? 8
                                                        : o->dt == PARITY_DTYPE_F32 ? 4
                                                                                    : 2);
    unsigned char *b = malloc(bytes);
    if (!b) die("params_hash", "out of memory");
    CHECK(parity_tensor_to_host(p[i], b, bytes));
    for (size_t k = 0; k < bytes; k++) h = (h ^ b[k]) * 1099511628211ull;
    free(b);
  }
  for (int k = 0; k < 8; k++) h = (h ^ (unsigned char)(extra >> (8 * k))) * 1099511628211ull;
  return h;
}

#ifdef PARITY_HAVE_DIST
/* Every rank's parameters (and `extra`) must be bitwise rank 0's. Each rank hashes its own, rank
 * 0's hash is broadcast, and the mismatches are counted with a (deterministic) all-reduce. */
static void check_replicas(dopts_t *o, parity_device_t *dev, parity_tensor_t **p, const char *name, uint64_t extra,
                           const char *what) {
  int64_t mine = (int64_t)(params_hash(o, p, extra) >> 1), ref = mine;
  parity_tensor_t *t;
  CHECK(parity_tensor_from_host(dev, PARITY_DTYPE_I64, 1, (int64_t[]){1}, &mine, &t));
  DCHECK(parity_dist_broadcast(o->dist, &t, 1, 0));
  CHECK(parity_tensor_to_host(t, &ref, sizeof ref));
  parity_tensor_release(t);
  double differ = ref != mine;
  if (differ) fprintf(stderr, "parity-train: rank %d: %s %s differ from rank 0's\n", o->rank, name, what);
  DCHECK(parity_dist_allreduce_host(o->dist, &differ, 1, PARITY_DTYPE_F64, PARITY_DIST_SUM));
  if (differ != 0) {
    if (o->rank == 0) fprintf(stderr, "parity-train: %s %s differ on %g of %d ranks\n", name, what, differ, o->size);
    parity_dist_finalize(o->dist);
    exit(1);
  }
  if (o->rank == 0) printf("%s %s bitwise identical on all %d ranks\n", name, what, o->size);
}
#endif

#ifdef PARITY_HAVE_DIST
/* Backward's per-gradient hook marks each parameter ready the moment its gradient is final, so a
 * bucket's all-reduce starts while backward computes the layers before it (as DDP does). */
typedef struct ready_hook {
  parity_dist_buckets_t *b;
  uint32_t index;
} ready_hook;

static long hooked_ready; /* gradients handed over from inside backward (reported by rank 0) */

static parity_status_t bucket_ready_hook(parity_tensor_t *leaf, void *user) {
  (void)leaf;
  const ready_hook *h = user;
  hooked_ready++;
  return parity_dist_buckets_ready(h->b, h->index);
}
#endif

/* One model's training on this rank: what every step needs. */
typedef struct trainer_t {
  dopts_t *o;
  parity_device_t *dev;
  model_t *m;
  const char *name;
  int64_t global, bs;      /* global batch, slice size */
  size_t es;               /* bytes per element */
  int k, first;            /* this rank's slices: [first, first + k) */
  int64_t numel[5], total; /* elements of each gradient (and of the loss share), and in all */
  char *parts;             /* the k slices' gradients and loss shares, total elements each */
  parity_optimizer_t *opt;
  ckpt_meta meta; /* what a resumed run must share with the run it resumes */
  int overlap;    /* the all-reduce starts from inside backward (grad hooks) */
#ifdef PARITY_HAVE_DIST
  parity_dist_buckets_t *buckets;
  ready_hook hooks[4];
#endif
} trainer_t;

static const char *const pnames[4] = {"w1", "b1", "w2", "b2"};

/* --resume: every rank loads the newest good checkpoint; they must agree (checked here). Returns
 * the step to start from. */
static uint64_t resume_step(trainer_t *t) {
  dopts_t *o = t->o;
  uint64_t start = 0;
  char note[2200], err[2600];
  int rc =
      ckpt_load(o->resume, t->name, pnames, t->m->p, 4, t->opt, &t->meta, &start, note, sizeof note, err, sizeof err);
  if (rc < 0) die("--resume", err);
  if (note[0] && o->rank == 0) fprintf(stderr, "parity-train: %s: %s\n", t->name, note);
  if (o->rank == 0) {
    if (rc == 1)
      printf("%s: no checkpoint in %s: starting at step 0\n", t->name, o->resume);
    else
      printf("%s: resumed from %s at step %llu\n", t->name, o->resume, (unsigned long long)start);
  }
#ifdef PARITY_HAVE_DIST
  if (o->dist && o->size > 1) check_replicas(o, t->dev, t->m->p, t->name, start, "checkpoints");
#endif
  return start;
}

/* With MPI: rank 0's parameters to every rank, the buckets (--bucket-kb) and, with one slice per
 * rank, the hooks that hand each gradient to its bucket from inside backward. */
static void start_sync(trainer_t *t) {
#ifdef PARITY_HAVE_DIST
  dopts_t *o = t->o;
  model_t *m = t->m;
  t->buckets = NULL;
  if (o->dist) {
    DCHECK(parity_dist_broadcast(o->dist, m->p, 4, 0)); /* every rank starts from rank 0's parameters */
    if (o->bucket_bytes)
      DCHECK(parity_dist_buckets_create(o->dist, m->p, 4, o->bucket_bytes, PARITY_DIST_SUM, &t->buckets));
  }
  /* with one slice per rank a gradient is final inside backward; with several, only after their sum */
  t->overlap = t->buckets && t->k == 1 && !o->no_overlap;
  for (uint32_t i = 0; i < 4 && t->overlap; i++) {
    t->hooks[i] = (ready_hook){.b = t->buckets, .index = i};
    CHECK(parity_tensor_set_grad_hook(m->p[i], bucket_ready_hook, &t->hooks[i]));
  }
#else
  t->overlap = 0;
#endif
}

/* Forward and backward of each of this rank's slices, their gradients and loss shares into parts. */
static void slice_grads(trainer_t *t) {
  model_t *m = t->m;
  for (int j = 0; j < t->k; j++) {
    parity_optimizer_zero_grad(t->opt);
    parity_tensor_t *loss = forward(m, (t->first + j) * t->bs, (t->first + j + 1) * t->bs, t->global);
    if (parity_backward(loss, NULL, 0) != PARITY_STATUS_OK)
#ifdef PARITY_HAVE_DIST
      die("parity_backward", t->overlap && *parity_dist_last_error() ? parity_dist_last_error() : parity_last_error());
#else
      die("parity_backward", parity_last_error());
#endif
    char *part = t->parts + t->es * (size_t)t->total * (size_t)j;
    size_t off = 0;
    for (int i = 0; i < 4; i++) {
      parity_tensor_t *g = parity_tensor_grad(m->p[i]);
      if (!g) die("train", "a parameter has no gradient");
      CHECK(parity_tensor_to_host(g, part + off, t->es * (size_t)t->numel[i]));
      off += t->es * (size_t)t->numel[i];
    }
    CHECK(parity_tensor_to_host(loss, part + off, t->es));
    parity_tensor_release(loss);
  }
}

/* This rank's slices, tree-summed; back into .grad (unchanged when k == 1). */
static void sum_slices(trainer_t *t) {
  if (t->k <= 1) return;
#ifdef PARITY_HAVE_DIST
  const void *pp[64];
  for (int j = 0; j < t->k; j++) pp[j] = t->parts + t->es * (size_t)t->total * (size_t)j;
  if (parity_dist_tree_sum(t->o->dt, (uint64_t)t->total, pp, (uint32_t)t->k, t->parts) != PARITY_STATUS_OK)
    die("parity_dist_tree_sum", parity_dist_last_error());
#endif
  size_t off = 0;
  for (int i = 0; i < 4; i++) {
    CHECK(parity_tensor_write(parity_tensor_grad(t->m->p[i]), t->parts + off, t->es * (size_t)t->numel[i]));
    off += t->es * (size_t)t->numel[i];
  }
}

/* The step's loss (this rank's share, then with MPI every rank's) as a tensor, and with MPI the
 * gradients summed over the ranks. */
static parity_tensor_t *reduce_over_ranks(trainer_t *t) {
  parity_tensor_t *loss_t;
  CHECK(
      parity_tensor_from_host(t->dev, t->o->dt, 1, (int64_t[]){1}, t->parts + t->es * (size_t)(t->total - 1), &loss_t));
#ifdef PARITY_HAVE_DIST
  dopts_t *o = t->o;
  model_t *m = t->m;
  if (o->dist) {
    if (t->buckets) {
      for (int i = 3; i >= 0 && !t->overlap; i--) DCHECK(parity_dist_buckets_ready(t->buckets, (uint32_t)i));
      DCHECK(parity_dist_buckets_finish(t->buckets));
      DCHECK(parity_dist_allreduce(o->dist, &loss_t, 1, PARITY_DIST_SUM));
    } else {
      parity_tensor_t *all[5] = {parity_tensor_grad(m->p[0]), parity_tensor_grad(m->p[1]), parity_tensor_grad(m->p[2]),
                                 parity_tensor_grad(m->p[3]), loss_t};
      DCHECK(parity_dist_allreduce(o->dist, all, 5, PARITY_DIST_SUM));
    }
  }
#endif
  return loss_t;
}

/* With MPI: the hooks removed, the buckets destroyed, and every rank's parameters compared. */
static void end_sync(trainer_t *t) {
#ifdef PARITY_HAVE_DIST
  dopts_t *o = t->o;
  for (int i = 0; i < 4 && t->overlap; i++) CHECK(parity_tensor_set_grad_hook(t->m->p[i], NULL, NULL));
  if (t->overlap && o->rank == 0)
    printf("%s: %ld gradients handed to the all-reduce from inside backward\n", t->name, hooked_ready);
  hooked_ready = 0;
  parity_dist_buckets_destroy(t->buckets);
  if (o->dist && o->size > 1) check_replicas(o, t->dev, t->m->p, t->name, 0, "parameters");
#else
  (void)t;
#endif
}

static void train(dopts_t *o, parity_device_t *dev, model_t *m, const char *name, int64_t global) {
  trainer_t t = {.o = o, .dev = dev, .m = m, .name = name, .global = global};
  t.es = o->dt == PARITY_DTYPE_F64 ? 8 : o->dt == PARITY_DTYPE_F32 ? 4 : 2;
  t.k = o->slices / o->size, t.first = o->rank * t.k;
  t.bs = global / o->slices;
  for (int i = 0; i < 4; i++) t.total += t.numel[i] = parity_tensor_numel(m->p[i]);
  t.numel[4] = 1; /* the loss share rides along with the gradients */
  t.total += 1;
  t.parts = malloc(t.es * (size_t)t.total * (size_t)t.k);
  if (!t.parts) die("train", "out of memory");
  CHECK(parity_adam_create(m->p, 4, o->lr, 0.9, 0.999, train_adam_eps(o->dt), &t.opt));
  t.meta.count = 0;
  ckpt_meta_add(&t.meta, "parity-train.model", "%s", name);
  ckpt_meta_add(&t.meta, "parity-train.seed", "%llu", (unsigned long long)o->seed);
  ckpt_meta_add(&t.meta, "parity-train.dtype", "%s", o->dtype);
  ckpt_meta_add(&t.meta, "parity-train.slices", "%d", o->slices);
  ckpt_meta_add(&t.meta, "parity-train.lr", "%.17g", o->lr);
  uint64_t start = o->resume ? resume_step(&t) : 0;
  const char *ckpt_dir = o->ckpt_dir ? o->ckpt_dir : o->resume;
  start_sync(&t);
  for (int s = (int)start; s < o->steps; s++) {
    maybe_fault(o, s);
    double t0 = train_now_ms();
    slice_grads(&t);
    sum_slices(&t);
    parity_tensor_t *loss_t = reduce_over_ranks(&t);
    CHECK(parity_optimizer_step(t.opt));
    double loss;
    CHECK(parity_tensor_to_f64(loss_t, &loss, 1));
    parity_tensor_release(loss_t);
    if (o->rank == 0) printf("%s step %3d loss %.9g time %.3f ms\n", name, s, loss, train_now_ms() - t0);
    fflush(stdout);
    if (o->ckpt_every && (s + 1) % o->ckpt_every == 0 && o->rank == 0) { /* rank 0 writes */
      char err[2048];
      if (ckpt_save(ckpt_dir, name, pnames, m->p, 4, t.opt, &t.meta, (uint64_t)s + 1, err, sizeof err))
        die("checkpoint", err);
    }
  }
  if (o->rank == 0) printf("%s final parameters fnv1a %016llx\n", name, (unsigned long long)params_hash(o, m->p, 0));
  end_sync(&t);
  parity_optimizer_destroy(t.opt);
  free(t.parts);
}

static void run_mlp(dopts_t *o, parity_device_t *dev) {
  parity_dtype_t dt = o->dt;
  uint64_t seed = o->seed;
  model_t m = {0};
  m.x = randn(dev, dt, 2, (int64_t[]){64, 8}, 1, seed, 1, 0);
  parity_tensor_t *teacher = randn(dev, dt, 2, (int64_t[]){4, 8}, 0.5, seed, 2, 0), *proj;
  CHECK(parity_linear(m.x, teacher, NULL, &proj));
  CHECK(parity_unary(PARITY_OP_SIN, proj, &m.target));
  m.p[0] = randn(dev, dt, 2, (int64_t[]){32, 8}, 0.35, seed, 3, 1);
  m.p[1] = randn(dev, dt, 1, (int64_t[]){32}, 0.1, seed, 4, 1);
  m.p[2] = randn(dev, dt, 2, (int64_t[]){4, 32}, 0.18, seed, 5, 1);
  m.p[3] = randn(dev, dt, 1, (int64_t[]){4}, 0.1, seed, 6, 1);
  train(o, dev, &m, "mlp", 64);
  train_release_all(m.p, 4);
  parity_tensor_t *rest[4] = {m.x, teacher, proj, m.target};
  train_release_all(rest, 4);
}

static void run_cnn(dopts_t *o, parity_device_t *dev) {
  parity_dtype_t dt = o->dt;
  uint64_t seed = o->seed;
  model_t m = {.cnn = 1};
  m.conv = (parity_conv2d_options_t){.stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
  m.pool = (parity_pool2d_options_t){.kernel = {2, 2}, .stride = {2, 2}};
  m.x = randn(dev, dt, 4, (int64_t[]){16, 1, 8, 8}, 1, seed, 11, 0);
  parity_tensor_t *flat, *tl;
  parity_tensor_t *teacher = randn(dev, dt, 2, (int64_t[]){3, 64}, 0.2, seed, 12, 0);
  CHECK(parity_reshape(m.x, 2, (int64_t[]){16, 64}, &flat));
  CHECK(parity_linear(flat, teacher, NULL, &tl));
  CHECK(parity_softmax(PARITY_OP_SOFTMAX, tl, 1, &m.target));
  m.p[0] = randn(dev, dt, 4, (int64_t[]){4, 1, 3, 3}, 0.3, seed, 13, 1);
  m.p[1] = randn(dev, dt, 1, (int64_t[]){4}, 0.1, seed, 14, 1);
  m.p[2] = randn(dev, dt, 2, (int64_t[]){3, 64}, 0.12, seed, 15, 1);
  m.p[3] = randn(dev, dt, 1, (int64_t[]){3}, 0.1, seed, 16, 1);
  train(o, dev, &m, "cnn", 16);
  train_release_all(m.p, 4);
  parity_tensor_t *rest[5] = {m.x, flat, tl, m.target, teacher};
  train_release_all(rest, 5);
}

int train_distributed_wanted(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--distributed") || !strcmp(argv[i], "--slices")) return 1;
  return 0;
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: mpirun -np N parity-train --distributed [--slices S] [--bucket-kb K [--no-overlap]] [--model mlp|cnn|both]\n"
      "                 [--steps N] [--seed S] [--dtype f32|f64|f16|bf16] [--lr LR]\n"
      "                 [--checkpoint-every N --checkpoint-dir D] [--resume D]\n"
      "       parity-train --slices S [...]   one process, the same S slices in sequence\n"
      "  the global batch (mlp 64, cnn 16) is cut into S slices (default 4; S divides 16, N divides S);\n"
      "  1, 2, 4 ranks give bitwise the same curve when S/N is a power of two. --bucket-kb: bucketed\n"
      "  asynchronous all-reduce with buckets of K KiB, each started from inside backward as soon as its\n"
      "  gradients are final (one slice per rank; --no-overlap: after backward).\n"
      "  --checkpoint-every N --checkpoint-dir D: every N steps rank 0 writes D/<model>.safetensors\n"
      "  (weights, Adam's state, the step; the one before kept as .prev); --resume D: every rank loads\n"
      "  the newest good one and the ranks compare what they loaded; the run ends bitwise as if never\n"
      "  stopped. Environment: PARITY_DIST_TIMEOUT (s, default 60).\n");
}

/* parse_dist_args' result when the run goes on (otherwise: the exit status, 0 after --help). */
#define ARGS_GO_ON (-1)

/* The command line into *o, each value checked, then their combinations. */
static int parse_dist_args(int argc, char **argv, dopts_t *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--distributed")) {
      o->distributed = 1;
      continue;
    }
    if (!strcmp(a, "--no-overlap")) {
      o->no_overlap = 1;
      continue;
    }
    if (!v) {
      usage(stderr);
      return 2;
    }
    long n = 0;
    double x = 0;
    if (!strcmp(a, "--model"))
      o->model = v;
    else if (!strcmp(a, "--steps")) {
      if (parse_long(a, v, 0, 1000000, &n)) return 2;
      o->steps = (int)n;
    } else if (!strcmp(a, "--seed")) {
      if (parse_long(a, v, 0, 1L << 62, &n)) return 2;
      o->seed = (uint64_t)n;
    } else if (!strcmp(a, "--dtype"))
      o->dtype = v;
    else if (!strcmp(a, "--lr")) {
      if (parse_double(a, v, 0, 1e6, &o->lr)) return 2;
    } else if (!strcmp(a, "--slices")) {
      if (parse_long(a, v, 1, 16, &n)) return 2;
      o->slices = (int)n;
    } else if (!strcmp(a, "--bucket-kb")) {
      if (parse_double(a, v, 0, 1 << 22, &x)) return 2;
      o->bucket_bytes = (uint64_t)(x * 1024);
    } else if (!strcmp(a, "--checkpoint-every")) {
      if (parse_long(a, v, 1, 1000000, &n)) return 2;
      o->ckpt_every = (int)n;
    } else if (!strcmp(a, "--checkpoint-dir") || !strcmp(a, "--resume")) {
      char err[512];
      if (ckpt_dir_check(v, err, sizeof err)) return bad("%s: %s", a, err);
      *(!strcmp(a, "--resume") ? &o->resume : &o->ckpt_dir) = v;
    } else if (!strcmp(a, "--fault"))
      o->fault = v;
    else if (!strcmp(a, "--fault-rank")) {
      if (parse_long(a, v, -1, 1 << 20, &n)) return 2;
      o->fault_rank = (int)n;
    } else if (!strcmp(a, "--fault-step")) {
      if (parse_long(a, v, 0, 1000000, &n)) return 2;
      o->fault_step = (int)n;
    } else
      return bad("unknown argument '%s'", a);
    i++;
  }
  if ((o->ckpt_every || o->ckpt_dir) && !o->ckpt_dir && !o->resume)
    return bad("--checkpoint-every needs --checkpoint-dir D (or --resume D, which then also receives them)");
  if (o->ckpt_dir && !o->ckpt_every) return bad("--checkpoint-dir needs --checkpoint-every N");
  o->dt = !strcmp(o->dtype, "f64")    ? PARITY_DTYPE_F64
          : !strcmp(o->dtype, "f16")  ? PARITY_DTYPE_F16
          : !strcmp(o->dtype, "bf16") ? PARITY_DTYPE_BF16
          : !strcmp(o->dtype, "f32")  ? PARITY_DTYPE_F32
                                      : PARITY_DTYPE_INVALID;
  if (o->dt == PARITY_DTYPE_INVALID || o->steps < 0 ||
      (strcmp(o->model, "mlp") && strcmp(o->model, "cnn") && strcmp(o->model, "both"))) {
    usage(stderr);
    return 2;
  }
  return ARGS_GO_ON;
}

/* --distributed: join the MPI ranks (o->rank, o->size); then the slices checked against the ranks
 * (default: 4, or one per rank). 0, or the exit status 2 with a message. */
static int join_ranks(dopts_t *o, int *argc, char ***argv) {
  if (o->distributed) {
#ifdef PARITY_HAVE_DIST
    if (parity_dist_init(argc, argv, NULL, &o->dist) != PARITY_STATUS_OK) {
      fprintf(stderr, "parity-train: %s\n", parity_dist_last_error());
      return 2;
    }
    o->rank = parity_dist_rank(o->dist);
    o->size = parity_dist_size(o->dist);
#else
    (void)argc, (void)argv;
    fprintf(stderr, "parity-train: --distributed: this build has no MPI (install libopenmpi-dev and reconfigure)\n");
    return 2;
#endif
  }
  if (!o->slices) o->slices = 4 % o->size == 0 ? 4 : o->size;
  int k = o->slices / o->size;
  if (o->slices < 1 || o->slices > 16 || 16 % o->slices || o->slices % o->size || k > 64) {
    if (o->rank == 0)
      fprintf(stderr, "parity-train: --slices %d: S must divide 16 (the CNN batch) and be a multiple of the %d ranks\n",
              o->slices, o->size);
#ifdef PARITY_HAVE_DIST
    parity_dist_finalize(o->dist);
#endif
    return 2;
  }
#ifndef PARITY_HAVE_DIST
  if (k > 1) {
    fprintf(stderr, "parity-train: --slices %d: summing slices needs parity_dist, and this build has no MPI\n",
            o->slices);
    return 2;
  }
#endif
  return 0;
}

int train_distributed_main(int argc, char **argv) {
  static dopts_t o; /* static: die() reads it through g_o whichever function fails */
  o = (dopts_t){.model = "both",
                .dtype = "f32",
                .steps = 20,
                .slices = 0,
                .seed = 1,
                .lr = 0.02,
                .fault_rank = -1,
                .fault_step = 0,
                .size = 1};
  g_o = &o;
  int r = parse_dist_args(argc, argv, &o);
  if (r != ARGS_GO_ON) return r;
  if ((r = join_ranks(&o, &argc, &argv)) != 0) return r;
  int k = o.slices / o.size;
  parity_context_t *ctx;
  parity_device_t *dev;
  CHECK(parity_context_create(NULL, &ctx));
  if (parity_context_default_device(ctx, &dev) != PARITY_STATUS_OK) die("device", parity_last_error());
  parity_device_info_t info = {.struct_size = sizeof info};
  parity_device_get_info(dev, &info);
  if (o.rank == 0)
    printf("device: %s (plugin %s), dtype %s, seed %llu, ranks %d, slices %d (%s), %s all-reduce\n", info.name,
           parity_device_plugin_name(dev), o.dtype, (unsigned long long)o.seed, o.size, o.slices,
           (k & (k - 1)) == 0 ? "bitwise the same for any rank count with a power-of-two slices per rank"
                              : "slices per rank not a power of two: rounding may differ from other rank counts",
           !o.bucket_bytes                           ? "deterministic"
           : o.slices / o.size == 1 && !o.no_overlap ? "bucketed asynchronous, overlapped with backward"
                                                     : "bucketed asynchronous");
  fflush(stdout);
  if (strcmp(o.model, "cnn")) run_mlp(&o, dev);
  if (strcmp(o.model, "mlp")) run_cnn(&o, dev);
  parity_context_destroy(ctx);
#ifdef PARITY_HAVE_DIST
  parity_dist_finalize(o.dist);
#endif
  return 0;
}
