/* fashion.c — load Fashion-MNIST, train with a seeded shuffle, evaluate on the test set. */
#define _POSIX_C_SOURCE 200809L
#include "fashion.h"

#include "checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "idx.h"
#include "parity_support/atomic_file.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define PIXELS (MODEL_IMAGE_SIDE * MODEL_IMAGE_SIDE)
/* Fashion-MNIST training-set pixel mean and standard deviation (of p / 255). */
#define PIXEL_MEAN 0.2860
#define PIXEL_STD 0.3530

typedef struct split {
  idx_array images, labels;
  size_t count;
} split;

/* The most data one IDX file may hold here: the training images are 47 MB. A header stating more
 * is refused before anything is allocated (pass --train-images / --test-images to read less). */
#define FASHION_MAX_BYTES ((uint64_t)64 << 20)

static int load_split(const char *dir, const char *prefix, split *s, long limit) {
  char ip[4096], lp[4096], err[4608];
  snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
  snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  /* the header is checked before the data is read; only the first `limit` items are inflated */
  idx_want wi = {.ndim = 3,
                 .inner = {0, MODEL_IMAGE_SIDE, MODEL_IMAGE_SIDE},
                 .max_items = limit > 0 ? (uint64_t)limit : 0,
                 .max_bytes = FASHION_MAX_BYTES};
  idx_want wl = {.ndim = 1, .max_items = wi.max_items, .max_bytes = FASHION_MAX_BYTES};
  if (idx_read(ip, &wi, &s->images, err, sizeof err) || idx_read(lp, &wl, &s->labels, err, sizeof err)) {
    fprintf(stderr, "parity-train: %s\n", err);
    if (strstr(err, "read fewer items"))
      fprintf(stderr, "parity-train: --train-images N / --test-images N read only the first N images of a file\n");
    if (!strstr(err, "cannot open")) return -1;
    fprintf(stderr,
            "parity-train: the dataset comes with the Debian package dataset-fashion-mnist (make test or "
            "tools/install-deps.sh installs it), or point --data-dir at a folder of the four IDX files\n");
    return -1;
  }
  if (s->images.dims[0] != s->labels.dims[0]) {
    fprintf(stderr, "parity-train: %s holds %u images but %s holds %u labels\n", ip, s->images.dims[0], lp,
            s->labels.dims[0]);
    return -1;
  }
  for (size_t i = 0; i < s->labels.size; i++)
    if (s->labels.data[i] >= MODEL_CLASSES) {
      fprintf(stderr, "parity-train: %s: label %u of image %zu is not a class 0..9\n", lp, s->labels.data[i], i);
      return -1;
    }
  s->count = s->images.items;
  return 0;
}

/* Host batch -> device tensors of the model's dtype: x [n,1,28,28] normalised, one-hot [n,10]. */
static void make_batch(parity_device_t *dev, parity_dtype_t dt, const split *s, const uint32_t *idx, size_t n,
                       float *xb, float *yb, parity_tensor_t **x, parity_tensor_t **y) {
  for (size_t b = 0; b < n; b++) {
    const uint8_t *img = s->images.data + (size_t)idx[b] * PIXELS;
    for (size_t k = 0; k < PIXELS; k++) xb[b * PIXELS + k] = (float)((img[k] / 255.0 - PIXEL_MEAN) / PIXEL_STD);
    for (int c = 0; c < MODEL_CLASSES; c++) yb[b * MODEL_CLASSES + c] = c == s->labels.data[idx[b]] ? 1.0f : 0.0f;
  }
  int64_t xs[4] = {(int64_t)n, 1, MODEL_IMAGE_SIDE, MODEL_IMAGE_SIDE}, ys[2] = {(int64_t)n, MODEL_CLASSES};
  parity_tensor_t *xf, *yf;
  CHECK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 4, xs, xb, &xf));
  CHECK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, ys, yb, &yf));
  if (dt == PARITY_DTYPE_F32) {
    *x = xf;
    *y = yf;
    return;
  }
  CHECK(parity_cast(xf, dt, x));
  CHECK(parity_cast(yf, dt, y));
  parity_tensor_release(xf);
  parity_tensor_release(yf);
}

/* splitmix64: the shuffle's generator (host-side, so the order is the same on every backend). */
static uint64_t mix(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void order_for_epoch(uint32_t *idx, size_t n, int shuffle, uint64_t seed, long epoch) {
  for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
  if (!shuffle) return;
  uint64_t st = seed ^ ((uint64_t)epoch * 0xD1B54A32D192ED03ull);
  for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates; the modulo bias (< 2^-47) is irrelevant */
    size_t j = (size_t)(mix(&st) % (i + 1));
    uint32_t t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

/* The predictions hash (docs/training.md, "Output"): FNV-1a 64 (offset basis 0xcbf29ce484222325,
 * prime 0x100000001b3) over one byte per test image, its predicted class 0..9 as a number (not an
 * ASCII digit), in test-file order. */
#define PREDICTIONS_FNV_BASIS 0xcbf29ce484222325ull
#define PREDICTIONS_FNV_PRIME 0x100000001b3ull

typedef struct eval_result {
  size_t correct, total;
  uint64_t hash; /* the predictions hash above */
} eval_result;

/* Evaluates the test set; classes, when not NULL, receives each image's predicted class. */
static eval_result evaluate(parity_device_t *dev, const model *m, const split *test, float *xb, float *yb,
                            uint8_t *classes) {
  eval_result r = {0, 0, PREDICTIONS_FNV_BASIS};
  int prev = parity_grad_mode_set(0);
  enum { EVAL_BATCH = 500 };
  uint32_t idx[EVAL_BATCH];
  double pred[EVAL_BATCH];
  for (size_t at = 0; at < test->count; at += EVAL_BATCH) {
    size_t n = test->count - at < EVAL_BATCH ? test->count - at : EVAL_BATCH;
    for (size_t b = 0; b < n; b++) idx[b] = (uint32_t)(at + b);
    parity_tensor_t *x, *y, *logits, *am;
    make_batch(dev, m->dtype, test, idx, n, xb, yb, &x, &y);
    CHECK(model_forward(m, x, &logits));
    CHECK(parity_reduce(PARITY_OP_ARGMAX, logits, 2, 0, &am));
    CHECK(parity_tensor_to_f64(am, pred, n));
    for (size_t b = 0; b < n; b++) {
      uint8_t c = (uint8_t)pred[b];
      r.correct += c == test->labels.data[at + b];
      r.hash = (r.hash ^ c) * PREDICTIONS_FNV_PRIME;
      if (classes) classes[at + b] = c;
    }
    r.total += n;
    parity_tensor_t *rel[4] = {x, y, logits, am};
    for (int k = 0; k < 4; k++) parity_tensor_release(rel[k]);
  }
  parity_grad_mode_set(prev);
  return r;
}

static void print_eval(const char *when, eval_result r) {
  printf("%s: test accuracy %.2f %% (%zu/%zu) predictions %016llx\n", when,
         r.total ? 100.0 * (double)r.correct / (double)r.total : 0.0, r.correct, r.total, (unsigned long long)r.hash);
}

/* --predictions: one line per test image, "index class\n" (index 0-based in test-file order, class
 * 0..9), written through the atomic writer: the old file stays until the new one is complete. */
static int write_predictions(const char *path, const uint8_t *classes, size_t n) {
  char err[PSUP_PATH_MAX + 256];
  psup_atomic_file af;
  if (psup_atomic_open(&af, path, 0, err, sizeof err)) {
    fprintf(stderr, "parity-train: --predictions: %s\n", err);
    return -1;
  }
  for (size_t i = 0; i < n; i++) fprintf(af.f, "%zu %u\n", i, (unsigned)classes[i]);
  if (psup_atomic_commit(&af, err, sizeof err)) {
    fprintf(stderr, "parity-train: --predictions: %s\n", err);
    return -1;
  }
  return 0;
}

static void fmt_time(char *buf, size_t len, double s) {
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* One Fashion-MNIST run: the data, the model, its optimizer and buffers, and where it stands. */
typedef struct fashion_state {
  parity_device_t *dev;
  const fashion_opts *o;
  split train, test;
  model m;
  parity_optimizer_t *opt;
  ckpt_meta meta; /* what a resumed run must share with the run it resumes */
  float *xb, *yb;
  uint32_t *order;
  uint8_t *classes; /* the last evaluation's predictions (--predictions), or NULL */
  size_t steps_per_epoch;
  long total_steps, step, first_step;
  double run_start;
} fashion_state;

/* --load: the model's weights from a file; 0, or -1 with a message. */
static int load_weights(fashion_state *r) {
  const fashion_opts *o = r->o;
  char err[1024];
  char note[1024];
  if (o->load && model_load(&r->m, o->load, o->allow_nonfinite, note, sizeof note, err, sizeof err)) {
    fprintf(stderr, "parity-train: --load %s\n", err);
    return -1;
  }
  if (o->load && note[0]) fprintf(stderr, "parity-train: note: --load %s\n", note);
  return 0;
}

/* The run's steps (per epoch, in all) and its description. */
static void plan_steps(fashion_state *r) {
  const fashion_opts *o = r->o;
  int64_t nparams = 0;
  for (uint32_t i = 0; i < r->m.count; i++) nparams += parity_tensor_numel(r->m.param[i]);
  size_t steps_per_epoch = (r->train.count + (size_t)o->batch - 1) / (size_t)o->batch;
  long total_steps = o->epochs * (long)steps_per_epoch;
  if (o->steps >= 0 && o->steps < total_steps) total_steps = o->steps;
  printf("data: %zu training and %zu test images from %s\n", r->train.count, r->test.count, o->dir);
  printf("model %s (%lld parameters, %s, %s%s), %s lr %g", model_kind_name(r->m.kind), (long long)nparams,
         o->dtype_name, o->load ? "weights from " : "seed-initialised", o->load ? o->load : "",
         o->optimizer == OPT_ADAM ? "adam" : "sgd", o->lr);
  if (o->optimizer == OPT_SGD) printf(" momentum %g, %s schedule", o->momentum, o->cosine ? "cosine" : "constant");
  if (o->optimizer == OPT_ADAM) printf(" eps %g", o->eps);
  printf(", batch %ld, seed %llu, shuffle %s, %ld epochs (%zu steps each), %ld steps\n", o->batch,
         (unsigned long long)o->seed, o->shuffle ? "on" : "off", o->epochs, steps_per_epoch, total_steps);
  r->steps_per_epoch = steps_per_epoch;
  r->total_steps = total_steps;
}

/* The batch and shuffle buffers; 0, or -1 with a message (nothing left allocated). */
static int alloc_buffers(fashion_state *r) {
  const fashion_opts *o = r->o;
  size_t bmax = (size_t)o->batch > 500 ? (size_t)o->batch : 500;
  r->xb = malloc(bmax * PIXELS * sizeof *r->xb), r->yb = malloc(bmax * MODEL_CLASSES * sizeof *r->yb);
  r->order = malloc(r->train.count * sizeof *r->order);
  r->classes = o->predictions ? malloc(r->test.count) : NULL;
  if (!r->xb || !r->yb || !r->order || (o->predictions && !r->classes)) {
    fprintf(stderr, "parity-train: out of memory\n");
    free(r->xb), free(r->yb), free(r->order), free(r->classes);
    return -1;
  }
  return 0;
}

/* The run's identity in its checkpoints; the position is the step. */
static void checkpoint_identity(fashion_state *r) {
  const fashion_opts *o = r->o;
  ckpt_meta *meta = &r->meta;
  meta->count = 0;
  ckpt_meta_add(meta, "parity-train.model", "%s", model_kind_name(r->m.kind));
  ckpt_meta_add(meta, "parity-train.dtype", "%s", o->dtype_name);
  ckpt_meta_add(meta, "parity-train.seed", "%llu", (unsigned long long)o->seed);
  ckpt_meta_add(meta, "parity-train.shuffle", "%s", o->shuffle ? "on" : "off");
  ckpt_meta_add(meta, "parity-train.batch", "%ld", o->batch);
  ckpt_meta_add(meta, "parity-train.train-images", "%zu", r->train.count);
  ckpt_meta_add(meta, "parity-train.optimizer", "%s lr %.17g momentum %.17g", o->optimizer == OPT_ADAM ? "adam" : "sgd",
                o->lr, o->momentum);
  ckpt_meta_add(meta, "parity-train.schedule", "%s over %ld steps", o->cosine ? "cosine" : "constant", r->total_steps);
}

/* --resume: weights, optimizer state and step from the newest good checkpoint (step 0 when there
 * is none); 0, or -1 with a message. */
static int resume_run(fashion_state *r) {
  const fashion_opts *o = r->o;
  uint64_t at = 0;
  char cnote[2200], cerr[2600];
  int c = ckpt_load(o->resume, model_kind_name(r->m.kind), (const char *const *)r->m.name, r->m.param, r->m.count,
                    r->opt, &r->meta, &at, cnote, sizeof cnote, cerr, sizeof cerr);
  if (c < 0) {
    fprintf(stderr, "parity-train: --resume: %s\n", cerr);
    return -1;
  }
  if (cnote[0]) fprintf(stderr, "parity-train: note: --resume: %s\n", cnote);
  if (c == 1)
    printf("no checkpoint in %s: starting at step 0\n", o->resume);
  else
    printf("resumed from %s at step %llu\n", o->resume, (unsigned long long)at);
  r->step = (long)at;
  return 0;
}

/* Epoch `epoch` from the current step to its end (or the last step): batches, optimizer steps,
 * checkpoints, progress lines, then the test accuracy. 0, or -1 with a message (the loss diverged,
 * a checkpoint could not be written). */
static int train_epoch(fashion_state *r, long epoch) {
  const fashion_opts *o = r->o;
  const size_t steps_per_epoch = r->steps_per_epoch;
  const long total_steps = r->total_steps;
  char err[1024];
  double last_loss = NAN;
  order_for_epoch(r->order, r->train.count, o->shuffle, o->seed, epoch);
  double t0 = train_now_ms();
  size_t images = 0;
  for (size_t b = (size_t)(r->step % (long)steps_per_epoch); b < steps_per_epoch && r->step < total_steps; b++) {
    size_t at = b * (size_t)o->batch;
    size_t n = r->train.count - at < (size_t)o->batch ? r->train.count - at : (size_t)o->batch;
    parity_tensor_t *x, *y;
    make_batch(r->dev, r->m.dtype, &r->train, r->order + at, n, r->xb, r->yb, &x, &y);
    double scale = o->cosine ? 0.5 * (1 + cos(M_PI * (double)r->step / (double)total_steps)) : 1.0;
    CHECK(model_grad(&r->m, x, y, scale, &last_loss));
    CHECK(parity_optimizer_step(r->opt));
    parity_tensor_release(x);
    parity_tensor_release(y);
    long step = ++r->step;
    images += n;
    if (train_diverged(last_loss, step)) return -1;
    if (o->ckpt_every && step % o->ckpt_every == 0 &&
        ckpt_save(o->ckpt_dir, model_kind_name(r->m.kind), (const char *const *)r->m.name, r->m.param, r->m.count,
                  r->opt, &r->meta, (uint64_t)step, err, sizeof err)) {
      fprintf(stderr, "parity-train: checkpoint at step %ld: %s\n", step, err);
      return -1;
    }
    if (step % o->log_every == 0 || b + 1 == steps_per_epoch || step == total_steps) {
      double now = train_now_ms(), ips = (double)images / ((now - t0) / 1e3);
      double per_step = (now - r->run_start) / (double)(step - r->first_step) / 1e3;
      char left[32];
      fmt_time(left, sizeof left, per_step * (double)(total_steps - step));
      printf("epoch %ld step %ld/%ld loss %.9g images/s %.0f left %s\n", epoch, step, total_steps, last_loss, ips,
             left);
      fflush(stdout);
    }
  }
  double secs = (train_now_ms() - t0) / 1e3;
  char when[160];
  snprintf(when, sizeof when, "epoch %ld (%zu images in %.1f s, %.0f images/s)", epoch, images, secs,
           (double)images / secs);
  print_eval(when, evaluate(r->dev, &r->m, &r->test, r->xb, r->yb, r->classes));
  fflush(stdout);
  return 0;
}

/* --save and --predictions at the end; 0, or -1 with a message. */
static int write_results(const fashion_state *r) {
  const fashion_opts *o = r->o;
  char err[1024];
  if (o->save) {
    if (model_save(&r->m, o->save, err, sizeof err)) {
      fprintf(stderr, "parity-train: --save %s: %s\n", o->save, err);
      return -1;
    }
    printf("saved %s weights to %s\n", model_kind_name(r->m.kind), o->save);
  }
  if (o->predictions) {
    if (write_predictions(o->predictions, r->classes, r->test.count)) return -1;
    printf("wrote the predictions of %zu test images to %s\n", r->test.count, o->predictions);
  }
  return 0;
}

/* The optimizer, the resume, the epochs and the results; the exit status. */
static int train_and_evaluate(fashion_state *r) {
  const fashion_opts *o = r->o;
  int rc = 1;
  if (o->optimizer == OPT_ADAM)
    CHECK(parity_adam_create(r->m.param, r->m.count, o->lr, 0.9, 0.999, o->eps, &r->opt));
  else
    CHECK(parity_sgd_create(r->m.param, r->m.count, o->lr, o->momentum, &r->opt));
  checkpoint_identity(r);
  r->step = 0;
  if (o->resume && resume_run(r)) goto done;
  if (r->total_steps == 0 || r->step >= r->total_steps) /* nothing to train: evaluate what there is */
    print_eval(r->step   ? "resumed weights"
               : o->load ? "loaded weights"
                         : "initial weights",
               evaluate(r->dev, &r->m, &r->test, r->xb, r->yb, r->classes));
  r->first_step = r->step;
  r->run_start = train_now_ms();
  for (long epoch = 1 + r->step / (long)r->steps_per_epoch; epoch <= o->epochs && r->step < r->total_steps; epoch++)
    if (train_epoch(r, epoch)) goto done;
  if (write_results(r)) goto done;
  rc = 0;
done:
  parity_optimizer_destroy(r->opt);
  return rc;
}

int fashion_run(parity_device_t *dev, const fashion_opts *o) {
  fashion_state r = {.dev = dev, .o = o};
  int rc = 1;
  if (load_split(o->dir, "train", &r.train, o->train_images) || load_split(o->dir, "t10k", &r.test, o->test_images)) {
    idx_free(&r.train.images), idx_free(&r.train.labels), idx_free(&r.test.images), idx_free(&r.test.labels);
    return 1;
  }
  model_init(&r.m, o->model, dev, o->dtype, o->seed);
  if (load_weights(&r) == 0) {
    plan_steps(&r);
    if (alloc_buffers(&r) == 0) {
      rc = train_and_evaluate(&r);
      free(r.xb), free(r.yb), free(r.order), free(r.classes);
    }
  }
  model_release(&r.m);
  idx_free(&r.train.images), idx_free(&r.train.labels), idx_free(&r.test.images), idx_free(&r.test.labels);
  return rc;
}
